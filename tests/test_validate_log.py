"""`kafkarep validate-log`: metadata logs dumped from a real KRaft cluster
(tests/data/metadata-logs/, written by `python -m tests.kraft.scenarios`) are explained record by
record by the rules; a tampered record is not, and the output names it; a bad file is one line
and exit code 2."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.kafka.jars import KAFKA_VERSION, default_cache_root, fetch_kafka
from kafkarep.metadata_log import segments
from kafkarep.metadata_log.dump import LogError, parse_dump, read_dump
from kafkarep.metadata_log.explain import validate
from tests.helpers import DATA

LOGS = sorted((DATA / "metadata-logs").glob("*.txt"))


def test_the_dumps_are_there() -> None:
    assert len(LOGS) >= 2


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_a_real_clusters_log_is_explained(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate-log", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    found = re.fullmatch(r"validate-log: (\d+) records explained, 0 not", out[-1])
    assert found and int(found.group(1)) >= 1
    assert all(line.endswith("change records explained)") for line in out[:-1])


def _tampered(tmp_path: Path) -> tuple[Path, int]:
    """The first ISR change of a log, rewritten to name a broker outside the replicas."""
    lines = (DATA / "metadata-logs" / "kill9_follower.txt").read_text().splitlines()
    for index, line in enumerate(lines):
        if '"type":"PARTITION_CHANGE_RECORD"' in line and '"isr":[' in line:
            offset = int(re.search(r"\| offset: (\d+)", line).group(1))  # type: ignore[union-attr]
            lines[index] = re.sub(r'"isr":\[[^\]]*\]', '"isr":[1,2,3,7]', line)
            break
    else:
        raise AssertionError("no ISR change in the first log")
    path = tmp_path / "tampered.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, offset


def test_a_record_the_rules_cannot_produce_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, offset = _tampered(tmp_path)
    summary = tmp_path / "verdicts.json"
    assert main(["validate-log", str(path), "--json", str(summary)]) == 1
    out = capsys.readouterr().out
    assert "NOT VALID" in out and f"offset {offset}:" in out
    assert "AlterPartition isr=[1,2,3,7]" in out and "refused: alter_partition." in out
    bad = [v for v in json.loads(summary.read_text()) if v["explained_by"] is None]
    assert bad[0]["offset"] == offset  # (a later record may then fail too: its state is wrong)
    assert out.rstrip().endswith(f"{len(bad)} not")


def test_an_alterpartition_record_is_explained_by_the_leaders_request() -> None:
    verdicts = validate(read_dump(LOGS[0]))
    assert any(v.explained_by and v.explained_by.startswith("AlterPartition") for v in verdicts)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("hello\n", "no batches"),
        (
            "baseOffset: 0 lastOffset: 0 count: 1 isControl: false\n| offset: 0 x payload: {bad\n",
            "malformed payload",
        ),
        (
            "baseOffset: 0 lastOffset: 0 count: 1 isControl: false\n| offset: 0 x keySize: 1\n",
            "without a payload",
        ),
    ],
)
def test_a_malformed_dump_is_one_line(text: str, problem: str) -> None:
    with pytest.raises(LogError, match=problem):
        parse_dump(text, "x.txt")


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate-log", str(tmp_path / "missing.txt")]) == 2
    assert main(["validate-log", str(LOGS[0]), "--kafka", "9.9"]) == 2
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["validate-log", str(empty)]) == 2
    binary = tmp_path / "dump.bin"  # neither a dump nor a log file
    binary.write_bytes(bytes([0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFE, 0x80, 0x81]))
    assert main(["validate-log", str(binary)]) == 2
    assert main(["validate-log", str(LOGS[0]), "--kafka-home", str(tmp_path)]) == 0  # unused
    assert main(["validate-log", str(SEGMENTS), "--kafka-home", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("kafkarep validate-log: error:") for line in err)
    assert "not a metadata log file name" in err[-2]
    assert err[-1].endswith(f"{tmp_path}: not a Kafka installation (no libs/kafka_2.13-*.jar)")


def test_every_kind_of_event_explains_some_real_record() -> None:
    kinds = {
        (v.explained_by or "").split(" of broker")[0].split(" isr=")[0].split(" to [")[0]
        for log in LOGS
        for v in validate(read_dump(log))
    }
    assert {
        "AlterPartition",
        "fence",
        "unfence",
        "controlled shutdown",
        "unclean re-registration",
        "reassignment",
        "reassignment cancelled",
        "preferred election",
    } <= kinds


def test_a_seeded_guard_fails_validation_on_the_record_it_decides() -> None:
    """KIP-966: a broker back from an unclean shutdown leaves the ELR. With that guard switched
    off the rules keep it there, and the record Kafka wrote when broker 2 re-registered after its
    kill -9 (removing it from the ELR) is no longer explained: exactly that record."""
    batches = read_dump(DATA / "metadata-logs" / "kill9_both_followers.txt")
    verdicts = validate(batches)
    assert all(v.explained_by for v in verdicts)
    decided = [
        v.offset
        for v in verdicts
        if v.explained_by == "unclean re-registration of broker 2"
        and v.record.get("eligibleLeaderReplicas") == []
        and v.before is not None
        and v.before.elr == frozenset({2})
    ]
    assert len(decided) == 1
    seeded = validate(
        batches, guards_off=frozenset({"partition_change.unclean_shutdown_leaves_elr"})
    )
    bad = [v for v in seeded if v.explained_by is None]
    assert [v.offset for v in bad] == decided
    verdicts_of = {c.event: c.verdict for c in bad[0].candidates}
    assert verdicts_of["unclean re-registration of broker 2"] == "no partition change"


# --- the log's files themselves: segments and snapshots, decoded by Kafka's DumpLogSegments ---

SEGMENTS = DATA / "metadata-logs" / "kill9_follower.segments"
SEGMENT = SEGMENTS / "00000000000000000000.log"


def _decoder_missing() -> str | None:
    if shutil.which("java") is None:
        return "no Java"
    cached = (default_cache_root() / f"kafka-{KAFKA_VERSION}" / "lib" / ".complete").is_file()
    if not cached and shutil.which("mvn") is None:
        return "no Maven to fetch Kafka's jars"
    return None


needs_decoder = pytest.mark.skipif(_decoder_missing() is not None, reason=str(_decoder_missing()))


@needs_decoder
def test_a_log_directory_decodes_to_the_dumped_text() -> None:
    files = segments.log_files(SEGMENTS)
    assert files == [SEGMENT]  # the log starts at offset 0: no snapshot is needed
    decoded = parse_dump(segments.decode(files), "decoded")
    assert decoded == read_dump(DATA / "metadata-logs" / "kill9_follower.txt")


@needs_decoder
@pytest.mark.parametrize(("snapshot_end", "validated"), [(20, [22, 26]), (25, [26])])
def test_replay_starts_from_a_snapshot(snapshot_end: int, validated: list[int]) -> None:
    """The records a snapshot holds are not replayed again from the segment: only the change
    records from its end offset on are judged, from the state the snapshot holds."""
    snapshot = SEGMENTS / f"{snapshot_end:020d}-0000000001.checkpoint"
    batches = parse_dump(segments.decode([snapshot, SEGMENT]), "decoded")
    verdicts = validate(batches)
    assert [v.offset for v in verdicts] == validated
    assert all(v.explained_by is not None for v in verdicts)


@needs_decoder
@pytest.mark.parametrize("installed", [False, True], ids=["maven", "kafka-home"])
def test_validate_log_reads_a_segment_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], installed: bool
) -> None:
    flags = []
    if installed:  # an installed Kafka: its libs/ (here, the jars Maven fetched)
        (tmp_path / "libs").symlink_to(fetch_kafka(KAFKA_VERSION), target_is_directory=True)
        flags = ["--kafka-home", str(tmp_path)]
    assert main(["validate-log", str(SEGMENTS), *flags]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "validate-log: 2 records explained, 0 not"
    where = tmp_path if installed else f"Kafka {KAFKA_VERSION}"
    assert f"decoding 1 file(s) with DumpLogSegments from {where}" in captured.err


def _corrupt_tail(data: bytes) -> bytes:
    return data[:100] + b"\xff" * 300


def _corrupt_batch(data: bytes) -> bytes:
    return data[:50] + b"\x00" * 20 + data[70:]


@needs_decoder
@pytest.mark.parametrize(
    ("name", "corrupt", "problem"),
    [
        ("00000000000000000000.log", _corrupt_tail, "invalid bytes at the end"),
        ("00000000000000000000.log", _corrupt_batch, "fails its CRC check"),
        ("segment.log", lambda data: data, "not a metadata log file name"),
    ],
)
def test_a_corrupt_segment_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    corrupt: Callable[[bytes], bytes],
    problem: str,
) -> None:
    bad = tmp_path / name
    bad.write_bytes(corrupt(SEGMENT.read_bytes()))
    code = main(["validate-log", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert err[-1].startswith(f"kafkarep validate-log: error: {bad}") and problem in err[-1]
    assert all(line.startswith(("validate-log: decoding", "kafkarep")) for line in err)


def _touch(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")


def test_the_oldest_snapshot_reaching_the_oldest_segment_is_taken(tmp_path: Path) -> None:
    log = tmp_path / "meta" / "__cluster_metadata-0"
    _touch(log, "00000000000000000030.log", "00000000000000000090.log")
    _touch(log, *(f"{end:020d}-0000000002.checkpoint" for end in (20, 35, 40)))
    # the parent directory (metadata.log.dir) finds its __cluster_metadata-0
    assert [f.name for f in segments.log_files(tmp_path / "meta")] == [
        "00000000000000000035-0000000002.checkpoint",
        "00000000000000000030.log",
        "00000000000000000090.log",
    ]


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        ((), "no metadata log segments"),
        (("00000000000000000030.log", "00000000000000000020-0000000001.checkpoint"),
         "the oldest segment starts at offset 30 and no snapshot reaches it"),
    ],
)  # fmt: skip
def test_a_log_directory_that_cannot_be_replayed_is_refused(
    tmp_path: Path, names: tuple[str, ...], problem: str
) -> None:
    _touch(tmp_path, *names)
    with pytest.raises(LogError, match=problem):
        segments.log_files(tmp_path)


def test_a_dump_starting_after_offset_0_without_a_snapshot_is_refused() -> None:
    text = (DATA / "metadata-logs" / "kill9_follower.txt").read_text()
    text = text.replace("00000000000000000000.log", "00000000000000000023.log", 1)
    with pytest.raises(LogError, match="starts at offset 23 and no snapshot precedes it"):
        parse_dump(text, "cut.txt")
