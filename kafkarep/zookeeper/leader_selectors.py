"""The four leader selectors of the ZooKeeper-era controller, as Kafka Controller Internals
(Apache wiki) lists them under "OnlinePartition,OfflinePartition -> OnlinePartition" (1.a-1.d).

Each returns the new leader, the new ISR and the replicas that receive the LeaderAndIsr request,
or `NoLeader`. "A replica" is read as the first one in the order of the list it is chosen from
(the assigned replicas, or the reassigned ones), as Kafka's selectors do. `live` holds the
brokers that are up and not shutting down (Kafka's live brokers).

Readings where the wiki page says less than a selector needs:
- preferred: the first assigned replica must also be live (a dead broker cannot lead);
- reassigned: "a live reassigned replica" must also be in the ISR. The page keeps the current
  ISR, so a leader outside it would lead an ISR it is not in (an unclean election nobody asked
  for); Kafka's selector checks the ISR too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from kafkarep.zookeeper.outcome import NoLeader


class Selection(NamedTuple):
    leader: int
    isr: tuple[int, ...]
    receivers: tuple[int, ...]  # the replicas sent the LeaderAndIsr request
    unclean: bool = False  # the leader came from outside the ISR


OFFLINE = "OfflinePartitionLeaderSelector"
REASSIGNED = "ReassignedPartitionLeaderSelector"
PREFERRED = "PreferredReplicaPartitionLeaderSelector"
CONTROLLED_SHUTDOWN = "ControlledShutdownLeaderSelector"


def offline(
    assigned: Sequence[int],
    isr: Sequence[int],
    live: Collection[int],
    unclean_allowed: bool,
) -> Selection | NoLeader:
    """1.a: new leader = a live replica (preferably in isr); new isr = live isr if not empty or
    just the new leader if otherwise; receiving replicas = live assigned replicas."""
    live_isr = tuple(r for r in isr if r in live)
    receivers = tuple(r for r in assigned if r in live)
    leader = next((r for r in assigned if r in live_isr), None)
    if leader is not None:
        return Selection(leader, live_isr, receivers)
    if not unclean_allowed:
        return NoLeader(OFFLINE, f"no live replica in the ISR {list(isr)}, unclean election off")
    if not receivers:
        return NoLeader(OFFLINE, f"no live replica among {list(assigned)}")
    return Selection(receivers[0], (receivers[0],), receivers, unclean=True)


def reassigned(
    reassigned_replicas: Sequence[int], isr: Sequence[int], live: Collection[int]
) -> Selection | NoLeader:
    """1.b: new leader = a live reassigned replica (in the ISR, see above); new isr = current
    isr; receiving replicas = reassigned replicas."""
    leader = next((r for r in reassigned_replicas if r in live and r in isr), None)
    if leader is None:
        return NoLeader(
            REASSIGNED,
            f"no live reassigned replica of {list(reassigned_replicas)} in the ISR {list(isr)}",
        )
    return Selection(leader, tuple(isr), tuple(reassigned_replicas))


def preferred(
    assigned: Sequence[int], isr: Sequence[int], live: Collection[int]
) -> Selection | NoLeader:
    """1.c: new leader = first assigned replica (if in isr, and live); new isr = current isr;
    receiving replicas = assigned replicas."""
    first = assigned[0] if assigned else None
    if first is None or first not in isr or first not in live:
        return NoLeader(PREFERRED, f"preferred replica {first} is not a live ISR member")
    return Selection(first, tuple(isr), tuple(assigned))


def controlled_shutdown(
    assigned: Sequence[int],
    isr: Sequence[int],
    live: Collection[int],
    shutting_down: Collection[int],
) -> Selection | NoLeader:
    """1.d: new leader = replica in isr that's not being shut down; new isr = current isr -
    shutdown replica; receiving replicas = live assigned replicas."""
    new_isr = tuple(r for r in isr if r not in shutting_down)
    leader = next((r for r in assigned if r in new_isr and r in live), None)
    if leader is None:
        return NoLeader(
            CONTROLLED_SHUTDOWN, f"no live ISR member of {list(isr)} outside the shutdown"
        )
    receivers = tuple(r for r in assigned if r in live and r not in shutting_down)
    return Selection(leader, new_isr, receivers)
