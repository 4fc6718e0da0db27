package org.stairsense.tools;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.stairsense.core.HeightFilter;

/**
 * Runs {@link HeightFilter} over a binary stream for {@code tests/test_android_height_parity.py}.
 *
 * <pre>java org.stairsense.tools.HeightDriver --serve</pre>
 *
 * One run per stdin line, tab-separated: {@code IN.bin OUT.bin ACCELERATION_NOISE PRESSURE_NOISE_HPA
 * PRESSURE_RATE_HZ MAX_GAP_S} (the numbers as Python's {@code repr}, which parses back exactly). IN.bin
 * holds little-endian rows of int64 {@code t_ns}, float64 vertical acceleration, float64 pressure
 * (NaN: no reading); OUT.bin gets float64 height and speed per row pushed. The answer on stdout is
 * {@code done ROWS}, or {@code refused ROW MESSAGE} when the filter refused a row (OUT.bin then
 * holds the rows before it). One JVM serves a whole pytest session.
 */
public final class HeightDriver {
    private static final int ROW_BYTES = 8 + 8 + 8;

    private HeightDriver() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1 || !args[0].equals("--serve")) {
            System.err.println("usage: HeightDriver --serve");
            System.exit(2);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String answer;
            try {
                answer = run(line.split("\t"));
            } catch (RuntimeException | IOException e) {
                answer = "failed " + e;
            }
            System.out.println(answer);
            System.out.flush();
        }
    }

    private static String run(String[] args) throws IOException {
        Path input = Paths.get(args[0]);
        HeightFilter filter = new HeightFilter(Double.parseDouble(args[2]), Double.parseDouble(args[3]),
                Double.parseDouble(args[4]), Double.parseDouble(args[5]));
        try (FileChannel channel = FileChannel.open(input, StandardOpenOption.READ);
             OutputStream out = new BufferedOutputStream(Files.newOutputStream(Paths.get(args[1])), 1 << 16)) {
            long bytes = channel.size();
            if (bytes % ROW_BYTES != 0) {
                throw new IOException(input + ": " + bytes + " bytes is not a whole number of " + ROW_BYTES + "-byte rows");
            }
            ByteBuffer rows = channel.map(FileChannel.MapMode.READ_ONLY, 0, bytes).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer row = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
            int n = (int) (bytes / ROW_BYTES);
            for (int i = 0; i < n; i++) {
                long t = rows.getLong();
                double a = rows.getDouble();
                double p = rows.getDouble();
                try {
                    filter.push(t, a, p);
                } catch (IllegalArgumentException e) {
                    return "refused " + i + " " + e.getMessage();
                }
                row.clear();
                row.putDouble(filter.height).putDouble(filter.speed);
                out.write(row.array());
            }
            return "done " + n;
        }
    }
}
