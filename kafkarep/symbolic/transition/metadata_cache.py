"""A broker's metadata cache of the brokers' registrations: whether a follower may join the
ISR, by the model's own guards (`kafkarep/model/metadata_cache.py`) on the prover's terms."""

from __future__ import annotations

from kafkarep.model.metadata_cache import alive_in_leader_metadata, broker_epoch_in_leader_metadata
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_
from kafkarep.symbolic.state import Replica


def isr_eligible(enc: Encoding, r: Replica, m: int) -> Term:
    """model/metadata_cache.py: `isr_eligible` (KRaft)."""
    return and_(
        enc.check(alive_in_leader_metadata, r, m),
        enc.check(broker_epoch_in_leader_metadata, r, m),
    )
