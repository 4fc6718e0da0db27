package ai.onnxruntime;

import java.util.Collections;
import java.util.Map;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/OnnxModelMetadata.html#getCustomMetadata(). */
public final class OnnxModelMetadata {
    private final Map<String, String> custom;

    OnnxModelMetadata(Map<String, String> custom) {
        this.custom = custom;
    }

    public Map<String, String> getCustomMetadata() {
        return Collections.unmodifiableMap(custom);
    }
}
