package android.app;

import android.content.ContextWrapper;
import android.os.Bundle;
import android.view.View;

/** Signature stub of the https://developer.android.com/reference/android/app/Activity methods the glue uses. */
public class Activity extends ContextWrapper {
    protected void onCreate(Bundle savedInstanceState) {
    }

    protected void onDestroy() {
    }

    protected void onResume() {
    }

    protected void onPause() {
    }

    public void setContentView(View view) {
        throw new UnsupportedOperationException("stub");
    }

    public final void runOnUiThread(Runnable action) {
        throw new UnsupportedOperationException("stub");
    }

    /** Added in API level 23. */
    public final void requestPermissions(String[] permissions, int requestCode) {
        throw new UnsupportedOperationException("stub");
    }

    public void onRequestPermissionsResult(int requestCode, String[] permissions, int[] grantResults) {
    }
}
