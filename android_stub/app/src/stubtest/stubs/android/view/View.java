package android.view;

import android.content.Context;

/** Signature stub of https://developer.android.com/reference/android/view/View (constructor only). */
public class View {
    public View(Context context) {
    }
}
