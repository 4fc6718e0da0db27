package android.hardware;

/**
 * Signature stub of https://developer.android.com/reference/android/hardware/Sensor: the type
 * constants (documented values) and {@link #getType}. The real constructor is hidden; this one
 * exists so the JVM test can make sensors.
 */
public final class Sensor {
    public static final int TYPE_ACCELEROMETER = 1;
    public static final int TYPE_PRESSURE = 6;
    public static final int TYPE_LINEAR_ACCELERATION = 10;
    public static final int TYPE_ROTATION_VECTOR = 11;

    private final int type;

    public Sensor(int type) {
        this.type = type;
    }

    public int getType() {
        return type;
    }
}
