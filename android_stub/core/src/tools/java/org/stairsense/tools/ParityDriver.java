package org.stairsense.tools;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.stairsense.core.ClimbCounter;
import org.stairsense.core.Json;
import org.stairsense.core.ModelMetadata;
import org.stairsense.core.Pipeline;
import org.stairsense.core.PipelineConfig;
import org.stairsense.core.RawSample;
import org.stairsense.core.Standardizer;
import org.stairsense.core.StepVote;
import org.stairsense.core.Window;

/**
 * Runs the Java core on a raw log and writes everything it produced, for
 * {@code tests/test_android_parity.py} to compare with the Python pipeline.
 *
 * <pre>java org.stairsense.tools.ParityDriver CONFIG.json METHOD NATIVE_RATE_HZ IN.bin OUT [DECISIONS.bin]</pre>
 *
 * CONFIG.json is a PipelineConfig object, or an exported model's metadata map (what
 * {@code session.get_modelmeta().custom_metadata_map} gives; the configuration is then read through
 * {@code ModelMetadata.configOf}, the phone's path). METHOD is a concrete orientation method or {@code auto} (resolved from whether the first row
 * has a rotation vector). Writes {@code OUT.windows.txt}: {@code R t_ns} at a restart after a gap,
 * {@code W start stop t_start t_end STATUS} per window, followed for a kept window of a configuration
 * with {@code step_context > 0} by {@code X f1 ... f36} (its step-context features, Java's
 * {@code Double.toString}: they read back exactly) and of one with {@code barometer} by
 * {@code H f1 ... f5} (its height features), and last {@code C steps}; and
 * {@code OUT.samples.bin}: per standardized sample, little-endian int64 segment, index, t_ns, then
 * 6 float64 columns (NaN-padded) and the vertical float64. An exception is written as
 * {@code E message} and the exit status is 3.
 *
 * <p>With DECISIONS.bin (one int8 per kept window: bit 0 (value 1) STAIR, bit 1 (value 2) at the
 * model's flight-onset threshold), the pipeline runs with a classifier that answers those in turn,
 * as the exported model would; at the end it is flushed and, for a barometer configuration,
 * {@code M up down climbed_m descended_m floors_up floors_down} written before {@code C} (its
 * {@link org.stairsense.core.ClimbCounter}).
 *
 * <p>The server also runs {@link StepVote} alone: a line {@code vote STEPS MAX_GAP_S IN.bin OUT.bin}
 * (tab-separated; MAX_GAP_S as Python's {@code repr}) reads little-endian int64 rows
 * {@code decision t_start t_end}, where decision -1 is a flush (a segment ended; its times are
 * ignored) and 0..3 a window, its bits as in DECISIONS.bin (bit 0 STAIR, bit 1 onset), and writes an
 * int64 pair {@code row decision} (the voted decision, 1 = STAIR) per window decided, {@code row}
 * being the input row whose push or flush decided it.
 */
public final class ParityDriver {
    private ParityDriver() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--serve")) {
            serve();
            return;
        }
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: ParityDriver CONFIG.json METHOD NATIVE_RATE_HZ IN.bin OUT [DECISIONS.bin]  |  "
                    + "ParityDriver --serve");
            System.exit(2);
        }
        System.exit(run(args));
    }

    /**
     * One run per stdin line (the five arguments, or a {@code vote} line, tab-separated), answering
     * {@code done STATUS} on stdout: one JVM for a whole pytest session instead of one per generated example.
     */
    private static void serve() throws IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            int status;
            String[] args = line.split("\t");
            try {
                status = args[0].equals("vote") ? vote(args) : run(args);
            } catch (RuntimeException | IOException e) {
                status = 4;
                System.err.println(e);
            }
            System.out.println("done " + status);
            System.out.flush();
        }
    }

    /** The {@code vote} command (class comment). */
    private static int vote(String[] args) throws IOException {
        StepVote vote = new StepVote(Integer.parseInt(args[1]), Double.parseDouble(args[2]));
        ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(Paths.get(args[3]))).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer pair = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(Paths.get(args[4])))) {
            for (long row = 0; in.remaining() >= 24; row++) {
                long decision = in.getLong();
                long tStart = in.getLong();
                long tEnd = in.getLong();
                int n = decision < 0 ? vote.flush() : vote.push((decision & 1) != 0, (decision & 2) != 0, tStart, tEnd);
                for (int k = 0; k < n; k++) {
                    pair.clear();
                    pair.putLong(row).putLong(vote.decided(k) ? 1 : 0);
                    out.write(pair.array());
                }
            }
        }
        return 0;
    }

    /** Reads a configuration file: a PipelineConfig JSON object, or a model's metadata map (as the phone does). */
    private static PipelineConfig config(Path path) throws IOException {
        String text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
        if (text.contains("\"stairsense.format\"")) {
            return ModelMetadata.configOf(Json.parseStringMap(text), path.toString());
        }
        return PipelineConfig.fromJson(text);
    }

    private static int run(String[] args) throws IOException {
        Path out = Paths.get(args[4]);
        int status = 0;
        try (PrintWriter windows = new PrintWriter(Files.newBufferedWriter(Paths.get(out + ".windows.txt")));
             DataOutputStream samples = new DataOutputStream(new BufferedOutputStream(
                     Files.newOutputStream(Paths.get(out + ".samples.bin")), 1 << 16))) {
            Recorder recorder = new Recorder(windows, samples);
            try {
                PipelineConfig config = config(Paths.get(args[0]));
                RawLog log = RawLog.read(Paths.get(args[3]));
                String method = args[1];
                if (method.equals("auto")) {
                    boolean rotvec = log.size() > 0 && !Double.isNaN(log.rows[RawSample.ROTVEC]);
                    boolean linacc = log.size() > 0 && !Double.isNaN(log.rows[RawSample.LINACC]);
                    method = Standardizer.resolveOrientation(config, rotvec, linacc);
                }
                Pipeline.WindowClassifier classifier = null;
                if (args.length == 6) {
                    classifier = new Replayed(Files.readAllBytes(Paths.get(args[5])));
                }
                Pipeline pipeline = new Pipeline(config, method, Double.parseDouble(args[2]), classifier, recorder);
                recorder.pipeline = pipeline;
                double[] raw = new double[RawSample.WIDTH];
                for (int i = 0; i < log.size(); i++) {
                    System.arraycopy(log.rows, i * RawSample.WIDTH, raw, 0, RawSample.WIDTH);
                    pipeline.push(log.t[i], raw);
                }
                pipeline.flush();
                ClimbCounter climb = pipeline.climb();
                if (classifier != null && climb != null) {
                    windows.println("M " + climb.up() + " " + climb.down() + " " + climb.climbedM() + " "
                            + climb.descendedM() + " " + climb.floorsAscended() + " " + climb.floorsDescended());
                }
                windows.println("C " + pipeline.steps());
            } catch (RuntimeException e) {
                windows.println("E " + e.getClass().getSimpleName() + ": " + e.getMessage());
                status = 3;
            }
            recorder.flush();
        }
        return status;
    }

    /** Answers the decisions of DECISIONS.bin in turn (class comment): bit 0 STAIR, bit 1 onset. */
    private static final class Replayed implements Pipeline.WindowClassifier {
        private final byte[] decisions;
        private int next;
        private boolean onset;

        Replayed(byte[] decisions) {
            this.decisions = decisions;
        }

        @Override
        public boolean isStair(float[] samples, int rows, int columns) {
            byte decision = decisions[next++];
            onset = (decision & 2) != 0;
            return (decision & 1) != 0;
        }

        @Override
        public boolean onset() {
            return onset;
        }
    }

    /** Writes what the pipeline reports, in the formats above. */
    private static final class Recorder implements Pipeline.Listener {
        private final PrintWriter windows;
        private final OutputStream samples;
        private final ByteBuffer row = ByteBuffer.allocate(3 * 8 + 7 * 8).order(ByteOrder.LITTLE_ENDIAN);
        private long segment;
        Pipeline pipeline;

        Recorder(PrintWriter windows, OutputStream samples) {
            this.windows = windows;
            this.samples = samples;
        }

        @Override
        public void onRestart(long tNs) {
            segment++;
            windows.println("R " + tNs);
        }

        @Override
        public void onSample(long index, long tNs, double[] sample, double vertical) {
            row.clear();
            row.putLong(segment).putLong(index).putLong(tNs);
            for (int c = 0; c < 6; c++) {
                row.putDouble(c < sample.length ? sample[c] : Double.NaN);
            }
            row.putDouble(vertical);
            try {
                samples.write(row.array());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void onWindow(Window w, boolean stair) {
            windows.println("W " + w.start() + " " + w.stop() + " " + w.tStartNs() + " " + w.tEndNs() + " " + w.status());
            if (w.kept()) {
                features("X", pipeline.stepContextFeatures());
                features("H", pipeline.heightFeatures());
            }
        }

        private void features(String kind, double[] values) {
            if (values == null) {
                return;
            }
            StringBuilder line = new StringBuilder(kind);
            for (double f : values) {
                line.append(' ').append(f);
            }
            windows.println(line);
        }

        void flush() throws IOException {
            windows.flush();
            samples.flush();
        }
    }
}
