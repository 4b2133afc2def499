"""The prover's domain: what the controller rules (`kafkarep.rules`) compute with when the
transition relation calls them on symbolic states.

The rules are not written again here. This module says how the values they read are represented
in the symbolic state (`state`): broker sets as N+1 bits, a replica list as N slots in order
with 0 for an empty slot, a partition registration as a `PartitionRegistration`, the broker
registry as the `BrokerRegistration`s of brokers 1..N, an error code as its index in `ERRORS`.
Given Python values (a concrete state's projection, as the agreement check evaluates it)
everything folds to Python values; given Z3 terms it builds the relation's terms.

It also holds the one place where induction relaxes the rules: free elections
(`widen_election`), an over-approximation that the agreement check compares with the exact
relation before any verdict (`agreement.Elections`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import UNREGISTERED, RuleOptions, TopicConfig
from kafkarep.rules.outcome import Decision
from kafkarep.rules.record import SET_FIELDS, Record
from kafkarep.rules.terms import Term, and_, eq, imax, ite, ne, not_, or_
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.state import (
    ERROR,
    AlterPartitionRequest,
    BrokerRegistration,
    PartitionRegistration,
)


class Outcome(NamedTuple):
    """A rule's outcome in the symbolic domain."""

    changed: Term  # a record was committed
    partition: PartitionRegistration  # the registration after (the one before when not changed)
    rejected: Term
    error: Term  # ERROR index: the refusal, NEW_LEADER_ELECTED on a committed one, or NONE
    brokers: Registry | None = None  # the registry after, when the rule changes it


def decided(outcome: object) -> Outcome:
    """A rule's outcome, as the symbolic domain makes it (the rules' signatures name the
    concrete outcome types)."""
    assert isinstance(outcome, Outcome)
    return outcome


class Registry:
    """The broker registry of the symbolic state: brokers 1..N, each registered."""

    def __init__(self, domain: Terms, registrations: tuple[BrokerRegistration, ...]) -> None:
        self.domain = domain
        self.registrations = registrations

    def get(self, broker: int) -> Any:
        if 1 <= broker <= len(self.registrations):
            return self.registrations[broker - 1]
        return UNREGISTERED

    def is_active(self, broker: int) -> Term:
        return self.get(broker).active

    def with_broker(self, broker: int, registration: BrokerRegistration) -> Registry:
        registrations = list(self.registrations)
        registrations[broker - 1] = registration
        return Registry(self.domain, tuple(registrations))

    def next_epoch(self) -> Term:
        """One past the largest broker epoch (broker epochs are cluster-wide monotonic)."""
        epoch: Term = 0
        for reg in self.registrations:
            epoch = imax(epoch, reg.epoch)
        return epoch + 1


class Metadata(NamedTuple):
    """What a rule reads, in the symbolic domain (`ClusterMetadata` in the concrete one)."""

    partition: PartitionRegistration
    brokers: Registry
    topic: TopicConfig
    options: RuleOptions
    domain: Terms


class AlterPartition:
    """A broker's AlterPartition request of the symbolic state (`state.AlterPartitionRequest`),
    with what the rules read of `kafkarep.rules.AlterPartitionRequest` (version 3: per-member
    broker epochs)."""

    version = 3
    distinct = True  # a set has no member twice

    def __init__(self, broker: int, request: AlterPartitionRequest, sets: ops.Sets) -> None:
        self.broker = broker
        self.request = request
        self.sets = sets

    def __getattr__(self, name: str) -> Term:
        # leader_epoch, partition_epoch, isr, recovering, broker_epoch: the request's own
        return getattr(self.request, name)

    def proposals(self) -> Iterator[tuple[Term, int, Term]]:
        for k in range(1, self.sets.n + 1):
            yield self.sets.has(self.request.isr, k), k, self.request.member_epochs[k - 1]

    @property
    def size(self) -> Term:
        return self.sets.size(self.request.isr)


class Terms:
    """The symbolic domain of an encoding."""

    empty = 0

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.sets = enc.sets
        self.n = enc.n
        self.free_elections = enc.free_elections

    def metadata(
        self, partition: PartitionRegistration, registrations: tuple[BrokerRegistration, ...]
    ) -> Metadata:
        cfg = self.enc.cfg
        return Metadata(partition, Registry(self, registrations), cfg.topic, cfg.options, self)

    # --- broker sets ---------------------------------------------------------------------------

    def single(self, broker: Term) -> Term:
        return self.sets.bit(broker)

    def has(self, s: Term, broker: Term) -> Term:
        return self.sets.has(s, broker)

    def union(self, *sets: Term) -> Term:
        return self.sets.union(*sets)

    def minus(self, a: Term, b: Term) -> Term:
        return self.sets.minus(a, b)

    def same(self, a: Term, b: Term) -> Term:
        return self.sets.eq(a, b)

    def is_empty(self, s: Term) -> Term:
        return self.sets.empty(s)

    def subset(self, a: Term, b: Term) -> Term:
        return self.sets.subset(a, b)

    def size(self, s: Term) -> Term:
        return self.sets.size(s)

    def pick(self, c: Term, a: Term, b: Term) -> Term:
        return self.sets.ite(c, a, b)

    def only(self, s: Term, test: Callable[[int], Term]) -> Term:
        bits = self.sets.bits(s)
        ids = self.sets.ids
        return self.sets.pack([and_(bit, test(b)) for bit, b in zip(bits, ids, strict=True)])

    def only_member(self, s: Term) -> Term:
        """The member of a one-member set (-1 for none)."""
        out: Term = -1
        for k in range(self.n, 0, -1):
            out = ite(self.sets.has(s, k), k, out)
        return out

    def for_id(self, broker: Term, test: Callable[[int], Term]) -> Term:
        """test(broker) for a symbolic broker id (false for -1 and 0)."""
        if isinstance(broker, int):
            return test(broker)
        return or_(*(and_(eq(broker, k), test(k)) for k in range(1, self.n + 1)))

    # --- replica lists: N slots in order, packed, 0 for an empty slot --------------------------

    def members(self, slots: tuple[Term, ...]) -> Term:
        return self.sets.union(*(self.sets.bit(r) for r in slots))

    def count(self, slots: tuple[Term, ...]) -> Term:
        if all(isinstance(r, int) for r in slots):
            return sum(1 for r in slots if r != 0)
        return sum((ite(ne(r, 0), 1, 0) for r in slots), start=0)

    def keep(self, slots: tuple[Term, ...], test: Callable[[Term], Term]) -> tuple[Term, ...]:
        """The replicas for which `test` holds, in order, packed."""
        n = len(slots)
        kept = [and_(ne(r, 0), test(r)) for r in slots]
        out: list[Term] = []
        for j in range(n):
            value: Term = 0
            before: Term = 0  # kept slots before slot i
            choices = []
            for i in range(n):
                choices.append((and_(kept[i], eq(before, j)), slots[i]))
                before = before + ite(kept[i], 1, 0)
            for condition, slot in reversed(choices):
                value = ite(condition, slot, value)
            out.append(value)
        return tuple(out)

    def first(self, slots: tuple[Term, ...]) -> Term:
        return slots[0]

    def slots(self, slots: tuple[Term, ...]) -> Iterable[Term]:
        return slots

    def same_list(self, a: tuple[Term, ...], b: tuple[Term, ...]) -> Term:
        return and_(*(eq(x, y) for x, y in zip(a, b, strict=True)))

    def pick_list(self, c: Term, a: tuple[Term, ...], b: tuple[Term, ...]) -> tuple[Term, ...]:
        if isinstance(c, bool):
            return a if c else b
        return tuple(ite(c, x, y) for x, y in zip(a, b, strict=True))

    def then_ascending(self, head: tuple[int, ...], tail: Term) -> tuple[Term, ...]:
        """`head` followed by the members of `tail` ascending, in N slots."""
        ascending = self.keep(tuple(range(1, self.n + 1)), lambda r: self.sets.has(tail, r))
        slots: list[Term] = list(head) + list(ascending[: self.n - len(head)])
        return tuple(slots[: self.n])

    # --- registrations, codes, outcomes --------------------------------------------------------

    def registration(
        self, fenced: Term, in_controlled_shutdown: Term, epoch: Term, incarnation: Term
    ) -> BrokerRegistration:
        return BrokerRegistration(fenced, in_controlled_shutdown, epoch, incarnation)

    def pick_registration(
        self, c: Term, a: BrokerRegistration, b: BrokerRegistration
    ) -> BrokerRegistration:
        return self.enc.merge(c, a, b, BrokerRegistration)

    def code(self, error: Error) -> int:
        return ERROR[error]

    def widen_election(
        self,
        p: PartitionRegistration,
        replicas: tuple[Term, ...],
        valid: Callable[[int], Term],
        unclean_ok: Callable[[int], Term] | None,
        prior: Term,
        first: tuple[Term, Term],
    ) -> tuple[Term, Term]:
        """Induction's free elections (`Encoding.free_elections`): any eligible replica rather
        than the first in order. A free choice wins where the first eligible would have, if it
        is eligible too; in an unclean election, any acceptable replica where no clean choice
        was (`prior`: none was found). Every step of the exact relation is one of this one."""
        if not self.free_elections:
            return first
        leader, unclean = first
        choice = ops.int_var(f"choice!{next(self.enc.choices)}")
        ids = [r for r in replicas if not (isinstance(r, int) and r <= 0)]

        def chosen(test: Callable[[int], Term]) -> Term:
            return or_(*(and_(eq(choice, r), self.for_id(r, test)) for r in ids))

        if unclean_ok is not None:
            dirty = and_(not_(prior), chosen(unclean_ok))
            leader, unclean = ite(dirty, choice, leader), ite(dirty, True, unclean)
        clean = and_(not_(self.for_id(p.leader, valid)), chosen(valid))
        return ite(clean, choice, leader), ite(clean, False, unclean)

    def apply(self, p: PartitionRegistration, record: Record) -> PartitionRegistration:
        """The registration after a record (`PartitionRegistration.merge`): set fields replace;
        the partition epoch always moves, the leader epoch when the record carries a leader."""

        def field(name: str) -> Term:
            old = getattr(p, name)
            if name in SET_FIELDS:
                return self.sets.ite(record.has(name), record.get(name), old)
            return ite(record.has(name), record.get(name), old)

        return PartitionRegistration(
            leader=field("leader"),
            leader_epoch=p.leader_epoch + ite(record.has("leader"), 1, 0),
            partition_epoch=p.partition_epoch + 1,
            isr=field("isr"),
            elr=field("elr"),
            last_known_elr=field("last_known_elr"),
            adding=field("adding"),
            removing=field("removing"),
            recovering=field("recovering"),
            replicas=self.pick_list(record.has("replicas"), record.get("replicas"), p.replicas),
            eligible=p.eligible,  # what the brokers cache with it: set when committed
        )

    def outcome(self, p: PartitionRegistration, decision: Decision) -> Outcome:
        record, refused = decision.record, decision.refused
        changed = not_(record.noop())
        after = self.enc.merge(changed, self.apply(p, record), p, PartitionRegistration)
        return Outcome(
            and_(not_(refused), changed),
            self.enc.merge(refused, p, after, PartitionRegistration),
            refused,
            ite(refused, decision.error, decision.answer),
            decision.brokers,
        )
