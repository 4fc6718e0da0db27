package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * {@link StepContext} against hand-computed cases; parity with {@code stairsense.features} on whole
 * logs is {@code tests/test_android_parity.py}.
 */
class StepContextTest {
    private static final double EPS = 1e-9;

    private static double[] shape(double[] z, double[] h, double dt) {
        double[] out = new double[StepContext.N_SHAPE];
        new StepContext(5, 1.5).shape(z, h, z.length, dt, out);
        return out;
    }

    @Test
    void alternatingStepHasClosedFormShape() {
        // z = ±1: mean 0, Std 1, zero skew; h = 3, 4, 3, 4 moves against z, so Corr = -1; z integrates to 0.
        double sd = 1 + EPS;
        double hs = 0.5 + EPS;
        double[] got = shape(new double[] {1, -1, 1, -1}, new double[] {3, 4, 3, 4}, 0.5);
        double[] want = {
            2.0, 0.0, 1 / (sd * sd * sd * sd), 0.0, 0.25, 0.5, sd, 2.0, 1.0, -1.0,
            3.5, hs, 1.0, hs / sd, -0.5 / (sd * hs), 0.0, 0.0, 0.0, 0.0};
        assertArrayEquals(want, got, 1e-15);
    }

    @Test
    void constantAccelerationIntegratesToAParabola() {
        // z = c: v = c·t, d = c·t²/2 exactly (trapezoid rule on a line). Over t = 0, dt, 2dt the
        // residuals of d from its least-squares line are c·dt²·(1/6, -1/3, 1/6): range c·dt²/2.
        double c = 2.0;
        double dt = 0.1;
        double[] got = shape(new double[] {c, c, c}, new double[] {1, 1, 1}, dt);
        double excursion = 0.5 * c * dt * dt;
        double duration = 3 * dt;
        assertEquals(duration, got[0], 1e-15);
        assertEquals(0.0, got[1]);                           // z - mean is exactly 0
        assertEquals(1.0, got[5]);                           // every sample above 0
        assertEquals(EPS, got[6]);                           // Std 0 + 1e-9
        assertEquals(0.0, got[14]);                          // Corr of constant signals
        assertEquals(excursion, got[15], 1e-15);
        assertEquals(2 * c * dt * dt, got[16], 1e-15);       // d at the end: c·(2dt)²/2
        double norm = excursion / (EPS * (duration * duration) + 1e-9);
        assertEquals(norm, got[17], 1e-12 * norm);
        assertEquals(c * 2 * dt, got[18], 1e-15);            // range of v
        assertEquals(0.0, shape(new double[] {c, c}, new double[] {1, 1}, dt)[15]);  // a line fits 2 points
    }

    private static double[] row(double value) {
        double[] r = new double[StepContext.N_SHAPE];
        java.util.Arrays.fill(r, value);
        return r;
    }

    @Test
    void contextIsTheMeanAndCvOfTheRunsLastSteps() {
        StepContext ctx = new StepContext(2, 1.5);
        int m = StepContext.CONTEXT_OF.length;
        long s = 1_000_000_000L;
        double[] f = ctx.pushShape(row(1), 0, s);
        assertEquals(1.0, f[StepContext.N_SHAPE]);
        assertEquals(0.0, f[StepContext.N_SHAPE + m]);
        assertEquals(1.0, f[StepContext.N_FEATURES - 1]);
        f = ctx.pushShape(row(3), s + s / 2, 2 * s);          // 0.5 s later: same run
        assertEquals(2.0, f[StepContext.N_SHAPE]);
        assertEquals(1.0 / (2.0 + 1e-6), f[StepContext.N_SHAPE + m], 1e-15);  // Std 1 over |mean| 2
        assertEquals(2.0, f[StepContext.N_FEATURES - 1]);
        assertEquals(3.0, f[0]);                               // the shape itself comes first
        f = ctx.pushShape(row(7), 2 * s + s / 2, 3 * s);      // the ring drops the oldest: rows 3, 7
        assertEquals(5.0, f[StepContext.N_SHAPE + m - 1]);
        assertEquals(2.0 / (5.0 + 1e-6), f[StepContext.N_FEATURES - 2], 1e-15);
        f = ctx.pushShape(row(9), 3 * s + 1_500_000_001L, 5 * s);  // just over max_gap_s: a new run
        assertEquals(9.0, f[StepContext.N_SHAPE]);
        assertEquals(1.0, f[StepContext.N_FEATURES - 1]);
        f = ctx.pushShape(row(11), 5 * s + 1_500_000_000L, 6 * s);  // exactly max_gap_s: same run
        assertEquals(2.0, f[StepContext.N_FEATURES - 1]);
        ctx.reset();
        f = ctx.pushShape(row(4), 6 * s, 7 * s);
        assertEquals(4.0, f[StepContext.N_SHAPE]);
        assertEquals(1.0, f[StepContext.N_FEATURES - 1]);
    }

    @Test
    void pushIsShapeThenContext() {
        double[] z = {0.3, -1.2, 2.5, 0.1, -0.7, 1.9};
        double[] h = {0.5, 0.2, 1.1, 0.9, 0.4, 0.6};
        double[] want = shape(z, h, 0.02);
        double[] got = new StepContext(5, 1.5).push(z, h, z.length, 0.02, 0, 120_000_000L);
        assertArrayEquals(want, java.util.Arrays.copyOf(got, StepContext.N_SHAPE));
        for (int k = 0; k < StepContext.CONTEXT_OF.length; k++) {
            assertEquals(want[StepContext.CONTEXT_OF[k]], got[StepContext.N_SHAPE + k]);
        }
    }

    @Test
    void steadyStateAllocatesNothingPerWindow() {
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        StepContext ctx = new StepContext(5, 1.5);
        double[] z = new double[60];
        double[] h = new double[60];
        for (int i = 0; i < z.length; i++) {
            z[i] = Math.sin(i * 0.2);
            h[i] = Math.abs(Math.cos(i * 0.3));
        }
        double sum = 0;
        for (int w = 0; w < 20_000; w++) {
            sum += ctx.push(z, h, 20 + w % 40, 0.02, w * 1_000_000_000L, w * 1_000_000_000L + 800_000_000L)[0];
        }
        long before = bean.getThreadAllocatedBytes(Thread.currentThread().getId());
        for (int w = 0; w < 200_000; w++) {
            sum += ctx.push(z, h, 20 + w % 40, 0.02, w * 1_000_000_000L, w * 1_000_000_000L + 800_000_000L)[0];
        }
        long bytes = bean.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        assertTrue(sum > 0);
        assertTrue(bytes < 2_000, bytes + " bytes allocated over 200000 windows");
    }
}
