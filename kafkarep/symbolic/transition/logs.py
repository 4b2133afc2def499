"""Replica logs (`kafkarep/model/logs.py`): the end offset of an epoch, divergence and where a
follower truncates."""

from __future__ import annotations

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, imax, imin, ite, ne, or_


def end_offset_for_epoch(
    enc: Encoding, log: tuple[Term, ...], leo: Term, epoch: Term, leader_epoch: Term = None
) -> tuple[Term, Term]:
    """(largest epoch <= `epoch` in the log, end offset of that epoch)."""
    last = ops.select(log, leo - 1, 0)
    trivial = or_(eq(leo, 0), eq(last, epoch))
    if leader_epoch is not None:
        trivial = or_(trivial, eq(leader_epoch, epoch))
    end: Term = leo
    for k in range(enc.r - 1, -1, -1):
        end = ite(and_(k < leo, log[k] > epoch), k, end)
    found: Term = False
    floor: Term = -1
    for k in range(enc.r):
        below = and_(k < leo, log[k] <= epoch)
        found = or_(found, below)
        floor = ite(below, imax(floor, log[k]), floor)
    floor = ite(found, floor, epoch)
    return ite(trivial, epoch, floor), ite(trivial, leo, end)


def diverges(
    enc: Encoding, log: tuple[Term, ...], leo: Term, leader_epoch: Term, offset: Term, last: Term
) -> tuple[Term, Term, Term]:
    epoch, end = end_offset_for_epoch(enc, log, leo, last, leader_epoch)
    return or_(epoch < last, end < offset), epoch, end


def truncation_point(
    enc: Encoding, log: tuple[Term, ...], leo: Term, epoch: Term, end: Term
) -> Term:
    local_epoch, local_end = end_offset_for_epoch(enc, log, leo, epoch)
    return ite(ne(local_epoch, epoch), local_end, imin(local_end, end))


def cut(log: tuple[Term, ...], at: Term) -> tuple[Term, ...]:
    return tuple(ite(k < at, e, 0) for k, e in enumerate(log))
