package android.content;

/** Signature stub of https://developer.android.com/reference/android/content/ContextWrapper (no method used directly). */
public class ContextWrapper extends Context {
}
