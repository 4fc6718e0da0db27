#!/bin/sh
# Compile the Java core, its drivers, the Android glue (against the signature stubs) and every
# JUnit test with javac --release 11 (Android's language level), then run the tests.
# Usage: sh android_stub/tools/java_test.sh [BUILD_DIR]   (default build/android_stub)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/android_stub}
command -v javac >/dev/null 2>&1 || { echo "error: javac not on PATH; install a JDK 11+ (e.g. apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
junit=$(sh "$here/tools/junit_classpath.sh")
rm -rf "$build"
mkdir -p "$build/core" "$build/test"
javac --release 11 -Xlint:all -Werror -d "$build/core" \
    $(find "$here/core/src/main/java" "$here/core/src/tools/java" -name '*.java')
# The app's main code is compiled only against the stubs and the core; the stubs never reach an APK.
javac --release 11 -Xlint:all -Werror -d "$build/test" -cp "$build/core:$junit" \
    $(find "$here/core/src/test/java" "$here/app/src/main/java" "$here/app/src/stubtest/stubs" "$here/app/src/stubtest/java" \
        "$here/tools/junit" -name '*.java' 2>/dev/null)
java -cp "$build/core:$build/test:$junit" org.stairsense.testing.RunJUnit
