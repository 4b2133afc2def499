"""Log divergence and truncation (protocol description §3; KIP-101, KIP-279;
`OffsetsForLeaderEpoch`).

Offsets start at 0; a log is a tuple of (leader epoch, value) entries, so its LEO is its length.

Three algorithms, the model's `[rules] truncation`, each Kafka's in its time:

- `"leader-epoch"` (the default; KIP-279, Kafka 2.0, and the diverging epoch in the fetch
  response of KIP-595/KAFKA-10554 since 2.8.0): the leader answers with the largest epoch it has at
  or below the follower's last one and that epoch's end offset; the follower truncates to the
  end of that epoch in its own log, so divergence is found however many leader changes ago.
- `"kip-101"` (Kafka 0.11 to 1.1): one `OffsetsForLeaderEpoch` round. The leader answers with the
  end offset of the follower's last epoch: its LEO for the latest epoch in its log, otherwise the
  start of the first later epoch, and "undefined" if there is none or it has no epoch that early;
  the follower truncates to that offset, or to its HWM when undefined
  (`ReplicaFetcherThread.maybeTruncate` at 0.11.0.0). It misses a divergence in an earlier
  epoch (KAFKA-6361, fixed by KIP-279).
- `"high-watermark"` (before KIP-101, Kafka 0.10 and older): a replica that becomes a follower
  truncates to its HWM (`ReplicaManager.makeFollowers`), and a fetch beyond the leader's LEO is
  out of range: the follower truncates to the leader's LEO. Data in flight when the HWM lags
  is lost, and logs may diverge (KIP-101's two scenarios).

When the follower asks is the model's `[rules] offsets_for_leader_epoch`: on every fetch (2.8.0
and later), or with a request of its own once per leader epoch it follows, before it fetches
(0.11.0 to 2.7.x; `kafkarep/model/actions/data.py`).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.model.shapes import LogShape
from kafkarep.model.state import Log, Replica, latest_epoch
from kafkarep.rules.terms import Term, and_, eq, imax, imin, ite, ne, or_

TRUNCATIONS = ("leader-epoch", "kip-101", "high-watermark")
UNDEFINED = -1  # Kafka's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET


class Entries(NamedTuple):
    """A model log read as the leader-epoch functions below read a log (`shapes.LogShape`);
    the prover reads its own logs the same way (`symbolic/transition/logs.py: Epochs`)."""

    log: Log

    @property
    def leo(self) -> int:
        return len(self.log)

    @property
    def span(self) -> int:
        return len(self.log)

    @property
    def latest_epoch(self) -> int:
        return latest_epoch(self.log)

    def held(self, offset: int) -> bool:
        return True

    def epoch_at(self, offset: int) -> int:
        return self.log[offset][0]


def end_offset_for_epoch(
    log: LogShape, epoch: Term, leader_epoch: Term = None
) -> tuple[Term, Term]:
    """(largest epoch <= `epoch` in the log, end offset of that epoch).

    The end offset is where the first later epoch starts, or the LEO. A leader counts its own
    current epoch (`leader_epoch`) as ending at its LEO.
    """
    leo = log.leo
    trivial = or_(
        eq(leo, 0),
        eq(log.latest_epoch, epoch),
        False if leader_epoch is None else eq(leader_epoch, epoch),
    )
    if trivial is True:
        return epoch, leo
    end: Term = leo
    for k in range(log.span - 1, -1, -1):
        end = ite(and_(log.held(k), log.epoch_at(k) > epoch), k, end)
    found: Term = False
    floor: Term = -1
    for k in range(log.span):
        below = and_(log.held(k), k < end, log.epoch_at(k) <= epoch)
        found = or_(found, below)
        floor = ite(below, imax(floor, log.epoch_at(k)), floor)
    floor = ite(found, floor, epoch)
    return ite(trivial, epoch, floor), ite(trivial, leo, end)


def diverges(
    leader_log: LogShape, leader_epoch: Term, fetch_offset: Term, last_epoch: Term
) -> tuple[Term, Term, Term]:
    """Whether the leader answers a fetch with a diverging epoch (the follower's log is not a
    prefix of the leader's at the fetch offset), and that epoch and its end offset."""
    epoch, end = end_offset_for_epoch(leader_log, last_epoch, leader_epoch)
    return or_(epoch < last_epoch, end < fetch_offset), epoch, end


def truncation_point(log: LogShape, epoch: Term, end: Term) -> Term:
    """Where a follower truncates on a diverging-epoch answer (epoch, end offset)."""
    local_epoch, local_end = end_offset_for_epoch(log, epoch)
    return ite(ne(local_epoch, epoch), local_end, imin(local_end, end))


def kip101_end_offset(leader_log: Log, epoch: int) -> int:
    """KIP-101's answer (Kafka 0.11.0 `LeaderEpochFileCache.endOffsetFor`): the LEO for the
    latest epoch in the leader's log, else the start offset of the first later epoch; UNDEFINED
    when no epoch is later, or the log has no epoch at or below `epoch`. (A 0.11 leader records
    an epoch when it appends in it, not when it is elected.)"""
    if not leader_log:
        return UNDEFINED
    if latest_epoch(leader_log) == epoch:
        return len(leader_log)
    later = next((offset for offset, (e, _) in enumerate(leader_log) if e > epoch), None)
    if later is None or epoch < leader_log[0][0]:
        return UNDEFINED
    return later


def epoch_end(truncation: str, leader_log: Log, leader_epoch: int, epoch: int) -> tuple[int, int]:
    """The leader's answer to "where does my epoch `epoch` end?" (`OffsetsForLeaderEpoch`): the
    largest epoch it has at or below it and where that ends (KIP-279), or KIP-101's single
    look-up, the end offset of that very epoch (UNDEFINED when it cannot say)."""
    if truncation == "leader-epoch":
        return end_offset_for_epoch(Entries(leader_log), epoch, leader_epoch)
    return epoch, kip101_end_offset(leader_log, epoch)


def truncation_completes(truncation: str, log: Log, epoch: int) -> bool:
    """Whether the follower is done once it truncated on the answer (epoch, ...): under KIP-279
    only if it has that epoch itself; otherwise it cut to the end of its own epochs below it and
    asks again (`AbstractFetcherThread.getOffsetTruncationState`, read at 2.0.0 and 2.7.0).
    KIP-101's look-up always completes."""
    if truncation != "leader-epoch":
        return True
    return end_offset_for_epoch(Entries(log), epoch)[0] == epoch


def answer(
    truncation: str, leader_log: Log, leader_epoch: int, fetch_offset: int, last_epoch: int
) -> tuple[int, int] | None:
    """What the leader tells a fetching follower to truncate to, as (epoch, end offset), or None
    when the follower may append from its fetch offset."""
    if truncation == "leader-epoch":
        diverging, epoch, end = diverges(
            Entries(leader_log), leader_epoch, fetch_offset, last_epoch
        )
        return (epoch, end) if diverging else None
    if truncation == "kip-101":
        if fetch_offset == 0:
            return None  # an empty log: nothing to ask about
        epoch, end = epoch_end(truncation, leader_log, leader_epoch, last_epoch)
        return (epoch, end) if end == UNDEFINED or end < fetch_offset else None
    if fetch_offset > len(leader_log):  # OFFSET_OUT_OF_RANGE
        return UNDEFINED, len(leader_log)
    return None


def divergence(
    truncation: str, leader_log: LogShape, leader_epoch: Term, fetch_offset: Term, last_epoch: Term
) -> tuple[Term, Term, Term]:
    """`answer` in any domain: (whether the leader tells the follower to truncate, the epoch,
    the end offset). The prover encodes the leader-epoch truncation only."""
    if truncation == "leader-epoch":
        return diverges(leader_log, leader_epoch, fetch_offset, last_epoch)
    assert isinstance(leader_log, Entries)  # the model's own values
    told = answer(truncation, leader_log.log, leader_epoch, fetch_offset, last_epoch)
    return (False, 0, 0) if told is None else (True, *told)


def truncate_to(truncation: str, log: LogShape, hwm: Term, epoch: Term, end: Term) -> Term:
    """Where a follower truncates on the leader's answer (`answer`: the epoch and end offset)."""
    if truncation == "leader-epoch":
        return truncation_point(log, epoch, end)
    if end == UNDEFINED:
        return imin(hwm, log.leo)  # 0.11: no usable answer, fall back to the HWM
    return imin(end, log.leo)


def truncated(replica: Replica, offset: int) -> Replica:
    """The replica's log cut at `offset`, its HWM and recovery point with it
    (`UnifiedLog.truncateTo`; `LogManager.truncateTo` checkpoints the lower recovery point, read
    at 3.8.0)."""
    return replica._replace(
        log=replica.log[:offset],
        hwm=min(replica.hwm, offset),
        recovery_point=min(replica.recovery_point, offset),
    )
