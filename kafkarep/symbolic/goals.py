"""What an induction obligation states: what it assumes of the pre-state and of the records of
the metadata log (the invariants proved together, the history facts, the pair facts), and what
it shows of the step's (before, after). `induction.Prover` discharges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.lemmas import AnyFact, Fact, Invariant, PairFact, representative
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

    def fixed_by(self, family: str) -> int | None:
        """How many brokers (1 to k) the renamings that map a family's steps to those taken
        must fix (None: the family is not symmetric, every step is taken). Its goals show the
        conjuncts about `representative` tuples of brokers only."""
        return self.fixed.get(family)

    def _facts(
        self, record: PartitionRegistration, sym: ClusterState, own: Fact | None, fixed: int | None
    ) -> Term:
        """The history facts of a record: for the obligation of the fact `own`, the shared
        ones and `own` (with `fixed`, its representative conjuncts only); for a pair fact's
        (no `own`), all of them, those not shared with `fixed` for representative brokers only
        (assuming less is sound; at N = 5 the pair facts' obligations so take a third less of
        Z3's work, and asking every fact so breaks five of them)."""
        return ops.and_(
            *(
                self._fact(f, record, sym, fixed if f is own or not f.shared else None)
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

    def _fact(
        self, f: Fact, record: PartitionRegistration, sym: ClusterState, fixed: int | None
    ) -> Term:
        """One history fact of a record (with `fixed`, its conjuncts about representative
        brokers only: `Fact.orbit`, or `by` for each representative broker), built once per
        process."""
        enc = self.enc
        if fixed is not None and (f.orbit is not None or f.by is not None):
            return self._memo(
                ("fact", f, record, sym, fixed), lambda: _orbit(enc, f, record, sym, fixed)
            )
        return self._memo(("fact", f, record, sym), lambda: f.holds(enc, record, sym))

    def paired(
        self,
        a: PartitionRegistration,
        b: PartitionRegistration,
        sym: ClusterState,
        only: PairFact | None = None,
        fixed: int | None = None,
    ) -> Term:
        """The pair facts (or one) of two records, in the order they were committed (with
        `fixed`, the conjuncts about representative brokers of those that say which)."""
        enc = self.enc

        def holds(f: PairFact, a: PartitionRegistration, b: PartitionRegistration) -> Term:
            if fixed is not None and f.orbit is not None:
                return f.orbit(enc, a, b, sym, fixed)
            return f.holds(enc, a, b, sym)

        return ops.and_(
            *(
                ops.and_(
                    ops.implies(a.partition_epoch < b.partition_epoch, holds(f, a, b)),
                    ops.implies(b.partition_epoch < a.partition_epoch, holds(f, b, a)),
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
        fixed: int | None = None,
    ) -> Term:
        """What any record of the log satisfies: the history facts (see `_facts`), against the
        current registration too; the record of the current partition epoch is that
        registration."""
        return self._memo(
            ("record", record, sym, own, fixed),
            lambda: self._build_record(record, sym, own, fixed),
        )

    def _build_record(
        self, record: PartitionRegistration, sym: ClusterState, own: Fact | None, fixed: int | None
    ) -> Term:
        enc = self.enc
        current = ops.implies(
            ops.eq(record.partition_epoch, sym.partition.partition_epoch),
            ops.and_(*enc.equal(record, sym.partition, PartitionRegistration)),
        )
        return ops.and_(
            self._facts(record, sym, own, fixed),
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
        out.extend(self._fact(f, sym.partition, sym, None) for f in self.facts if f.by is None)
        return out

    def _invariant(self, i: Invariant, sym: ClusterState, fixed: int | None = None) -> Term:
        """An invariant of a state (with `fixed`, its representative conjuncts only, if it
        says which: `Invariant.orbit`)."""
        orbit = i.orbit
        if fixed is not None and orbit is not None:
            return self._memo(("invariant", i, sym, fixed), lambda: orbit(self.enc, sym, fixed))
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
        fact is shown for brokers 1, 2 and 3. The same holds of conjuncts about several
        brokers: an invariant or fact that says which (`orbit`) is shown for the tuples of
        brokers that are `representative` under the renamings left, one of each orbit (of a
        pair of leaders, (1, 2), (2, 1) and (2, 3) for broker 1's produce, not all twenty at
        N = 5); the pre-state's invariants and the step's guard stay whole.

        Without `current` (the step keeps the controller's registration) a history fact is
        shown of the arbitrary record only: the current registration is one of the records that
        have every fact before the step, so a step breaking the fact of it breaks it of that
        arbitrary record too (the record chosen equal to it)."""
        enc = self.enc
        only = next((f for f in self.pair_facts if f"history.{f.name}" == name), None)
        if only is not None:
            paired = only
            fixed = self.fixed_by(family)

            def both(before: ClusterState, after: ClusterState) -> Term:
                return ops.implies(
                    ops.and_(
                        self._record(record, before, None, fixed),
                        self._record(other, before, None, fixed),
                        self.two(record, other, before),
                    ),
                    ops.and_(
                        self.paired(record, other, after, paired, fixed),
                        self.paired(record, after.partition, after, paired, fixed),
                    ),
                )

            return both
        if name.startswith("history."):
            fact = next(f for f in self.facts if f"history.{f.name}" == name)
            fixed = self.fixed_by(family)

            # a per-broker fact shown for some brokers only is assumed of the record for
            # them only: assuming less is sound, and its conjuncts about other brokers are
            # about what those would do
            def kept(before: ClusterState, after: ClusterState) -> Term:
                # the current registration is a record of the log: where the step replaces it,
                # its fact is assumed too (`assumed` leaves per-broker facts out), so a change
                # that keeps its leader and ISR (a reassignment's start) keeps the fact. Only
                # where the model reassigns: elsewhere it is no help, and costs time.
                replaced = current and enc.reassigning
                held = self._fact(fact, before.partition, before, fixed) if replaced else True
                return ops.implies(
                    ops.and_(self._record(record, before, fact, fixed), held),
                    ops.and_(
                        self._fact(fact, record, after, fixed),
                        self._fact(fact, after.partition, after, fixed) if current else True,
                    ),
                )

            return kept
        invariant = next(i for i in self.invariants if i.name == name)
        fixed = self.fixed_by(family)
        return lambda before, after: self._invariant(invariant, after, fixed)


def _orbit(
    enc: Encoding, f: Fact, record: PartitionRegistration, sym: ClusterState, fixed: int
) -> Term:
    """A fact's conjuncts about representative brokers (`Fact.orbit`; a per-broker fact
    without one: its conjunct about each representative broker)."""
    if f.orbit is not None:
        return f.orbit(enc, record, sym, fixed)
    by = f.by
    assert by is not None
    return ops.and_(
        *(by(enc, record, sym, b) for b in range(1, enc.n + 1) if representative(fixed, b))
    )
