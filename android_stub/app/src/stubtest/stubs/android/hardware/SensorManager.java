package android.hardware;

import android.os.Handler;

/**
 * Signature stub of the https://developer.android.com/reference/android/hardware/SensorManager
 * methods the glue calls; the batching overload
 * {@code registerListener(SensorEventListener, Sensor, int, int, Handler)} and {@code flush} are API level 19.
 */
public abstract class SensorManager {
    public Sensor getDefaultSensor(int type) {
        throw new UnsupportedOperationException("stub");
    }

    public boolean registerListener(SensorEventListener listener, Sensor sensor, int samplingPeriodUs,
                                    int maxReportLatencyUs, Handler handler) {
        throw new UnsupportedOperationException("stub");
    }

    public boolean flush(SensorEventListener listener) {
        throw new UnsupportedOperationException("stub");
    }

    public void unregisterListener(SensorEventListener listener) {
        throw new UnsupportedOperationException("stub");
    }
}
