"""What a controller rule returns: a committed change, no change, or a rejection.

A rule decides in any domain (`Decision`); the domain turns the decision into its outcome. In the
concrete domain that is one of `Changed`, `Unchanged` and `Rejected`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import BrokerRegistry, PartitionChangeRecord, PartitionRegistration
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term


class Decision(NamedTuple):
    """What a rule decided, in any domain: refused (with the first refusing guard's error), or
    the record built (an empty record: no change), the broker registry after, and the code Kafka
    answers a committed change with (NEW_LEADER_ELECTED) or NONE. Codes are the domain's
    (`code`)."""

    record: Record
    refused: Term = False
    error: Term = Error.NONE
    guard: str | None = None  # the refusing guard, when the refusal is a constant
    brokers: Any = None  # the registry after, when the rule changes it
    answer: Term = Error.NONE


class Changed(NamedTuple):
    """A record was committed. `error` is set when Kafka commits *and* answers with an error
    (NEW_LEADER_ELECTED, `ReplicationControlManager.alterPartition`). `brokers` is the new
    registry when the rule changed it."""

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


def describe(result: Outcome) -> str:
    """A rule's answer in the protocol's words: the record's changed fields and the error code
    returned, or the error and the guard that refused."""
    if isinstance(result, Rejected):
        return f"rejected {result.error.value} ({result.guard})"
    if isinstance(result, Changed):
        fields = ",".join(result.record.changed_fields())
        if result.error is not None:
            return f"committed {fields}; answered {result.error.value}"
        return f"committed {fields}"
    return "accepted, no change"
