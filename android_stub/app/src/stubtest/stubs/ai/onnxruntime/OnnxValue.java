package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OnnxValue.html (close only). */
public interface OnnxValue extends AutoCloseable {
    @Override
    void close();
}
