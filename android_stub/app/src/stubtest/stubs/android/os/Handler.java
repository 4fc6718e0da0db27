package android.os;

/** Signature stub of https://developer.android.com/reference/android/os/Handler#Handler(android.os.Looper). */
public class Handler {
    public Handler(Looper looper) {
    }
}
