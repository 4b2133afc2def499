"""The values the controller rules compute with: the concrete domain.

The rules are written once, against the operations of a domain, which says how broker sets,
replica lists, partition registrations and error codes are represented. This module is the
concrete one: Kafka's own values (frozensets of broker ids, replica tuples,
`PartitionRegistration`, `BrokerRegistry`, `Error`), used by the explorer, the other engines, the
conformance cases and the differential tests. The prover's domain represents the same things as
Z3 terms over a fixed number of brokers (`kafkarep.symbolic.domain`); the rules cannot tell them
apart, so what the prover proves is what the explorer runs.

A domain is reached from the metadata a rule reads (`ClusterMetadata.domain`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    EMPTY,
    NO_LEADER,
    BrokerRegistration,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
    RuleOptions,
    TopicConfig,
)
from kafkarep.rules.outcome import Changed, Decision, Outcome, Rejected, Unchanged
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term


class Metadata(Protocol):
    """What a rule reads, in any domain: `ClusterMetadata` in the concrete one."""

    @property
    def partition(self) -> Any: ...

    @property
    def brokers(self) -> Any: ...

    @property
    def topic(self) -> TopicConfig: ...

    @property
    def options(self) -> RuleOptions: ...


class Values:
    """The concrete domain."""

    free_elections = False
    empty: frozenset[int] = EMPTY

    # --- broker sets ---------------------------------------------------------------------------

    def single(self, broker: int) -> frozenset[int]:
        return frozenset((broker,))

    def has(self, s: frozenset[int], broker: int) -> bool:
        return broker in s

    def union(self, *sets: frozenset[int]) -> frozenset[int]:
        return EMPTY.union(*sets)

    def minus(self, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        return a - b

    def same(self, a: frozenset[int], b: frozenset[int]) -> bool:
        return a == b

    def is_empty(self, s: frozenset[int]) -> bool:
        return not s

    def subset(self, a: frozenset[int], b: frozenset[int]) -> bool:
        return a <= b

    def size(self, s: frozenset[int]) -> int:
        return len(s)

    def pick(self, c: bool, a: frozenset[int], b: frozenset[int]) -> frozenset[int]:
        return a if c else b

    def only(self, s: frozenset[int], test: Callable[[int], Term]) -> frozenset[int]:
        """The members that pass."""
        return frozenset(b for b in s if test(b))

    def only_member(self, s: frozenset[int]) -> int:
        """The member of a one-member set (NO_LEADER for an empty one)."""
        return next(iter(s), NO_LEADER)

    def for_id(self, broker: int, test: Callable[[int], Term]) -> Term:
        """test(broker), for a broker id that may be a term in another domain."""
        return test(broker)

    # --- replica lists -------------------------------------------------------------------------

    def members(self, replicas: tuple[int, ...]) -> frozenset[int]:
        return frozenset(replicas)

    def count(self, replicas: tuple[int, ...]) -> int:
        return len(replicas)

    def keep(self, replicas: tuple[int, ...], test: Callable[[int], Term]) -> tuple[int, ...]:
        """The replicas that pass, in order."""
        return tuple(r for r in replicas if test(r))

    def first(self, replicas: tuple[int, ...]) -> int:
        """The first replica (the preferred leader), NO_LEADER for an empty list."""
        return replicas[0] if replicas else NO_LEADER

    def slots(self, replicas: tuple[int, ...]) -> Iterable[int]:
        """The replicas in order (a domain of fixed-size lists may add empty slots, which no
        test of a broker passes)."""
        return replicas

    def same_list(self, a: tuple[int, ...], b: tuple[int, ...]) -> bool:
        return a == b

    def pick_list(self, c: bool, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        return a if c else b

    def then_ascending(self, head: tuple[int, ...], tail: frozenset[int]) -> tuple[int, ...]:
        """`head` followed by the members of `tail` in ascending order (Kafka's TreeSet)."""
        return tuple(head) + tuple(sorted(tail))

    # --- registrations, codes, outcomes --------------------------------------------------------

    def registration(
        self, fenced: Term, in_controlled_shutdown: Term, epoch: Term, incarnation: Term
    ) -> BrokerRegistration:
        return BrokerRegistration(True, fenced, in_controlled_shutdown, epoch, incarnation)

    def pick_registration(
        self, c: bool, a: BrokerRegistration, b: BrokerRegistration
    ) -> BrokerRegistration:
        return a if c else b

    def code(self, error: Error) -> Error:
        return error

    def widen_election(
        self,
        p: PartitionRegistration,
        replicas: tuple[int, ...],
        valid: Callable[[int], Term],
        unclean_ok: Callable[[int], Term] | None,
        prior: Term,
        first: tuple[Term, Term],
    ) -> tuple[Term, Term]:
        """The election as Kafka makes it: the first eligible replica in order. (The prover's
        domain may widen it to any eligible replica; see `kafkarep.symbolic.domain`.)"""
        return first

    def change_record(self, record: Record) -> PartitionChangeRecord | None:
        """The PartitionChangeRecord a record under construction stands for (None: no change)."""
        fields = {name: record.get(name) for name in record.FIELDS if record.has(name)}
        if not fields:
            return None
        recovering = fields.pop("recovering", None)
        if recovering is not None:
            fields["leader_recovery_state"] = _recovery_state(recovering)
        return PartitionChangeRecord(**fields)

    def outcome(self, p: PartitionRegistration, decision: Decision) -> Outcome:
        """Changed, Unchanged or Rejected."""
        if decision.refused:
            assert decision.guard is not None
            return Rejected(decision.error, decision.guard)
        change = self.change_record(decision.record)
        if change is None:
            return Unchanged(decision.brokers)
        answer = None if decision.answer == Error.NONE else decision.answer
        return Changed(p.apply(change), change, decision.brokers, answer)


def _recovery_state(recovering: object) -> LeaderRecoveryState:
    return LeaderRecoveryState.RECOVERING if recovering else LeaderRecoveryState.RECOVERED


VALUES = Values()


def domain_of(metadata: object) -> Values:
    """The domain of the metadata a rule reads: the concrete one, unless the metadata carries
    another (the prover's symbolic metadata does)."""
    return getattr(metadata, "domain", VALUES)
