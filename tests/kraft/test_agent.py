"""The instrumented broker (agent/, docs/trace-validation.md) on Kafka 4.1.1's brokers.

Without a cluster: every hook of the agent matches a method of Kafka's classes (a JVM loads
them with the agent, which writes an `instrumented` event for each), and they are the hooks the
doc's table names. With one: a cluster whose brokers run the agent records the data plane's
events through a follower killed (-9) and restarted; and the produce throughput of a cluster
with the agent and of one without it (the agent's overhead, printed). Needs Java 17 and Maven
(skipped where either is missing); the nightly tier (`pytest -m slow`), like every test here
that starts JVMs of Kafka.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kafkarep.broker_trace.events import AgentEvent, of_kind, read_events, runs
from kafkarep.kafka.jars import KAFKA_VERSION, fetch_kafka
from kafkarep.realcluster.cluster import Cluster
from tests.helpers import ROOT
from tests.kraft.conftest import MISSING

DOC = ROOT / "docs" / "trace-validation.md"
BUILD = ROOT / "agent" / "build.sh"
HOOK_CHECK = "kafkarep.agent.HookCheck"
TOPIC = "t"
PERF_TOPIC = "perf"
PERF_RECORDS = 20_000


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=f"no agent: {MISSING}"),
]


def documented_hooks(text: str) -> set[tuple[str, str]]:
    """(class, method) of every row of the doc's hook table whose class is a Kafka class."""
    rows = re.finditer(r"^\| `(\w+(?:\.\w+)+)` \| `(\w+)` \|", text, re.M)
    return {(row.group(1), row.group(2)) for row in rows}


@pytest.mark.parametrize("version", [KAFKA_VERSION, "4.4.0"])
def test_every_hook_matches_kafka_s_classes(agent_jar: Path, tmp_path: Path, version: str) -> None:
    """At the harness's release and at 4.4.0, where three hooked methods changed signature."""
    lib = fetch_kafka(version)
    out = tmp_path / "events-0.jsonl"
    done = subprocess.run(
        [
            *("java", "-Xmx128m", "-XX:TieredStopAtLevel=1"),
            f"-javaagent:{agent_jar}=out={out},node=0",
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
    assert len(instrumented) == events[0]["hooks"] == 18
    assert instrumented == documented_hooks(DOC.read_text())
    assert [e["via"] for e in of_kind(events, "shutdown")] == ["jvm_shutdown_hook"]


def test_the_doc_s_hook_table_is_read() -> None:
    """Seeded: the parser of the hook table finds a hook's row, not a row of another table."""
    table = "| `event` | `class` | x |\n| `make_leader` | `kafka.cluster.Partition` | x |\n"
    table += "| `kafka.cluster.Partition` | `makeLeader` | 4 | 4.1.1 | `make_leader` |\n"
    assert documented_hooks(table) == {("kafka.cluster.Partition", "makeLeader")}


# --------------------------------------------------------------------------------------------
# A cluster with the agent


def records_per_second(output: str) -> float:
    """The rate of ProducerPerformance's final summary line."""
    found = re.findall(r"^\d+ records sent, ([\d.]+) records/sec", output, re.M)
    assert found, output[-2000:]
    return float(found[-1])


def throughput(cluster: Cluster) -> float:
    """Best of two runs of PERF_RECORDS records of 100 bytes, acks=all, on a new topic with
    three replicas (after a warm-up run)."""
    cluster.create_topic(PERF_TOPIC, assignment=[1, 2, 3])
    cluster.produce_perf(PERF_TOPIC, 2_000)
    rates = []
    for _ in range(2):
        result = cluster.produce_perf(PERF_TOPIC, PERF_RECORDS)
        assert result.acked == PERF_RECORDS, result.output[-2000:]
        rates.append(records_per_second(result.output))
    return max(rates)


def offsets(appends: list[AgentEvent]) -> set[int]:
    """The offsets that appends covered (first to last offset of each that appended)."""
    done = [e for e in appends if e.get("first_offset") is not None and e["first_offset"] >= 0]
    return {o for e in done for o in range(e["first_offset"], e["last_offset"] + 1)}


def test_an_instrumented_cluster_records_the_data_plane(agent_jar: Path, tmp_path: Path) -> None:
    with Cluster() as plain:
        without_agent = throughput(plain)

    events_dir = tmp_path / "events"
    with Cluster(agent=agent_jar, events_dir=events_dir) as cluster:
        with_agent = throughput(cluster)
        cluster.create_topic(TOPIC, assignment=[1, 2, 3])
        first = cluster.produce(TOPIC, 100)
        cluster.kill_broker(3)
        cluster.start_broker(3)
        cluster.wait_isr(TOPIC, [1, 2, 3])
        second = cluster.produce(TOPIC, 100)
        cluster.terminate_broker(2)
    print(
        f"\nproduce throughput ({PERF_RECORDS} records of 100 B, acks=all, best of 2): "
        f"{without_agent:.0f} records/s without the agent, {with_agent:.0f} with it "
        f"({with_agent / without_agent:.0%})"
    )
    assert (first.acked, second.acked) == (100, 100)

    events = {b: read_events(events_dir / f"events-{b}.jsonl") for b in (1, 2, 3)}
    for broker, broker_events in events.items():
        assert of_kind(broker_events, "agent_error") == [], broker
        assert broker_events[0].kind == "agent_start" and broker_events[0].node == broker
        applied = [e["offset"] for e in of_kind(broker_events, "metadata_applied")]
        assert applied and applied == sorted(applied), broker
    leader, follower, restarted = events[1], events[2], events[3]

    def about(broker_events: list[AgentEvent], *kinds: str) -> list[AgentEvent]:
        return [e for e in of_kind(broker_events, *kinds) if e.about(TOPIC)]

    # the leader: elected, appended both runs of the producer, took fetches from both
    # followers, moved its HWM to the end, and took broker 3 back into the ISR
    became = about(leader, "make_leader")
    assert became[0]["leader"] == 1 and became[0]["isr"] == [1, 2, 3] and became[0]["returned"]
    appended = about(leader, "append_leader")
    assert {e["required_acks"] for e in appended} == {-1}
    assert offsets(appended) == set(range(200))
    assert {e["follower"] for e in about(leader, "fetch_handled")} == {2, 3}
    moved = about(leader, "hwm_moved")
    assert all(e["new_hwm"] > e["old_hwm"] for e in moved)
    assert max(e["new_hwm"] for e in moved) == 200
    rejoined = [e for e in about(leader, "isr_expand_proposed") if e["new_in_sync_replica"] == 3]
    assert rejoined and rejoined[-1]["proposed_isr"] == [1, 2, 3]
    # committed: the answer, or the metadata record of it when that arrives first: the leader
    # then ignores the answer, its partition state no longer the one proposed
    # (`Partition.submitAlterPartition`'s callback at 4.1.1 calls neither handler)
    answers = about(leader, "alter_partition_answer")
    answered = any(e["answer"] == "update" and e["answer_isr"] == [1, 2, 3] for e in answers)
    proposed_at = rejoined[-1]["partition_epoch"]
    learned = any(
        e["isr"] == [1, 2, 3] and e["partition_epoch"] > proposed_at
        for e in about(leader, "make_leader")
    )
    assert answered or learned
    assert not about(leader, "make_follower")

    # the follower that stayed up: appended every record the leader did, then shut down cleanly
    assert about(follower, "make_follower")[0]["leader"] == 1
    assert offsets(about(follower, "append_follower")) == set(range(200))
    assert about(follower, "fetch_response")
    shutdown = [(e["via"], e.get("phase")) for e in of_kind(follower, "shutdown")]
    assert ("BrokerServer.shutdown", "begin") in shutdown
    assert ("jvm_shutdown_hook", None) in shutdown

    # the follower killed and restarted: its log recovered to the offset it had reached
    before, after = runs(restarted)
    assert not of_kind(before, "shutdown")  # SIGKILL: no shutdown hook ran
    reached = about(before, "append_follower")[-1]["log_end_offset"]
    (recovered,) = about(after, "log_recovery")
    assert recovered["had_clean_shutdown"] is False
    assert recovered["log_end_offset"] == reached
    assert recovered["recovery_point"] <= recovered["log_end_offset"]
    assert about(after, "make_follower")
    assert offsets(about(after, "append_follower")) == set(range(reached, 200))
