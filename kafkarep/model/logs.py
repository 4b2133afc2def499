"""Log divergence and truncation (protocol description §3; KIP-101, KIP-279;
`OffsetsForLeaderEpoch`).

Offsets start at 0; a log is a tuple of (leader epoch, value) entries, so its LEO is its length.

Three algorithms, the model's `[rules] truncation`, each Kafka's in its time:

- `"leader-epoch"` (the default; KIP-279, Kafka 2.0, and the diverging epoch in the fetch
  response of KIP-595/KAFKA-10554 since 2.7): the leader answers with the largest epoch it has at
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

The model asks on every fetch where Kafka 0.11 asked once, when it started following a leader.
While the leader leads, the later asks find nothing (its log only grows, and the follower's
last epoch only moves to one the leader holds to its LEO); they can differ only for a follower
still fetching from a broker that has stopped leading, which KIP-320 ended.
"""

from __future__ import annotations

from kafkarep.model.state import Log, latest_epoch

TRUNCATIONS = ("leader-epoch", "kip-101", "high-watermark")
UNDEFINED = -1  # Kafka's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET


def end_offset_for_epoch(log: Log, epoch: int, leader_epoch: int | None = None) -> tuple[int, int]:
    """(largest epoch <= `epoch` in the log, end offset of that epoch).

    The end offset is where the first later epoch starts, or the LEO. A leader counts its own
    current epoch (`leader_epoch`) as ending at its LEO.
    """
    leo = len(log)
    if not log or latest_epoch(log) == epoch or leader_epoch == epoch:
        return epoch, leo
    end = next((offset for offset, (e, _) in enumerate(log) if e > epoch), leo)
    floor = max((e for e, _ in log[:end] if e <= epoch), default=epoch)
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


def answer(
    truncation: str, leader_log: Log, leader_epoch: int, fetch_offset: int, last_epoch: int
) -> tuple[int, int] | None:
    """What the leader tells a fetching follower to truncate to, as (epoch, end offset), or None
    when the follower may append from its fetch offset."""
    if truncation == "leader-epoch":
        return diverges(leader_log, leader_epoch, fetch_offset, last_epoch)
    if truncation == "kip-101":
        if fetch_offset == 0:
            return None  # an empty log: nothing to ask about
        end = kip101_end_offset(leader_log, last_epoch)
        return (last_epoch, end) if end == UNDEFINED or end < fetch_offset else None
    if fetch_offset > len(leader_log):  # OFFSET_OUT_OF_RANGE
        return UNDEFINED, len(leader_log)
    return None


def truncate_to(truncation: str, log: Log, hwm: int, told: tuple[int, int]) -> int:
    """Where a follower truncates on the leader's answer (`answer`)."""
    if truncation == "leader-epoch":
        return truncation_point(log, told)
    end = told[1]
    if end == UNDEFINED:
        return min(hwm, len(log))  # 0.11: no usable answer, fall back to the HWM
    return min(end, len(log))
