package org.stairsense.app;

import org.stairsense.core.Pipeline;
import org.stairsense.core.RawSample;

/**
 * Pairs each accelerometer sample with the latest rotation vector and the latest air pressure at
 * or before its timestamp (spec §3.4 [P], zero-order hold), for the streams the model needs, and
 * hands the row to the {@link Pipeline}.
 *
 * <p>With {@code maxReportLatencyUs} batching the sensors' batches arrive separately and in any
 * order, so an accelerometer sample waits until each needed stream has delivered a sample at or
 * after its time. Nothing is dropped silently: accelerometer samples before a needed stream's first
 * sample and out-of-order timestamps are counted. Ring buffers, no allocation per sample in steady
 * state.
 */
public final class SensorAligner {
    /** Accelerometer samples held at most while waiting for the other streams (~20 s at 50 Hz). */
    static final int MAX_PENDING = 1024;

    /**
     * One stream held between its samples: a ring of its recent samples, the latest at or before
     * the accelerometer sample being aligned first.
     */
    private static final class Held {
        final int width;
        final int column;  // where its values go in a RawSample row
        long[] t = new long[64];
        float[] values;
        int head;
        int size;
        long lastT = Long.MIN_VALUE;
        long droppedBefore;
        long heldWithoutNewer;

        Held(int width, int column) {
            this.width = width;
            this.column = column;
            this.values = new float[64 * width];
        }

        /** Append a sample (timestamps increasing); its first {@code width} values. */
        void add(long time, float[] v) {
            if (size == t.length) {
                grow();
            }
            int i = (head + size) % t.length;
            t[i] = time;
            System.arraycopy(v, 0, values, i * width, width);
            size++;
            lastT = time;
        }

        /** Drop the samples superseded at or before {@code time}; true when one at or before it remains. */
        boolean holdAt(long time) {
            while (size > 1 && t[(head + 1) % t.length] <= time) {
                head = (head + 1) % t.length;
                size--;
            }
            return size > 0 && t[head] <= time;
        }

        void copyInto(double[] row) {
            for (int c = 0; c < width; c++) {
                row[column + c] = values[head * width + c];
            }
        }

        private void grow() {
            int n = t.length * 2;
            long[] t2 = new long[n];
            float[] v2 = new float[n * width];
            for (int k = 0; k < size; k++) {
                int i = (head + k) % t.length;
                t2[k] = t[i];
                System.arraycopy(values, i * width, v2, k * width, width);
            }
            t = t2;
            values = v2;
            head = 0;
        }
    }

    private final Pipeline pipeline;
    private final Held rotation;  // null when the method does not read it
    private final Held pressure;  // null when the model does not read it
    private final Held[] needed;
    private final double[] row = new double[RawSample.WIDTH];
    private final float[] rotationValues = new float[4];
    private final float[] pressureValue = new float[1];

    private long[] accT = new long[64];
    private float[] acc = new float[64 * 3];
    private int accHead;
    private int accSize;
    private long lastAccT = Long.MIN_VALUE;
    private long droppedOutOfOrder;

    /**
     * @param needsRotation the orientation method reads the rotation vector ({@code rotvec})
     * @param needsPressure the model reads the barometer (its configuration has {@code barometer})
     */
    public SensorAligner(Pipeline pipeline, boolean needsRotation, boolean needsPressure) {
        this.pipeline = pipeline;
        this.rotation = needsRotation ? new Held(4, RawSample.ROTVEC) : null;
        this.pressure = needsPressure ? new Held(1, RawSample.PRESSURE) : null;
        java.util.List<Held> streams = new java.util.ArrayList<>(2);
        if (rotation != null) {
            streams.add(rotation);
        }
        if (pressure != null) {
            streams.add(pressure);
        }
        this.needed = streams.toArray(new Held[0]);
        java.util.Arrays.fill(row, Double.NaN);  // the streams nobody feeds stay NaN (RawSample's convention)
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
        if (rotation == null) {
            return;
        }
        if (t <= rotation.lastT) {
            droppedOutOfOrder++;
            return;
        }
        float x = values[0];
        float y = values[1];
        float z = values[2];
        rotationValues[0] = x;
        rotationValues[1] = y;
        rotationValues[2] = z;
        // Spec §3.4 [P]: w = sqrt(1 - x² - y² - z²) when the sensor omits the scalar part.
        rotationValues[3] = values.length > 3 ? values[3] : (float) Math.sqrt(Math.max(0.0, 1.0 - x * x - y * y - z * z));
        rotation.add(t, rotationValues);
        drain();
    }

    /** A pressure event (Sensor.TYPE_PRESSURE): values[0] in hPa. */
    public void pressure(long t, float hPa) {
        if (pressure == null) {
            return;
        }
        if (t <= pressure.lastT) {
            droppedOutOfOrder++;
            return;
        }
        pressureValue[0] = hPa;
        pressure.add(t, pressureValue);
        drain();
    }

    private void drain() {
        while (accSize > 0) {
            long t = accT[accHead];
            for (Held stream : needed) {
                if (stream.lastT < t && accSize <= MAX_PENDING) {
                    return;  // this stream's sample at this time may still arrive in the next batch
                }
            }
            int i = accHead;
            popAcc();
            if (holdAll(t)) {
                for (int c = 0; c < 3; c++) {
                    row[RawSample.ACC + c] = acc[3 * i + c];
                }
                pipeline.push(t, row);
            }
        }
    }

    /** Puts each needed stream's latest sample at or before {@code t} in the row; false (counted) when one has none yet. */
    private boolean holdAll(long t) {
        for (Held stream : needed) {
            if (stream.lastT < t) {
                stream.heldWithoutNewer++;
            }
            if (!stream.holdAt(t)) {
                stream.droppedBefore++;
                return false;
            }
            stream.copyInto(row);
        }
        return true;
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

    /** Accelerometer samples that came before the first rotation vector (no orientation yet). */
    public long droppedBeforeRotation() {
        return rotation == null ? 0 : rotation.droppedBefore;
    }

    /** Accelerometer samples that came before the first pressure reading (no height yet). */
    public long droppedBeforePressure() {
        return pressure == null ? 0 : pressure.droppedBefore;
    }

    /** Events whose timestamp did not increase (per sensor). */
    public long droppedOutOfOrder() {
        return droppedOutOfOrder;
    }

    /** Accelerometer samples paired with an older rotation because the rotation stream stalled. */
    public long heldWithoutNewerRotation() {
        return rotation == null ? 0 : rotation.heldWithoutNewer;
    }

    /** Accelerometer samples paired with an older pressure because the barometer stream stalled. */
    public long heldWithoutNewerPressure() {
        return pressure == null ? 0 : pressure.heldWithoutNewer;
    }
}
