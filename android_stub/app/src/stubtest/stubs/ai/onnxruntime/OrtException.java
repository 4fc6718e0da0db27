package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OrtException.html (checked). */
public class OrtException extends Exception {
    private static final long serialVersionUID = 1L;

    public OrtException(String message) {
        super(message);
    }
}
