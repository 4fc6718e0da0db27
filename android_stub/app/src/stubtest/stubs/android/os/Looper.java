package android.os;

/** Signature stub of https://developer.android.com/reference/android/os/Looper (parameter type only). */
public final class Looper {
}
