package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/ValueInfo.html. */
public interface ValueInfo {
}
