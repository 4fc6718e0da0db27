package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The height filter against a textbook matrix Kalman filter, the standard atmosphere from its
 * physical constants, and its stated rules (still phone, held values, gaps, refusals, no allocation).
 */
class HeightFilterTest {
    private static final long MS = 1_000_000L;

    /** U.S. Standard Atmosphere 1976 eq. 33a from the physical constants: hPa at height h (m). */
    private static double pressureAt(double h) {
        double t0 = 288.15, lapse = -0.0065, g0 = 9.80665, m0 = 0.0289644, rStar = 8.31432;
        return 1013.25 * Math.pow(t0 / (t0 + lapse * h), g0 * m0 / (rStar * lapse));
    }

    private static double[][] mul(double[][] a, double[][] b) {
        double[][] c = new double[a.length][b[0].length];
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < b[0].length; j++) {
                for (int k = 0; k < b.length; k++) {
                    c[i][j] += a[i][k] * b[k][j];
                }
            }
        }
        return c;
    }

    private static double[][] transpose(double[][] a) {
        double[][] t = new double[a[0].length][a.length];
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < a[0].length; j++) {
                t[j][i] = a[i][j];
            }
        }
        return t;
    }

    private static double[][] add(double[][] a, double[][] b, double scale) {
        double[][] c = new double[a.length][a[0].length];
        for (int i = 0; i < a.length; i++) {
            for (int j = 0; j < a[0].length; j++) {
                c[i][j] = a[i][j] + scale * b[i][j];
            }
        }
        return c;
    }

    private static double[][] scale(double[][] a, double c) {
        return add(new double[a.length][a[0].length], a, c);
    }

    @Test
    void pressureAltitudeInvertsTheStandardAtmosphere() {
        for (double h : new double[] {-200, 0, 3, 150, 1000, 3000}) {
            assertEquals(h, HeightFilter.pressureAltitude(pressureAt(h)), 0.01);
        }
        for (double p : new double[] {1013.25, 900, 700}) {
            double slope = (HeightFilter.pressureAltitude(p - 1e-3) - HeightFilter.pressureAltitude(p + 1e-3)) / 2e-3;
            assertEquals(slope, HeightFilter.metresPerHpa(p), 1e-8 * slope);
        }
    }

    /**
     * x = [h, v]: x ← F x + G a, P ← F P Fᵀ + Q; on a row with a pressure K = P Hᵀ / (H P Hᵀ + R)
     * with R = r / min(1, rate·dt), x ← x + K (z − H x), P ← (I − K H) P. A 10 Hz barometer held on
     * irregular rows (some slower than it), with dropouts.
     */
    @Test
    void matchesAMatrixKalmanFilterOnIrregularRows() {
        Random rng = new Random(3);
        double noise = 0.3;
        double q = noise * noise;
        double rate = 10.0;
        HeightFilter filter = new HeightFilter(noise, 0.03, rate, 0.3);
        double[][] x = null;
        double[][] p = null;
        double[][] hRow = {{1, 0}};
        double r = 0;
        double origin = 0;
        long t = 7_000 * MS;
        long tPrev = 0;
        long nextReading = t;
        double truth = 0;
        double latest = Double.NaN;
        int capped = 0;
        for (int i = 0; i < 3000; i++) {
            t += i % 50 == 0 ? 150 * MS : 10 * MS + rng.nextInt(20) * MS;  // 33–100 Hz, and slower than the barometer
            while (nextReading <= t) {
                truth += 0.05 * rng.nextGaussian();
                latest = pressureAt(truth) + 0.03 * rng.nextGaussian();
                nextReading += 100 * MS;
            }
            double a = rng.nextGaussian();
            double pressure = rng.nextInt(10) == 0 ? Double.NaN : latest;
            boolean has = filter.push(t, a, pressure);
            if (x != null) {
                double dt = (t - tPrev) / 1e9;
                double[][] f = {{1, dt}, {0, 1}};
                double[][] g = {{dt * dt / 2}, {dt}};
                double[][] qm = {{q * dt * dt * dt / 3, q * dt * dt / 2}, {q * dt * dt / 2, q * dt}};
                x = add(mul(f, x), g, a);
                p = add(mul(mul(f, p), transpose(f)), qm, 1);
                if (!Double.isNaN(pressure)) {
                    capped += rate * dt >= 1 ? 1 : 0;
                    double z = HeightFilter.pressureAltitude(pressure) - origin;
                    double s = mul(mul(hRow, p), transpose(hRow))[0][0] + r / Math.min(1.0, rate * dt);
                    double[][] k = scale(mul(p, transpose(hRow)), 1 / s);
                    x = add(x, k, z - x[0][0]);
                    p = mul(add(new double[][] {{1, 0}, {0, 1}}, mul(k, hRow), -1), p);
                }
            } else if (!Double.isNaN(pressure)) {
                origin = HeightFilter.pressureAltitude(pressure);
                double sd = 0.03 * (HeightFilter.pressureAltitude(pressure - 1e-3)
                        - HeightFilter.pressureAltitude(pressure + 1e-3)) / 2e-3;
                r = sd * sd;
                x = new double[][] {{0}, {0}};
                p = new double[][] {{r, 0}, {0, 1}};
            }
            tPrev = t;
            assertEquals(x != null, has, "estimate at row " + i);
            if (x != null) {
                assertEquals(x[0][0], filter.height, 1e-8 * (1 + Math.abs(x[0][0])), "height at row " + i);
                assertEquals(x[1][0], filter.speed, 1e-8 * (1 + Math.abs(x[1][0])), "speed at row " + i);
            }
        }
        assertTrue(capped > 30, "rows slower than the barometer count one reading: " + capped);
    }

    @Test
    void aStillPhoneStaysAtItsFirstHeight() {
        HeightFilter filter = new HeightFilter();
        for (int i = 0; i < 3000; i++) {
            assertTrue(filter.push(i * 20 * MS, 0.0, 987.65));
            assertEquals(0.0, filter.height, 0.0);
            assertEquals(0.0, filter.speed, 0.0);
        }
    }

    @Test
    void aQuantisedBarometerOnAStillPhoneKeepsCorrectingTheAccelerometer() {
        // Repeated values are readings too: else a 0.05 m/s² bias would carry the height 360 m away in 120 s.
        HeightFilter filter = new HeightFilter();
        for (int i = 0; i < 6000; i++) {
            filter.push(i * 20 * MS, 0.05, 1000.0);
            assertTrue(Math.abs(filter.height) < 0.5 && Math.abs(filter.speed) < 0.5, "row " + i);
        }
    }

    @Test
    void nanPressureOnlyPredictsAndAGapRestartsFromTheNextReading() {
        HeightFilter filter = new HeightFilter();
        assertFalse(filter.push(0, 1.0, Double.NaN));
        assertTrue(Double.isNaN(filter.height) && Double.isNaN(filter.speed));
        assertTrue(filter.push(20 * MS, 1.0, 1000.0));
        assertEquals(0.0, filter.height, 0.0);
        assertTrue(filter.push(40 * MS, 1.0, Double.NaN));
        assertEquals(0.5 * 0.02 * 0.02, filter.height, 1e-15);
        assertEquals(0.02, filter.speed, 1e-15);
        assertFalse(filter.push(40 * MS + 310 * MS, 1.0, Double.NaN));  // 0.31 s > maxGapS
        assertTrue(filter.push(40 * MS + 330 * MS, 1.0, 999.0));
        assertEquals(HeightFilter.pressureAltitude(999.0) - HeightFilter.pressureAltitude(1000.0), filter.height, 0.0);
        assertEquals(0.0, filter.speed, 0.0);
    }

    @Test
    void badRowsAreRefusedAndLeaveTheStateAlone() {
        HeightFilter filter = new HeightFilter();
        HeightFilter twin = new HeightFilter();
        for (HeightFilter f : new HeightFilter[] {filter, twin}) {
            f.push(1 * MS, 0.0, 1000.0);
            f.push(2 * MS, 0.5, 1000.1);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> filter.push(2 * MS, 0, 1000));
        assertTrue(e.getMessage().contains("t_ns=2000000 follows t_ns=2000000"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> filter.push(3 * MS, Double.NaN, 1000));
        assertTrue(e.getMessage().contains("vertical acceleration at t_ns=3000000"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> filter.push(3 * MS, 0, 101325.0));
        assertTrue(e.getMessage().contains("101325.0 hPa; a barometer reads 300–1100 hPa"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> filter.push(3 * MS, 0, Double.POSITIVE_INFINITY));
        assertThrows(IllegalArgumentException.class, () -> new HeightFilter(0, 0.03, 1, 0.3));
        filter.push(3 * MS, 0.2, 1000.05);
        twin.push(3 * MS, 0.2, 1000.05);
        assertEquals(twin.height, filter.height, 0.0);
        assertEquals(twin.speed, filter.speed, 0.0);
    }

    @Test
    void resetForgetsTheZero() {
        HeightFilter filter = new HeightFilter();
        filter.push(0, 0.0, 1000.0);
        filter.reset();
        assertTrue(filter.push(0, 0.0, 990.0));
        assertEquals(0.0, filter.height, 0.0);
    }

    @Test
    void steadyStateAllocatesNothingPerRow() {
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        HeightFilter filter = new HeightFilter();
        Random rng = new Random(1);
        double[] a = new double[4096];
        double[] pressure = new double[4096];
        for (int i = 0; i < a.length; i++) {
            a[i] = rng.nextGaussian();
            pressure[i] = i % 5 == 0 ? 1000 + 0.03 * rng.nextGaussian() : Double.NaN;
        }
        int n = 2_000_000;
        for (int i = 0; i < 200_000; i++) {
            filter.push(i * 20 * MS, a[i & 4095], pressure[i & 4095]);
        }
        long before = bean.getThreadAllocatedBytes(Thread.currentThread().getId());
        for (int i = 200_000; i < 200_000 + n; i++) {
            filter.push(i * 20 * MS, a[i & 4095], pressure[i & 4095]);
        }
        long bytes = bean.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        assertTrue((double) bytes / n < 0.001, bytes + " bytes allocated over " + n + " rows");
    }
}
