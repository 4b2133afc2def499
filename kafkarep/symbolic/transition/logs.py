"""Replica logs on the prover's terms: a log is the leader epoch of the record at each of R
offsets and its LEO (`Epochs`), read by the leader-epoch functions of `kafkarep/model/logs.py`
(the end offset of an epoch, divergence, where a follower truncates), written once."""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.symbolic import ops
from kafkarep.symbolic.ops import Term, ite
from kafkarep.symbolic.state import Replica


class Epochs(NamedTuple):
    """A log as `kafkarep/model/shapes.py: LogShape`. Its latest epoch is its last record's:
    the prover's logs only grow in epoch (it encodes only KIP-320 fetches, after which a
    follower appends only from its own leader epoch's leader), where the model's
    `state.latest_epoch` takes the largest, which is the same there."""

    log: tuple[Term, ...]
    leo: Term

    @property
    def span(self) -> int:
        return len(self.log)

    @property
    def latest_epoch(self) -> Term:
        return ops.select(self.log, self.leo - 1, 0)

    def held(self, offset: int) -> Term:
        return offset < self.leo

    def epoch_at(self, offset: int) -> Term:
        return self.log[offset]


def epochs(r: Replica) -> Epochs:
    return Epochs(r.log, r.leo)


def cut(log: tuple[Term, ...], at: Term) -> tuple[Term, ...]:
    return tuple(ite(k < at, e, 0) for k, e in enumerate(log))
