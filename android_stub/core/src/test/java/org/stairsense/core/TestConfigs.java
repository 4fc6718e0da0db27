package org.stairsense.core;

/** Configurations for the tests, written as the JSON Python's {@code PipelineConfig.to_json()} gives. */
final class TestConfigs {
    private TestConfigs() {
    }

    static String json(String overrides) {
        String base = "\"rate_hz\": null, \"smoothing\": \"time\", \"smooth_ms\": 300.0, \"gravity_ms\": 500.0, "
                + "\"orientation\": \"auto\", \"segmentation\": \"pattern\", \"peak_threshold\": 0.5, "
                + "\"valley_threshold\": 0.5, \"hysteresis\": 0.1, \"min_step_s\": 0.3, \"max_step_s\": 2.0, "
                + "\"window_ms\": 500.0, \"window_overlap\": 0.5, \"max_gap_s\": 0.3";
        if (overrides.isEmpty()) {
            return "{" + base + "}";
        }
        // Later keys win, as in a Python dict literal: drop the base entries that are overridden.
        StringBuilder kept = new StringBuilder();
        for (String entry : base.split(", ")) {
            String key = entry.substring(0, entry.indexOf(':'));
            if (!overrides.contains(key + ":")) {
                kept.append(entry).append(", ");
            }
        }
        return "{" + kept + overrides + "}";
    }

    static PipelineConfig config(String overrides) {
        return PipelineConfig.fromJson(json(overrides));
    }
}
