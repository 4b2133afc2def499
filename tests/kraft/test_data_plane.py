"""The data-plane checks (kafkarep/realcluster/data_plane.py) on hand-made replica states, no
cluster: a correct final state passes every clause, and each seeded violation is found by its
clause (and only by the clauses it breaks); the parsers read the shapes
Kafka's files and tools print."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from kafkarep.realcluster.cluster import ProduceResult
from kafkarep.realcluster.data_plane import (
    CLAUSES,
    AckedWrites,
    Batch,
    ParseError,
    Partition,
    ReplicaState,
    Verdict,
    check,
    parse_dump_log_segments,
    parse_epoch_checkpoint,
    parse_offset_checkpoint,
    parse_verifiable_producer,
    replica_from_segments,
    replica_json,
)
from tests.kraft.scenarios import acked_writes

# (base offset, last offset, partition leader epoch, CRC)
Spec = tuple[int, int, int, int]

# A log written by leader 1 in epoch 0 (offsets 0-9, two batches), then by leader 2 in epoch 1.
LOG: tuple[Spec, ...] = ((0, 4, 0, 100), (5, 9, 0, 101), (10, 14, 1, 200))
CACHE = ((0, 0), (1, 10))
VALUES = {o: f"1.{o}" for o in range(10)} | {o: f"2.{o - 10}" for o in range(10, 15)}


def replica(
    broker: int,
    specs: Iterable[Spec] = LOG,
    *,
    hwm: int = 15,
    cache: tuple[tuple[int, int], ...] = CACHE,
    records: dict[int, str] | None = None,
) -> ReplicaState:
    batches = tuple(Batch(b, last, e, crc, last - b + 1) for b, last, e, crc in specs)
    held = records if records is not None else {o: v for o, v in VALUES.items() if o <= 14}
    leo = batches[-1].last_offset + 1 if batches else 0
    return ReplicaState(broker, 0, hwm, cache, batches, {o: v for o, v in held.items() if o < leo})


def state(**changed: ReplicaState) -> dict[int, ReplicaState]:
    replicas = {b: replica(b) for b in (1, 2, 3)}
    for name, r in changed.items():
        replicas[int(name[1:])] = r
    return replicas


FULL = Partition(leader=2, replicas=(1, 2, 3), isr=(1, 2, 3))
ACKED = AckedWrites(tuple(VALUES.items()), 0)


def clauses(verdict: Verdict) -> set[str]:
    return {v.clause for v in verdict.violations}


def test_a_correct_final_state_passes_every_clause() -> None:
    verdict = check(FULL, state(), ACKED)
    assert verdict.ok, verdict.violations
    assert verdict.clauses == tuple(CLAUSES)
    assert verdict.facts["leader_leo"] == 15 and verdict.facts["leader_hwm"] == 15
    assert verdict.facts["acked"] == 15 and verdict.facts["acked_values_held_twice"] == 0


def test_an_out_of_sync_follower_behind_is_allowed() -> None:
    behind = replica(3, LOG[:2], hwm=10, cache=((0, 0),))
    assert check(Partition(2, (1, 2, 3), (1, 2)), state(b3=behind), ACKED).ok


def test_an_isr_member_missing_a_committed_batch_is_found() -> None:
    behind = replica(3, LOG[:2], hwm=10, cache=((0, 0),))
    verdict = check(FULL, state(b3=behind), ACKED)
    assert clauses(verdict) == {"leader_candidate_completeness.isr"}
    (violation,) = verdict.violations
    assert "ISR member 3" in violation.message and "batch [10..14] epoch 1" in violation.message


def test_an_elr_member_missing_a_committed_batch_is_found() -> None:
    behind = replica(3, LOG[:2], hwm=10, cache=((0, 0),))
    partition = Partition(leader=2, replicas=(1, 2, 3), isr=(1, 2), elr=(3,))
    assert clauses(check(partition, state(b3=behind), ACKED)) == {
        "leader_candidate_completeness.elr"
    }


def test_an_isr_member_not_read_is_a_violation() -> None:
    replicas = state()
    del replicas[3]
    assert clauses(check(FULL, replicas, ACKED)) == {"leader_candidate_completeness.isr"}


def test_a_leader_missing_an_acknowledged_write_is_found() -> None:
    # acknowledged at offset 15, but the leader's log ends at 15
    late = AckedWrites((*ACKED.identified, (15, "2.5")), 0)
    verdict = check(FULL, state(), late)
    assert clauses(verdict) == {"leader_completeness.acked_writes"}
    assert any("beyond the leader's LEO" in v.message for v in verdict.violations)
    assert any("fewer than the 16 acknowledged" in v.message for v in verdict.violations)


def test_an_acknowledged_batch_truncated_and_its_offsets_reused_is_found() -> None:
    # the acknowledged 2.2 at offset 12 was replaced by an unacknowledged record
    reused = replica(2, records={**VALUES, 12: "3.0"})
    verdict = check(FULL, state(b2=reused), ACKED)
    assert clauses(verdict) == {"leader_completeness.acked_writes"}
    assert "'2.2' at offset 12: the leader holds '3.0'" in verdict.violations[0].message


def test_an_acknowledged_write_above_the_hwm_is_found() -> None:
    leader = replica(2, hwm=14)
    followers = {b: replica(b, hwm=14) for b in (1, 3)}
    verdict = check(FULL, {2: leader, **followers}, ACKED)
    assert clauses(verdict) == {"leader_completeness.acked_writes"}
    assert any("not below the HWM 14" in v.message for v in verdict.violations)


def test_anonymous_acknowledged_writes_are_counted() -> None:
    # 10 identified acks and 5 acks without offsets: the 5 records 2.0-2.4 account for them
    some = AckedWrites(ACKED.identified[:10], 5)
    assert check(FULL, state(), some).ok
    # one more anonymous ack than the log has room for
    verdict = check(FULL, state(), AckedWrites(ACKED.identified[:10], 6))
    assert clauses(verdict) == {"leader_completeness.acked_writes"}
    assert len(verdict.violations) == 2  # too few records, and too few unidentified ones


def test_no_leader_with_acknowledged_writes_is_a_violation() -> None:
    leaderless = Partition(leader=None, replicas=(1, 2, 3), isr=())
    assert clauses(check(leaderless, state(), ACKED)) == {"leader_completeness.acked_writes"}
    assert check(leaderless, state(), AckedWrites()).ok


def test_two_replicas_with_different_crcs_at_one_offset_and_epoch_are_found() -> None:
    # broker 3 (out of the ISR, its HWM at 10) holds another batch 10-14 of epoch 1
    forked = replica(3, (*LOG[:2], (10, 14, 1, 999)), hwm=10)
    verdict = check(Partition(2, (1, 2, 3), (1, 2)), state(b3=forked), ACKED)
    assert clauses(verdict) == {"log_matching.same_epoch"}
    messages = [v.message for v in verdict.violations]
    assert messages == [
        "brokers 1 and 3: batch [10..14] epoch 1 crc 200 vs batch [10..14] epoch 1 crc 999",
        "brokers 2 and 3: batch [10..14] epoch 1 crc 200 vs batch [10..14] epoch 1 crc 999",
    ]


def test_overlapping_batches_of_one_epoch_with_other_bounds_are_found() -> None:
    split = replica(3, (*LOG[:2], (10, 11, 1, 201), (12, 14, 1, 202)), hwm=10)
    verdict = check(Partition(2, (1, 2, 3), (1, 2)), state(b3=split), ACKED)
    assert clauses(verdict) == {"log_matching.same_epoch"}


def test_a_divergent_uncommitted_tail_of_another_epoch_is_allowed() -> None:
    # broker 3 kept a batch of epoch 0 at 10-12 that leader 2 (epoch 1) overwrote: fine while
    # it is above 3's HWM (Kafka truncates it when 3 fetches again)
    tail = replica(3, (*LOG[:2], (10, 12, 0, 777)), hwm=10, cache=((0, 0),))
    assert check(Partition(2, (1, 2, 3), (1, 2)), state(b3=tail), ACKED).ok


def test_a_divergent_batch_below_a_replicas_hwm_is_found() -> None:
    tail = replica(3, (*LOG[:2], (10, 12, 0, 777)), hwm=13, cache=((0, 0),))
    verdict = check(Partition(2, (1, 2, 3), (1, 2)), state(b3=tail), ACKED)
    assert clauses(verdict) == {"leader_completeness.committed_log", "log_matching.stable_prefix"}


def test_logs_that_share_a_batch_but_differ_below_it_are_found() -> None:
    a = replica(1, ((0, 4, 0, 100), (5, 9, 2, 300)), hwm=10, cache=((0, 0), (2, 5)))
    b = replica(2, ((0, 4, 1, 150), (5, 9, 2, 300)), hwm=0, cache=((1, 0), (2, 5)))
    verdict = check(Partition(1, (1, 2), (1,)), {1: a, 2: b}, AckedWrites())
    assert clauses(verdict) == {"log_matching.prefix"}
    assert "both hold batch [5..9] epoch 2" in verdict.violations[0].message


def test_an_epoch_cache_that_disagrees_with_the_log_is_found() -> None:
    wrong = replica(1, cache=((0, 0), (1, 11)))
    verdict = check(FULL, state(b1=wrong), ACKED)
    assert clauses(verdict) == {"epoch_cache.matches_log"}
    unordered = replica(1, cache=((1, 10), (0, 0)))
    assert clauses(check(FULL, state(b1=unordered), ACKED)) == {"epoch_cache.matches_log"}
    # the leader's entry for an epoch it has not written in yet is fine
    assert check(FULL, state(b2=replica(2, cache=(*CACHE, (2, 15)))), ACKED).ok


def test_a_gap_an_invalid_batch_or_an_hwm_past_the_log_are_found() -> None:
    gap = replica(1, (LOG[0], (6, 9, 0, 101), LOG[2]), hwm=5)
    assert "replica.well_formed" in clauses(check(FULL, state(b1=gap), ACKED))
    broken = ReplicaState(1, 0, 15, CACHE, (Batch(0, 14, 0, 1, 15, valid=False),))
    assert "replica.well_formed" in clauses(check(FULL, state(b1=broken), ACKED))
    past = replica(1, hwm=16)
    assert "replica.well_formed" in clauses(check(FULL, state(b1=past), ACKED))


def test_many_violations_are_capped_per_clause() -> None:
    late = AckedWrites(tuple((o, f"9.{o}") for o in range(20, 40)), 0)
    messages = [v.message for v in check(FULL, state(), late).violations]
    assert len(messages) == 6 and messages[-1] == "... and 16 more"


# --------------------------------------------------------------------------------------------
# Parsing

DUMP = """\
Dumping /w/broker-1/data/t-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 0 \
producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false \
deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 80 magic: 2 \
compresscodec: none crc: 3661597001 isvalid: true
| offset: 0 CreateTime: 1 keySize: -1 valueSize: 3 sequence: 0 headerKeys: [] payload: 1.0
| offset: 1 CreateTime: 1 keySize: -1 valueSize: 5 sequence: 1 headerKeys: [] payload: a b c
Dumping /w/broker-2/data/t-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 0 \
producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: false isControl: false \
deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 80 magic: 2 \
compresscodec: none crc: 17 isvalid: false
Found 12 invalid bytes at the end of 00000000000000000000.log
"""


def test_dump_log_segments_output_is_split_by_file() -> None:
    one, two = parse_dump_log_segments(DUMP)
    assert one.path.startswith("/w/broker-1") and two.path.startswith("/w/broker-2")
    assert one.batches == (Batch(0, 1, 0, 3661597001, 2),)
    assert one.records == {0: "1.0", 1: "a b c"}
    assert two.batches == (Batch(0, 1, 3, 17, 2, valid=False),)
    assert two.records == {} and two.notes == (
        "Found 12 invalid bytes at the end of 00000000000000000000.log",
    )
    r = replica_from_segments(2, [two], high_watermark=0, epoch_cache=[(3, 0)])
    assert r.log_end_offset == 2 and r.epoch_cache == ((3, 0),)


def test_a_batch_line_without_its_crc_is_refused() -> None:
    with pytest.raises(ParseError, match="crc"):
        parse_dump_log_segments(
            "Dumping x.log\nbaseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 0\n"
        )


def test_segments_are_joined_in_offset_order() -> None:
    text = DUMP.split("Dumping /w/broker-2")[0]
    later = (
        text.replace("00000000000000000000.log", "00000000000000000002.log")
        .replace("Log starting offset: 0", "Log starting offset: 2")
        .replace("baseOffset: 0 lastOffset: 1", "baseOffset: 2 lastOffset: 3")
    )
    segments = parse_dump_log_segments(later + text)
    r = replica_from_segments(1, segments, high_watermark=4, epoch_cache=[(0, 0)])
    assert [b.base_offset for b in r.batches] == [0, 2] and r.log_end_offset == 4
    assert check(Partition(1, (1,), (1,)), {1: r}, AckedWrites()).ok


def test_checkpoint_files() -> None:
    assert parse_offset_checkpoint("0\n2\nt 0 80\n__x 3 7\n") == {("t", 0): 80, ("__x", 3): 7}
    assert parse_epoch_checkpoint("0\n2\n0 0\n4 1302\n") == ((0, 0), (4, 1302))
    with pytest.raises(ParseError):
        parse_offset_checkpoint("0\n2\nt 0 80\n")
    with pytest.raises(ParseError):
        parse_epoch_checkpoint("1\n0\n")


def _event(name: str, **fields: object) -> str:
    return json.dumps({"timestamp": 1, "name": name, **fields})


def test_verifiable_producer_output() -> None:
    lines = [
        _event("startup_complete"),
        _event("producer_send_success", key=None, value="2.0", offset=7, topic="t", partition=0),
        _event(
            "producer_send_error",
            exception="class org.apache.kafka.common.errors.TimeoutException",
            message="Expiring 1 record(s)",
            topic="t",
            key=None,
            value="2.1",
        ),
        "[2025-01-01 00:00:00,000] WARN not JSON",
        _event("producer_send_success", key=None, value="2.2", offset=8, topic="t", partition=0),
        _event("shutdown_complete"),
        _event("tool_data", sent=3, acked=2, target_throughput=20, avg_throughput=1.0),
    ]
    report = parse_verifiable_producer("\n".join(lines))
    assert report.acked == ((0, 7, "2.0"), (0, 8, "2.2"))
    assert report.errors == 1 and report.error_kinds == {"TimeoutException": 1}
    assert report.complete and report.sent == 3
    killed = parse_verifiable_producer("\n".join(lines[:3]))
    assert not killed.complete and killed.sent == 2
    with pytest.raises(ParseError, match="tool_data says 2 acked, 1 success"):
        parse_verifiable_producer("\n".join(lines[:3] + lines[-1:]))


def test_acked_writes_from_the_producer_runs() -> None:
    verifiable = ProduceResult(
        "VerifiableProducer", 3, 2, 1, 1.0, "", acked_records=((0, 7, "2.0"), (0, 8, "2.2"))
    )
    bulk = ProduceResult("ProducerPerformance", 100, 98, 2, 1.0, "")
    acked = acked_writes([verifiable, bulk])
    assert acked.identified == ((7, "2.0"), (8, "2.2")) and acked.anonymous == 98
    assert acked.total == 100


def test_replica_json_digests_equal_runs_alike() -> None:
    a, b = replica_json(replica(1)), replica_json(replica(3))
    assert a["epoch_runs"] == b["epoch_runs"] and a["log_digest"] == b["log_digest"]
    forked = replica_json(replica(3, (*LOG[:2], (10, 14, 1, 999))))
    assert a["epoch_runs"][0] == forked["epoch_runs"][0]  # type: ignore[index]
    assert a["epoch_runs"][1] != forked["epoch_runs"][1]  # type: ignore[index]
    assert a["log_end_offset"] == 15 and a["records"] == 15 and a["batches"] == 3
