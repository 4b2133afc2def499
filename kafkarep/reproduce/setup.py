"""A real cluster in a trace's initial state, and the gate armed.

The harness has one controller and brokers 1, 2 and 3 (`realcluster.cluster`). The initial state
must be one it can build: one partition whose first replica leads, every log empty, every broker
running, the ISR the replicas less the fenced brokers, no reassignment. The set-up creates the
topic on its replicas with the model's `min.insync.replicas`, stops (SIGSTOP) each fenced broker
until the controller fences it, which also takes it out of the ISR, and then has the agent's gate
hold every point on every broker (`ARMED`), so that nothing the trace does not take happens.

The brokers run with Kafka's `replica.lag.time.max.ms`, 30 s, and the set-up waits that long
after fencing a broker: the model's initial state has no follower state for a fenced broker, so
its leader must not count it as caught up (`Partition.maybeIncrementLeaderHW` waits for a
caught-up follower it could add to the ISR, 4.1.1). The trace then has as long between a
member's fetches before its leader proposes a shrink that the trace does not take.
`request.timeout.ms` is an hour, so that a follower does not give up on a fetch held at its
leader, and eight I/O threads, as each fetch held there keeps one busy."""

from __future__ import annotations

import time
from pathlib import Path

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.realcluster import gate
from kafkarep.realcluster.cluster import BROKER_IDS, Cluster
from kafkarep.reproduce.recorded import Offsets, Recorded

TOPIC = "kafkarep"
HOUR_MS = str(3_600_000)
LAG_TIME_MS = 30_000  # Kafka's default replica.lag.time.max.ms
BROKER_PROPS = {
    "replica.lag.time.max.ms": str(LAG_TIME_MS),
    # a fetch held at the leader is not timed out by its follower (BrokerBlockingSender, 4.1.1)
    "request.timeout.ms": HOUR_MS,
    "replica.socket.timeout.ms": HOUR_MS,
    "num.io.threads": "8",
}
# acks=all writes wait for as long as the trace takes to commit them
PRODUCER_PROPS = {"request.timeout.ms": HOUR_MS, "delivery.timeout.ms": str(2 * 3_600_000)}
ARMED = ("metadata", "fetch_response", "alter_partition_request", "alter_partition_answer")


class CannotSetUp(Exception):
    """The initial state is not one the harness builds: one line saying why."""


def check_initial(cfg: ModelConfig, state: ClusterState) -> None:
    """Refuse an initial state the set-up does not build (before any cluster starts)."""
    partition = state.partition
    if len(state.brokers) != len(BROKER_IDS):
        raise CannotSetUp(f"the model has {len(state.brokers)} brokers; the harness runs 3")
    if not partition.replicas or partition.leader != partition.replicas[0]:
        raise CannotSetUp(
            f"leader {partition.leader} is not the first of the replicas {list(partition.replicas)}"
        )
    if partition.adding or partition.removing:
        raise CannotSetUp("the initial state has a reassignment in progress")
    fenced = {
        b for b in state.controller.brokers.ids() if not state.controller.brokers.is_active(b)
    }
    if set(partition.isr) != set(partition.replicas) - fenced:
        raise CannotSetUp(
            f"ISR {sorted(partition.isr)} is not the replicas less the fenced brokers "
            f"{sorted(fenced)}"
        )
    for broker_id, broker in enumerate(state.brokers, 1):
        if not broker.status.running:
            raise CannotSetUp(f"broker {broker_id} is not running in the initial state")
        if broker.replica is not None and broker.replica.log:
            raise CannotSetUp(f"broker {broker_id}'s log is not empty in the initial state")


def fenced_at_start(state: ClusterState) -> list[int]:
    registry = state.controller.brokers
    return sorted(b for b in registry.ids() if not registry.is_active(b))


def set_up(cluster: Cluster, gate_dir: Path, cfg: ModelConfig, state: ClusterState) -> Recorded:
    """Bring the started cluster to the initial state; return its records, epochs offset."""
    partition = state.partition
    cluster.producer_overrides |= PRODUCER_PROPS
    cluster.create_topic(
        TOPIC, assignment=list(partition.replicas), min_insync_replicas=cfg.min_isr
    )
    for broker_id in fenced_at_start(state):
        cluster.pause_broker(broker_id)
        cluster.wait_broker(broker_id, lambda r: r.fenced, "fenced", timeout=60)
    cluster.wait_isr(TOPIC, partition.isr)
    if fenced_at_start(state):
        cluster.log(
            f"waiting {LAG_TIME_MS // 1000 + 2}s: the fenced brokers are no longer caught up"
        )
        time.sleep(LAG_TIME_MS / 1000 + 2)
    arm(gate_dir)
    recorded = Recorded(cluster, TOPIC)
    real = recorded.images().images[-1].partitions[(TOPIC, 0)]
    recorded.offsets = Offsets(
        partition_epoch=real.partition_epoch - partition.partition_epoch,
        leader_epoch=real.leader_epoch - partition.leader_epoch,
    )
    return recorded


def arm(gate_dir: Path) -> None:
    """Hold every gate point of every broker about the topic's partition 0."""
    for node in BROKER_IDS:
        gate.hold(gate_dir, node, "metadata")
        for point in ARMED[1:]:
            gate.hold(gate_dir, node, point, TOPIC, 0)
        for follower in BROKER_IDS:
            if follower != node:
                gate.hold(gate_dir, node, "fetch", TOPIC, 0, follower=follower)
