package org.stairsense.core;

/** Why a candidate window was kept or rejected: mirrors {@code stream/_segment.py::WindowStatus} (same codes). */
public enum WindowStatus {
    KEPT, TOO_SHORT, TOO_LONG, TOO_FEW_SAMPLES;

    /** The duration filter of spec §3.5, as Python's {@code _status}: too short beats too long beats too few samples. */
    static WindowStatus of(double durationS, long nSamples, PipelineConfig config) {
        if (durationS < config.minStepS) {
            return TOO_SHORT;
        }
        if (durationS > config.maxStepS) {
            return TOO_LONG;
        }
        if (nSamples < 2) {
            return TOO_FEW_SAMPLES;
        }
        return KEPT;
    }
}
