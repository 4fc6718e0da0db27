package android.app;

import android.content.Context;

/** Signature stub of https://developer.android.com/reference/android/app/Notification.Builder (the calls the service makes). */
public class Notification {
    public static class Builder {
        /** Added in API level 26. */
        public Builder(Context context, String channelId) {
        }

        public Builder setContentTitle(CharSequence title) {
            return this;
        }

        public Builder setContentText(CharSequence text) {
            return this;
        }

        public Builder setSmallIcon(int icon) {
            return this;
        }

        public Builder setOngoing(boolean ongoing) {
            return this;
        }

        public Notification build() {
            return new Notification();
        }
    }
}
