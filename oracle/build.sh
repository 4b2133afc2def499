#!/usr/bin/env bash
# Build the kafkarep oracle harness against one Apache Kafka release.
#
#   oracle/build.sh 4.1.2
#
# Leaves oracle/target/<version>/classes, classpath.txt (Kafka's runtime jars in Maven's local
# repository) and run (the command that starts the harness). Versions live side by side.
# Needs Java 17+, Maven 3.8+ and Maven Central.
set -euo pipefail
version=${1:?usage: oracle/build.sh KAFKA_VERSION (e.g. 4.1.2)}
here=$(cd "$(dirname "$0")" && pwd)
out="$here/target/$version"
mkdir -p "$out"
cd "$here"
mvn=(mvn -B -q -Dkafka.version="$version")
plain() { sed 's/\x1b\[[0-9;]*m//g'; }  # Debian's Maven 3.8 prints colour resets even in batch mode

# 1. Resolve (and cache) Kafka's jars; the runtime classpath is Kafka's own dependency graph.
"${mvn[@]}" dependency:build-classpath -Dmdep.outputFile="$out/classpath.txt" -Dmdep.includeScope=runtime 2>&1 | plain >&2
jar_version() {  # version of the artifact $1 in classpath.txt
    tr ':' '\n' < "$out/classpath.txt" | sed -n "s|.*/$1/\([^/]*\)/$1-[^/]*\.jar\$|\1|p" | head -n 1
}
jackson=$(jar_version jackson-databind)
jackson_core=$(jar_version jackson-core)
jackson_annotations=$(jar_version jackson-annotations)
if [ -z "$jackson" ] || [ -z "$jackson_core" ] || [ -z "$jackson_annotations" ]; then
    echo "build.sh: Jackson not found among Kafka $version's runtime jars" >&2
    exit 1
fi

# 2. Compile against that Kafka and that Jackson.
"${mvn[@]}" -Djackson.version="$jackson" -Djackson.core.version="$jackson_core" \
    -Djackson.annotations.version="$jackson_annotations" compile 2>&1 | plain >&2

cat > "$out/run" <<'RUN'
#!/usr/bin/env bash
# Starts the kafkarep oracle harness: JSON cases on stdin, one JSON answer per line on stdout.
# ORACLE_JAVA_OPTS replaces the default JVM options (C1 only and the parallel collector: the
# fastest for runs of a few thousand short cases; set it to "" for the JVM's defaults).
dir=$(cd "$(dirname "$0")" && pwd)
exec java ${ORACLE_JAVA_OPTS--XX:TieredStopAtLevel=1 -XX:+UseParallelGC} -cp "$dir/classes:$(cat "$dir/classpath.txt")" \
    org.apache.kafka.controller.KafkarepOracle "$@"
RUN
chmod +x "$out/run"
echo "$out/run"
