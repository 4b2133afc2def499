"""Every input file is checked at the boundary: a problem is one line naming the file, the path
inside it and the problem, exit code 2 (one example per file kind). The trace check follows the
state types, so every state the model reaches passes it."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.common.exit_codes import UsageError
from kafkarep.common.shape import at
from kafkarep.model.actions import successors
from kafkarep.model.initial import initial_state
from kafkarep.output import itf
from kafkarep.properties.model_files import load_model
from tests.helpers import DATA, ROOT, error_line

MODEL = ROOT / "models" / "mutations" / "hwm_below_min_isr.toml"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("run")
    quiet = ("--quiet", "--workers", "1", "--reports", str(folder))
    assert main(["check", *quiet, "--json", str(folder / "s.json"), str(MODEL)]) == 0
    document: dict[str, Any] = json.loads(
        next(folder.rglob("min_isr_commit.hwm.itf.json")).read_text()
    )
    return document


def test_trace(trace: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trace.itf.json"
    trace["states"][3]["brokers"][0]["replica"] = [1]
    path.write_text(json.dumps(trace))
    assert error_line(capsys, "replay", str(path)).endswith(
        f"{path}: states[3].brokers[0].replica: expected an object, got a list"
    )


def test_trace_metadata(
    trace: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trace.itf.json"
    trace["#meta"]["kafkarep"]["path"] = [0, "3", 2]
    path.write_text(json.dumps(trace))
    assert error_line(capsys, "replay", str(path)).endswith(
        f"{path}: #meta.kafkarep.path[1]: expected an integer, got a string"
    )
    trace["#meta"]["kafkarep"]["path"] = [0, 3]
    path.write_text(json.dumps(trace))
    assert error_line(capsys, "replay", str(path)).endswith(
        f"{path}: states: expected 3 states (the initial one and one per step of "
        "#meta.kafkarep.path), got 4"
    )


def test_conformance_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = json.loads((DATA / "conformance" / "reassignment.json").read_text())[:13]
    cases[12]["before"]["isr"] = "0,1"
    cases[3]["before"]["leader_epoch"] = None
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    message = error_line(capsys, "conform", str(path))
    assert message.endswith(f"{path}: [3].before.leader_epoch: expected an integer, got null")
    cases[3]["before"]["leader_epoch"] = 0
    path.write_text(json.dumps(cases))
    assert error_line(capsys, "conform", str(path)).endswith(
        f"{path}: [12].before.isr: expected a list of broker ids, got a string"
    )
    cases[12]["before"]["isr"] = [0]
    cases[12].setdefault("config", {})["elr_enable"] = True  # misspelt: not silently ignored
    path.write_text(json.dumps(cases))
    assert error_line(capsys, "conform", str(path)).endswith(
        f"{path}: [12].config.elr_enable: unknown key; known: elr_enabled, "
        "leader_epoch_bump_on_isr_shrink, metadata_version, min_isr, unclean_leader_election, "
        "use_last_known_leader"
    )


def test_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "model.toml"
    path.write_text(MODEL.read_text().replace("fences = 1", 'fences = "1"'))
    assert error_line(capsys, "check", str(path)).endswith(
        f"{path}: [faults] fences must be an integer"
    )


def test_metadata_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (DATA / "metadata-logs" / "elr_kill9_all.txt").read_text().splitlines()
    number = next(n for n, line in enumerate(lines, 1) if "PARTITION_CHANGE_RECORD" in line)
    lines[number - 1] = lines[number - 1].replace('"isr":[1,2]', '"isr":"1,2"')
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines) + "\n")
    assert error_line(capsys, "validate-log", str(path)).endswith(
        f"{path}:{number}: payload.data.isr: expected a list of broker ids, got a string"
    )


def test_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"models": [{"model": "m.toml", "distinct_states": 3}]}))
    reports = ("--reports", str(tmp_path), "--quiet", "--workers", "1")
    argv = ("suite", *reports, "--baseline", str(baseline), str(MODEL))
    assert error_line(capsys, *argv).endswith(f"{baseline}: models[0].seconds: missing")


def test_work_dir_level_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    run = ("check", "--quiet", "--workers", "1", "--reports", str(tmp_path), "--workdir", str(work))
    main([*run, "--max-depth", "2", str(MODEL)])
    for depth in (2, 1):  # both levels kept, so none to fall back to
        level = work / f"level-{depth:05d}" / "level.json"
        saved = json.loads(level.read_text())
        saved["violations"] = {"min_isr_commit.hwm": [3, [0, -3, 2], None]}
        level.write_text(json.dumps(saved))
    newest = work / "level-00002" / "level.json"
    assert error_line(capsys, *run, "--resume", str(MODEL)).endswith(
        f"--resume: no level in {work} can be resumed from ({newest}: "
        "violations.min_isr_commit.hwm[1][1]: expected an integer >= 0, got -3)"
    )


def test_prove_a_zookeeper_era_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = ROOT / "models" / "zookeeper_unclean.toml"
    assert error_line(capsys, "prove", "--reports", str(tmp_path), str(model)) == (
        f"kafkarep prove: error: {model}: prove does not encode this model: the symbolic engine "
        "encodes the KRaft controller rules only"
    )


@pytest.mark.parametrize(
    "model",
    [
        "kip966_small",
        "reassignment",
        "kip435_plan",
        "zookeeper_unclean",
        "faults/lagging_controller",
        "history/kafka_6880_zombie_replica_fetch",
        "history/kip101_truncation_to_hwm",
        "findings/make_leader_resets_pending_isr",
    ],
)
def test_every_state_passes_the_trace_check(model: str) -> None:
    """The first 300 states of a breadth-first search, as a trace writes them, pass the check
    `kafkarep replay` makes (the check follows the state types; a new type would fail here)."""
    cfg = load_model(ROOT / "models" / f"{model}.toml")
    first = initial_state(cfg)
    queue, seen = deque([first]), {first}
    while queue and len(seen) < 300:
        state = queue.popleft()
        written = json.loads(json.dumps(itf._state(0, state, None)))
        itf._state_shape(written, at("trace", UsageError, "states[0]"))
        for _, after in successors(cfg, state):
            if after not in seen:
                seen.add(after)
                queue.append(after)
