package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/TensorInfo.html#getShape(). */
public class TensorInfo implements ValueInfo {
    private final long[] shape;

    TensorInfo(long[] shape) {
        this.shape = shape;
    }

    /** -1 marks a symbolic dimension. */
    public long[] getShape() {
        return shape.clone();
    }
}
