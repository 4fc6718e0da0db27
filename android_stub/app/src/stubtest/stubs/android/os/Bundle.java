package android.os;

/** Signature stub of https://developer.android.com/reference/android/os/Bundle (parameter type only). */
public final class Bundle {
}
