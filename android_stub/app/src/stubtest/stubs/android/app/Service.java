package android.app;

import android.content.ContextWrapper;
import android.content.Intent;
import android.os.IBinder;

/** Signature stub of the https://developer.android.com/reference/android/app/Service methods the glue uses. */
public abstract class Service extends ContextWrapper {
    public static final int START_STICKY = 1;

    public void onCreate() {
    }

    public int onStartCommand(Intent intent, int flags, int startId) {
        return START_STICKY;
    }

    public abstract IBinder onBind(Intent intent);

    public void onDestroy() {
    }

    public final void startForeground(int id, Notification notification) {
        throw new UnsupportedOperationException("stub");
    }
}
