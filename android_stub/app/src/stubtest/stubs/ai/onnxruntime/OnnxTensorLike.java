package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OnnxTensorLike.html (the run() input type). */
public abstract class OnnxTensorLike implements OnnxValue {
}
