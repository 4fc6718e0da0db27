package android.content;

import android.content.res.AssetManager;

/**
 * Signature stub (test scope, never packaged) of the methods of
 * https://developer.android.com/reference/android/content/Context that the glue calls.
 * Constant values are the documented ones; bodies throw: the JVM test overrides what it needs.
 */
public abstract class Context {
    public static final String SENSOR_SERVICE = "sensor";
    public static final String NOTIFICATION_SERVICE = "notification";

    public Object getSystemService(String name) {
        throw new UnsupportedOperationException("stub");
    }

    public AssetManager getAssets() {
        throw new UnsupportedOperationException("stub");
    }

    /** Added in API level 26. */
    public ComponentName startForegroundService(Intent service) {
        throw new UnsupportedOperationException("stub");
    }
}
