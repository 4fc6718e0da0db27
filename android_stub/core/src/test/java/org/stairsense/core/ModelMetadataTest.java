package org.stairsense.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A phone runs a model only with the configuration it was trained with; anything else is a clear error. */
class ModelMetadataTest {
    private static Map<String, String> metadata(String configJson) {
        Map<String, String> m = new HashMap<>();
        m.put("stairsense.format", ModelMetadata.FORMAT);
        m.put("stairsense.format_version", "1");
        m.put("stairsense.config", configJson);
        return m;
    }

    private static String messageOf(Map<String, String> metadata) {
        return assertThrows(ModelConfigException.class, () -> ModelMetadata.configOf(metadata, "stairs.onnx")).getMessage();
    }

    @Test
    void readsTheExportedConfiguration() {
        PipelineConfig c = ModelMetadata.configOf(metadata(TestConfigs.json("\"rate_hz\": 30, \"orientation\": \"vertical\"")), "m");
        assertEquals(30.0, c.rateHz);
        assertEquals("vertical", c.orientation);
        assertEquals(PipelineConfig.Smoothing.TIME, c.smoothing);
        assertEquals(2.0, c.maxStepS);
    }

    @Test
    void refusesForeignModelsAndOtherVersions() {
        Map<String, String> foreign = metadata(TestConfigs.json(""));
        foreign.remove("stairsense.format");
        assertTrue(messageOf(foreign).contains("foreign"));
        Map<String, String> newer = metadata(TestConfigs.json(""));
        newer.put("stairsense.format_version", "2");
        assertTrue(messageOf(newer).contains("version '2'"));
    }

    @Test
    void refusesUnknownAndMissingKeys() {
        String unknown = messageOf(metadata(TestConfigs.json("\"jerk_filter\": 1.0")));
        assertTrue(unknown.contains("[jerk_filter]") && unknown.contains("newer stairsense"), unknown);
        String missing = messageOf(metadata("{\"rate_hz\": null}"));
        assertTrue(missing.contains("lacks keys") && missing.contains("smoothing"), missing);
    }

    @Test
    void readsWhetherTheModelNeedsTheBarometer() {
        PipelineConfig baro = ModelMetadata.configOf(metadata(TestConfigs.json(
                "\"step_context\": 5, \"step_context_gap_s\": 1.5, \"barometer\": true")), "m");
        assertTrue(baro.barometer);
        assertEquals("with barometer", baro.modelKind());
        PipelineConfig older = ModelMetadata.configOf(metadata(TestConfigs.json("")), "m");  // before the key existed
        assertEquals(false, older.barometer);
        assertEquals("accelerometer only", older.modelKind());
        String noContext = messageOf(metadata(TestConfigs.json("\"step_context\": 0, \"barometer\": true")));
        assertTrue(noContext.startsWith("stairs.onnx: barometer=true needs step_context >= 1"), noContext);
        String notABoolean = messageOf(metadata(TestConfigs.json("\"step_context\": 5, \"barometer\": 1.0")));
        assertTrue(notABoolean.contains("barometer must be true or false, got 1.0"), notABoolean);
    }

    @Test
    void readsTheStepVote() {
        assertEquals(5, ModelMetadata.configOf(metadata(TestConfigs.json("\"vote_steps\": 5")), "m").voteSteps);
        assertEquals(1, ModelMetadata.configOf(metadata(TestConfigs.json("")), "m").voteSteps);  // before the key existed
        for (String bad : new String[] {"2", "0", "-1", "1.5"}) {
            String message = messageOf(metadata(TestConfigs.json("\"vote_steps\": " + bad)));
            assertTrue(message.startsWith("stairs.onnx: vote_steps must be an odd whole number"), message);
        }
    }

    @Test
    void refusesWhatTheJavaCoreDoesNotImplement() {
        assertTrue(messageOf(metadata(TestConfigs.json("\"segmentation\": \"sliding\""))).contains("segmentation='sliding'"));
        assertTrue(messageOf(metadata(TestConfigs.json("\"orientation\": \"ahrs\""))).contains("Madgwick"));
    }

    @Test
    void refusesInvalidValuesAsPythonDoes() {
        assertTrue(messageOf(metadata(TestConfigs.json("\"min_step_s\": 3.0"))).contains("min_step_s < max_step_s"));
        assertTrue(messageOf(metadata(TestConfigs.json("\"hysteresis\": 0.9"))).contains(">= hysteresis"));
        assertTrue(messageOf(metadata(TestConfigs.json("\"smooth_ms\": \"300\""))).contains("must be a number"));
    }

    @Test
    void boundsEverySizeBeforeSizingAnythingFromIt() {
        for (Map.Entry<String, Double> limit : PipelineConfig.LIMITS.entrySet()) {
            double past = limit.getValue() + 2;  // an odd vote stays odd
            String message = messageOf(metadata(TestConfigs.json("\"" + limit.getKey() + "\": " + past)));
            assertEquals("stairs.onnx: " + limit.getKey() + " must be at most "
                    + limit.getValue().longValue() + ", got " + past, message);
        }
    }

    @Test
    void theOrientationMustBeRunnableOnThisPhone() {
        PipelineConfig rotvec = TestConfigs.config("\"orientation\": \"rotvec\"");
        assertThrows(ModelConfigException.class, () -> Standardizer.resolveOrientation(rotvec, false, false));
        assertEquals("vertical", Standardizer.resolveOrientation(TestConfigs.config(""), false, false));
        assertEquals("rotvec", Standardizer.resolveOrientation(TestConfigs.config(""), true, false));
    }
}
