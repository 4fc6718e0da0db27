// Open this folder (android_stub/) in Android Studio. Two modules: the plain-Java core (also built
// and tested with javac alone by `make java-test`) and the Android app that wraps it.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "stairsense-android"
include(":core", ":app")
