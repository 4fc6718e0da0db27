package android.hardware;

/**
 * Signature stub of https://developer.android.com/reference/android/hardware/SensorEvent: the
 * public fields the glue reads. The real constructor is hidden; this one exists so the JVM test can
 * replay a log (Robolectric's SensorEventBuilder plays the same role).
 */
public class SensorEvent {
    public final float[] values;
    public Sensor sensor;
    public int accuracy;
    /** Nanoseconds, the elapsedRealtimeNanos() time base. */
    public long timestamp;

    public SensorEvent(Sensor sensor, long timestamp, float[] values) {
        this.sensor = sensor;
        this.timestamp = timestamp;
        this.values = values;
    }
}
