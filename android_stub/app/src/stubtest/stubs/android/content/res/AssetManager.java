package android.content.res;

import java.io.IOException;
import java.io.InputStream;

/** Signature stub of https://developer.android.com/reference/android/content/res/AssetManager#open(java.lang.String). */
public class AssetManager {
    public InputStream open(String fileName) throws IOException {
        throw new UnsupportedOperationException("stub");
    }
}
