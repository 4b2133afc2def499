"""Each model step taken on the real cluster: the thread the gate holds for it released once, or
the fault done, and what Kafka did, read back from its records.

A step whose thread has not reached its gate point is not ready (`NotReady`): Kafka is still
doing an earlier step's work, or ties this step to a later one (a follower's fetch response waits
in its leader's handler thread while the ISR expansion that fetch proposed is held). The driver
may then take a later step first (`order.py`). A step Kafka takes otherwise than the model, or
not at all, is `NotTaken`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.kafka.metadata import PartitionRegistration
from kafkarep.model.actions import Action
from kafkarep.model.state import ClusterState
from kafkarep.realcluster import gate
from kafkarep.realcluster.cluster import Cluster
from kafkarep.reproduce.recorded import Recorded
from kafkarep.reproduce.setup import TOPIC

READY_SECONDS = 8.0  # how long a step's thread may take to reach its gate point
TAKEN_SECONDS = 30.0  # how long Kafka may take to do what a released thread does


class NotReady(Exception):
    """The step's thread is not held at its gate point (yet)."""


class NotTaken(Exception):
    """Kafka did not take the step: what it did instead."""


@dataclass
class Driving:
    cluster: Cluster
    gate_dir: Path
    recorded: Recorded
    acks: int = -1
    producers: list[threading.Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def pass_one(
        self, node: int, point: str, *, follower: int | None = None, ready: float = READY_SECONDS
    ) -> dict[str, Any]:
        """Let one thread held at `point` of broker `node` go, and hold the next one there."""
        topic, partition = (None, None) if point == "metadata" else (TOPIC, 0)
        try:
            held = gate.wait_held(
                self.gate_dir, node, point, topic, partition, follower, timeout=ready
            )
        except TimeoutError:
            raise NotReady(f"no thread of broker {node} held at {point}") from None
        gate.let_go(self.gate_dir, held)
        return held

    def await_event(
        self,
        broker: int,
        seq: int,
        kinds: tuple[str, ...],
        what: str,
        match: Callable[[AgentEvent], bool] = lambda e: True,
        timeout: float = TAKEN_SECONDS,
    ) -> AgentEvent:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.recorded.since(broker, seq, *kinds):
                if match(event):
                    return event
            if time.monotonic() > deadline:
                raise NotTaken(f"broker {broker} did not {what} within {timeout:.0f}s")
            time.sleep(0.1)

    def awake(self, broker: int) -> None:
        """A broker the set-up or a fence stopped runs again to take its step."""
        if self.cluster.brokers[broker].paused:
            self.cluster.resume_broker(broker)


Driver = Callable[[Driving, Action, ClusterState, ClusterState], str]


def produce(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    leader = action.actor
    seq = d.recorded.last_seq(leader)

    def send() -> None:
        try:
            result = d.cluster.produce(TOPIC, 1, acks=d.acks)
            d.recorded.acked_offsets += [offset for _, offset, _ in result.acked_records]
        except Exception as error:  # the step's check reports the missing ack
            d.errors.append(f"the producer failed: {error}")

    thread = threading.Thread(target=send, name="kafkarep-producer", daemon=True)
    thread.start()
    d.producers.append(thread)
    appended = d.await_event(leader, seq, ("append_leader",), "append the record", timeout=90)
    acks = "all" if d.acks == -1 else d.acks
    return f"appended at offset {appended['first_offset']} (acks={acks}, its ack awaited)"


def fetch(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    follower = action.actor
    replica = before.broker(follower).replica
    assert replica is not None and replica.view is not None
    leader = replica.view.leader
    seq = d.recorded.last_seq(leader)
    stale = ""
    try:
        held = d.pass_one(leader, "fetch", follower=follower)
    except NotReady:
        if before.broker(follower).fetch_response is not None:
            raise
        # The follower's fetcher is held at its own response to a fetch the model does not have:
        # one in flight when the set-up stopped the broker (SIGSTOP). Let it go; the next fetch
        # is the model's.
        d.pass_one(follower, "fetch_response", ready=1.0)
        stale = f" (broker {follower} first took a response to a fetch from before the trace)"
        held = d.pass_one(leader, "fetch", follower=follower)
    did = f"leader {leader} took the fetch at offset {held['fetch_offset']}{stale}"
    proposes = after.broker(leader).replica
    if proposes is not None and proposes.pending and proposes.pending != _pending(before, leader):
        # Partition.updateFollowerFetchState proposes the expansion before it returns (4.1.1):
        # its fetch_handled event is written once the AlterPartition is sent
        hwm = d.recorded.broker_view(leader).get(f"b{leader}.hwm")
        proposed = d.await_event(
            leader,
            seq,
            ("isr_expand_proposed",),
            f"propose broker {follower} for the ISR (it took the fetch at offset "
            f"{held['fetch_offset']}, its HWM at {hwm})",
            timeout=10,
        )
        return did + f", proposed ISR {sorted(proposed['proposed_isr'])}"
    d.await_event(
        leader,
        seq,
        ("fetch_handled", "isr_expand_proposed"),
        f"take broker {follower}'s fetch",
        match=lambda e: follower in (e.get("follower"), e.get("new_in_sync_replica")),
    )
    return did


def _pending(state: ClusterState, broker: int) -> object:
    replica = state.broker(broker).replica
    return None if replica is None else replica.pending


def fetch_response(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    follower = action.actor
    seq = d.recorded.last_seq(follower)
    d.pass_one(follower, "fetch_response")
    taken = d.await_event(follower, seq, ("fetch_response",), "take the fetch response")
    return f"took {taken.get('offsets') or 0} record(s), HWM {taken['high_watermark']}"


def handle_alter_partition(
    d: Driving, action: Action, before: ClusterState, after: ClusterState
) -> str:
    leader = action.arg
    assert isinstance(leader, int)
    held = d.pass_one(leader, "alter_partition_request")
    try:
        answer = gate.wait_held(d.gate_dir, leader, "alter_partition_answer", TOPIC, 0, timeout=30)
    except TimeoutError:
        raise NotTaken("no answer from the controller within 30s") from None
    if answer.get("answer") == "error":
        return f"sent ISR {held['proposed_isr']}; the controller refused: {answer.get('error')}"
    return (
        f"sent ISR {held['proposed_isr']}; the controller committed ISR {answer['answer_isr']}"
        f" at partition epoch {answer['answer_partition_epoch']}"
    )


def alter_partition_response(
    d: Driving, action: Action, before: ClusterState, after: ClusterState
) -> str:
    leader = action.actor
    seq = d.recorded.last_seq(leader)
    d.pass_one(leader, "alter_partition_answer")
    taken = d.await_event(leader, seq, ("alter_partition_answer",), "take the answer")
    if taken.get("pending"):
        return "ignored the answer (not the proposal in flight)"
    return f"took the answer: ISR {taken.get('isr')}"


def apply_metadata(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    index = action.arg
    assert isinstance(index, int)
    wanted = before.controller.log[index].partition_epoch + d.recorded.offsets.partition_epoch
    images = d.recorded.images().images
    target = next(
        (i.offset for i in images if _epoch(i.partitions.get((TOPIC, 0))) >= wanted), None
    )
    if target is None:
        raise NotTaken(f"the controller's log has no partition epoch {wanted}")
    return _publish(d, action.actor, target)


def _epoch(registration: PartitionRegistration | None) -> int:
    return -1 if registration is None else registration.partition_epoch


def apply_registrations(
    d: Driving, action: Action, before: ClusterState, after: ClusterState
) -> str:
    images = d.recorded.images().images
    changes = [b.offset for a, b in pairwise(images) if a.registry != b.registry]
    return _publish(d, action.actor, changes[-1] if changes else images[-1].offset)


def _publish(d: Driving, broker: int, target: int) -> str:
    """Let the broker publish images until it has applied the log up to `target`."""
    d.awake(broker)
    offsets: list[int] = []
    while d.recorded.applied(broker) < target:
        seq = d.recorded.last_seq(broker)
        held = d.pass_one(broker, "metadata")
        image = held["offset"]
        d.await_event(
            broker,
            seq,
            ("metadata_applied",),
            f"publish the image at {image}",
            match=_at_least(image),
        )
        offsets.append(image)
    if not offsets:
        return f"had published the image at offset {d.recorded.applied(broker)} already"
    return f"published the image{'s' if len(offsets) > 1 else ''} at offset " + ", ".join(
        str(o) for o in offsets
    )


def _at_least(offset: int) -> Callable[[AgentEvent], bool]:
    return lambda event: bool(event["offset"] >= offset)


def fence(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    broker = action.arg
    assert isinstance(broker, int)
    node = d.cluster.brokers[broker]
    how = "its heartbeats stopped"
    if node.alive() and not node.paused:
        d.cluster.pause_broker(broker)
        how = "the broker stopped (SIGSTOP), its heartbeats with it"
    d.cluster.wait_broker(broker, lambda r: r.fenced, "fenced", timeout=60)
    return f"the controller fenced broker {broker}: {how}"


def unfence(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    broker = action.arg
    assert isinstance(broker, int)
    d.awake(broker)
    d.cluster.wait_broker(broker, lambda r: not r.fenced, "unfenced", timeout=60)
    return f"the controller unfenced broker {broker} at its heartbeat"


def crash(d: Driving, action: Action, before: ClusterState, after: ClusterState) -> str:
    d.cluster.kill_broker(action.actor)
    return f"broker {action.actor} killed (SIGKILL)"


DRIVERS: dict[str, Driver] = {
    "produce": produce,
    "fetch": fetch,
    "fetch_response": fetch_response,
    "handle_alter_partition": handle_alter_partition,
    "alter_partition_response": alter_partition_response,
    "apply_metadata": apply_metadata,
    "apply_registrations": apply_registrations,
    "fence": fence,
    "unfence": unfence,
    "crash": crash,
}
