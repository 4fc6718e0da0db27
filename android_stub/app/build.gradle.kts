// The Android glue. src/stubtest/ (signature stubs + a JVM test) is NOT a Gradle source set: it is
// compiled only by `make java-test` on machines without the Android SDK, and never packaged.
plugins {
    id("com.android.application")
}

android {
    namespace = "org.stairsense.app"
    compileSdk = 36

    defaultConfig {
        applicationId = "org.stairsense.app"
        minSdk = 26  // Notification channels and startForegroundService
        targetSdk = 36
        versionCode = 1
        versionName = "0.1.0"
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_11
        targetCompatibility = JavaVersion.VERSION_11
    }
}

dependencies {
    implementation(project(":core"))
    implementation("com.microsoft.onnxruntime:onnxruntime-android:1.27.0")
}
