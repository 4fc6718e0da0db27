package ai.onnxruntime;

import java.nio.FloatBuffer;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OnnxTensor.html: createTensor and getFloatBuffer. */
public class OnnxTensor extends OnnxTensorLike {
    final float[] data;
    final long[] shape;

    private OnnxTensor(float[] data, long[] shape) {
        this.data = data;
        this.shape = shape;
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
        return new OnnxTensor(copy, shape.clone());
    }

    public FloatBuffer getFloatBuffer() {
        return FloatBuffer.wrap(data.clone());
    }

    @Override
    public void close() {
    }
}
