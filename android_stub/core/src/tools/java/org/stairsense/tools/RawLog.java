package org.stairsense.tools;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.stairsense.core.RawSample;

/**
 * A raw sensor log in the binary form the Python side writes for the parity tests and the
 * benchmark: little-endian rows of {@code int64 t_ns} then {@code RawSample.WIDTH} float64
 * (accelerometer, rotation vector, linear acceleration, air pressure; NaN where not recorded).
 * Exact: no text round trip between Python's and Java's doubles.
 */
final class RawLog {
    static final int ROW_BYTES = 8 + 8 * RawSample.WIDTH;

    final long[] t;
    /** Row i is {@code rows[i * WIDTH .. (i + 1) * WIDTH)}. */
    final double[] rows;

    private RawLog(long[] t, double[] rows) {
        this.t = t;
        this.rows = rows;
    }

    int size() {
        return t.length;
    }

    static RawLog read(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long bytes = channel.size();
            if (bytes % ROW_BYTES != 0) {
                throw new IOException(path + ": " + bytes + " bytes is not a whole number of " + ROW_BYTES
                        + "-byte rows (int64 t_ns + " + RawSample.WIDTH + " float64); write it with the parity helper");
            }
            int n = (int) (bytes / ROW_BYTES);
            ByteBuffer buffer = channel.map(FileChannel.MapMode.READ_ONLY, 0, bytes).order(ByteOrder.LITTLE_ENDIAN);
            long[] t = new long[n];
            double[] rows = new double[n * RawSample.WIDTH];
            for (int i = 0; i < n; i++) {
                t[i] = buffer.getLong();
                for (int c = 0; c < RawSample.WIDTH; c++) {
                    rows[i * RawSample.WIDTH + c] = buffer.getDouble();
                }
            }
            return new RawLog(t, rows);
        }
    }
}
