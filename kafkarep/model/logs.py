"""Log divergence and truncation (the protocol's §3; KIP-101, KIP-279; `OffsetsForLeaderEpoch`).

Offsets start at 0; a log is a tuple of (leader epoch, value) entries, so its LEO is its length.
"""

from __future__ import annotations

from kafkarep.model.state import Log


def end_offset_for_epoch(log: Log, epoch: int, leader_epoch: int | None = None) -> tuple[int, int]:
    """(largest epoch <= `epoch` in the log, end offset of that epoch).

    The end offset is where the first later epoch starts, or the LEO. A leader counts its own
    current epoch (`leader_epoch`) as ending at its LEO.
    """
    leo = len(log)
    if not log or log[-1][0] == epoch or leader_epoch == epoch:
        return epoch, leo
    end = next((offset for offset, (e, _) in enumerate(log) if e > epoch), leo)
    floor = max((e for e, _ in log if e <= epoch), default=epoch)
    return floor, end


def diverges(
    leader_log: Log, leader_epoch: int, fetch_offset: int, last_epoch: int
) -> tuple[int, int] | None:
    """The leader's diverging-epoch answer to a fetch, or None when the follower's log is a
    prefix of the leader's at the fetch offset."""
    epoch, end = end_offset_for_epoch(leader_log, last_epoch, leader_epoch)
    if epoch < last_epoch or end < fetch_offset:
        return epoch, end
    return None


def truncation_point(log: Log, diverging: tuple[int, int]) -> int:
    """Where a follower truncates on a diverging-epoch answer (epoch, end offset)."""
    epoch, end = diverging
    local_epoch, local_end = end_offset_for_epoch(log, epoch)
    if local_epoch != epoch:
        return local_end
    return min(local_end, end)
