package org.stairsense.core;

/**
 * A model whose metadata or configuration this core cannot run exactly as it was trained: not a
 * stairsense export, another format version, a missing or unknown configuration key, or a
 * front-end option the Java core does not implement. The message names the problem and the fix.
 */
public final class ModelConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public ModelConfigException(String message) {
        super(message);
    }
}
