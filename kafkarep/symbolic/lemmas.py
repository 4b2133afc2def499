"""What induction proves besides the property clauses: named invariants of a state, and history
facts of the records of the metadata log (of one record, or of two)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState, PartitionRegistration


def representative(fixed: int | None, *named: int) -> bool:
    """Whether the brokers a conjunct names, in order, are the one tuple of their orbit under
    the renamings that fix brokers 1 to `fixed` (None: no renaming, each tuple its own): every
    broker past `fixed` that was not named before is the next one past those. A conjunct about
    brokers (3, 2) renames, fixing broker 1, to the one about (2, 3), and so does (4, 2): under
    a symmetric family (`Goals.goal`) a goal shows the conjuncts of representatives only."""
    if fixed is None:
        return True
    fresh = fixed + 1
    seen: set[int] = set()
    for b in named:
        if b <= fixed or b in seen:
            continue
        if b != fresh:
            return False
        seen.add(b)
        fresh += 1
    return True


def fixing(fixed: int | None, *named: int) -> int | None:
    """The renamings left once a representative tuple of brokers is named: those that also fix
    it (a conjunct about broker b, made of conjuncts about b and two others, shows the latter
    for the pairs that are representatives under `fixing(fixed, b)`)."""
    return None if fixed is None else max(fixed, *named)


class Invariant(NamedTuple):
    """`by_part`: each step's obligation is asked conjunct by conjunct (see
    `induction.SPLIT_UP_TO`), for a conjunction Z3 refutes far faster in pieces. `orbit`, if
    given: the invariant's conjuncts about brokers named by a `representative` tuple only,
    given how many brokers renaming fixes (the goal under a symmetric family)."""

    name: str
    holds: Callable[[Encoding, ClusterState], Term]
    doc: str
    by_part: bool = False
    orbit: Callable[[Encoding, ClusterState, int], Term] | None = None


class Fact(NamedTuple):
    """A history fact: true of every record the controller has committed. `by`, if given, is
    the fact's conjunct about one broker (`holds` is the conjunction over every broker, each
    conjunct the same definition): under a symmetric family only two or three are shown
    (see `Goals.goal`); `orbit`, if given, the conjuncts of representatives as
    `Invariant.orbit` (by default, those of `by` for representative brokers)."""

    name: str
    holds: Callable[[Encoding, PartitionRegistration, ClusterState], Term]
    doc: str
    by: Callable[[Encoding, PartitionRegistration, ClusterState, int], Term] | None = None
    # False: the obligations of the other one-record facts do not assume it of their record
    # (only its own, the pair facts' and a broker applying the record do); assuming less is
    # sound, and a large fact no other needs then costs them nothing
    shared: bool = True
    by_part: bool = False  # as `Invariant.by_part`
    orbit: Callable[[Encoding, PartitionRegistration, ClusterState, int], Term] | None = None


class PairFact(NamedTuple):
    """A history fact of two records, a committed before b (a.partition_epoch <
    b.partition_epoch). Unlike `pair`, which is derived from the one-record facts, it is
    proved: of the current registration against
    every older record, and kept by every action for any two records that have it."""

    name: str
    holds: Callable[[Encoding, PartitionRegistration, PartitionRegistration, ClusterState], Term]
    doc: str
    # as `Invariant.orbit`
    orbit: (
        Callable[[Encoding, PartitionRegistration, PartitionRegistration, ClusterState, int], Term]
        | None
    ) = None


AnyFact = Fact | PairFact
