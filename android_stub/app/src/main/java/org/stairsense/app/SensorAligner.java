package org.stairsense.app;

import org.stairsense.core.Pipeline;
import org.stairsense.core.RawSample;

/**
 * Pairs each accelerometer sample with the latest rotation vector at or before its timestamp
 * (spec §3.4 [P], zero-order hold) and hands the row to the {@link Pipeline}.
 *
 * <p>With {@code maxReportLatencyUs} batching the two sensors' batches arrive separately and in
 * either order, so an accelerometer sample waits until a rotation sample at or after its time has
 * arrived. Nothing is dropped silently: accelerometer samples before the first rotation sample and
 * out-of-order timestamps are counted. Ring buffers, no allocation per sample in steady state.
 */
public final class SensorAligner {
    /** Accelerometer samples held at most while waiting for the rotation vector (~20 s at 50 Hz). */
    static final int MAX_PENDING = 1024;

    private final Pipeline pipeline;
    private final boolean needsRotation;
    private final double[] row = new double[RawSample.WIDTH];

    private long[] accT = new long[64];
    private float[] acc = new float[64 * 3];
    private int accHead;
    private int accSize;

    private long[] rotT = new long[64];
    private float[] rot = new float[64 * 4];
    private int rotHead;
    private int rotSize;
    private long lastRotT = Long.MIN_VALUE;
    private long lastAccT = Long.MIN_VALUE;

    private long droppedBeforeRotation;
    private long droppedOutOfOrder;
    private long heldWithoutNewerRotation;

    public SensorAligner(Pipeline pipeline, boolean needsRotation) {
        this.pipeline = pipeline;
        this.needsRotation = needsRotation;
    }

    /** An accelerometer event: values in m/s², timestamp in ns. */
    public void accelerometer(long t, float x, float y, float z) {
        if (t <= lastAccT) {
            droppedOutOfOrder++;
            return;
        }
        lastAccT = t;
        if (accSize == accT.length) {
            growAcc();
        }
        int i = (accHead + accSize) % accT.length;
        accT[i] = t;
        acc[3 * i] = x;
        acc[3 * i + 1] = y;
        acc[3 * i + 2] = z;
        accSize++;
        drain();
    }

    /** A rotation-vector event: Android's values[0..2] and, when present, values[3] (the scalar part). */
    public void rotationVector(long t, float[] values) {
        if (t <= lastRotT) {
            droppedOutOfOrder++;
            return;
        }
        lastRotT = t;
        if (rotSize == rotT.length) {
            growRot();
        }
        int i = (rotHead + rotSize) % rotT.length;
        rotT[i] = t;
        float x = values[0];
        float y = values[1];
        float z = values[2];
        rot[4 * i] = x;
        rot[4 * i + 1] = y;
        rot[4 * i + 2] = z;
        // Spec §3.4 [P]: w = sqrt(1 - x² - y² - z²) when the sensor omits the scalar part.
        rot[4 * i + 3] = values.length > 3 ? values[3] : (float) Math.sqrt(Math.max(0.0, 1.0 - x * x - y * y - z * z));
        rotSize++;
        drain();
    }

    private void drain() {
        while (accSize > 0) {
            long t = accT[accHead];
            if (needsRotation) {
                if (lastRotT < t && accSize <= MAX_PENDING) {
                    return;  // the rotation at this time may still arrive in the next batch
                }
                if (lastRotT < t) {
                    heldWithoutNewerRotation++;
                }
                // The latest rotation at or before t: drop history entries superseded before t.
                while (rotSize > 1 && rotT[(rotHead + 1) % rotT.length] <= t) {
                    rotHead = (rotHead + 1) % rotT.length;
                    rotSize--;
                }
                if (rotSize == 0 || rotT[rotHead] > t) {
                    droppedBeforeRotation++;
                    popAcc();
                    continue;
                }
                for (int c = 0; c < 4; c++) {
                    row[RawSample.ROTVEC + c] = rot[4 * rotHead + c];
                }
            }
            for (int c = 0; c < 3; c++) {
                row[RawSample.ACC + c] = acc[3 * accHead + c];
            }
            popAcc();
            pipeline.push(t, row);
        }
    }

    private void popAcc() {
        accHead = (accHead + 1) % accT.length;
        accSize--;
    }

    private void growAcc() {
        int n = accT.length * 2;
        long[] t2 = new long[n];
        float[] v2 = new float[n * 3];
        for (int k = 0; k < accSize; k++) {
            int i = (accHead + k) % accT.length;
            t2[k] = accT[i];
            System.arraycopy(acc, 3 * i, v2, 3 * k, 3);
        }
        accT = t2;
        acc = v2;
        accHead = 0;
    }

    private void growRot() {
        int n = rotT.length * 2;
        long[] t2 = new long[n];
        float[] v2 = new float[n * 4];
        for (int k = 0; k < rotSize; k++) {
            int i = (rotHead + k) % rotT.length;
            t2[k] = rotT[i];
            System.arraycopy(rot, 4 * i, v2, 4 * k, 4);
        }
        rotT = t2;
        rot = v2;
        rotHead = 0;
    }

    /** Accelerometer samples that came before the first rotation vector (no orientation yet). */
    public long droppedBeforeRotation() {
        return droppedBeforeRotation;
    }

    /** Events whose timestamp did not increase (per sensor). */
    public long droppedOutOfOrder() {
        return droppedOutOfOrder;
    }

    /** Accelerometer samples paired with an older rotation because the rotation stream stalled. */
    public long heldWithoutNewerRotation() {
        return heldWithoutNewerRotation;
    }
}
