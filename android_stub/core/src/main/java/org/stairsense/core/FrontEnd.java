package org.stairsense.core;

/**
 * The on-device front end: {@link Standardizer} feeding {@link StepSegmenter}, one raw sample at a
 * time; mirrors {@code stream/_frontend.py::FrontEnd.push} (with {@code segmentation='pattern'}).
 */
public final class FrontEnd {
    private final Standardizer standardizer;
    private final StepSegmenter segmenter;
    private boolean produced;
    private long standardizedCount;

    public FrontEnd(PipelineConfig config, String method, double nativeRateHz) {
        standardizer = new Standardizer(config, method, nativeRateHz);
        segmenter = new StepSegmenter(config);
    }

    public void reset() {
        standardizer.reset();
        segmenter.reset();
        standardizedCount = 0;
        produced = false;
    }

    /**
     * Consume one raw row (layout {@link RawSample}).
     *
     * @return the window that closes at this sample (reused object), or null
     */
    public Window push(long tNs, double[] raw) {
        produced = standardizer.push(tNs, raw);
        if (!produced) {
            return null;
        }
        standardizedCount++;
        return segmenter.push(tNs, standardizer.verticalAcc);
    }

    /** Whether the last push produced a standardized sample (false while the buffers fill). */
    public boolean produced() {
        return produced;
    }

    /** Standardized samples produced since the last reset; the last one has index {@code count - 1}. */
    public long standardizedCount() {
        return standardizedCount;
    }

    public Standardizer standardizer() {
        return standardizer;
    }
}
