package android.hardware;

/** Signature stub of https://developer.android.com/reference/android/hardware/SensorEventListener. */
public interface SensorEventListener {
    void onSensorChanged(SensorEvent event);

    void onAccuracyChanged(Sensor sensor, int accuracy);
}
