"""What a real cluster recorded, in the fields of `projection.py`: each broker's state folded from
its agent events (docs/trace-validation.md, "Event kinds"), the controller's from its metadata log
(`kafka-dump-log --cluster-metadata-decoder`, replayed by `broker_trace.images`)."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from kafkarep.broker_trace.events import AgentEvent, EventsError, read_events, runs
from kafkarep.broker_trace.images import Image, Images
from kafkarep.metadata_log.dump import parse_dump
from kafkarep.realcluster.cluster import Cluster
from kafkarep.reproduce.projection import View


class Offsets(NamedTuple):
    """Kafka's epochs less the model's, as the set-up left them."""

    partition_epoch: int = 0
    leader_epoch: int = 0


class Recorded:
    """One partition of a running cluster, read again on every call."""

    def __init__(self, cluster: Cluster, topic: str, partition: int = 0) -> None:
        self.cluster = cluster
        self.topic = topic
        self.partition = partition
        self.offsets = Offsets()
        self.acked_offsets: list[int] = []  # of the records the driver's producers had acked

    # --- the brokers' events ----------------------------------------------------------------

    def events(self, broker: int) -> list[AgentEvent]:
        """The broker's events of its current run (JVM) about the partition, and its images."""
        for _ in range(20):
            try:
                found = runs(read_events(self.cluster.events_file(broker)))
                return found[-1] if found else []
            except FileNotFoundError:
                return []
            except EventsError:  # a line being written
                time.sleep(0.1)
        raise RuntimeError(f"broker {broker}'s events cannot be read")

    def last_seq(self, broker: int) -> int:
        events = self.events(broker)
        return events[-1].seq if events else 0

    def since(self, broker: int, seq: int, *kinds: str) -> list[AgentEvent]:
        """The broker's events after `seq` of these kinds (about the partition, or the broker's
        metadata)."""
        return [
            e
            for e in self.events(broker)
            if e.seq > seq and e.kind in kinds and (e.topic is None or self._about(e))
        ]

    def about(self, broker: int, *kinds: str) -> list[AgentEvent]:
        """The broker's events of these kinds about the partition."""
        return [e for e in self.events(broker) if e.kind in kinds and self._about(e)]

    def _about(self, event: AgentEvent) -> bool:
        return event.about(self.topic, self.partition)

    def applied(self, broker: int) -> int:
        """The last offset of the broker's published metadata image (-1: none)."""
        images = [e for e in self.events(broker) if e.kind == "metadata_applied"]
        return images[-1]["offset"] if images else -1

    def broker_view(self, broker: int) -> View:
        state: dict[str, Any] = {}
        followers: dict[int, int] = {}
        fetches: dict[int, AgentEvent] = {}  # fetches held at the gate, by hold number
        for event in self.events(broker):
            if not self._about(event):
                continue
            if event.kind == "gate_held" and event["point"] == "fetch":
                fetches[event["hold"]] = event
            elif event.kind == "gate_released" and event["hold"] in fetches:
                # let go, the fetch records the follower at its offset before anything else
                # (`Partition.updateFollowerFetchState`, 4.1.1), though its event comes later
                fetch = fetches.pop(event["hold"])
                followers[fetch["follower"]] = fetch["fetch_offset"]
            _fold(state, followers, event)
        if not state:
            return {}
        at = f"b{broker}"
        view: View = {f"{at}.{k}": v for k, v in state.items() if k != "leader_epoch"}
        if view.get(f"{at}.partition_epoch") is not None:
            view[f"{at}.partition_epoch"] -= self.offsets.partition_epoch
        if state.get("role") == "leader":
            view |= {f"{at}.follower{f}": leo for f, leo in followers.items()}
        else:
            for key in ("isr", "pending", "partition_epoch"):
                view.pop(f"{at}.{key}", None)
        return view

    def true_hwm(self) -> int:
        """The highest HWM any broker's leader recorded."""
        found = 0
        for broker in self.cluster.brokers:
            for event in self.events(broker):
                if self._about(event) and event.kind == "hwm_moved":
                    found = max(found, event["new_hwm"])
        return found

    # --- the controller's metadata log ------------------------------------------------------

    def images(self) -> Images:
        return Images(parse_dump(self.cluster.dump_metadata_log(), "the controller's log"))

    def controller_view(self, image: Image | None = None) -> View:
        image = image or self.images().images[-1]
        registration = image.partitions[(self.topic, self.partition)]
        registry = image.registry
        return {
            "controller.leader": registration.leader,
            "controller.isr": sorted(registration.isr),
            "controller.elr": sorted(registration.elr),
            "controller.partition_epoch": registration.partition_epoch
            - self.offsets.partition_epoch,
            "controller.leader_epoch": registration.leader_epoch - self.offsets.leader_epoch,
            "controller.fenced": sorted(
                b for b in self.cluster.brokers if b in registry.ids() and not registry.is_active(b)
            ),
        }

    def view(self, *, controller: bool) -> View:
        """The brokers' fields (and the controller's, which costs a dump of its log)."""
        found: View = {"acked": len(self.acked_offsets)}
        for broker in self.cluster.brokers:
            if self.cluster.brokers[broker].alive():
                found |= self.broker_view(broker)
        if controller:
            found |= self.controller_view()
        return found


def _fold(state: dict[str, Any], followers: dict[int, int], event: AgentEvent) -> None:
    """One event into the broker's state (`state`) and, on a leader, its followers' LEOs."""
    fields = event.fields
    if event.kind in ("make_leader", "make_follower"):
        state["role"] = "leader" if event.kind == "make_leader" else "follower"
        state["pending"] = None  # Partition.makeLeader and makeFollower reset it (4.1.1)
        if fields.get("leader_epoch") != state.get("leader_epoch"):
            followers.clear()  # a new leader epoch forgets the followers' states
    if fields.get("log_end_offset") is not None:
        state["log_end"] = fields["log_end_offset"]
    for key in ("high_watermark", "new_hwm"):
        if fields.get(key) is not None:
            state["hwm"] = fields[key]
    for key in ("leader_epoch", "partition_epoch"):
        if fields.get(key) is not None:
            state[key] = fields[key]
    if fields.get("isr"):
        state["isr"] = sorted(fields["isr"])
    if event.kind in ("isr_expand_proposed", "isr_shrink_proposed"):
        state["pending"] = sorted(fields["proposed_isr"])
    elif event.kind == "alter_partition_answer" and not fields.get("pending"):
        state["pending"] = None
    if event.kind == "fetch_handled":
        followers[fields["follower"]] = fields["replica"]["log_end_offset"]
