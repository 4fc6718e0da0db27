package org.stairsense.core;

/**
 * The step-pattern segmentation of spec §3.5 on the vertical dynamic acceleration z, one sample at
 * a time: mirrors {@code stream/_segment.py::StepSegmenter.push}.
 *
 * <ol>
 * <li>A Schmitt trigger with band ±hysteresis turns z into a sign state; an upward crossing
 *     (−1 → +1) ends one segment and starts the next.</li>
 * <li>A segment has a peak when its maximum exceeds τ_peak, a valley when its minimum is below −τ_valley.</li>
 * <li>A window opens at the start of the first segment with a peak after the previous window
 *     closed, and closes at the end of the first segment with a valley.</li>
 * <li>The duration filter keeps windows with {@code min_step_s <= t_end - t_start <= max_step_s}
 *     and at least two samples; the others are returned with their reason, never classified.</li>
 * </ol>
 *
 * <p>With {@code threshold_window_s > 0} the thresholds are multiples of the amplitude
 * A = max(RMS of z over the last window, {@code threshold_floor}), the floor until the first window
 * has passed: the machine runs on z / A.
 */
public final class StepSegmenter {
    private final PipelineConfig config;
    private final Window window = new Window();
    private final BufferMean power;  // mean of z² over the threshold window, or null for absolute thresholds

    private long i;
    private int state;
    private boolean inSegment;   // Python: _seg_start is not None
    private long segStart;
    private long segStartT;
    private double segMax, segMin;
    private boolean open;        // Python: _open is not None
    private long openStart;
    private long openT;

    public StepSegmenter(PipelineConfig config) {
        this.config = config;
        power = config.thresholdWindowS > 0 ? BufferMean.ofSpan(PipelineConfig.secondsToNanos(config.thresholdWindowS), true) : null;
        reset();
    }

    public void reset() {
        if (power != null) {
            power.reset();
        }
        i = 0;
        state = 0;
        inSegment = false;
        segMax = segMin = 0.0;
        open = false;
    }

    /**
     * Consume one vertical sample.
     *
     * @return the window that closes at this sample (a reused object), or null
     */
    public Window push(long tNs, double z) {
        if (power != null) {
            double floor = config.thresholdFloor;
            z /= power.push(tNs, z * z, 0.0, 0.0) ? Math.max(Math.sqrt(power.meanX), floor) : floor;
        }
        long index = i;
        i++;
        int next = state;
        if (z > config.hysteresis) {
            next = 1;
        } else if (z < -config.hysteresis) {
            next = -1;
        }
        Window closed = null;
        if (next == 1 && state == -1) {
            if (inSegment) {
                closed = endSegment(index, tNs);
            }
            inSegment = true;
            segStart = index;
            segStartT = tNs;
            segMax = segMin = z;
        } else if (inSegment) {
            if (z > segMax) {
                segMax = z;
            } else if (z < segMin) {
                segMin = z;
            }
        }
        state = next;
        return closed;
    }

    private Window endSegment(long index, long tNs) {
        if (!open && segMax > config.peakThreshold) {
            open = true;
            openStart = segStart;
            openT = segStartT;
        }
        if (open && segMin < -config.valleyThreshold) {
            open = false;
            window.start = openStart;
            window.stop = index;
            window.tStartNs = openT;
            window.tEndNs = tNs;
            window.status = WindowStatus.of((tNs - openT) / 1e9, index - openStart, config);
            return window;
        }
        return null;
    }
}
