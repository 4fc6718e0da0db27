package org.stairsense.tools;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.charset.StandardCharsets;
import org.stairsense.core.Pipeline;
import org.stairsense.core.PipelineConfig;
import org.stairsense.core.RawSample;

/**
 * Throughput of the Java core on a raw log held in memory (file parsing excluded), for
 * {@code benchmarks/bench_android_core.py}.
 *
 * <pre>java org.stairsense.tools.CoreBenchmark CONFIG.json METHOD IN.bin REPEATS</pre>
 *
 * Each repeat builds a fresh {@link Pipeline} (no classifier: the step counter) and pushes every
 * row; prints one JSON object per repeat with the wall and this thread's CPU seconds of the push
 * loop alone, the samples and the steps counted. Three warm-up passes (up to 1 M samples each)
 * first let the JIT reach its optimised code (measured: the first passes run ~40 % slower).
 */
public final class CoreBenchmark {
    private CoreBenchmark() {
    }

    public static void main(String[] args) throws IOException {
        PipelineConfig config = PipelineConfig.fromJson(new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8));
        String method = args[1];
        RawLog log = RawLog.read(Paths.get(args[2]));
        int repeats = Integer.parseInt(args[3]);
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] raw = new double[RawSample.WIDTH];
        for (int r = -3; r < repeats; r++) {
            Pipeline pipeline = new Pipeline(config, method, 50.0, null, null);
            long cpu0 = threads.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            int n = r < 0 ? Math.min(log.size(), 1_000_000) : log.size();  // warm-up passes are shorter
            for (int i = 0; i < n; i++) {
                System.arraycopy(log.rows, i * RawSample.WIDTH, raw, 0, RawSample.WIDTH);
                pipeline.push(log.t[i], raw);
            }
            long wall = System.nanoTime() - wall0;
            long cpu = threads.getCurrentThreadCpuTime() - cpu0;
            if (r >= 0) {
                System.out.printf("{\"wall_s\": %.6f, \"cpu_s\": %.6f, \"samples\": %d, \"steps\": %d}%n",
                        wall / 1e9, cpu / 1e9, pipeline.samples(), pipeline.steps());
            }
        }
    }
}
