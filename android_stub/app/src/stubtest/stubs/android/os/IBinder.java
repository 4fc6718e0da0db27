package android.os;

/** Signature stub of https://developer.android.com/reference/android/os/IBinder (return type only). */
public interface IBinder {
}
