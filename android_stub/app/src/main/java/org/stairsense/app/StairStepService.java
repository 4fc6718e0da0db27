package org.stairsense.app;

import android.app.Notification;
import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.app.Service;
import android.content.Context;
import android.content.Intent;
import android.hardware.Sensor;
import android.hardware.SensorManager;
import android.os.Handler;
import android.os.HandlerThread;
import android.os.IBinder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import org.stairsense.core.Standardizer;

/**
 * A foreground service that counts steps and stair steps while the screen is off: loads
 * {@code assets/stairs.onnx} (the file {@code stairsense export} writes) into ONNX Runtime, reads
 * the front-end configuration from its metadata, says which model runs (with barometer or
 * accelerometer only) in its notification and on the screen, and listens to the sensors the model
 * needs on a background thread.
 */
public final class StairStepService extends Service {
    static final String MODEL_ASSET = "stairs.onnx";
    /** Sensor-hub batching (µs): the phone sleeps between batches. Match the energy model's batch. */
    static final int MAX_REPORT_LATENCY_US = 5_000_000;
    private static final String CHANNEL = "stairsense";

    private OrtStairClassifier classifier;
    private SensorStream stream;
    private HandlerThread thread;
    private SensorManager sensors;

    @Override
    public void onCreate() {
        super.onCreate();
        try {
            classifier = new OrtStairClassifier(readAsset(MODEL_ASSET), MODEL_ASSET);
        } catch (Exception e) {  // OrtException, IOException, ModelConfigException: the service cannot run
            throw new IllegalStateException("cannot load " + MODEL_ASSET + ": " + e.getMessage(), e);
        }
        String model = "model " + classifier.config().modelKind();
        StepCounts.INSTANCE.setModel(model);
        NotificationManager notifications = (NotificationManager) getSystemService(Context.NOTIFICATION_SERVICE);
        notifications.createNotificationChannel(new NotificationChannel(CHANNEL, "Step counting", NotificationManager.IMPORTANCE_LOW));
        startForeground(1, new Notification.Builder(this, CHANNEL)
                .setContentTitle("stairsense")
                .setContentText("Counting steps and stair steps, " + model)
                .setSmallIcon(android.R.drawable.stat_notify_sync)
                .setOngoing(true)
                .build());
        sensors = (SensorManager) getSystemService(Context.SENSOR_SERVICE);
        boolean hasRotation = sensors.getDefaultSensor(Sensor.TYPE_ROTATION_VECTOR) != null;
        String method = Standardizer.resolveOrientation(classifier.config(), hasRotation, false);
        stream = new SensorStream(classifier.config(), method, classifier, StepCounts.INSTANCE, MAX_REPORT_LATENCY_US);
        thread = new HandlerThread("stairsense-sensors");
        thread.start();
        stream.register(sensors, new Handler(thread.getLooper()));
    }

    @Override
    public int onStartCommand(Intent intent, int flags, int startId) {
        return START_STICKY;
    }

    @Override
    public IBinder onBind(Intent intent) {
        return null;  // the UI reads StepCounts; nothing to bind
    }

    @Override
    public void onDestroy() {
        if (stream != null) {
            stream.unregister(sensors);  // posts the step vote's last decisions to the sensor thread
        }
        if (thread != null) {
            thread.quitSafely();  // not quit(): the sensor thread runs those decisions first
        }
        if (classifier != null) {
            try {
                classifier.close();
            } catch (Exception e) {
                // Closing at shutdown: nothing left to do with a failure.
            }
        }
        super.onDestroy();
    }

    private byte[] readAsset(String name) throws IOException {
        try (InputStream in = getAssets().open(name)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
            return out.toByteArray();
        }
    }
}
