#!/bin/sh
# Print a classpath with JUnit 5 (Jupiter API + engine, Platform launcher) for the Java tests.
# Offline first: Debian's junit5 package in /usr/share/java, else a complete Jupiter 5.x/Platform 1.x
# set in the Maven cache (~/.m2); only if neither exists, install Debian's junit5 (quietly, once).
set -eu

debian() {
    d=/usr/share/java
    for j in junit-jupiter-api junit-jupiter-engine junit-platform-launcher junit-platform-engine \
             junit-platform-commons opentest4j apiguardian-api; do
        [ -f "$d/$j.jar" ] || return 1
    done
    echo "$d/junit-jupiter-api.jar:$d/junit-jupiter-engine.jar:$d/junit-platform-launcher.jar:$d/junit-platform-engine.jar:$d/junit-platform-commons.jar:$d/opentest4j.jar:$d/apiguardian-api.jar"
}

maven() {
    m=${MAVEN_REPO:-$HOME/.m2/repository}
    [ -d "$m/org/junit/jupiter/junit-jupiter-api" ] || return 1
    ot=$(ls "$m"/org/opentest4j/opentest4j/*/opentest4j-*.jar 2>/dev/null | sort -V | tail -n 1)
    ag=$(ls "$m"/org/apiguardian/apiguardian-api/*/apiguardian-api-*.jar 2>/dev/null | sort -V | tail -n 1)
    [ -n "$ot" ] && [ -n "$ag" ] || return 1
    # Newest Jupiter 5.x whose matching Platform 1.x jars are all present (5.N.p goes with 1.N.p).
    for v in $(ls "$m/org/junit/jupiter/junit-jupiter-api" | grep '^5\.' | sort -rV); do
        p="1.${v#5.}"
        api="$m/org/junit/jupiter/junit-jupiter-api/$v/junit-jupiter-api-$v.jar"
        eng="$m/org/junit/jupiter/junit-jupiter-engine/$v/junit-jupiter-engine-$v.jar"
        lau="$m/org/junit/platform/junit-platform-launcher/$p/junit-platform-launcher-$p.jar"
        pen="$m/org/junit/platform/junit-platform-engine/$p/junit-platform-engine-$p.jar"
        com="$m/org/junit/platform/junit-platform-commons/$p/junit-platform-commons-$p.jar"
        if [ -f "$api" ] && [ -f "$eng" ] && [ -f "$lau" ] && [ -f "$pen" ] && [ -f "$com" ]; then
            echo "$api:$eng:$lau:$pen:$com:$ot:$ag"
            return 0
        fi
    done
    return 1
}

debian && exit 0
maven && exit 0
if command -v apt-get >/dev/null 2>&1; then
    echo "JUnit 5 not found in /usr/share/java or ~/.m2: installing Debian's junit5 package" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq junit5; } >/dev/null 2>&1 || true
    debian && exit 0
fi
echo "error: JUnit 5 is not available: install Debian's junit5 package (apt-get install junit5) or put JUnit 5 jars in ~/.m2" >&2
exit 1
