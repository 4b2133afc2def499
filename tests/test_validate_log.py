"""`kafkarep validate-log`: metadata logs dumped from a real KRaft cluster
(tests/data/metadata-logs/, written by `python -m tests.kraft.scenarios`) are explained record by
record by the rules; a tampered record is not, and the output names it; a bad file is one line
and exit code 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkarep.cli.main import main
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
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(bytes([0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFE, 0x80, 0x81]))
    assert main(["validate-log", str(segment)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("kafkarep validate-log: error:") for line in err)
    assert "dump it first with kafka-dump-log" in err[-1]


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
