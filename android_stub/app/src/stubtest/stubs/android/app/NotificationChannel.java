package android.app;

/** Signature stub of https://developer.android.com/reference/android/app/NotificationChannel (API level 26). */
public final class NotificationChannel {
    public NotificationChannel(String id, CharSequence name, int importance) {
    }
}
