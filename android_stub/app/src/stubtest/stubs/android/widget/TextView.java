package android.widget;

import android.content.Context;
import android.view.View;

/** Signature stub of https://developer.android.com/reference/android/widget/TextView#setText(java.lang.CharSequence). */
public class TextView extends View {
    public TextView(Context context) {
        super(context);
    }

    public final void setText(CharSequence text) {
        throw new UnsupportedOperationException("stub");
    }
}
