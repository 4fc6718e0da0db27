package org.stairsense.app;

import java.util.concurrent.CopyOnWriteArrayList;
import org.stairsense.core.ClimbCounter;
import org.stairsense.core.Pipeline;

/**
 * What the UI shows: steps (kept windows, no model needed), stair steps (kept windows the step
 * vote over the model's answers called STAIR, {@code Pipeline.stairSteps}), with a barometer model
 * the floors climbed and descended ({@code Pipeline.climb}), and which model runs. Written by the
 * service and the sensor thread, read by any thread.
 */
public final class StepCounts {
    /** Told about every change, on the sensor thread. */
    public interface Listener {
        void onCounts(long steps, long stairSteps);
    }

    public static final StepCounts INSTANCE = new StepCounts();

    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile long steps;
    private volatile long stairSteps;
    private volatile long floorsAscended = -1;  // -1: the model reads no barometer
    private volatile long floorsDescended = -1;
    private volatile String model = "no model loaded";

    public void addListener(Listener listener) {
        listeners.add(listener);
        listener.onCounts(steps, stairSteps);
    }

    public void removeListener(Listener listener) {
        listeners.remove(listener);
    }

    /** Whether a screen shows the counts now (a listener is registered): they must then be live. */
    public boolean watched() {
        return !listeners.isEmpty();
    }

    /** Publish the pipeline's counts; the climb changes only with the stair steps, so they tell when to. */
    void update(Pipeline pipeline) {
        long newSteps = pipeline.steps();
        long newStairSteps = pipeline.stairSteps();
        if (newSteps == steps && newStairSteps == stairSteps) {
            return;
        }
        ClimbCounter climb = pipeline.climb();
        floorsAscended = climb == null ? -1 : climb.floorsAscended();
        floorsDescended = climb == null ? -1 : climb.floorsDescended();
        steps = newSteps;
        stairSteps = newStairSteps;
        for (Listener l : listeners) {
            l.onCounts(newSteps, newStairSteps);
        }
    }

    public long steps() {
        return steps;
    }

    public long stairSteps() {
        return stairSteps;
    }

    /** Floors climbed on stairs (3 m each), or -1 when the model reads no barometer and cannot tell. */
    public long floorsAscended() {
        return floorsAscended;
    }

    /** Floors descended on stairs (3 m each), or -1 when the model reads no barometer. */
    public long floorsDescended() {
        return floorsDescended;
    }

    /** Which model counts the stair steps, e.g. "model with barometer" ({@code PipelineConfig.modelKind}). */
    public String model() {
        return model;
    }

    void setModel(String description) {
        model = description;
        for (Listener l : listeners) {
            l.onCounts(steps, stairSteps);
        }
    }
}
