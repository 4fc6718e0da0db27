package org.stairsense.core;

import java.util.Map;

/**
 * What an exported model says about itself: mirrors {@code export/_metadata.py} and the checks of
 * {@code export/_runtime.py::_check_metadata}.
 *
 * <p>On Android the map is {@code OrtSession.getMetadata().getCustomMetadata()}; in Python it is
 * {@code session.get_modelmeta().custom_metadata_map}. The content hash is not re-checked here (it
 * needs the serialised protobuf without its hash entry); ONNX Runtime refuses a truncated file.
 */
public final class ModelMetadata {
    /** Value of {@code stairsense.format}: models without it are foreign. */
    public static final String FORMAT = "stairsense-stairstep-onnx";
    /** The one format version this core reads. */
    public static final String FORMAT_VERSION = "1";
    static final String PREFIX = "stairsense.";

    private ModelMetadata() {
    }

    /**
     * The configuration the model was trained with, from its metadata.
     *
     * @param customMetadata the ONNX {@code metadata_props} (key to string value)
     * @param source the model's name, for error messages
     * @throws ModelConfigException for a foreign model, another format version or a configuration
     *     this core cannot run exactly
     */
    public static PipelineConfig configOf(Map<String, String> customMetadata, String source) {
        String format = customMetadata.get(PREFIX + "format");
        if (!FORMAT.equals(format)) {
            throw new ModelConfigException(source + ": a foreign ONNX model (no '" + FORMAT + "' metadata); only "
                    + "models written by stairsense export carry the configuration the front end needs");
        }
        String version = customMetadata.get(PREFIX + "format_version");
        if (!FORMAT_VERSION.equals(version)) {
            throw new ModelConfigException(source + ": stairsense ONNX format version '" + version + "', this core "
                    + "reads " + FORMAT_VERSION + "; re-export the model or update android_stub/core");
        }
        String config = customMetadata.get(PREFIX + "config");
        if (config == null) {
            throw new ModelConfigException(source + ": no stairsense.config metadata; re-export the model");
        }
        try {
            return PipelineConfig.fromJson(config);
        } catch (ModelConfigException e) {
            throw new ModelConfigException(source + ": " + e.getMessage());
        }
    }
}
