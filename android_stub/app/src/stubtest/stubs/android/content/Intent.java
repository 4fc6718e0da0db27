package android.content;

/** Signature stub of https://developer.android.com/reference/android/content/Intent: the explicit-component constructor. */
public class Intent {
    public Intent(Context packageContext, Class<?> cls) {
    }
}
