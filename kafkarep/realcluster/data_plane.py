"""The data plane of a real Kafka cluster after a scenario, checked against the model's safety
properties: the other direction from `kafkarep validate-log` (which replays the controller's
metadata log through the model's rules), here the model's properties judge the replicas' logs.

What is read, per replica of the partition (see `tests/kraft/scenarios.py`, which collects it):
its record batches (`kafka.tools.DumpLogSegments --print-data-log --files <segments>`: base and
last offset, partitionLeaderEpoch, CRC, record count, and each record's payload), its leader
epoch cache (`leader-epoch-checkpoint` in the partition directory) and its high watermark (the
broker's `replication-offset-checkpoint`; the leader's from ListOffsets). The producers' own
reports say which writes were acknowledged (`parse_verifiable_producer`).

`check` judges one partition's final state. Its clauses, each named like the model's properties
(`kafkarep/properties/`):

- `replica.well_formed`: each log is a valid, gap-free sequence of batches from its log start
  offset, and log start <= HWM <= LEO.
- `leader_completeness.acked_writes`: the leader holds every acknowledged write: at least as many
  records below its HWM as were acknowledged; every write whose offset and value the producer
  reported is below the HWM and the leader's record at that offset has that value (so no
  acknowledged batch was truncated and its offsets reused); and at least as many records below
  the HWM hold none of those values as were acknowledged without being identified.
- `leader_completeness.committed_log`: every batch that a replica holds below its own HWM (that
  it was told is committed) is in the leader's log, identical.
- `leader_candidate_completeness.isr` (and `.elr`): every ISR (ELR) member holds the committed
  log: its batches below the leader's HWM are the leader's, identical in offsets, partition
  leader epoch and CRC.
- `log_matching.same_epoch`: two replicas agree on every batch at offsets where both hold a batch
  of the same partition leader epoch (overlapping batches of one epoch are identical).
- `log_matching.prefix`: two replicas that hold an identical batch hold identical batches below
  it (Raft's Log Matching, as `kafkarep/symbolic/invariants/` states it).
- `log_matching.stable_prefix`: two replicas hold identical batches below both their HWMs
  (`kafkarep/properties/log_matching.py`).
- `epoch_cache.matches_log`: each replica's leader epoch cache has strictly increasing epochs and
  start offsets, the batches' epochs never decrease along the log, and every epoch in the log
  has a cache entry starting at that epoch's first batch (a check that the files read agree).

Stdlib only, and independent of the cluster code: `tests/kraft/test_data_plane.py` checks it
on hand-made states.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise

# How many messages one clause reports for one scenario; the rest are counted.
MAX_MESSAGES_PER_CLAUSE = 5


# --------------------------------------------------------------------------------------------
# What is read


@dataclass(frozen=True)
class Batch:
    """One record batch as DumpLogSegments prints it."""

    base_offset: int
    last_offset: int
    leader_epoch: int  # partitionLeaderEpoch
    crc: int
    count: int  # records in the batch
    valid: bool = True  # DumpLogSegments' `isvalid` (the CRC over the batch checks out)

    @property
    def key(self) -> tuple[int, int, int, int]:
        """What two replicas' copies of one batch must agree on."""
        return (self.base_offset, self.last_offset, self.leader_epoch, self.crc)

    def __str__(self) -> str:
        return (
            f"batch [{self.base_offset}..{self.last_offset}] epoch {self.leader_epoch} "
            f"crc {self.crc}"
        )


@dataclass(frozen=True)
class SegmentDump:
    """One `.log` file's part of DumpLogSegments' output."""

    path: str
    base_offset: int  # "Log starting offset" (the segment's base offset)
    batches: tuple[Batch, ...]
    records: dict[int, str]  # offset -> payload (with --print-data-log)
    notes: tuple[str, ...] = ()  # lines that are neither batches nor records


@dataclass(frozen=True)
class ReplicaState:
    """One replica's log, epoch cache and HWM."""

    broker: int
    log_start_offset: int
    high_watermark: int
    epoch_cache: tuple[tuple[int, int], ...]  # (leader epoch, start offset), as in the file
    batches: tuple[Batch, ...]
    records: Mapping[int, str] | None = None  # offset -> payload; None when not read
    hwm_source: str = "replication-offset-checkpoint"

    @property
    def log_end_offset(self) -> int:
        return self.batches[-1].last_offset + 1 if self.batches else self.log_start_offset

    @property
    def record_count(self) -> int:
        return sum(b.count for b in self.batches)

    def batches_below(self, offset: int) -> list[Batch]:
        """The batches that start below `offset`."""
        return [b for b in self.batches if b.base_offset < offset]

    def records_below(self, offset: int) -> int:
        """How many records lie below `offset` (a batch's records are consecutive offsets)."""
        total = 0
        for b in self.batches:
            if b.base_offset >= offset:
                break
            total += b.count if b.last_offset < offset else offset - b.base_offset
        return total


@dataclass(frozen=True)
class Partition:
    """The partition as the controller last described it."""

    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...] = ()


@dataclass(frozen=True)
class AckedWrites:
    """What the producers acknowledged. `identified`: the (offset, value) of every acknowledged
    record whose producer reported them (VerifiableProducer); `anonymous`: acknowledged records
    whose producer reported only their number (ProducerPerformance)."""

    identified: tuple[tuple[int, str], ...] = ()
    anonymous: int = 0

    @property
    def total(self) -> int:
        return len(self.identified) + self.anonymous


@dataclass(frozen=True)
class Violation:
    clause: str
    message: str

    def __str__(self) -> str:
        return f"{self.clause}: {self.message}"


@dataclass(frozen=True)
class Verdict:
    violations: tuple[Violation, ...]
    clauses: tuple[str, ...]
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "clauses": list(self.clauses),
            "violations": [{"clause": v.clause, "message": v.message} for v in self.violations],
            "facts": self.facts,
        }


# --------------------------------------------------------------------------------------------
# Parsing Kafka's files and tools' output


class ParseError(ValueError):
    pass


_FIELD = re.compile(r"(\w+): (\S+)")


def _fields(line: str) -> dict[str, str]:
    return dict(_FIELD.findall(line))


def parse_dump_log_segments(text: str) -> list[SegmentDump]:
    """Split `DumpLogSegments [--print-data-log] --files a.log,b.log,...` output by file."""
    dumps: list[SegmentDump] = []
    path: str | None = None
    base = 0
    batches: list[Batch] = []
    records: dict[int, str] = {}
    notes: list[str] = []

    def close() -> None:
        if path is not None:
            dumps.append(SegmentDump(path, base, tuple(batches), dict(records), tuple(notes)))

    for line in text.splitlines():
        if line.startswith("Dumping "):
            close()
            path, base = line[len("Dumping ") :].strip(), 0
            batches, records, notes = [], {}, []
        elif path is None:
            continue
        elif line.startswith("Log starting offset: "):
            base = int(line.split(":", 1)[1])
        elif line.startswith("baseOffset: "):
            f = _fields(line)
            try:
                batches.append(
                    Batch(
                        base_offset=int(f["baseOffset"]),
                        last_offset=int(f["lastOffset"]),
                        leader_epoch=int(f["partitionLeaderEpoch"]),
                        crc=int(f["crc"]),
                        count=int(f["count"]),
                        valid=f.get("isvalid", "true") == "true",
                    )
                )
            except KeyError as missing:
                raise ParseError(f"batch line without {missing}: {line!r}") from None
        elif line.startswith("| offset: "):
            head, sep, payload = line.partition(" payload: ")
            offset = int(head.split()[2])
            if sep:
                records[offset] = payload
        elif line.strip():
            notes.append(line.strip())
    close()
    return dumps


def parse_offset_checkpoint(text: str) -> dict[tuple[str, int], int]:
    """A broker's `replication-offset-checkpoint` (version 0; `topic partition offset` lines)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or lines[0] != "0":
        raise ParseError(f"not a version-0 offset checkpoint: {text[:80]!r}")
    expected = int(lines[1])
    entries: dict[tuple[str, int], int] = {}
    for line in lines[2:]:
        topic, partition, offset = line.split()
        entries[(topic, int(partition))] = int(offset)
    if len(entries) != expected:
        raise ParseError(f"offset checkpoint says {expected} entries, holds {len(entries)}")
    return entries


def parse_epoch_checkpoint(text: str) -> tuple[tuple[int, int], ...]:
    """A partition's `leader-epoch-checkpoint` (version 0; `epoch startOffset` lines)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or lines[0] != "0":
        raise ParseError(f"not a version-0 leader epoch checkpoint: {text[:80]!r}")
    entries = tuple((int(e), int(s)) for e, s in (line.split() for line in lines[2:]))
    if len(entries) != int(lines[1]):
        raise ParseError(f"epoch checkpoint says {lines[1]} entries, holds {len(entries)}")
    return entries


@dataclass(frozen=True)
class VerifiableProducerReport:
    """What `org.apache.kafka.tools.VerifiableProducer` printed: one JSON line per send
    answered (`producer_send_success` with the record's partition, offset and value, or
    `producer_send_error`), `shutdown_complete` once its producer closed (every send answered)
    and `tool_data` with its own counts."""

    acked: tuple[tuple[int, int, str], ...]  # (partition, offset, value), in the order acked
    errors: int
    error_kinds: dict[str, int]
    complete: bool  # shutdown_complete printed: every send it made was answered
    sent: int  # tool_data's count, else successes + errors


def parse_verifiable_producer(text: str) -> VerifiableProducerReport:
    acked: list[tuple[int, int, str]] = []
    errors = 0
    kinds: dict[str, int] = {}
    complete = False
    tool: dict[str, object] | None = None
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        name = event.get("name")
        if name == "producer_send_success":
            acked.append((int(event["partition"]), int(event["offset"]), str(event["value"])))
        elif name == "producer_send_error":
            errors += 1
            kind = str(event.get("exception") or "unknown").rsplit(".", 1)[-1]
            kinds[kind] = kinds.get(kind, 0) + 1
        elif name == "shutdown_complete":
            complete = True
        elif name == "tool_data":
            tool = event
    sent = len(acked) + errors
    if tool is not None:
        tool_acked = int(str(tool["acked"]))
        if tool_acked != len(acked):
            raise ParseError(f"tool_data says {tool_acked} acked, {len(acked)} success lines")
        sent = int(str(tool["sent"]))
    return VerifiableProducerReport(tuple(acked), errors, kinds, complete, sent)


def replica_from_segments(
    broker: int,
    segments: Sequence[SegmentDump],
    *,
    high_watermark: int,
    epoch_cache: Iterable[tuple[int, int]],
    hwm_source: str = "replication-offset-checkpoint",
    keep_records: bool = True,
) -> ReplicaState:
    """One replica's state from its segments' dumps (any order)."""
    ordered = sorted(segments, key=lambda s: s.base_offset)
    records: dict[int, str] = {}
    if keep_records:
        for s in ordered:
            records.update(s.records)
    return ReplicaState(
        broker=broker,
        log_start_offset=ordered[0].base_offset if ordered else 0,
        high_watermark=high_watermark,
        epoch_cache=tuple(epoch_cache),
        batches=tuple(b for s in ordered for b in s.batches),
        records=records if keep_records else None,
        hwm_source=hwm_source,
    )


# --------------------------------------------------------------------------------------------
# The checks


Replicas = Mapping[int, ReplicaState]


def _first_difference(name_a: str, a: Sequence[Batch], name_b: str, b: Sequence[Batch]) -> str:
    for x, y in zip(a, b, strict=False):
        if x.key != y.key:
            return f"{name_a} has {x} where {name_b} has {y}"
    if len(a) > len(b):
        return f"{name_b} lacks {a[len(b)]} that {name_a} has"
    return f"{name_a} lacks {b[len(a)]} that {name_b} has"


def _same(a: Sequence[Batch], b: Sequence[Batch]) -> bool:
    return [x.key for x in a] == [y.key for y in b]


def check_well_formed(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    out = []
    for r in replicas.values():
        expected = r.log_start_offset
        for b in r.batches:
            if not b.valid:
                out.append(f"broker {r.broker}: {b} is not valid (CRC)")
            if b.base_offset != expected:
                out.append(f"broker {r.broker}: {b} starts at {b.base_offset}, not {expected}")
            if b.count != b.last_offset - b.base_offset + 1:
                out.append(f"broker {r.broker}: {b} holds {b.count} records")
            expected = b.last_offset + 1
        if not r.log_start_offset <= r.high_watermark <= r.log_end_offset:
            out.append(
                f"broker {r.broker}: HWM {r.high_watermark} outside its log "
                f"[{r.log_start_offset}, {r.log_end_offset}]"
            )
    return out


def check_acked_writes(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    if partition.leader is None or partition.leader not in replicas:
        if acked.total == 0:
            return []
        return [f"no leader's log to hold the {acked.total} acknowledged writes"]
    leader = replicas[partition.leader]
    hwm = leader.high_watermark
    out = []
    below = leader.records_below(hwm)
    if below < acked.total:
        out.append(
            f"leader {leader.broker} holds {below} records below its HWM {hwm}, fewer than the "
            f"{acked.total} acknowledged"
        )
    for offset, value in acked.identified:
        if offset >= leader.log_end_offset:
            out.append(f"acknowledged {value!r} at offset {offset}: beyond the leader's LEO")
        elif offset >= hwm:
            out.append(f"acknowledged {value!r} at offset {offset}: not below the HWM {hwm}")
        elif leader.records is not None and leader.records.get(offset) != value:
            held = leader.records.get(offset)
            what = "no record" if held is None else f"{held[:40]!r}"
            out.append(f"acknowledged {value!r} at offset {offset}: the leader holds {what}")
    if acked.anonymous and leader.records is not None:
        values = {value for _, value in acked.identified}
        others = sum(1 for o, v in leader.records.items() if o < hwm and v not in values)
        if others < acked.anonymous:
            out.append(
                f"{acked.anonymous} writes acknowledged without their offsets, but only {others} "
                f"records below the HWM are not identified acknowledged writes"
            )
    return out


def check_committed_log(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    if partition.leader is None or partition.leader not in replicas:
        return []
    leader = replicas[partition.leader]
    held = {b.base_offset: b for b in leader.batches}
    out = []
    for r in replicas.values():
        if r.broker == leader.broker:
            continue
        for b in r.batches_below(r.high_watermark):
            mine = held.get(b.base_offset)
            if mine is None or mine.key != b.key:
                other = "nothing there" if mine is None else str(mine)
                out.append(
                    f"broker {r.broker} holds {b} below its HWM {r.high_watermark}; "
                    f"leader {leader.broker} has {other}"
                )
    return out


def _candidates_hold_committed_log(
    partition: Partition, replicas: Replicas, members: Iterable[int], what: str
) -> list[str]:
    if partition.leader is None or partition.leader not in replicas:
        return []
    leader = replicas[partition.leader]
    committed = leader.batches_below(leader.high_watermark)
    out = []
    for m in members:
        if m == leader.broker:
            continue
        if m not in replicas:
            out.append(f"{what} member {m}: its log was not read")
            continue
        mine = replicas[m].batches_below(leader.high_watermark)
        if not _same(mine, committed):
            diff = _first_difference(f"broker {m}", mine, f"leader {leader.broker}", committed)
            out.append(f"{what} member {m}, below the HWM {leader.high_watermark}: {diff}")
    return out


def check_isr(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    return _candidates_hold_committed_log(partition, replicas, partition.isr, "ISR")


def check_elr(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    return _candidates_hold_committed_log(partition, replicas, partition.elr, "ELR")


def _pairs(replicas: Replicas) -> list[tuple[ReplicaState, ReplicaState]]:
    return list(combinations([replicas[b] for b in sorted(replicas)], 2))


def check_same_epoch(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    out = []
    for a, b in _pairs(replicas):
        i = j = 0
        while i < len(a.batches) and j < len(b.batches):
            x, y = a.batches[i], b.batches[j]
            overlap = x.base_offset <= y.last_offset and y.base_offset <= x.last_offset
            if overlap and x.leader_epoch == y.leader_epoch and x.key != y.key:
                out.append(f"brokers {a.broker} and {b.broker}: {x} vs {y}")
            if x.last_offset <= y.last_offset:
                i += 1
            else:
                j += 1
    return out


def check_prefix(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    out = []
    for a, b in _pairs(replicas):
        theirs = {y.base_offset: y.key for y in b.batches}
        shared = [x for x in a.batches if theirs.get(x.base_offset) == x.key]
        if not shared:
            continue
        top = shared[-1]
        mine, other = a.batches_below(top.base_offset), b.batches_below(top.base_offset)
        if not _same(mine, other):
            diff = _first_difference(f"broker {a.broker}", mine, f"broker {b.broker}", other)
            out.append(f"both hold {top}, but below it {diff}")
    return out


def check_stable_prefix(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    out = []
    for a, b in _pairs(replicas):
        bound = min(a.high_watermark, b.high_watermark)
        mine, other = a.batches_below(bound), b.batches_below(bound)
        if not _same(mine, other):
            diff = _first_difference(f"broker {a.broker}", mine, f"broker {b.broker}", other)
            out.append(f"below both HWMs ({bound}): {diff}")
    return out


def check_epoch_cache(partition: Partition, replicas: Replicas, acked: AckedWrites) -> list[str]:
    out = []
    for r in replicas.values():
        cache = r.epoch_cache
        for (e1, s1), (e2, s2) in pairwise(cache):
            if not (e1 < e2 and s1 < s2):
                out.append(f"broker {r.broker}: cache entries ({e1}, {s1}), ({e2}, {s2})")
        starts = dict(cache)
        previous: Batch | None = None
        for b in r.batches:
            if previous is not None and b.leader_epoch < previous.leader_epoch:
                out.append(f"broker {r.broker}: {b} follows {previous}")
            if previous is None or b.leader_epoch != previous.leader_epoch:
                start = starts.get(b.leader_epoch)
                first = previous is None
                if start is None or start > b.base_offset or (start != b.base_offset and not first):
                    out.append(
                        f"broker {r.broker}: epoch {b.leader_epoch} begins at {b.base_offset}, "
                        f"its cache entry says {start}"
                    )
            previous = b
    return out


Check = Callable[[Partition, Replicas, AckedWrites], list[str]]

CLAUSES: dict[str, Check] = {
    "replica.well_formed": check_well_formed,
    "leader_completeness.acked_writes": check_acked_writes,
    "leader_completeness.committed_log": check_committed_log,
    "leader_candidate_completeness.isr": check_isr,
    "leader_candidate_completeness.elr": check_elr,
    "log_matching.same_epoch": check_same_epoch,
    "log_matching.prefix": check_prefix,
    "log_matching.stable_prefix": check_stable_prefix,
    "epoch_cache.matches_log": check_epoch_cache,
}


def check(partition: Partition, replicas: Replicas, acked: AckedWrites) -> Verdict:
    """Every clause on one partition's final state."""
    violations: list[Violation] = []
    for clause, function in CLAUSES.items():
        messages = function(partition, replicas, acked)
        for message in messages[:MAX_MESSAGES_PER_CLAUSE]:
            violations.append(Violation(clause, message))
        if len(messages) > MAX_MESSAGES_PER_CLAUSE:
            more = len(messages) - MAX_MESSAGES_PER_CLAUSE
            violations.append(Violation(clause, f"... and {more} more"))
    return Verdict(tuple(violations), tuple(CLAUSES), facts(partition, replicas, acked))


def facts(partition: Partition, replicas: Replicas, acked: AckedWrites) -> dict[str, object]:
    """The key numbers of a final state."""
    out: dict[str, object] = {
        "leader": partition.leader,
        "replicas": list(partition.replicas),
        "isr": list(partition.isr),
        "elr": list(partition.elr),
        "acked": acked.total,
        "acked_identified": len(acked.identified),
        "acked_anonymous": acked.anonymous,
    }
    leader = replicas.get(partition.leader) if partition.leader is not None else None
    if leader is not None:
        out["leader_leo"] = leader.log_end_offset
        out["leader_hwm"] = leader.high_watermark
        out["leader_records_below_hwm"] = leader.records_below(leader.high_watermark)
        if leader.records is not None and acked.identified:
            seen: dict[str, int] = {}
            for value in leader.records.values():
                seen[value] = seen.get(value, 0) + 1
            out["acked_values_held_twice"] = sum(
                1 for _, value in acked.identified if seen.get(value, 0) > 1
            )
    out["leo"] = {str(b): r.log_end_offset for b, r in sorted(replicas.items())}
    out["hwm"] = {str(b): r.high_watermark for b, r in sorted(replicas.items())}
    return out


# --------------------------------------------------------------------------------------------
# A replica's state for scenarios.json


def _digest(batches: Iterable[Batch]) -> str:
    text = "".join(f"{b.base_offset}:{b.last_offset}:{b.leader_epoch}:{b.crc};" for b in batches)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def epoch_runs(batches: Sequence[Batch]) -> list[list[Batch]]:
    """The log cut into runs of consecutive batches of one partition leader epoch."""
    runs: list[list[Batch]] = []
    for b in batches:
        if runs and runs[-1][-1].leader_epoch == b.leader_epoch:
            runs[-1].append(b)
        else:
            runs.append([b])
    return runs


def replica_json(r: ReplicaState) -> dict[str, object]:
    """A replica's state in brief: offsets, HWM, epoch cache and its batches summarised per
    epoch run (offsets, number of batches, and a digest of every batch's offsets, epoch and CRC,
    equal on two replicas exactly when the runs are)."""
    return {
        "broker": r.broker,
        "log_start_offset": r.log_start_offset,
        "log_end_offset": r.log_end_offset,
        "high_watermark": r.high_watermark,
        "hwm_source": r.hwm_source,
        "leader_epoch_cache": [list(entry) for entry in r.epoch_cache],
        "batches": len(r.batches),
        "records": r.record_count,
        "epoch_runs": [
            {
                "epoch": run[0].leader_epoch,
                "base_offset": run[0].base_offset,
                "last_offset": run[-1].last_offset,
                "batches": len(run),
                "digest": _digest(run),
            }
            for run in epoch_runs(r.batches)
        ],
        "log_digest": _digest(r.batches),
    }
