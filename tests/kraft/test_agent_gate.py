"""The kafkarep agent as a gate (docs/trace-validation.md, "The agent as a gate"): with
`gate=DIR` it holds chosen broker threads at chosen points until a driver removes a rule file.

Without Kafka: the gate's file protocol driven by `kafkarep.agent.GateCheck` (a rule holds,
removing it releases; the safety timeout, an interrupt and the JVM's shutdown release too), and
the gate's own hooks match Kafka 4.1.1's classes. With a 3-broker cluster: a run without rules
records no gate event; a follower's fetch responses held (its log stays behind the leader's
until released); the leader's AlterPartition held before it is sent, then its answer held while
the metadata of it arrives (the answer is not taken under the partition's lock); a broker's
metadata publication held while another broker's goes on. Needs Java 17 and Maven (skipped
where either is missing); the nightly tier (`pytest -m slow`).
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kafkarep.broker_trace.events import AgentEvent, of_kind, read_events
from kafkarep.kafka.jars import KAFKA_VERSION, fetch_kafka
from kafkarep.realcluster import gate
from kafkarep.realcluster.cluster import Cluster, wait_until
from kafkarep.reproduce.recorded import Recorded
from tests.helpers import ROOT
from tests.kraft.conftest import MISSING

DOC = ROOT / "docs" / "trace-validation.md"
BUILD = ROOT / "agent" / "build.sh"
GATE_CHECK = "kafkarep.agent.GateCheck"
HOOK_CHECK = "kafkarep.agent.HookCheck"
GATE_EVENTS = ("gate_held", "gate_released")
TOPIC = "t"


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=f"no agent: {MISSING}"),
]


def released(events: list[AgentEvent], hold: int) -> list[AgentEvent]:
    return [e for e in of_kind(events, "gate_released") if e["hold"] == hold]


# --------------------------------------------------------------------------------------------
# Without Kafka


def gate_check(
    jar: Path, out: Path, gate_dir: Path, arrivals: list[str], timeout_ms: int = 300_000
) -> subprocess.Popen[str]:
    argument = f"out={out},node=0,gate={gate_dir},gate_timeout_ms={timeout_ms}"
    return subprocess.Popen(
        ["java", "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", str(jar), GATE_CHECK, argument]
        + arrivals,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def passed_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def test_the_gate_s_file_protocol(agent_jar: Path, tmp_path: Path) -> None:
    gate_dir, out = tmp_path / "gate", tmp_path / "events-0.jsonl"
    by_follower = gate.hold(gate_dir, 0, "fetch", TOPIC, 0, follower=3)
    by_point = gate.hold(gate_dir, 0, "metadata")
    by_partition = gate.hold(gate_dir, 0, "fetch_response", "u", 1)
    gate.hold(gate_dir, 1, "fetch_response", TOPIC, 0)  # another broker's rule
    arrivals = [
        "fetch:t:0:3",  # 1: held until its rule is removed
        "fetch:t:0:2",  # 2: another follower, not held
        "metadata:::",  # 3: held until the safety timeout
        "fetch_response:u:1:",  # 4: held until interrupted
        "fetch_response:t:0:",  # 5: only broker 1 is held there
    ]
    proc = gate_check(agent_jar, out, gate_dir, arrivals, timeout_ms=6_000)
    try:
        assert {passed_line(proc), passed_line(proc)} == {
            "passed 2 interrupted=false",
            "passed 5 interrupted=false",
        }
        fetch = gate.wait_held(gate_dir, 0, "fetch", TOPIC, 0, follower=3, timeout=10)
        assert fetch["rule"] == by_follower.name and fetch["thread"] == "arrival-1"
        assert fetch["marker"] == f"held-0-fetch-t-0-from-3-{fetch['hold']}"
        gate.wait_held(gate_dir, 0, "metadata", timeout=10)
        interrupted = gate.wait_held(gate_dir, 0, "fetch_response", "u", 1, timeout=10)
        assert len(gate.held(gate_dir)) == 3
        gate.release(by_follower)
        gate.wait_released(gate_dir, fetch, timeout=5)
        assert proc.stdin is not None
        proc.stdin.write("interrupt 4\n")
        proc.stdin.flush()
        gate.wait_released(gate_dir, interrupted, timeout=5)
        # the events say why each went on (arrival 3: the timeout)
        assert {passed_line(proc) for _ in range(3)} == {
            "passed 1 interrupted=false",
            "passed 3 interrupted=false",
            "passed 4 interrupted=true",
        }
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert gate.held(gate_dir) == []
    assert by_point.exists() and by_partition.exists()  # the agent never removes a rule
    events = read_events(out)
    assert events[0]["gate"] == str(gate_dir) and events[0]["gate_timeout_ms"] == 6_000
    held = of_kind(events, "gate_held")
    assert sorted((e["point"], e.topic, e.partition, e["follower"]) for e in held) == [
        ("fetch", TOPIC, 0, 3),
        ("fetch_response", "u", 1, None),
        ("metadata", None, None, None),
    ]
    reasons = {e["point"]: e["reason"] for e in of_kind(events, "gate_released")}
    assert reasons == {
        "fetch": "rule_removed",
        "fetch_response": "interrupted",
        "metadata": "timeout",
    }
    (timeout,) = of_kind(events, "agent_error")
    assert (timeout["hook"], timeout["kind"]) == ("gate metadata", "gate_timeout")
    for e in held:
        (release,) = released(events, e["hold"])
        assert release.seq > e.seq and release["thread"] == e["thread"]


def test_one_held_thread_is_let_go_and_the_next_is_held(agent_jar: Path, tmp_path: Path) -> None:
    """`gate.let_go`: the `pass-` file lets the one thread go; the rule holds the other."""
    gate_dir, out = tmp_path / "gate", tmp_path / "events-0.jsonl"
    rule = gate.hold(gate_dir, 0, "metadata")
    proc = gate_check(agent_jar, out, gate_dir, ["metadata:::", "metadata:::"])
    try:
        wait_until("both held", lambda: len(gate.held(gate_dir)) == 2, timeout=10)
        first, second = gate.held(gate_dir)
        gate.let_go(gate_dir, first, timeout=5)
        assert passed_line(proc) == f"passed {first['arrival']} interrupted=false"
        assert gate.held(gate_dir) == [second] and rule.exists()
        assert not list(gate_dir.glob("pass-*"))  # the agent deleted it
        gate.release(rule)
        assert passed_line(proc) == f"passed {second['arrival']} interrupted=false"
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    reasons = [e["reason"] for e in of_kind(read_events(out), "gate_released")]
    assert reasons == ["passed", "rule_removed"]


def test_the_jvm_s_shutdown_releases_the_gate(agent_jar: Path, tmp_path: Path) -> None:
    gate_dir, out = tmp_path / "gate", tmp_path / "events-0.jsonl"
    gate.hold(gate_dir, 0, "alter_partition_answer", TOPIC, 0)
    proc = gate_check(agent_jar, out, gate_dir, ["alter_partition_answer:t:0:"])
    try:
        gate.wait_held(gate_dir, 0, "alter_partition_answer", TOPIC, 0, timeout=10)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert gate.held(gate_dir) == []
    events = read_events(out)
    kinds = [e.kind for e in events[1:]]
    assert kinds == ["gate_held", "gate_released", "shutdown"]
    assert events[2]["reason"] == "jvm_shutdown"


def documented_points(text: str) -> list[tuple[str, str, str]]:
    """(point, class, method) of every row of the doc's gate table."""
    rows = re.finditer(r"^\| `(\w+)` \| `(\w+(?:\.\w+)+)` \| `([\w$]+)` \|", text, re.M)
    return [(row.group(1), row.group(2), row.group(3)) for row in rows]


def test_the_gate_s_hooks_match_kafka_s_classes(agent_jar: Path, tmp_path: Path) -> None:
    lib = fetch_kafka(KAFKA_VERSION)
    out = tmp_path / "events-0.jsonl"
    done = subprocess.run(
        [
            *("java", "-Xmx128m", "-XX:TieredStopAtLevel=1"),
            f"-javaagent:{agent_jar}=out={out},node=0,gate={tmp_path / 'gate'}",
            *("-cp", f"{agent_jar}:{lib}/*", HOOK_CHECK),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    events = read_events(out)
    assert of_kind(events, "agent_error") == []
    instrumented = {
        (e["class"], method) for e in of_kind(events, "instrumented") for method in e["methods"]
    }
    points = [(p["point"], p["class"], p["method"]) for p in events[0]["gate_points"]]
    assert points == documented_points(DOC.read_text())
    assert {(cls, method) for _, cls, method in points} <= instrumented
    # the recording hooks and the gate's own two
    assert events[0]["hooks"] == 18 and len(instrumented) == 20


# --------------------------------------------------------------------------------------------
# A cluster


class Brokers(Recorded):
    """The cluster's events about t-0, read back on demand."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster, TOPIC)

    def log_end(self, broker: int, kind: str) -> int:
        """The log end offset after the broker's last append of `kind`."""
        ends = [e["log_end_offset"] for e in self.about(broker, kind)]
        return max(ends, default=0)

    def one(self, broker: int, kind: str, hold: int) -> AgentEvent:
        (event,) = [e for e in of_kind(self.events(broker), kind) if e["hold"] == hold]
        return event


def no_holds_no_gate_events(brokers: Brokers, gate_dir: Path) -> None:
    """With the gate on but no rule: nothing held, nothing recorded of the gate."""
    for b in (1, 2, 3):
        events = brokers.events(b)
        assert events[0]["gate"] == str(gate_dir)
        assert of_kind(events, *GATE_EVENTS, "agent_error") == [], b
    assert list(gate_dir.iterdir()) == []


def follower_fetch_responses_held(cluster: Cluster, brokers: Brokers, gate_dir: Path) -> None:
    """Broker 3 (a follower) holds its fetch responses for t-0: it stays behind while the
    leader takes acks=1 records (and broker 2 copies them), then catches up."""
    rule = gate.hold(gate_dir, 3, "fetch_response", TOPIC, 0)
    held = gate.wait_held(gate_dir, 3, "fetch_response", TOPIC, 0, timeout=30)
    at = held["fetch_offset"]
    assert at == brokers.log_end(3, "append_follower") == 50
    assert cluster.produce(TOPIC, 50, acks=1).acked == 50
    leader_end = brokers.log_end(1, "append_leader")
    assert leader_end == 100
    wait_until("broker 2 caught up", lambda: brokers.log_end(2, "append_follower") == leader_end)
    assert brokers.log_end(3, "append_follower") == at  # held: nothing appended
    assert (gate_dir / held["marker"]).exists()
    assert brokers.one(3, "gate_held", held["hold"])["fetch_offset"] == at
    gate.release(rule)
    wait_until("broker 3 caught up", lambda: brokers.log_end(3, "append_follower") == leader_end)
    gate.wait_released(gate_dir, held)
    release = brokers.one(3, "gate_released", held["hold"])
    assert release["reason"] == "rule_removed" and release["thread"] == held["thread"]
    after = [e for e in brokers.about(3, "append_follower") if e.seq > release.seq]
    assert after[0]["first_offset"] == at
    cluster.wait_isr(TOPIC, [1, 2, 3])


def alter_partition_held(cluster: Cluster, brokers: Brokers, gate_dir: Path) -> None:
    """Follower 3 killed and restarted: the leader's AlterPartition (the ISR expansion) held
    before it is sent, then its answer held: the partition is not locked meanwhile (the leader
    takes both followers' fetches, which need its read lock, and learns the ISR from the
    metadata), and the answer, released, is ignored."""
    cluster.kill_broker(3)
    cluster.wait_isr(TOPIC, [1, 2])
    request_rule = gate.hold(gate_dir, 1, "alter_partition_request", TOPIC, 0)
    cluster.start_broker(3)
    request = gate.wait_held(gate_dir, 1, "alter_partition_request", TOPIC, 0, timeout=60)
    assert request["proposed"] == "PendingExpandIsr" and request["proposed_isr"] == [1, 2, 3]
    time.sleep(2.0)
    assert set(cluster.partition(TOPIC).isr) == {1, 2}  # not sent: the controller's ISR is old

    answer_rule = gate.hold(gate_dir, 1, "alter_partition_answer", TOPIC, 0)
    gate.release(request_rule)
    answer = gate.wait_held(gate_dir, 1, "alter_partition_answer", TOPIC, 0, timeout=30)
    assert answer["answer"] == "update" and answer["answer_isr"] == [1, 2, 3]
    assert answer["thread"] != request["thread"]
    gate.wait_released(gate_dir, request)
    cluster.wait_isr(TOPIC, [1, 2, 3])  # the controller committed it
    held_at = brokers.one(1, "gate_held", answer["hold"]).seq

    def fetches_taken() -> bool:
        taken = [e for e in brokers.about(1, "fetch_handled") if e.seq > held_at]
        return {e["follower"] for e in taken} == {2, 3}

    def learned() -> bool:
        return any(
            e["isr"] == [1, 2, 3] and e["partition_epoch"] == answer["answer_partition_epoch"]
            for e in brokers.about(1, "make_leader")
        )

    wait_until("the leader took fetches while the answer was held", fetches_taken, timeout=30)
    wait_until("the leader learned the ISR from the metadata", learned, timeout=30)
    assert (gate_dir / answer["marker"]).exists()
    gate.release(answer_rule)
    gate.wait_released(gate_dir, answer)
    time.sleep(0.5)
    # its partition state no longer the one proposed, the leader ignores the answer
    assert [e for e in brokers.about(1, "alter_partition_answer") if e.seq > held_at] == []
    assert brokers.one(1, "gate_released", answer["hold"])["reason"] == "rule_removed"


def metadata_held(cluster: Cluster, brokers: Brokers, gate_dir: Path) -> None:
    """Broker 2 holds its metadata publication while broker 3 is killed: broker 1 applies the
    fencing and the ISR shrink, broker 2 applies nothing until released."""
    rule = gate.hold(gate_dir, 2, "metadata")
    before = brokers.applied(2)
    since = {b: brokers.events(b)[-1].seq for b in (1, 2)}
    cluster.kill_broker(3)
    held = gate.wait_held(gate_dir, 2, "metadata", timeout=60)
    assert held["offset"] > before

    def shrunk(broker: int) -> bool:
        """The broker applied a partition state of t-0 with the ISR [1, 2]."""
        became = brokers.about(broker, "make_leader", "make_follower")
        return any(
            e.seq > since[broker] and sorted(e["requested"]["isr"]) == [1, 2] for e in became
        )

    wait_until("broker 1 applied the shrink", lambda: shrunk(1), timeout=60)
    time.sleep(1.0)
    assert brokers.applied(2) == before and not shrunk(2)
    assert (gate_dir / held["marker"]).exists()
    gate.release(rule)
    gate.wait_released(gate_dir, held)
    wait_until("broker 2 applied the shrink", lambda: shrunk(2), timeout=30)
    assert brokers.applied(2) >= held["offset"]
    assert brokers.one(2, "gate_released", held["hold"])["reason"] == "rule_removed"


def test_the_gate_holds_a_cluster_s_threads(agent_jar: Path, tmp_path: Path) -> None:
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    with Cluster(agent=agent_jar, events_dir=tmp_path / "events", gate_dir=gate_dir) as cluster:
        brokers = Brokers(cluster)
        cluster.create_topic(TOPIC, assignment=[1, 2, 3])
        assert cluster.produce(TOPIC, 50).acked == 50
        wait_until("both followers copied", lambda: brokers.log_end(3, "append_follower") == 50)
        no_holds_no_gate_events(brokers, gate_dir)
        follower_fetch_responses_held(cluster, brokers, gate_dir)
        alter_partition_held(cluster, brokers, gate_dir)
        metadata_held(cluster, brokers, gate_dir)
    assert gate.held(gate_dir) == []
    for b in (1, 2, 3):
        assert of_kind(read_events(tmp_path / "events" / f"events-{b}.jsonl"), "agent_error") == []
