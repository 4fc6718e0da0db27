package android.os;

/** Signature stub of https://developer.android.com/reference/android/os/HandlerThread. */
public class HandlerThread extends Thread {
    public HandlerThread(String name) {
        super(name);
    }

    public Looper getLooper() {
        throw new UnsupportedOperationException("stub");
    }

    public boolean quitSafely() {
        throw new UnsupportedOperationException("stub");
    }
}
