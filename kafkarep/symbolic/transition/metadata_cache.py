"""A broker's metadata cache of the brokers' registrations (`kafkarep/model/metadata_cache.py`):
whether a follower may join the ISR."""

from __future__ import annotations

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, ite
from kafkarep.symbolic.state import Replica


def isr_eligible(enc: Encoding, r: Replica, m: int) -> Term:
    """model/metadata_cache.py: `isr_eligible` (KRaft)."""
    f = r.followers[m - 1]
    entry = r.eligible[m - 1]
    cached = alive_epoch(entry)
    return and_(
        enc.passes("isr_join.alive_in_leader_metadata", entry >= 0),
        enc.passes(
            "isr_join.broker_epoch_in_leader_metadata",
            and_(cached >= 0, eq(cached, f.broker_epoch)),
        ),
    )


def alive_epoch(entry: Term) -> Term:
    """model/metadata_cache.py: `alive_epoch`."""
    return ite(entry >= 0, entry, ite(entry <= -2, -2 - entry, -1))
