"""Kafka's own controller as the oracle: the conformance cases through it, a differential run
that agrees, and a seeded disagreement that it finds and shrinks. The oracle needs Java and
Maven (the tests say so and skip where they are missing); its jars come from Maven Central."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.kafka.releases import NEWEST
from kafkarep.oracle import differential
from kafkarep.oracle import harness as oracle
from tests.helpers import DATA

MISSING = oracle.missing()
needs_oracle = pytest.mark.skipif(MISSING is not None, reason=f"no oracle: {MISSING}")
CASE_FILES = sorted((DATA / "conformance").glob("*.json"))


@pytest.fixture(scope="module")
def kafka() -> Any:
    with oracle.Oracle(NEWEST) as running:
        yield running


@needs_oracle
def test_the_conformance_cases_are_kafkas_answers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--oracle", *map(str, CASE_FILES)]) == 0
    assert " 0 failed" in capsys.readouterr().out.splitlines()[-1]


@needs_oracle
def test_a_differential_run_agrees(kafka: Any) -> None:
    for area in differential.AREAS:
        result = differential.run_area(kafka, area, 150, 7)
        assert result.disagreement is None, result.differences
        assert result.agreed + result.unsupported == 150 and result.agreed > 100


@pytest.mark.slow
@needs_oracle
def test_a_seeded_disagreement_is_found_and_shrunk(
    kafka: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AlterPartition without its partition-epoch check: the run reports it, shrunk to a small
    case, printed with Kafka's answer as its expectation."""
    rules = importlib.import_module("kafkarep.rules.alter_partition")
    off = rules.partition_epoch_current._replace(check=lambda m, r: True)
    guards = tuple(off if g.name == "partition_epoch_current" else g for g in rules.GUARDS)
    monkeypatch.setattr(rules, "GUARDS", guards)
    result = differential.run_area(kafka, "alter_partition", 3000, 0)
    case = result.disagreement
    assert case is not None
    assert case["expect"]["error"] == "INVALID_UPDATE_VERSION"
    assert case["action"]["partition_epoch"] < case["before"]["partition_epoch"]
    assert any("error: Kafka INVALID_UPDATE_VERSION" in d for d in result.differences)
    # shrunk: one replica, the simplest brokers, nothing drawn that the bug does not need
    assert len(case["before"]["replicas"]) <= 2 and case["before"]["adding"] == []
    assert all(b.get("epoch", 100) % 10 == 0 for b in case["brokers"].values())


@needs_oracle
def test_a_printed_case_runs_as_a_conformance_case(
    kafka: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the run prints is a case the conformance command takes: with the seeded bug it
    fails, without it it passes."""
    rules = importlib.import_module("kafkarep.rules.elections")
    off = rules.election_needed._replace(check=lambda m, r: True)
    monkeypatch.setattr(rules, "GUARDS", (rules.election_type_supported, off))
    case = differential.run_area(kafka, "elections", 2000, 0).disagreement
    assert case is not None
    path = tmp_path / "found.json"
    path.write_text(json.dumps([case]))
    assert main(["conform", str(path)]) == 1
    monkeypatch.undo()
    assert main(["conform", str(path)]) == 0


@needs_oracle
def test_the_cli_prints_the_summary_last(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["differential", "--cases", "60", "--area", "elections", "--seed", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "differential: 60 agreed, 0 disagreed"


@needs_oracle
def test_progress_lines_off_a_terminal_and_finished_areas_survive_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kafkarep.cli import differential as command

    monkeypatch.setattr(command, "PROGRESS_SECONDS", 0.0)
    real = differential.run_area

    def second_area_interrupted(oracle: Any, area: str, *args: Any) -> Any:
        if area == "reassignment":
            raise KeyboardInterrupt
        return real(oracle, area, *args)

    monkeypatch.setattr(differential, "run_area", second_area_interrupted)
    argv = ["differential", "--cases", "30", "--area", "elections", "--area", "reassignment"]
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "of 60 cases" in captured.err and "interrupted: 1 of 2 areas done" in captured.err
    out = captured.out.splitlines()
    assert out[0].startswith("elections          agrees: 30 agreed")
    assert out[-1] == "differential: 30 agreed, 0 disagreed"


def test_without_java_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(oracle.shutil, "which", lambda tool: None)
    assert main(["differential", "--cases", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "java is not installed" in err[0]


def test_an_unknown_release_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["differential", "--kafka", "2.8"]) == 2
    assert "unknown kafka_version '2.8'" in capsys.readouterr().err


def test_kafkas_replies_read_as_answers() -> None:
    """The oracle's reply vocabulary (no JVM needed): records become broker registrations."""
    uuid = "aW5jAAAAAAEAAAAAAAAABQ"  # the harness's incarnation 4 of broker 1
    assert oracle.incarnation(uuid) == 4
    reply = {
        "id": "x",
        "outcome": "unchanged",
        "error": None,
        "records": [
            {"type": "BrokerRegistrationChangeRecord", "brokerId": 3, "fenced": 1},
            {"type": "BrokerRegistrationChangeRecord", "brokerId": 2, "inControlledShutdown": 1},
        ],
    }
    assert oracle.answer(reply) == {
        "outcome": "unchanged",
        "error": None,
        "brokers": {"3": {"fenced": True}, "2": {"shutting_down": True}},
    }
    assert oracle.answer({"id": "x", "unsupported": "no such version"}) is None
    with pytest.raises(oracle.OracleError):
        oracle.answer({"id": "x", "harness_error": "NullPointerException"})
    assert json.dumps(reply)
