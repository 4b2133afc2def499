"""What a step touches: the vocabulary of the footprints each action declares beside itself.

A footprint is one int, read by the explorer's partial-order reduction
(`kafkarep/model/independence.py`): two steps whose footprints are disjoint, and whose ghost
effects are compatible, commute. Its bits:

- 0 to 2, the ghost effect (`Ghost`, which only the properties read): RECEIVES adds its broker
  to the receivers of the records it appends (a set union: two such steps commute); COMMITS may
  move the True HWM and record an HWM advance below MinISR; ACKS may acknowledge or fail writes
  (which reads the receivers);
- 3, the controller's state;
- then two per broker: its *data* (the replica's log, HWM and whether it must truncate before
  it fetches, the fetch response in flight) and
  the *rest* (status, registration, metadata position, the replica's role, view and leader
  state, the AlterPartition answer and the delayed fetch in flight).

A family without a footprint (faults, elections, reassignment, failover) is DEPENDENT: it
commutes with nothing. `touched` says what a step changed, in the same bits, so
`tests/test_footprints.py` runs every footprinted step of reachable states and checks that it
wrote nothing its footprint leaves out; `tests/test_por.py` checks the reads, by applying both
orders of every pair the search declares independent.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.model.state import Broker, ClusterState, Controller, Ghost

Footprint = int
# What an action touches in the state it is enabled in (declared beside each action family)
Declare = Callable[..., Footprint]

RECEIVES = 1  # adds its broker to who received some records (Ghost.receive)
COMMITS = 2  # may move the True HWM (Ghost.committed) and record an advance below MinISR
ACKS = 4  # may acknowledge or fail writes: reads the receivers, writes the acknowledged
CONTROLLER = 8  # reads or writes the controller's state (a location as a broker is)
DEPENDENT = -1  # a step that commutes with nothing (no footprint)


def data(broker_id: int) -> Footprint:
    """A broker's log, HWM and the fetch response in flight."""
    return 1 << (2 * broker_id + 2)


def meta(broker_id: int) -> Footprint:
    """Everything else of a broker."""
    return 1 << (2 * broker_id + 3)


def broker(broker_id: int) -> Footprint:
    return data(broker_id) | meta(broker_id)


def moves_hwm(state: ClusterState, leader: int) -> Footprint:
    """The ghost effect of a step that may move this leader's HWM, or fail its writes
    (`hwm.maybe_advance_hwm`, `hwm.nack_unacked`)."""
    replica = state.brokers[leader - 1].replica
    return COMMITS | ACKS if replica is not None and replica.unacked_from >= 0 else COMMITS


def reads_log_end(state: ClusterState, broker_id: int) -> Footprint:
    """A broker catching up after a restart applies the log's last record, which a controller's
    step moves; a lagging controller holds back the compaction its steps release."""
    if state.brokers[broker_id - 1].initialised and not state.controller.lag:
        return 0
    return CONTROLLER


# --- what a step changed ---------------------------------------------------------------------


def touched(before: ClusterState, after: ClusterState) -> Footprint:
    """The locations a step from `before` to `after` wrote, in footprint bits. A leader's
    AlterPartition request in flight is its own (the request slot), not the controller's.
    Neither is a location: the budget, which only faults and produce read; the metadata log's
    prefix every broker applied, which a broker's step may drop (`controller.compact`), since
    steps name a record by its partition epoch (`independence.sleep_key`), not its position."""
    found = 0
    old_c, new_c = before.controller, after.controller
    if _uncompacted(old_c, len(new_c.log)) != new_c._replace(ap_requests=()):
        found |= CONTROLLER
    for broker_id, (old, new) in enumerate(zip(before.brokers, after.brokers, strict=True), 1):
        if old_c.ap_requests[broker_id - 1] != new_c.ap_requests[broker_id - 1]:
            found |= meta(broker_id)
        if old is new:
            continue
        if _data_of(old) != _data_of(new):
            found |= data(broker_id)
        if _rest_of(old) != _rest_of(new):
            found |= meta(broker_id)
    return found | _ghost_effect(before.ghost, after.ghost)


def _uncompacted(c: Controller, kept: int) -> Controller:
    """The controller as it is once it keeps only the last `kept` records, no request slots."""
    drop = max(len(c.log) - kept, 0)
    return c._replace(
        log=c.log[drop:], eligible=c.eligible[drop:], min_isr=c.min_isr[drop:], ap_requests=()
    )


def _ghost_effect(g: Ghost, h: Ghost) -> Footprint:
    """A receiver added is RECEIVES; one forgotten (a write failed) is ACKS, as acknowledging."""
    found = 0
    for k in range(max(len(g.received), len(h.received))):
        old = g.received[k] if k < len(g.received) else 0
        new = h.received[k] if k < len(h.received) else 0
        if new & ~old:
            found |= RECEIVES
        if old & ~new:
            found |= ACKS
    if (h.committed, h.hwm_below_min_isr) != (g.committed, g.hwm_below_min_isr):
        found |= COMMITS
    acked = (h.pos_acked, h.neg_acked, h.ack_below_min_isr)
    if acked != (g.pos_acked, g.neg_acked, g.ack_below_min_isr):
        found |= ACKS
    return found


def _data_of(b: Broker) -> tuple[object, ...]:
    r = b.replica
    if r is None:
        return (None, None, None, b.fetch_response)
    return (r.log, r.hwm, r.truncating, b.fetch_response)


def _rest_of(b: Broker) -> tuple[object, ...]:
    r = b.replica
    rest = None if r is None else r._replace(log=(), hwm=0, truncating=False)
    return (b._replace(replica=None, fetch_response=None), r is None, rest)
