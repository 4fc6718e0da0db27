package org.stairsense.app;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.stairsense.core.HeightContext;
import org.stairsense.core.ModelConfigException;
import org.stairsense.core.ModelMetadata;
import org.stairsense.core.Pipeline;
import org.stairsense.core.PipelineConfig;
import org.stairsense.core.StepContext;

/**
 * The exported stair-step model in an ONNX Runtime session: one {@code run} per kept window.
 *
 * <p>The graph ({@code stairsense export}) takes {@code samples: float32 [n, 3]} ({@code [n, 6]} for
 * Mizell models) and returns {@code score: float32 [1]} and {@code stair: bool [1]}, the decision by
 * the head's own rule at a tie (KOMD's score ≥ 0, the trees' score &gt; 0), which is what the phone
 * acts on. A model whose
 * configuration has {@code step_context > 0} also takes {@code step_context: float32 [1, 36]}, the
 * window's step-context features, and a model whose configuration has {@code barometer} (one
 * "with barometer", {@link PipelineConfig#modelKind}) takes {@code height: float32 [1, 7]}, its
 * height features: the core {@link Pipeline} computes both ({@link StepContext},
 * {@link HeightContext}) and hands them over with the window. A model exported with a flight-onset
 * threshold (only the trees have one) also returns {@code onset_score: float32 [1]}, &gt; 0 where the
 * window reaches that lower threshold; the pipeline's vote reads it through {@link #onset} ({@link org.stairsense.core.StepVote}).
 * The session options are the two {@code export/_runtime.py::session_options} sets. The front-end
 * configuration is read from the model's own metadata, so the phone cannot run it with another one.
 */
public final class OrtStairClassifier implements Pipeline.WindowClassifier, AutoCloseable {
    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;
    private final PipelineConfig config;
    private final int columns;
    private final long[] shape = new long[2];
    private final boolean takesStepContext;
    private final boolean takesHeight;
    private final long[] contextShape = {1, StepContext.N_FEATURES};
    private final long[] heightShape = {1, HeightContext.N_FEATURES};
    private final boolean hasOnset;  // the graph returns onset_score
    private boolean onset;  // the last window's onset_score > 0

    /**
     * @param model the bytes of the {@code .onnx} file
     * @param name the file's name, for error messages
     * @throws ModelConfigException when the model is not a stairsense export this core can run
     */
    public OrtStairClassifier(byte[] model, String name) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);  // one window is too small to share between threads
        options.addConfigEntry("session.disable_quant_qdq", "1");  // fold int8 weights once at load
        session = env.createSession(model, options);
        config = ModelMetadata.configOf(session.getMetadata().getCustomMetadata(), name);
        Map<String, NodeInfo> inputs = session.getInputInfo();
        NodeInfo input = inputs.get("samples");
        if (input == null || !(input.getInfo() instanceof TensorInfo)) {
            throw new ModelConfigException(name + ": no 'samples' tensor input; export the model with stairsense export");
        }
        long[] inputShape = ((TensorInfo) input.getInfo()).getShape();
        columns = (int) inputShape[1];
        int expected = "mizell".equals(config.orientation) ? 6 : 3;
        if (inputShape.length != 2 || columns != expected) {
            throw new ModelConfigException(name + ": input 'samples' has shape " + java.util.Arrays.toString(inputShape)
                    + " but orientation '" + config.orientation + "' gives " + expected + " columns");
        }
        takesStepContext = hostInput(inputs, name, "step_context", config.stepContext > 0,
                "step_context=" + config.stepContext, contextShape);
        takesHeight = hostInput(inputs, name, "height", config.barometer, "barometer=" + config.barometer, heightShape);
        hasOnset = session.getOutputNames().contains("onset_score");
    }

    /**
     * Whether the graph takes {@code input}, features the core computes, after checking that it does
     * exactly when the configuration ({@code setting}) makes the core compute them, with {@code shape}.
     */
    private static boolean hostInput(Map<String, NodeInfo> inputs, String name, String input, boolean configured,
                                     String setting, long[] shape) {
        NodeInfo info = inputs.get(input);
        if ((info != null) != configured) {
            throw new ModelConfigException(name + ": its configuration has " + setting + " but the graph "
                    + (info == null ? "has no" : "has a") + " '" + input + "' input; export the model again with "
                    + "stairsense export");
        }
        if (info != null && !(info.getInfo() instanceof TensorInfo
                && Arrays.equals(((TensorInfo) info.getInfo()).getShape(), shape))) {
            throw new ModelConfigException(name + ": input '" + input + "' must be a float32 " + Arrays.toString(shape)
                    + " tensor (the features this core computes)");
        }
        return configured;
    }

    /** The front-end configuration the model was trained with. */
    public PipelineConfig config() {
        return config;
    }

    @Override
    public boolean isStair(float[] samples, int rows, int cols) {
        return isStair(samples, rows, cols, null, null);
    }

    @Override
    public boolean isStair(float[] samples, int rows, int cols, float[] stepContext) {
        return isStair(samples, rows, cols, stepContext, null);
    }

    @Override
    public boolean isStair(float[] samples, int rows, int cols, float[] stepContext, float[] height) {
        if (cols != columns) {
            throw new IllegalArgumentException("the model takes " + columns + " columns, the front end gave " + cols);
        }
        if (takesStepContext && stepContext == null) {
            throw new IllegalArgumentException("the model takes step-context features: run it in a Pipeline built with "
                    + "its configuration (step_context=" + config.stepContext + ")");
        }
        if (takesHeight && height == null) {
            throw new IllegalArgumentException("the model takes height features: run it in a Pipeline built with its "
                    + "configuration (barometer=true), fed the air pressure");
        }
        shape[0] = rows;
        shape[1] = cols;
        try (OnnxTensor tensor = OnnxTensor.createTensor(env, FloatBuffer.wrap(samples, 0, rows * cols), shape);
             OnnxTensor context = takesStepContext
                     ? OnnxTensor.createTensor(env, FloatBuffer.wrap(stepContext, 0, StepContext.N_FEATURES), contextShape)
                     : null;
             OnnxTensor heights = takesHeight
                     ? OnnxTensor.createTensor(env, FloatBuffer.wrap(height, 0, HeightContext.N_FEATURES), heightShape)
                     : null;
             OrtSession.Result result = session.run(inputs(tensor, context, heights))) {
            OnnxValue stair = result.get("stair").orElseThrow(() -> new IllegalStateException("the model has no 'stair' output"));
            onset = hasOnset && ((OnnxTensor) result.get("onset_score").orElseThrow(
                    () -> new IllegalStateException("the model has no 'onset_score' output"))).getFloatBuffer().get(0) > 0f;
            return ((OnnxTensor) stair).getByteBuffer().get(0) != 0;
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime failed on a window of " + rows + " samples", e);
        }
    }

    /** Whether the window the last {@code isStair} call classified reached the onset threshold (false without one). */
    @Override
    public boolean onset() {
        return onset;
    }

    private static Map<String, OnnxTensor> inputs(OnnxTensor samples, OnnxTensor stepContext, OnnxTensor height) {
        if (stepContext == null && height == null) {
            return Collections.singletonMap("samples", samples);
        }
        Map<String, OnnxTensor> all = new HashMap<>(4);
        all.put("samples", samples);
        if (stepContext != null) {
            all.put("step_context", stepContext);
        }
        if (height != null) {
            all.put("height", height);
        }
        return all;
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }
}
