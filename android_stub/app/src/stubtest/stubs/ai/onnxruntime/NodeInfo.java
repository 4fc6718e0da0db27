package ai.onnxruntime;

/** Signature stub of https://onnxruntime.ai/docs/api/java/ai/onnxruntime/NodeInfo.html#getInfo(). */
public class NodeInfo {
    private final ValueInfo info;

    NodeInfo(ValueInfo info) {
        this.info = info;
    }

    public ValueInfo getInfo() {
        return info;
    }
}
