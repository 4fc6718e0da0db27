package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * {@link HeightContext} against the definitions worked by hand; parity with
 * {@code stairsense.features.HeightContext} through the whole pipeline is
 * {@code tests/test_android_parity.py}.
 */
class HeightContextTest {
    private static final long S = 1_000_000_000L;
    private static final double EPS = 1e-15;

    @Test
    void aDescentStepByStep() {
        // Two steps down 0.2 m each at 0.3 m/s, then a third: the block of two drops the first.
        HeightContext ctx = new HeightContext(2, 1.5);
        double[] v = {-0.3, -0.3, -0.3};
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, -0.2},
                ctx.push(new double[] {0.0, -0.1, -0.2}, v, 3, 0, S), EPS);
        // The block's change runs from the first sample of its oldest step: -0.4 over two steps.
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, -0.4},
                ctx.push(new double[] {-0.2, -0.3, -0.4}, v, 3, S, 2 * S), EPS);
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, -0.4},
                ctx.push(new double[] {-0.4, -0.5, -0.6}, v, 3, 2 * S, 3 * S), EPS);
    }

    @Test
    void theBlocksSpeedWeighsEverySampleAndOnlyTheFirstNEntriesAreRead() {
        HeightContext ctx = new HeightContext(5, 1.5);
        ctx.push(new double[] {0.0, 0.5, 99}, new double[] {1.0, 1.0, 99}, 2, 0, S);
        double[] f = ctx.push(new double[] {0.5, 0.5, 0.5, 0.5}, new double[] {0.25, 0.25, 0.25, 0.25}, 4, S, 2 * S);
        assertEquals(0.0, f[0]);
        assertEquals(0.25, f[1]);
        assertEquals((1.0 + 1.0 + 4 * 0.25) / 6, f[2], EPS);  // not the mean of the windows' means, 0.625
        assertEquals(0.5 / 2, f[3], EPS);
        assertEquals(0.5, f[4], EPS);
    }

    @Test
    void aPauseOrAResetStartsANewBlock() {
        HeightContext ctx = new HeightContext(5, 1.5);
        double[] v = {0.2, 0.2};
        ctx.push(new double[] {0.0, 0.17}, v, 2, 0, S);
        assertEquals(0.34, ctx.push(new double[] {0.17, 0.34}, v, 2, 2 * S + S / 2, 3 * S)[4], EPS);  // 1.5 s: same run
        double[] f = ctx.push(new double[] {0.34, 0.51}, v, 2, 4 * S + S / 2 + 1, 5 * S);  // just over 1.5 s: a new one
        assertEquals(0.17, f[4], EPS);
        assertEquals(0.17, f[3], EPS);
        ctx.reset();
        assertEquals(0.17, ctx.push(new double[] {0.51, 0.68}, v, 2, 5 * S, 6 * S)[4], EPS);
    }

    @Test
    void anEmptyWindowIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new HeightContext(5, 1.5).push(new double[0], new double[0], 0, 0, S));
    }
}
