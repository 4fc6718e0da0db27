package android.app;

/** Signature stub of https://developer.android.com/reference/android/app/NotificationManager#createNotificationChannel. */
public class NotificationManager {
    public static final int IMPORTANCE_LOW = 2;

    public void createNotificationChannel(NotificationChannel channel) {
        throw new UnsupportedOperationException("stub");
    }
}
