package ai.onnxruntime;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OnnxTensor.html: createTensor,
 * getFloatBuffer and getByteBuffer (a bool tensor's bytes, 0 or 1, as the real one gives them).
 */
public class OnnxTensor extends OnnxTensorLike {
    final float[] data;
    final long[] shape;
    private final byte[] bytes;  // a bool tensor's values; null for float32

    private OnnxTensor(float[] data, long[] shape, byte[] bytes) {
        this.data = data;
        this.shape = shape;
        this.bytes = bytes;
    }

    /** NOT part of ONNX Runtime: a {@code [1]} bool output, as a graph's {@code stair}. */
    static OnnxTensor bool(boolean value) {
        return new OnnxTensor(null, new long[] {1}, new byte[] {(byte) (value ? 1 : 0)});
    }

    public static OnnxTensor createTensor(OrtEnvironment env, FloatBuffer data, long[] shape) throws OrtException {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        if (n != data.remaining()) {
            throw new OrtException("shape and data do not match");  // the real check
        }
        float[] copy = new float[data.remaining()];
        data.duplicate().get(copy);
        return new OnnxTensor(copy, shape.clone(), null);
    }

    /** The values of a float32 tensor; null for any other type, as in the real one. */
    public FloatBuffer getFloatBuffer() {
        return data == null ? null : FloatBuffer.wrap(data.clone());
    }

    /** A copy of the tensor's bytes (here: a bool tensor's; the real one gives any type's raw bytes). */
    public ByteBuffer getByteBuffer() {
        return bytes == null ? null : ByteBuffer.wrap(bytes.clone());
    }

    @Override
    public void close() {
    }
}
