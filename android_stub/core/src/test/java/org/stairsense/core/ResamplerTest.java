package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Zero-order hold against the example of {@code stream/_resample.py::resample}'s docstring. */
class ResamplerTest {
    @Test
    void fiftyToThirtyHertzHoldsTheLatestSample() {
        Resampler resampler = new Resampler(30);
        List<Long> times = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        double[] raw = new double[RawSample.WIDTH];
        for (int i = 0; i < 6; i++) {
            raw[0] = i;
            resampler.offer(i * 20_000_000L, raw);
            while (resampler.poll()) {
                times.add(resampler.tNs);
                values.add(resampler.row[0]);
            }
        }
        assertArrayEquals(new long[] {0, 33_333_333, 66_666_667, 100_000_000}, times.stream().mapToLong(Long::longValue).toArray());
        assertArrayEquals(new double[] {0, 1, 3, 5}, values.stream().mapToDouble(Double::doubleValue).toArray());
    }
}
