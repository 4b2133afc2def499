# Sourced by .ci/run and .ci/nightly: `step NAME COMMAND...` runs a command, prints its wall time,
# and goes on after a failure; `summary` prints every step's time and result, the total, and
# returns non-zero when a step failed.
STEP_NAMES=()
STEP_SECONDS=()
STEP_RESULTS=()
STEPS_STARTED=$(date +%s)

step() {
  local name=$1
  shift
  local started result
  started=$(date +%s)
  echo "=== ${name}: $*"
  if "$@"; then result=ok; else result="FAILED (exit $?)"; fi
  local seconds=$(($(date +%s) - started))
  echo "=== ${name}: ${result} in ${seconds} s"
  STEP_NAMES+=("$name")
  STEP_SECONDS+=("$seconds")
  STEP_RESULTS+=("$result")
}

summary() {
  local total=$(($(date +%s) - STEPS_STARTED)) failed=0 i
  printf '\n%-44s %8s  %s\n' "step" "seconds" "result"
  for i in "${!STEP_NAMES[@]}"; do
    printf '%-44s %8s  %s\n' "${STEP_NAMES[$i]}" "${STEP_SECONDS[$i]}" "${STEP_RESULTS[$i]}"
    [[ ${STEP_RESULTS[$i]} == ok ]] || failed=$((failed + 1))
  done
  printf '%-44s %8s  %s\n' "total" "$total" "$([[ $failed == 0 ]] && echo ok || echo "$failed failed")"
  [[ $failed == 0 ]]
}

# What the tiers need beyond Python: Java 17 (Spark, the oracle, the KRaft cluster), Maven (the
# oracle's jars from Maven Central), Chromium (the HTML report's browser test).
install_system() {
  local missing=()
  command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  if ((${#missing[@]})); then
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# Kafka's own controller as the oracle, built for each release (docs/oracle.md)
build_oracles() {
  local release
  for release in $(python3 -c 'from kafkarep.kafka.releases import RELEASES; print(*RELEASES)'); do
    bash oracle/build.sh "$release" >/dev/null || return 1
  done
}

# Real KRaft clusters (tests/kraft/scenarios.py): each scenario on a fresh cluster, and every
# scenario's dumped metadata log explained by the rules, as text and from the segment files.
# Real-cluster scenarios with the kafkarep agent in every broker: each metadata log explained by
# the rules (validate-log), each broker trace by the model's data plane (validate-trace).
kraft_scenarios() {
  local logs log trace jar
  logs=$(mktemp -d)
  jar=$(bash agent/build.sh | tail -n 1) || return 1
  python3 -m tests.kraft.scenarios --out "$logs" --segments --agent "$jar" "$@" || return 1
  for log in "$logs"/*.txt "$logs"/*.segments; do
    kafkarep validate-log "$log" || return 1
  done
  for trace in "$logs"/*.trace; do
    echo "validate-trace $(basename "$trace")"
    kafkarep validate-trace "$trace" || return 1
  done
}

# The makeLeader finding's trace driven through a real Kafka cluster (docs/reproduce.md): the
# trace written by `kafkarep check`, then `kafkarep reproduce` (exit 0: Kafka reached it).
reproduce_finding() {
  local out jar
  out=$(mktemp -d)
  jar=$(bash agent/build.sh | tail -n 1) || return 1
  kafkarep check --quiet --reports "$out" --json "$out/summary.json" \
    models/findings/make_leader_resets_pending_isr.toml || return 1
  kafkarep reproduce --agent "$jar" \
    "$out"/traces/*/leader_candidate_completeness.isr.itf.json "$@"
}

# Kafka's own controller classes answering every bundled model's controller steps (docs/oracle.md):
# each model's verdict and pinned count as the rules', and no step where the two differ. Not the
# `[suite] slow` models (the shipped bounds: hours), nor models/large/; the walkthrough's Kafka
# 4.0 model of tests/data/models/ too. A model Kafka's classes cannot answer is skipped, named.
kafka_controller_models() {
  local out models
  out=$(mktemp -d)
  models=$(python3 - <<'PY'
import pathlib, tomllib
for p in sorted(pathlib.Path("models").rglob("*.toml")):
    if "large" not in p.parts and not tomllib.loads(p.read_text()).get("suite", {}).get("slow"):
        print(p)
PY
)
  # shellcheck disable=SC2086
  kafkarep check --quiet --controller kafka --reports "$out" --json "$out/summary.json" \
    $models tests/data/models/last_known_leader_kafka_4_0.toml || return 1
  python3 - "$out/summary.json" <<'PY'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
differ = [m["name"] for m in models if m.get("controller_disagreements")]
steps = sum(m.get("controller_steps", 0) for m in models)
batches = sum(m.get("controller_batches", 0) for m in models)
print(f"{len(models)} models answered by Kafka's classes: {steps} distinct steps asked in {batches} batches; steps that differ from the rules: {differ or 'none'}")
sys.exit(1 if differ else 0)
PY
}
