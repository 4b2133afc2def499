"""What the invariants of every argument read: the brokers, a broker's replica, whether a log
holds another's prefix, the controller's candidates (ISR and ELR), and what the model's families
allow."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.assignment import once_removed
from kafkarep.symbolic.ops import Term, and_, eq, implies, ite, not_
from kafkarep.symbolic.state import ClusterState, Replica


def brokers(enc: Encoding) -> range:
    return range(1, enc.n + 1)


def every(enc: Encoding, test: Callable[[int], Term]) -> Term:
    return and_(*(test(b) for b in brokers(enc)))


def replica(sym: ClusterState, b: int) -> Replica:
    return sym.brokers[b - 1].replica


def holds_prefix(enc: Encoding, r: Replica, log: tuple[Term, ...], length: Term) -> Term:
    """The replica's log starts with the first `length` records of `log`."""
    return and_(
        r.leo >= length,
        *(implies(o < length, eq(r.log[o], log[o])) for o in range(enc.r)),
    )


def log_well_formed(enc: Encoding, log: tuple[Term, ...], leo: Term, top: Term) -> Term:
    """Epochs at least 1 and at most `top` below the LEO, zero from it, never decreasing."""
    parts = [leo >= 0, leo <= enc.r]
    for o in range(enc.r):
        parts.append(ite(o < leo, and_(log[o] >= 1, log[o] <= top), eq(log[o], 0)))
        if o + 1 < enc.r:
            parts.append(implies(o + 1 < leo, log[o] <= log[o + 1]))
    return and_(*parts)


def candidates(enc: Encoding, sym: ClusterState) -> Term:
    return enc.sets.union(sym.partition.isr, sym.partition.elr)


_STOPS = {"crash", "crash_lossy", "shutdown_complete"}
_RESETS_VIEWS = _STOPS | {"controlled_shutdown", "restart"}


def views_only_advance(enc: Encoding) -> bool:
    """No family replaces a replica's view by an older one: a broker going offline or
    restarting. (A reassignment deletes a replica with its view, which never comes back older:
    where that view witnessed a clause, `deleted` does.)"""
    return not _RESETS_VIEWS & {f.name for f in enc.families}


def stops(enc: Encoding) -> bool:
    """Some family stops a broker: its replica then has no view until it restarts and acts on
    its metadata again."""
    return bool(_STOPS & {f.name for f in enc.families})


def deleted(enc: Encoding, sym: ClusterState, b: int) -> Term:
    """A replica the one reassignment removed for good (`assignment.once_removed`): it holds no
    replica, its data deleted when it applied the record that dropped it, later than every
    record that named it. What its view said then is gone with it, so a clause witnessed by
    that view takes the deletion as its witness instead."""
    if not (enc.reassigning and once_removed(enc.cfg, b)):
        return False
    return not_(replica(sym, b).present)


# The families that never move leadership from a leader the replica list keeps: with these and
# one reassignment, only its completion hands leadership on, from the replica it removes.
_KEEP_LEADERS = frozenset(
    {
        "alter_partition_response",
        "apply_metadata",
        "apply_registrations",
        "fetch",
        "fetch_response",
        "handle_alter_partition",
        "produce",
        "reassign",
        "replica_lag",
        "unfence",  # elects only where there is no leader
    }
)


def leaders_stay(enc: Encoding) -> bool:
    """Nothing elects past a leader the controller's replica list still names: the model
    reassigns once, cancels nothing, and has no fault or election that unseats a leader."""
    budget = enc.cfg.budget
    return (
        enc.reassigning
        and budget.reassignments == 1
        and budget.reassignment_cancels == 0
        and {f.name for f in enc.families} <= _KEEP_LEADERS
    )
