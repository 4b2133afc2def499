"""Log Matching (protocol description §2.4)."""

from __future__ import annotations

from itertools import combinations

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState, Entry, Log, Replica
from kafkarep.properties.base import always


def stable_prefixes_agree(cfg: ModelConfig, state: ClusterState) -> str | None:
    """Any two replicas with an HWM above 0 agree at every offset below the smaller HWM: both
    hold the same record there, or (only in a state that breaks HWM <= LEO) neither holds one.
    A record one holds and the other lacks there is a violation: the logs differ below both
    HWMs. A log that ends below its own HWM is not by itself a Log Matching violation (no other
    replica's records disagree with it); the rules keep the HWM within the log, and a rule change
    that breaks that shows here as soon as another replica's HWM covers the missing offset."""
    replicas = [
        (b, broker.replica)
        for b, broker in enumerate(state.brokers, 1)
        if broker.replica is not None and broker.replica.hwm > 0
    ]
    for (a, ra), (b, rb) in combinations(replicas, 2):
        assert ra is not None and rb is not None
        bound = min(ra.hwm, rb.hwm)
        if ra.log[:bound] != rb.log[:bound]:
            return _first_difference(a, ra, b, rb, bound)
    return None


def _first_difference(a: int, ra: Replica, b: int, rb: Replica, bound: int) -> str:
    """The first offset below `bound` where the two logs differ, in words (either log may end
    before `bound`)."""
    for offset in range(bound):
        held_a, held_b = _at(ra.log, offset), _at(rb.log, offset)
        if held_a == held_b:
            continue
        if held_a is None:
            return _missing(b, held_b, a, ra, offset)
        if held_b is None:
            return _missing(a, held_a, b, rb, offset)
        return (
            f"replicas {a} and {b} differ at offset {offset} below both HWMs: "
            f"(epoch, value) {held_a} vs {held_b}"
        )
    return f"replicas {a} and {b} differ below both HWMs"  # not reached: the prefixes differ


def _missing(holding: int, entry: Entry | None, lacking: int, short: Replica, offset: int) -> str:
    return (
        f"replica {lacking} has no record at offset {offset} below both HWMs "
        f"(its LEO {short.leo} < its HWM {short.hwm}); replica {holding} has (epoch, value) {entry}"
    )


def _at(log: Log, offset: int) -> Entry | None:
    return log[offset] if offset < len(log) else None


LOG_MATCHING = always(
    "log_matching",
    """Any two replicas hold the same records at every offset below both their HWMs: the stable
    prefix of the log is the same everywhere. A replica that lacks a record below both HWMs
    while the other holds one breaks it too (only a state whose HWM passed its log end has one).""",
    "protocol description §2.4; kafka-tlaplus LogMatchingProperty",
    stable_prefix=stable_prefixes_agree,
)
