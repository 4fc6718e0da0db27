package org.stairsense.core;

/**
 * Layout of one raw input row, as {@code double[WIDTH]}: the accelerometer and the streams held
 * at its timestamp (spec §3.4 [P]: the latest rotation-vector sample at or before each
 * accelerometer timestamp; the latest barometer reading likewise). Streams a method does not use
 * may hold anything (NaN by convention).
 */
public final class RawSample {
    /** Accelerometer x, y, z in m/s², gravity included, device frame. */
    public static final int ACC = 0;
    /** Rotation vector as a quaternion (x, y, z, w), device to East-North-Up. */
    public static final int ROTVEC = 3;
    /** Linear acceleration x, y, z (the phone's own gravity removal), m/s². */
    public static final int LINACC = 7;
    /**
     * Air pressure in hPa (the barometer's latest reading): read by models whose configuration
     * has {@code barometer} (Python's {@code SensorLog.pressure}), ignored by the others.
     */
    public static final int PRESSURE = 10;
    public static final int WIDTH = 11;

    private RawSample() {
    }
}
