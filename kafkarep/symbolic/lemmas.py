"""What induction proves besides the property clauses: named invariants of a state, and history
facts of the records of the metadata log (of one record, or of two)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState, PartitionRegistration


class Invariant(NamedTuple):
    """`by_part`: each step's obligation is asked conjunct by conjunct (see
    `induction.SPLIT_UP_TO`), for a conjunction Z3 refutes far faster in pieces."""

    name: str
    holds: Callable[[Encoding, ClusterState], Term]
    doc: str
    by_part: bool = False


class Fact(NamedTuple):
    """A history fact: true of every record the controller has committed. `by`, if given, is
    the fact's conjunct about one broker (`holds` is the conjunction over every broker, each
    conjunct the same definition): under a symmetric family only two or three are shown
    (see `Goals.goal`)."""

    name: str
    holds: Callable[[Encoding, PartitionRegistration, ClusterState], Term]
    doc: str
    by: Callable[[Encoding, PartitionRegistration, ClusterState, int], Term] | None = None
    # False: the obligations of the other one-record facts do not assume it of their record
    # (only its own, the pair facts' and a broker applying the record do); assuming less is
    # sound, and a large fact no other needs then costs them nothing
    shared: bool = True
    by_part: bool = False  # as `Invariant.by_part`


class PairFact(NamedTuple):
    """A history fact of two records, a committed before b (a.partition_epoch <
    b.partition_epoch). Unlike `pair`, which is derived from the one-record facts, it is
    proved: of the current registration against
    every older record, and kept by every action for any two records that have it."""

    name: str
    holds: Callable[[Encoding, PartitionRegistration, PartitionRegistration, ClusterState], Term]
    doc: str


AnyFact = Fact | PairFact
