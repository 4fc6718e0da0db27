package ai.onnxruntime;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OrtSession.html: run (one
 * {@code samples} input, {@code step_context} when {@link StubRuntime#stepContextShape} is set and
 * {@code height} when {@link StubRuntime#heightShape} is; outputs {@code score}, {@code stair} by
 * the rule of {@link StubRuntime#treesHead}, and {@code onset_score} when {@link StubRuntime#onsetScorer}
 * is set), getMetadata, getInputInfo, getOutputNames, close, and
 * the nested SessionOptions and Result. Answers from {@link StubRuntime} (test scope only).
 */
public class OrtSession implements AutoCloseable {
    OrtSession() {
    }

    public Result run(Map<String, ? extends OnnxTensorLike> inputs) throws OrtException {
        OnnxTensorLike input = inputs.get("samples");
        if (!inputs.keySet().equals(getInputInfo().keySet()) || !(input instanceof OnnxTensor)) {
            throw new OrtException("Unknown or missing input, expected " + getInputInfo().keySet());
        }
        record(inputs, "step_context", StubRuntime.stepContextShape, StubRuntime.stepContexts);
        record(inputs, "height", StubRuntime.heightShape, StubRuntime.heights);
        OnnxTensor tensor = (OnnxTensor) input;
        float score = StubRuntime.scorer.score(tensor.data, tensor.shape);
        Map<String, OnnxValue> outputs = new java.util.LinkedHashMap<>();
        outputs.put("score", createScore(score));
        outputs.put("stair", OnnxTensor.bool(StubRuntime.treesHead ? score > 0f : score >= 0f));
        if (StubRuntime.onsetScorer != null) {
            outputs.put("onset_score", createScore(StubRuntime.onsetScorer.score(tensor.data, tensor.shape)));
        }
        return new Result(outputs);
    }

    /** Checks the shape of input {@code name} (when the graph has one) and keeps a copy of its values. */
    private static void record(Map<String, ? extends OnnxTensorLike> inputs, String name, long[] shape,
                               java.util.List<float[]> seen) throws OrtException {
        if (shape == null) {
            return;
        }
        OnnxTensorLike value = inputs.get(name);
        if (!(value instanceof OnnxTensor) || !java.util.Arrays.equals(((OnnxTensor) value).shape, shape)) {
            throw new OrtException("Missing Input: " + name + ", or not of shape " + java.util.Arrays.toString(shape));
        }
        seen.add(((OnnxTensor) value).data.clone());
    }

    private static OnnxValue createScore(float score) throws OrtException {
        return OnnxTensor.createTensor(OrtEnvironment.getEnvironment(), java.nio.FloatBuffer.wrap(new float[] {score}), new long[] {1});
    }

    public OnnxModelMetadata getMetadata() throws OrtException {
        return new OnnxModelMetadata(StubRuntime.customMetadata);
    }

    public Map<String, NodeInfo> getInputInfo() throws OrtException {
        Map<String, NodeInfo> inputs = new java.util.LinkedHashMap<>();
        inputs.put("samples", new NodeInfo(new TensorInfo(StubRuntime.inputShape)));
        if (StubRuntime.stepContextShape != null) {
            inputs.put("step_context", new NodeInfo(new TensorInfo(StubRuntime.stepContextShape)));
        }
        if (StubRuntime.heightShape != null) {
            inputs.put("height", new NodeInfo(new TensorInfo(StubRuntime.heightShape)));
        }
        return inputs;
    }

    public Set<String> getOutputNames() {
        Set<String> outputs = new java.util.LinkedHashSet<>();
        outputs.add("score");
        outputs.add("stair");
        if (StubRuntime.onsetScorer != null) {
            outputs.add("onset_score");
        }
        return outputs;
    }

    @Override
    public void close() throws OrtException {
    }

    /** Signature stub of OrtSession.SessionOptions: the two settings the glue makes. */
    public static class SessionOptions implements AutoCloseable {
        public void setIntraOpNumThreads(int numThreads) throws OrtException {
        }

        public void addConfigEntry(String configKey, String configValue) throws OrtException {
        }

        @Override
        public void close() {
        }
    }

    /** Signature stub of OrtSession.Result: get(String) and close. */
    public static class Result implements AutoCloseable {
        private final Map<String, OnnxValue> values;

        Result(Map<String, OnnxValue> values) {
            this.values = values;
        }

        public Optional<OnnxValue> get(String key) {
            return Optional.ofNullable(values.get(key));
        }

        @Override
        public void close() {
        }
    }
}
