package android;

/**
 * Signature stub of the platform resource used for the notification icon
 * (https://developer.android.com/reference/android/R.drawable#stat_notify_sync). The value here is
 * a placeholder: the class files compiled against these stubs are never packaged.
 */
public final class R {
    public static final class drawable {
        public static final int stat_notify_sync = 0;
    }
}
