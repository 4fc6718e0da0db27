package android.os;

import java.util.ArrayList;
import java.util.List;

/**
 * Signature stub of the https://developer.android.com/reference/android/os/Handler methods the glue
 * calls. It runs nothing: it records what is posted, and tests run it ({@code posted}, {@code delays}).
 */
public class Handler {
    public final List<Runnable> posted = new ArrayList<>();
    public final List<Long> delays = new ArrayList<>();

    public Handler(Looper looper) {
    }

    public final boolean post(Runnable r) {
        return postDelayed(r, 0);
    }

    public final boolean postDelayed(Runnable r, long delayMillis) {
        posted.add(r);
        delays.add(delayMillis);
        return true;
    }

    public final void removeCallbacks(Runnable r) {
        for (int i = posted.size() - 1; i >= 0; i--) {
            if (posted.get(i) == r) {
                posted.remove(i);
                delays.remove(i);
            }
        }
    }
}
