"""KIP-236: interruptible reassignment, as pure functions, next to the KRaft cancel rule
(`reassignment.cancel_reassignment`; Kafka's
`ReplicationControlManager.cancelPartitionReassignment`).

`rollback` cancels a pending reassignment and goes back to the original replicas (OAR), the
KIP's seven steps. `drop_set` is the set of replicas a reassignment changed in flight drops at
once (the KIP's change to onPartitionReassignment).

Readings where the KIP is ambiguous (named in the tests and in
docs/reassignment-and-zookeeper.md):
- READING_ROLLBACK_LEADER: "elect a new leader from OAR" uses the reassigned-partition selector of
  the same controller (Kafka Controller Internals, Apache wiki, 1.b) over OAR: the first
  original replica that is live and in the ISR. With none, the cancel is refused (the KIP says
  nothing; KRaft refuses the like case unless unclean election is on,
  `ReplicationControlManager.cancelPartitionReassignment`).
- READING_TOP_INCLUSIVE: `existing[0:top-1]` is the first `top` entries (an inclusive range). The
  exclusive slice would keep only [1] in the KIP's own example and drop 2, a replica of the new
  target.
- READING_KEEP_NEW_TARGET: a replica of the new target is never dropped (it would be added back
  at once); the KIP's formula alone would drop an intermediate replica the new target names.
- READING_ISR_ORDER: the ISR is taken in the order given (Kafka keeps it as a list); `osr` is
  sorted as the KIP says.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from kafkarep.kafka.metadata import NO_LEADER
from kafkarep.zookeeper import leader_selectors
from kafkarep.zookeeper.outcome import NoLeader


class Ignored(NamedTuple):
    """The controller refuses or ignores the request (logging a warning, in the KIP)."""

    reason: str


class Rollback(NamedTuple):
    """The partition after a cancel, and the replicas it stops."""

    replicas: tuple[int, ...]  # AR = OAR
    isr: tuple[int, ...]
    leader: int
    new_leader: bool  # step 2 elected one (else the leader epoch is bumped in place)
    stopped: tuple[int, ...]  # RAR - OAR: OfflineReplica, then NonExistentReplica


def rollback(
    original: Sequence[int],
    reassigned: Sequence[int],
    isr: Sequence[int],
    leader: int,
    live: Collection[int],
) -> Rollback | Ignored:
    """KIP-236 cancellation of one partition's pending reassignment OAR -> RAR."""
    oar, rar = tuple(original), tuple(reassigned)
    # 1. Set AR to OAR in memory.
    replicas = oar
    # 2. If the leader is not in OAR, elect a new leader from OAR (READING_ROLLBACK_LEADER).
    new_leader = leader not in oar
    if new_leader:
        chosen = leader_selectors.reassigned(oar, isr, live)
        if isinstance(chosen, NoLeader):
            return Ignored(f"cannot roll back: {chosen.message}")
        leader = chosen.leader
    # 3. Move RAR - OAR to OfflineReplica: they leave the ISR (and get StopReplica).
    stopped = tuple(r for r in rar if r not in oar)
    new_isr = tuple(r for r in isr if r not in stopped)
    # 4. RAR - OAR -> NonExistentReplica (StopReplica with deletion); 5. AR = OAR in ZooKeeper;
    # 6. the partition leaves /admin/reassign_partitions; 7. UpdateMetadata to every broker.
    return Rollback(replicas, new_isr, leader, new_leader, stopped)


class DropSet(NamedTuple):
    drop: tuple[int, ...]  # in assigned order
    kept: tuple[int, ...]  # existing[0:top-1]
    existing: tuple[int, ...]  # leader, ISR, then the sorted out-of-sync replicas


def drop_set(
    original: Sequence[int],
    assigned: Sequence[int],
    isr: Sequence[int],
    leader: int,
    min_isr: int,
    new_target: Sequence[int] = (),
) -> DropSet | Ignored:
    """The replicas a reassignment changed in flight drops: `assigned` are the replicas assigned
    when the change arrives (original plus those the earlier target added)."""
    # 1. top = len(original_assignment); a reassignment with top < MinISR is ignored.
    top = len(original)
    if top < min_isr:
        return Ignored(f"original replicas {list(original)} are fewer than MinISR {min_isr}")
    # 2.1-2.4: osr = assigned -- isr, sorted; existing = leader ++ isr ++ osr, deduplicated.
    osr = sorted(r for r in assigned if r not in isr)
    existing: list[int] = []
    for r in ([leader] if leader != NO_LEADER else []) + list(isr) + osr:
        if r not in existing:
            existing.append(r)
    # 2.5: drop = assigned -- existing[0:top-1] (READING_TOP_INCLUSIVE, READING_KEEP_NEW_TARGET).
    kept = tuple(existing[:top])
    drop = tuple(r for r in assigned if r not in kept and r not in new_target)
    return DropSet(drop, kept, tuple(existing))
