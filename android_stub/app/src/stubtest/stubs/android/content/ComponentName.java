package android.content;

/** Signature stub of https://developer.android.com/reference/android/content/ComponentName (return type only). */
public final class ComponentName {
}
