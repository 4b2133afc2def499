#!/usr/bin/env bash
# Build the kafkarep agent: a Java agent that records a Kafka broker's data-plane events as JSON
# lines (docs/trace-validation.md).
#
#   agent/build.sh        # prints the jar's path: agent/target/kafkarep-agent.jar
#
# One shaded jar with Byte Buddy relocated inside it; load it with
# -javaagent:<jar>=out=FILE,node=ID. Kafka is not needed to build it: the hooks name Kafka's
# classes and methods and read its objects by reflection. Needs Java 17+, Maven 3.8+ and Maven
# Central (Byte Buddy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
plain() { sed 's/\x1b\[[0-9;]*m//g'; }  # Debian's Maven 3.8 prints colour resets even in batch mode

mvn -B -q package 2>&1 | plain >&2
jar="$here/target/kafkarep-agent.jar"
if [ ! -f "$jar" ]; then
    echo "build.sh: Maven left no $jar" >&2
    exit 1
fi
echo "$jar"
