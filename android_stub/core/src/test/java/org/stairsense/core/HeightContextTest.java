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
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, 0.3, 0.2, -0.2},
                ctx.push(new double[] {0.0, -0.1, -0.2}, v, 3, 0, S), EPS);
        // The block's change runs from the first sample of its oldest step: -0.4 over two steps.
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, 0.3, 0.2, -0.4},
                ctx.push(new double[] {-0.2, -0.3, -0.4}, v, 3, S, 2 * S), EPS);
        // The long block keeps all three: -0.6 over three steps.
        assertArrayEquals(new double[] {0.2, 0.3, 0.3, 0.2, 0.3, 0.2, -0.4},
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
        assertEquals(f[2], f[4], EPS);  // two steps: the long block is the block
        assertEquals(f[3], f[5], EPS);
        assertEquals(0.5, f[6], EPS);
    }

    @Test
    void aPauseOrAResetStartsANewBlock() {
        HeightContext ctx = new HeightContext(5, 1.5);
        double[] v = {0.2, 0.2};
        ctx.push(new double[] {0.0, 0.17}, v, 2, 0, S);
        assertEquals(0.34, ctx.push(new double[] {0.17, 0.34}, v, 2, 2 * S + S / 2, 3 * S)[6], EPS);  // 1.5 s: same run
        double[] f = ctx.push(new double[] {0.34, 0.51}, v, 2, 4 * S + S / 2 + 1, 5 * S);  // just over 1.5 s: a new one
        assertEquals(0.17, f[6], EPS);
        assertEquals(0.17, f[3], EPS);
        assertEquals(0.17, f[5], EPS);
        ctx.reset();
        assertEquals(0.17, ctx.push(new double[] {0.51, 0.68}, v, 2, 5 * S, 6 * S)[6], EPS);
    }

    @Test
    void theLongBlockHoldsTheLastTwentyStepsOfTheRun() {
        // 25 steps up 0.17 m each, then 5 level ones: the block of 5 sees the level, the long block
        // still holds 15 of the climb's steps.
        HeightContext ctx = new HeightContext(5, 1.5);
        double[] f = null;
        for (int i = 0; i < 30; i++) {
            double h = 0.17 * Math.min(i, 25);
            double end = 0.17 * Math.min(i + 1, 25);
            f = ctx.push(new double[] {h, end}, new double[] {0.0, 0.0}, 2, i * S, (i + 1) * S);
            if (i == 24) {
                assertEquals(0.17, f[5], 1e-12);
                assertEquals(0.17, f[3], 1e-12);
            }
        }
        assertEquals(0.0, f[3], 1e-12);
        assertEquals(0.0, f[6], 1e-12);
        assertEquals(15 * 0.17 / HeightContext.LONG_STEPS, f[5], 1e-12);
    }

    @Test
    void aLongerStepContextThanTheLongBlockIsItsOwn() {
        HeightContext ctx = new HeightContext(30, 1.5);
        double[] f = null;
        for (int i = 0; i < 30; i++) {
            f = ctx.push(new double[] {0.1 * i, 0.1 * (i + 1)}, new double[] {0.0, 0.0}, 2, i * S, (i + 1) * S);
        }
        assertEquals(3.0, f[6], 1e-12);  // 30 steps
        assertEquals(0.1, f[3], 1e-12);
        assertEquals(0.1, f[5], 1e-12);  // 20 of them
    }

    @Test
    void aContextBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new HeightContext(0, 1.5));
    }

    @Test
    void anEmptyWindowIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new HeightContext(5, 1.5).push(new double[0], new double[0], 0, 0, S));
    }
}
