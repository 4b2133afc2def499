"""What the invariants of every argument read: the brokers, a broker's replica, whether a log
holds another's prefix, the controller's candidates (ISR and ELR), and what the model's families
allow."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, implies, ite
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
    """No family replaces a replica's view by an older one (or none): a going offline, a
    reassignment dropping the replica."""
    return not enc.reassigning and not _RESETS_VIEWS & {f.name for f in enc.families}


def stops(enc: Encoding) -> bool:
    """Some family stops a broker: its replica then has no view until it restarts and acts on
    its metadata again."""
    return bool(_STOPS & {f.name for f in enc.families})
