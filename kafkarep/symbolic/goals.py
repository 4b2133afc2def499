"""What an induction obligation states: what it assumes of the pre-state and of the records of
the metadata log (the invariants proved together, the history facts, the pair facts), and what
it shows of the step's (before, after). `induction.Prover` discharges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.lemmas import AnyFact, Fact, Invariant, PairFact
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState, PartitionRegistration

# What any two records of the metadata log satisfy, given the pre-state and the history facts.
Pair = Callable[
    [Encoding, PartitionRegistration, PartitionRegistration, ClusterState, tuple[Fact, ...]], Term
]


class Goals:
    """The propositions of a model's obligations, each term built once per process."""

    def __init__(
        self,
        enc: Encoding,
        invariants: tuple[Invariant, ...],
        facts: tuple[AnyFact, ...],
        pair: Pair | None,
        fixed: dict[str, int],
    ) -> None:
        self.enc = enc
        self.invariants = invariants
        self.facts = tuple(f for f in facts if isinstance(f, Fact))
        self.pair_facts = tuple(f for f in facts if isinstance(f, PairFact))
        self.pair = pair  # what any two records of the log satisfy (derived from the facts)
        # the symmetric families (shown for broker 1's steps only), and how many brokers their
        # steps taken name: 1, or 2 where a step names a second one (see `symmetry.taken`)
        self.fixed = fixed
        self.memo: dict[tuple[int, ...], tuple[tuple[Any, ...], Any]] = {}

    def shown(self, family: str) -> int:
        """The brokers a per-broker fact is shown for under a family: 1 to `shown` (0: every
        broker). One more than the brokers the family's steps name, which renaming fixes."""
        fixed = self.fixed.get(family)
        return fixed + 1 if fixed is not None and fixed + 1 < self.enc.n else 0

    def _facts(
        self, record: PartitionRegistration, sym: ClusterState, own: Fact | None, shown: int
    ) -> Term:
        """The history facts of a record: all of them, or, for the obligation of the fact
        `own`, the shared ones and `own` (with `shown`, for brokers 1 to `shown` only)."""
        return ops.and_(
            *(
                self._fact(f, record, sym, shown if f is own else 0)
                for f in self.facts
                if own is None or f.shared or f is own
            )
        )

    def applied(
        self, enc: Encoding, record: PartitionRegistration, sym: ClusterState, broker: int
    ) -> Term:
        """What a record a broker applies satisfies: the history facts, the per-broker ones
        about that broker only (the others are about what other brokers would do on applying
        it; assuming less of the record, the relation has more steps: sound)."""
        return ops.and_(
            *(
                f.holds(enc, record, sym) if f.by is None else f.by(enc, record, sym, broker)
                for f in self.facts
            )
        )

    def _fact(self, f: Fact, record: PartitionRegistration, sym: ClusterState, shown: int) -> Term:
        """One history fact of a record (with `shown`, a per-broker fact for brokers 1 to
        `shown` only), built once per process."""
        enc = self.enc
        by = f.by
        if shown and by is not None:
            return self._memo(
                ("fact", f, record, sym, shown),
                lambda: ops.and_(*(by(enc, record, sym, b) for b in range(1, shown + 1))),
            )
        return self._memo(("fact", f, record, sym), lambda: f.holds(enc, record, sym))

    def paired(
        self,
        a: PartitionRegistration,
        b: PartitionRegistration,
        sym: ClusterState,
        only: PairFact | None = None,
    ) -> Term:
        """The pair facts (or one) of two records, in the order they were committed."""
        enc = self.enc
        return ops.and_(
            *(
                ops.and_(
                    ops.implies(a.partition_epoch < b.partition_epoch, f.holds(enc, a, b, sym)),
                    ops.implies(b.partition_epoch < a.partition_epoch, f.holds(enc, b, a, sym)),
                )
                for f in (self.pair_facts if only is None else (only,))
            )
        )

    def _memo(self, key: tuple[Any, ...], build: Callable[[], Term]) -> Term:
        """A term built once per process: `key` holds the objects it is about (kept alive with
        the term, so that their ids stay theirs)."""
        found = self.memo.get(tuple(id(k) for k in key))
        if found is None:
            found = (key, build())
            self.memo[tuple(id(k) for k in key)] = found
        return found[1]

    def _record(
        self,
        record: PartitionRegistration,
        sym: ClusterState,
        own: Fact | None = None,
        shown: int = 0,
    ) -> Term:
        """What any record of the log satisfies: the history facts (see `_facts`), against the
        current registration too; the record of the current partition epoch is that
        registration."""
        return self._memo(
            ("record", record, sym, own, shown),
            lambda: self._build_record(record, sym, own, shown),
        )

    def _build_record(
        self, record: PartitionRegistration, sym: ClusterState, own: Fact | None, shown: int
    ) -> Term:
        enc = self.enc
        current = ops.implies(
            ops.eq(record.partition_epoch, sym.partition.partition_epoch),
            ops.and_(*enc.equal(record, sym.partition, PartitionRegistration)),
        )
        return ops.and_(
            self._facts(record, sym, own, shown),
            record.partition_epoch <= sym.partition.partition_epoch,
            current,
            self.paired(record, sym.partition, sym),
        )

    def two(self, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState) -> Term:
        """What any two records satisfy together (`pair`, and the pair facts)."""
        return self._memo(("two", a, b, sym), lambda: self._build_two(a, b, sym))

    def _build_two(
        self, a: PartitionRegistration, b: PartitionRegistration, sym: ClusterState
    ) -> Term:
        out = self.paired(a, b, sym)
        if self.pair is not None:
            out = ops.and_(out, self.pair(self.enc, a, b, sym, self.facts))
        return out

    def assumed(self, sym: ClusterState, names: frozenset[str]) -> list[Term]:
        """The strengthening assumed of the pre-state: the invariants being proved together,
        and the history facts of the current record but the per-broker ones (each a statement
        about what every broker would do: large, and no help to any obligation here; assuming
        less is sound)."""
        out = [self._invariant(i, sym) for i in self.invariants if i.name in names]
        out.extend(self._fact(f, sym.partition, sym, False) for f in self.facts if f.by is None)
        return out

    def _invariant(self, i: Invariant, sym: ClusterState) -> Term:
        return self._memo(("invariant", i, sym), lambda: i.holds(self.enc, sym))

    def goal(
        self,
        name: str,
        record: PartitionRegistration,
        other: PartitionRegistration,
        family: str = "",
        current: bool = True,
    ) -> Callable[[ClusterState, ClusterState], Term]:
        """The proposition an obligation shows of (before, after). A history fact is shown of
        an arbitrary record that has every fact before the step, and of the new current one; a
        pair fact of two arbitrary records that have every fact, and of each against the new
        current one. Under a symmetric family (the step is broker 1's) a fact made of one
        conjunct per broker is shown for brokers 1 and 2 only: a step of broker k breaking the
        conjunct of broker j renames to broker 1's step breaking that of 1 (j = k) or, by a
        renaming that fixes 1, that of 2. Where the step also names broker 2 (a fetch from
        leader 2 stands for a fetch from any leader), the renaming must fix 2 as well, and the
        fact is shown for brokers 1, 2 and 3.

        Without `current` (the step keeps the controller's registration) a history fact is
        shown of the arbitrary record only: the current registration is one of the records that
        have every fact before the step, so a step breaking the fact of it breaks it of that
        arbitrary record too (the record chosen equal to it)."""
        enc = self.enc
        only = next((f for f in self.pair_facts if f"history.{f.name}" == name), None)
        if only is not None:
            paired = only

            def both(before: ClusterState, after: ClusterState) -> Term:
                return ops.implies(
                    ops.and_(
                        self._record(record, before),
                        self._record(other, before),
                        self.two(record, other, before),
                    ),
                    ops.and_(
                        self.paired(record, other, after, paired),
                        self.paired(record, after.partition, after, paired),
                    ),
                )

            return both
        if name.startswith("history."):
            fact = next(f for f in self.facts if f"history.{f.name}" == name)
            shown = self.shown(family) if fact.by is not None else 0

            # a per-broker fact shown for some brokers only is assumed of the record for
            # them only: assuming less is sound, and its conjuncts about other brokers are
            # about what those would do
            def kept(before: ClusterState, after: ClusterState) -> Term:
                # the current registration is a record of the log: where the step replaces it,
                # its fact is assumed too (`assumed` leaves per-broker facts out), so a change
                # that keeps its leader and ISR (a reassignment's start) keeps the fact. Only
                # where the model reassigns: elsewhere it is no help, and costs time.
                replaced = current and enc.reassigning
                held = self._fact(fact, before.partition, before, shown) if replaced else True
                return ops.implies(
                    ops.and_(self._record(record, before, fact, shown), held),
                    ops.and_(
                        self._fact(fact, record, after, shown),
                        self._fact(fact, after.partition, after, shown) if current else True,
                    ),
                )

            return kept
        invariant = next(i for i in self.invariants if i.name == name)
        return lambda before, after: self._invariant(invariant, after)
