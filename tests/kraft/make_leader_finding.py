"""The makeLeader finding (models/findings/make_leader_resets_pending_isr.toml) driven through a
real Kafka cluster with the kafkarep agent's gate (docs/mutations-and-findings.md has the report).

    PYTHONPATH=. python -m tests.kraft.make_leader_finding [KAFKA_VERSION]   # default 4.1.1

The gate only delays threads (a follower's fetch responses, the leader's handling of a fetch,
its AlterPartition requests, its metadata publication), as a slow network or a lagging metadata
replay would; every step is Kafka's own. The steps follow the model's trace: the leader commits
an ISR expansion A by the controller's answer while its own metadata replay lags; it proposes a
second expansion B for a follower that is behind its log end but at the HWM; the metadata record
of A then arrives and `Partition.makeLeader` resets the pending state (drops B), so the HWM
advances over the committed ISR; the controller commits B anyway. An ISR member then lacks
committed records (`leader_candidate_completeness.isr`), and when the two other brokers fail it
is elected and an acknowledged (acks=all) write is lost.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.realcluster import gate
from kafkarep.realcluster.cluster import KAFKA_VERSION, Cluster, wait_until
from kafkarep.reproduce.recorded import Recorded
from tests.helpers import ROOT

TOPIC = "t"


@dataclass
class Reproduction:
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, what Kafka did)
    isr_lacking: tuple[list[int], int, int] | None = None  # (ISR, broker 3's LEO, leader's HWM)
    acked: tuple[int, str] | None = None  # the acks=all write: (offset, value)
    survivor_log_end: int | None = None  # the new leader's log end after the failures
    lost: bool = False  # the acknowledged write is not in the new leader's log

    def reached(self, step: str, what: str) -> None:
        self.steps.append((step, what))
        print(f"  {len(self.steps):2}. {step}: {what}", flush=True)


class Brokers(Recorded):
    """The cluster's events about t-0."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster, TOPIC)

    def hwm(self, broker: int) -> int:
        return max((e["new_hwm"] for e in self.about(broker, "hwm_moved")), default=0)

    def log_end(self, broker: int) -> int:
        kinds = ("append_follower", "append_leader", "make_leader", "make_follower")
        return max((e["log_end_offset"] for e in self.about(broker, *kinds)), default=0)


class ShrankFirst(Exception):
    """Kafka's periodic ISR expiry (`Partition.maybeShrinkIsr`, scheduled as "isr-expiration"
    every `replica.lag.time.max.ms` / 2 by `ReplicaManager.startup`, both at 4.1.1) took broker 2
    out of the ISR in the window where its caught-up fetch is held: its last caught-up time is
    from before it was killed. A timing the trace does not take: the
    interleaving was not reached, not refuted, and a run may try again."""


def _answer_of_a(b: Brokers) -> AgentEvent | None:
    """The leader's event of taking the controller's answer to expansion A (ISR [1, 2])."""
    answers = [e for e in b.about(1, "alter_partition_answer") if e.get("answer_isr") == [1, 2]]
    return answers[0] if answers else None


def _not_shrunk_since(b: Brokers, seq: int) -> None:
    for shrink in b.about(1, "isr_shrink_proposed"):
        if shrink.seq > seq and 2 in shrink["out_of_sync_replicas"]:
            raise ShrankFirst(
                f"the leader's ISR expiry proposed {shrink['proposed_isr']} after A committed "
                "(broker 2 out of sync by its last caught-up time)"
            )


def reproduce(cluster: Cluster, gate_dir: Path) -> Reproduction:
    """Drive the cluster (brokers 1, 2, 3, the agent's gate on) through the finding's trace."""
    out = Reproduction()
    b = Brokers(cluster)
    cluster.create_topic(TOPIC, assignment=[1, 2, 3])
    cluster.produce(TOPIC, 10)
    wait_until("both followers copied", lambda: b.log_end(2) == b.log_end(3) == 10)
    out.reached("10 records, acks=all", f"{cluster.partition(TOPIC)}")

    # Broker 3 falls behind: its fetch responses are held (it sends no fetch meanwhile).
    follower3 = gate.hold(gate_dir, 3, "fetch_response", TOPIC, 0)
    cluster.produce(TOPIC, 1, acks=1)
    gate.wait_held(gate_dir, 3, "fetch_response", TOPIC, 0, timeout=30)
    cluster.kill_broker(2)
    cluster.wait_isr(TOPIC, [1, 3])
    cluster.produce(TOPIC, 5, acks=1)
    cluster.wait_isr(TOPIC, [1])
    out.reached(
        "broker 2 killed, broker 3 lagging, 6 acks=1 writes",
        f"the leader shrank the ISR to [1]; leader log end {b.log_end(1)}, HWM {b.hwm(1)}",
    )

    # Expansion A: broker 2 restarts; its first fetch is held at the leader until the leader's
    # image has it unfenced, then the leader proposes it, and the AlterPartition is held.
    request = gate.hold(gate_dir, 1, "alter_partition_request", TOPIC, 0)
    fetch2 = gate.hold(gate_dir, 1, "fetch", TOPIC, 0, follower=2)
    cluster.start_broker(2)
    gate.wait_held(gate_dir, 1, "fetch", TOPIC, 0, follower=2, timeout=90)
    time.sleep(3.0)  # broker 1 applies broker 2's unfencing
    gate.release(fetch2)
    a = gate.wait_held(gate_dir, 1, "alter_partition_request", TOPIC, 0, timeout=90)
    out.reached("A proposed", f"{a['proposed']} {a['proposed_isr']}")

    # A committed, answered, taken; the leader's metadata publication held behind it.
    fetch2 = gate.hold(gate_dir, 1, "fetch", TOPIC, 0, follower=2)
    metadata = gate.hold(gate_dir, 1, "metadata")
    gate.release(request)
    wait_until("A's answer taken", lambda: _answer_of_a(b) is not None)
    answer = _answer_of_a(b)
    assert answer is not None
    held2 = gate.wait_held(gate_dir, 1, "fetch", TOPIC, 0, follower=2)
    held_metadata = gate.wait_held(gate_dir, 1, "metadata")
    out.reached(
        "A committed, its answer taken, the metadata record of it not yet published",
        f"ISR {answer['isr']} at partition epoch {answer['partition_epoch']}; HWM {b.hwm(1)}; "
        f"broker 2's fetch at {held2['fetch_offset']} held at the leader",
    )

    # Expansion B: broker 3 (at the HWM, behind the log end) fetches and is proposed.
    request = gate.hold(gate_dir, 1, "alter_partition_request", TOPIC, 0)
    gate.release(follower3)
    b_held = gate.wait_held(gate_dir, 1, "alter_partition_request", TOPIC, 0, timeout=60)
    _not_shrunk_since(b, answer.seq)
    follower3 = gate.hold(gate_dir, 3, "fetch_response", TOPIC, 0)
    out.reached("B proposed", f"{b_held['proposed']} {b_held['proposed_isr']}")
    gate.release(fetch2)
    gate.wait_released(gate_dir, held2)
    time.sleep(1.0)
    out.reached("broker 2's fetch taken", f"HWM {b.hwm(1)} (B's Maximal ISR holds it back)")

    # The metadata record of A arrives: makeLeader resets the pending state, dropping B.
    gate.release(metadata)
    gate.wait_released(gate_dir, held_metadata)
    wait_until(
        "A's record applied",
        lambda: any(
            e["partition_epoch"] == answer["partition_epoch"] for e in b.about(1, "make_leader")
        ),
    )
    time.sleep(1.0)
    out.reached(
        "the record of A applied (makeLeader, same leader epoch)", f"HWM {b.hwm(1)} over [1, 2]"
    )
    written = cluster.produce(TOPIC, 1)
    (_, offset, value), *_ = written.acked_records
    out.acked = (offset, value)
    out.reached("one write, acks=all", f"acknowledged at offset {offset}")

    # B, sent now, is committed; shrinks are held so that broker 3 stays in the ISR.
    gate.release(request)
    gate.wait_released(gate_dir, b_held)
    gate.hold(gate_dir, 1, "alter_partition_request", TOPIC, 0)
    cluster.wait_isr(TOPIC, [1, 2, 3])
    out.isr_lacking = ([1, 2, 3], b.log_end(3), b.hwm(1))
    out.reached(
        "B committed by the controller",
        f"ISR [1, 2, 3] with broker 3's log ending at {b.log_end(3)}, the leader's HWM "
        f"{b.hwm(1)}: leader_candidate_completeness.isr violated",
    )

    # The two brokers holding the write fail; broker 3, an ISR member, is elected.
    cluster.kill_broker(1)
    cluster.kill_broker(2)
    gate.release(follower3)  # broker 3's metadata thread waits for its fetcher's lock
    cluster.wait_partition(TOPIC, lambda p: p.leader == 3, "led by 3", timeout=90)
    wait_until("broker 3 leads", lambda: bool(b.about(3, "make_leader")))
    out.survivor_log_end = b.about(3, "make_leader")[-1]["log_end_offset"]
    # Its log ends below the write's offset: the write is not there (and with brokers 1 and 2
    # gone, nowhere), whatever it takes as leader from now on.
    out.lost = offset >= out.survivor_log_end
    out.reached(
        "brokers 1 and 2 killed, broker 3 elected",
        f"{cluster.partition(TOPIC)}; its log ends at {out.survivor_log_end}; the write "
        f"acknowledged at offset {offset} is {'missing' if out.lost else 'there'}",
    )
    return out


def agent_jar() -> Path:
    built = subprocess.run(
        ["bash", str(ROOT / "agent" / "build.sh")], capture_output=True, text=True, check=True
    )
    return Path(built.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    version = argv[0] if argv else KAFKA_VERSION
    with tempfile.TemporaryDirectory(prefix="kafkarep-finding-") as scratch:
        gate_dir = Path(scratch) / "gate"
        with Cluster(
            version=version,
            agent=agent_jar(),
            events_dir=Path(scratch) / "events",
            gate_dir=gate_dir,
        ) as cluster:
            result = reproduce(cluster, gate_dir)
    print("reached: acknowledged write lost" if result.lost else "NOT reached")
    return 0 if result.lost else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
