package org.stairsense.app;

import android.hardware.Sensor;
import android.hardware.SensorEvent;
import android.hardware.SensorEventListener;
import android.hardware.SensorManager;
import android.os.Handler;
import org.stairsense.core.HeightFilter;
import org.stairsense.core.Pipeline;
import org.stairsense.core.PipelineConfig;

/**
 * The sensor listener: accelerometer (+ rotation vector when the method needs it) at the model's
 * rate, and the barometer when the model reads it (configuration {@code barometer}) at the rate its
 * height filter assumes, batched by the sensor hub so the application processor sleeps between
 * batches, fed through {@link SensorAligner} into the core {@link Pipeline}; publishes the counts to
 * {@link StepCounts}. An accelerometer-only model never wakes the barometer.
 *
 * <p>While a screen shows the counts ({@link StepCounts#watched()}) the hub's batches are flushed
 * every {@link #LIVE_FLUSH_MS}, so a stair step is on the screen within that plus the front end's
 * decision delay, which includes the step vote's wait for the next {@code vote_steps / 2} steps
 * (median 0.80 s, at most 1.85 s after the step's end on simulated walks,
 * {@code benchmarks/results/barometer.md}), instead of a whole batch later. The check runs on the sensor thread's {@link Handler}, whose clock stops in
 * deep sleep, so with the screen off it never wakes the phone between batches.
 *
 * <p>Timestamps are {@code SensorEvent.timestamp} (ns, the elapsedRealtimeNanos() base), never the
 * delivery time: with batching, events arrive seconds after they were measured.
 */
public final class SensorStream implements SensorEventListener {
    /** Rate requested when the model keeps the native rate ({@code rate_hz} null). */
    static final double DEFAULT_RATE_HZ = 50.0;
    /**
     * Barometer rate requested: the reading rate the core's height filter weighs each reading by
     * (Python's {@code HeightFilter.pressure_rate_hz}); phones deliver 1–25 Hz.
     */
    static final double PRESSURE_RATE_HZ = HeightFilter.DEFAULT_PRESSURE_RATE_HZ;
    /** How often the batches are flushed while the counts are on a screen: a stair step is shown within 2 s. */
    static final long LIVE_FLUSH_MS = 500;

    private final Pipeline pipeline;
    private final SensorAligner aligner;
    private final StepCounts counts;
    private final double rateHz;
    private final int maxReportLatencyUs;
    private final boolean needsRotation;
    private final boolean needsPressure;
    private SensorManager manager;
    private Handler handler;
    private final Runnable liveFlush = new Runnable() {
        @Override
        public void run() {
            if (counts.watched()) {
                manager.flush(SensorStream.this);
            }
            handler.postDelayed(this, LIVE_FLUSH_MS);
        }
    };

    /**
     * @param config the model's configuration
     * @param method the resolved orientation method ({@code Standardizer.resolveOrientation})
     * @param classifier scores kept windows, or null to count steps only
     * @param counts where the counts are published
     * @param maxReportLatencyUs the sensor hub's batching latency; set it to the batch the energy
     *     model priced (0 = deliver each event at once)
     */
    public SensorStream(PipelineConfig config, String method, Pipeline.WindowClassifier classifier, StepCounts counts,
                        int maxReportLatencyUs) {
        if (method.equals("linear")) {
            throw new IllegalArgumentException("the glue does not listen to the linear-acceleration sensor; "
                    + "export a model with orientation 'rotvec', 'vertical', 'mizell' or 'auto'");
        }
        this.rateHz = config.rateHz > 0 ? config.rateHz : DEFAULT_RATE_HZ;
        this.pipeline = new Pipeline(config, method, rateHz, classifier, null);
        this.needsRotation = method.equals("rotvec");
        this.needsPressure = config.barometer;
        this.aligner = new SensorAligner(pipeline, needsRotation, needsPressure);
        this.counts = counts;
        this.maxReportLatencyUs = maxReportLatencyUs;
    }

    /**
     * Register for the accelerometer (and the rotation vector and the barometer when needed) on
     * {@code handler}'s thread, and, when the sensors are batched, flush them while the counts are watched.
     *
     * @throws IllegalStateException when the device lacks a sensor the model needs
     */
    public void register(SensorManager manager, Handler handler) {
        int periodUs = (int) Math.round(1e6 / rateHz);
        Sensor accelerometer = manager.getDefaultSensor(Sensor.TYPE_ACCELEROMETER);
        if (accelerometer == null) {
            throw new IllegalStateException("this device has no accelerometer");
        }
        Sensor barometer = needsPressure ? manager.getDefaultSensor(Sensor.TYPE_PRESSURE) : null;
        if (needsPressure && barometer == null) {
            throw new IllegalStateException("this device has no barometer (Sensor.TYPE_PRESSURE) and the model reads "
                    + "air pressure (barometer=true); put an accelerometer-only model (stairsense train without "
                    + "--barometer, then export) in the app's assets");
        }
        this.handler = handler;
        manager.registerListener(this, accelerometer, periodUs, maxReportLatencyUs, handler);
        if (barometer != null) {
            manager.registerListener(this, barometer, (int) Math.round(1e6 / PRESSURE_RATE_HZ), maxReportLatencyUs,
                    handler);
        }
        if (needsRotation) {
            manager.registerListener(this, manager.getDefaultSensor(Sensor.TYPE_ROTATION_VECTOR), periodUs,
                    maxReportLatencyUs, handler);
        }
        if (maxReportLatencyUs > 0) {
            this.manager = manager;
            handler.postDelayed(liveFlush, LIVE_FLUSH_MS);
        }
    }

    /**
     * Stop listening, then decide the kept windows still waiting for the step vote
     * ({@link Pipeline#flush}: no later step will come) and publish the final counts. That runs on the
     * sensor thread, which owns the pipeline, after any event it is still handling; quit the thread
     * with {@code quitSafely} so it runs.
     */
    public void unregister(SensorManager manager) {
        manager.unregisterListener(this);
        if (handler != null) {
            handler.removeCallbacks(liveFlush);
            handler.post(this::finish);
        }
    }

    private void finish() {
        pipeline.flush();
        counts.update(pipeline);
    }

    @Override
    public void onSensorChanged(SensorEvent event) {
        int type = event.sensor.getType();
        if (type == Sensor.TYPE_ACCELEROMETER) {
            aligner.accelerometer(event.timestamp, event.values[0], event.values[1], event.values[2]);
            counts.update(pipeline);
        } else if (type == Sensor.TYPE_ROTATION_VECTOR) {
            aligner.rotationVector(event.timestamp, event.values);
            counts.update(pipeline);
        } else if (type == Sensor.TYPE_PRESSURE) {
            aligner.pressure(event.timestamp, event.values[0]);
            counts.update(pipeline);
        }
    }

    @Override
    public void onAccuracyChanged(Sensor sensor, int accuracy) {
        // The standardization does not depend on the reported accuracy.
    }

    public Pipeline pipeline() {
        return pipeline;
    }

    public SensorAligner aligner() {
        return aligner;
    }
}
