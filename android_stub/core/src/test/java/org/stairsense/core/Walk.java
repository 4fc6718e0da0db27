package org.stairsense.core;

import java.util.Random;

/**
 * A synthetic phone stream for the tests: gravity along a tilted device axis, a vertical
 * oscillation at a walking cadence, noise, jittered timestamps, a fixed rotation vector and a
 * barometer on the level (1000 hPa with 0.03 hPa of noise).
 */
final class Walk {
    private final Random rng;
    private final double periodNs;
    private final double cadenceHz;
    private long t;
    private long n;

    final double[] raw = new double[RawSample.WIDTH];

    Walk(long seed, double rateHz, double cadenceHz) {
        this.rng = new Random(seed);
        this.periodNs = 1e9 / rateHz;
        this.cadenceHz = cadenceHz;
        double h = Math.sqrt(0.5);
        raw[RawSample.ROTVEC] = h;      // a quarter turn about device x: device y is Up
        raw[RawSample.ROTVEC + 3] = h;
    }

    /** Advance to the next sample; returns its timestamp and fills {@link #raw}. */
    long next() {
        t += (long) (periodNs * (0.8 + 0.4 * rng.nextDouble()));
        n++;
        double up = 9.80665 + 2.0 * Math.sin(2 * Math.PI * cadenceHz * t / 1e9);
        raw[RawSample.ACC] = 0.05 * rng.nextGaussian();
        raw[RawSample.ACC + 1] = up;
        raw[RawSample.ACC + 2] = 0.05 * rng.nextGaussian();
        for (int c = 0; c < 3; c++) {
            raw[RawSample.LINACC + c] = raw[RawSample.ACC + c] * 0.1;
        }
        raw[RawSample.PRESSURE] = 1000.0 + 0.03 * rng.nextGaussian();
        return t;
    }

    /** Skip {@code ns} nanoseconds without samples (a sensor gap). */
    void gap(long ns) {
        t += ns;
    }
}
