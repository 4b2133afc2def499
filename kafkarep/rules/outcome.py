"""What a controller rule returns: a committed change, no change, or a rejection."""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.metadata import BrokerRegistry, PartitionChangeRecord, PartitionRegistration


class Changed(NamedTuple):
    """A record was committed. `error` is set when Kafka commits *and* answers with an error
    (NEW_LEADER_ELECTED, R2.6). `brokers` is the new registry when the rule changed it."""

    registration: PartitionRegistration
    record: PartitionChangeRecord
    brokers: BrokerRegistry | None = None
    error: Error | None = None


class Unchanged(NamedTuple):
    """No partition change record. `brokers` is the new registry when only it changed."""

    brokers: BrokerRegistry | None = None


class Rejected(NamedTuple):
    """Refused with Kafka's error code; `guard` names the predicate that refused."""

    error: Error
    guard: str


Outcome = Changed | Unchanged | Rejected
