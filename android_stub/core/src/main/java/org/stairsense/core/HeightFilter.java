package org.stairsense.core;

/**
 * Causal height and vertical speed from barometric altitude and the vertical acceleration: mirrors
 * {@code stream/_height.py::HeightFilter.push} operation for operation (the module docstring there
 * derives the model, the defaults and the rules below).
 *
 * <p>A 2-state Kalman filter over {@code [h, v]}: each row predicts with its vertical acceleration
 * over the time since the previous row ({@code h += v dt + a dt²/2}, {@code v += a dt}, covariance
 * {@code F P Fᵀ + q [[dt³/3, dt²/2], [dt²/2, dt]]}), and its pressure corrects it with the
 * altitude {@code 44330.8 (1 - (p / 1013.25)^0.190263)} m (U.S. Standard Atmosphere 1976,
 * eq. 33a) relative to the first reading.
 *
 * <ul>
 *   <li>Pass the barometer's latest value on every row (held between readings, as a sensor hub
 *       delivers it): each row is worth the {@code pressureRateHz · dt} readings of its interval, at
 *       most one ({@code R = σ² / min(1, f dt)}), so the filter is the same at any row rate. NaN
 *       means no pressure at this row (predict only).</li>
 *   <li>Until the first reading, and after a time step longer than {@code maxGapS} until the next
 *       one, there is no estimate: {@link #push} returns false and the outputs are NaN.</li>
 *   <li>An invalid row (time not increasing, non-finite acceleration, pressure outside
 *       300–1100 hPa) is an {@link IllegalArgumentException} and leaves the state as it was.</li>
 * </ul>
 *
 * <p>Everything is the same IEEE double operations in the same order as Python, except that
 * {@code pow} is not correctly rounded: OpenJDK 17's {@code Math.pow} differs from glibc 2.36's
 * (CPython's) in the last bit on about 0.1 % of pressures ({@code StrictMath.pow} on 0.6 %), and
 * the difference, below 1e-12 m, carries on through the filter; the parity test allows 1e-9.
 * Nothing is allocated per row.
 */
public final class HeightFilter {
    /** Defaults of Python's {@code HeightFilter} (tests/test_android_height_parity.py compares them). */
    public static final double DEFAULT_ACCELERATION_NOISE = 0.3;
    public static final double DEFAULT_PRESSURE_NOISE_HPA = 0.03;
    public static final double DEFAULT_PRESSURE_RATE_HZ = 10.0;
    /** Python's {@code PipelineConfig.max_gap_s} default: the front end restarts there too. */
    public static final double DEFAULT_MAX_GAP_S = 0.3;
    /** A phone barometer's range (Python's {@code PRESSURE_RANGE_HPA}). */
    public static final double MIN_PRESSURE_HPA = 300.0;
    public static final double MAX_PRESSURE_HPA = 1100.0;

    static final double SCALE_M = 44330.8;
    static final double EXPONENT = 0.190263;
    static final double SEA_LEVEL_HPA = 1013.25;
    static final double INITIAL_SPEED_SD = 1.0;

    private final double q;
    private final double sdHpa;
    private final double rateHz;
    private final double maxGapS;

    private boolean started;  // a row has been seen: tPrev is valid
    private long tPrev;
    private double h = Double.NaN;
    private double v = Double.NaN;
    private double p11, p12, p22;
    private boolean hasOrigin;
    private double origin;  // altitude of the first reading: the heights' zero
    private double r;  // barometer noise variance, m²

    /** Height (m above the first reading) after the last {@link #push}; NaN without an estimate. */
    public double height = Double.NaN;
    /** Vertical speed (m/s, positive up) after the last {@link #push}; NaN without an estimate. */
    public double speed = Double.NaN;

    /** The defaults. */
    public HeightFilter() {
        this(DEFAULT_ACCELERATION_NOISE, DEFAULT_PRESSURE_NOISE_HPA, DEFAULT_PRESSURE_RATE_HZ, DEFAULT_MAX_GAP_S);
    }

    /**
     * @param accelerationNoise density of the vertical acceleration's error, (m/s²)/√Hz
     * @param pressureNoiseHpa standard deviation of one barometer reading, hPa
     * @param pressureRateHz the barometer's reading rate, Hz
     * @param maxGapS a longer time step forgets the estimate
     */
    public HeightFilter(double accelerationNoise, double pressureNoiseHpa, double pressureRateHz, double maxGapS) {
        positive("accelerationNoise", accelerationNoise);
        positive("pressureNoiseHpa", pressureNoiseHpa);
        positive("pressureRateHz", pressureRateHz);
        positive("maxGapS", maxGapS);
        this.q = accelerationNoise * accelerationNoise;
        this.sdHpa = pressureNoiseHpa;
        this.rateHz = pressureRateHz;
        this.maxGapS = maxGapS;
    }

    private static void positive(String name, double value) {
        if (!(Double.isFinite(value) && value > 0)) {
            throw new IllegalArgumentException(name + " must be a finite number > 0, got " + value);
        }
    }

    /** Standard-atmosphere altitude (m above the 1013.25 hPa level) of a pressure in hPa. */
    public static double pressureAltitude(double pressureHpa) {
        return SCALE_M * (1.0 - Math.pow(pressureHpa / SEA_LEVEL_HPA, EXPONENT));
    }

    /** {@code -dh/dp} of {@link #pressureAltitude}: converts the barometer's noise to metres. */
    static double metresPerHpa(double pressureHpa) {
        return SCALE_M * EXPONENT / SEA_LEVEL_HPA * Math.pow(pressureHpa / SEA_LEVEL_HPA, EXPONENT - 1.0);
    }

    /** Forget everything, the heights' zero included (a new recording). */
    public void reset() {
        started = false;
        h = v = Double.NaN;
        hasOrigin = false;
        height = speed = Double.NaN;
    }

    /**
     * Consume one row.
     *
     * @param tNs time of the row, ns, after the previous row's
     * @param verticalAcc vertical dynamic acceleration, m/s², positive up (the standardizer's vertical)
     * @param pressureHpa air pressure, hPa, held between readings; NaN for none at this row
     * @return true when {@link #height} and {@link #speed} hold an estimate
     */
    public boolean push(long tNs, double verticalAcc, double pressureHpa) {
        if (started && tNs <= tPrev) {
            throw new IllegalArgumentException("t_ns must be strictly increasing; t_ns=" + tNs + " follows t_ns="
                    + tPrev + ". Sort the rows, or reset() before a new recording.");
        }
        if (!Double.isFinite(verticalAcc)) {
            throw new IllegalArgumentException("vertical acceleration at t_ns=" + tNs + " is " + verticalAcc
                    + "; it must be finite (m/s²).");
        }
        double p = pressureHpa;
        if (!Double.isNaN(p) && !(p >= MIN_PRESSURE_HPA && p <= MAX_PRESSURE_HPA)) {
            throw new IllegalArgumentException("pressure at t_ns=" + tNs + " is " + p + " hPa; a barometer reads "
                    + "300–1100 hPa (convert Pa by dividing by 100), or NaN for a row without a reading.");
        }
        double a = verticalAcc;
        double dt = 0.0;
        if (started && !Double.isNaN(h)) {
            dt = (tNs - tPrev) / 1e9;
            if (dt > maxGapS) {
                // The acceleration over a gap is unknown, so is the speed: start again from the next reading.
                h = v = Double.NaN;
            } else {
                double dt2 = dt * dt;
                h = h + v * dt + 0.5 * a * dt2;
                v = v + a * dt;
                p11 = p11 + dt * (2.0 * p12 + dt * p22) + q * dt2 * dt / 3.0;
                p12 = p12 + dt * p22 + q * dt2 / 2.0;
                p22 = p22 + q * dt;
            }
        }
        if (!Double.isNaN(p)) {
            if (!hasOrigin) {
                hasOrigin = true;
                origin = pressureAltitude(p);
                double md = sdHpa * metresPerHpa(p);
                r = md * md;
            }
            double z = pressureAltitude(p) - origin;
            if (Double.isNaN(h)) {
                h = z;
                v = 0.0;
                p11 = r;
                p12 = 0.0;
                p22 = INITIAL_SPEED_SD * INITIAL_SPEED_SD;
            } else {
                double share = dt * rateHz;  // readings in this row's interval
                double s = p11 + (share < 1.0 ? r / share : r);
                double k1 = p11 / s;
                double k2 = p12 / s;
                double y = z - h;
                h = h + k1 * y;
                v = v + k2 * y;
                p22 = p22 - k2 * p12;
                p11 = p11 - k1 * p11;
                p12 = p12 - k1 * p12;
            }
        }
        started = true;
        tPrev = tNs;
        height = h;
        speed = v;
        return !Double.isNaN(h);
    }
}
