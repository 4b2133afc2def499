"""The explorer's work dir: a run killed with SIGKILL in the middle (at a random moment, or at a
failpoint of any phase of a level's save) resumes with `--resume` to the counts, depth, verdicts
and traces of an uninterrupted run, with any number of workers; a damaged or half-written level
falls back to the level before; a work dir that is not the run's, or has no whole level, is
refused in one line (exit 2)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkarep.cli.main import main
from kafkarep.common import failpoints
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.graph import GraphFiles
from kafkarep.engines.links import ParentLinks
from kafkarep.engines.results import Limits
from kafkarep.properties import of_model
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = ROOT / "models"
REASSIGNMENT = MODELS / "reassignment.toml"  # 19,746 states over 25 levels, complete
MUTATION = MODELS / "mutations" / "alter_partition_partition_epoch.toml"  # a violation at 15


def check(model: Path, out: Path, *flags: str) -> dict[str, Any]:
    """`kafkarep check` in this process; the model's summary and its trace files' contents."""
    summary = out / "summary.json"
    code = main(
        ["check", "--quiet", "--reports", str(out), "--json", str(summary), *flags, str(model)]
    )
    assert code == 0
    report: dict[str, Any] = json.loads(summary.read_text())["models"][0]
    traces = {
        r["property"]: json.loads(Path(r["trace_file"]).read_text())["states"]
        for r in report["results"]
        if r["trace_file"]
    }
    return {
        "counts": (report["distinct_states"], report["generated_states"], report["depth"]),
        "complete": report["complete"],
        "results": [(r["property"], r["status"], r["trace_length"]) for r in report["results"]],
        "traces": traces,
    }


def killed(model: Path, work: Path, at_depth: int, workers: int) -> int:
    """Start `kafkarep check --workdir` in its own process group and SIGKILL it (the explorer
    and its worker processes) once a level at or past `at_depth` is saved; that level's depth."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkarep", "check", "--quiet", "--workers", str(workers)]
        + ["--workdir", str(work), "--reports", str(work.parent / "killed"), str(model)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    manifest = work / "manifest.json"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if manifest.is_file() and json.loads(manifest.read_text())["depth"] >= at_depth:
                break
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    depth: int = json.loads(manifest.read_text())["depth"]
    return depth


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "at_depth", "workers"),
    [(REASSIGNMENT, 8, 2), (MUTATION, 6, 1)],
    ids=["complete-2-workers-resumed-by-1", "violation-1-worker-resumed-by-2"],
)
def test_a_killed_run_resumes_to_the_uninterrupted_result(
    tmp_path: Path, model: Path, at_depth: int, workers: int
) -> None:
    expected = check(model, tmp_path / "straight", "--workers", "1")
    work = tmp_path / "work"
    depth = killed(model, work, at_depth, workers)
    assert depth >= at_depth
    resumed_with = str(3 - workers)  # another worker count: the level is shared out again
    resumed = check(
        model, tmp_path / "resumed", "--workdir", str(work), "--resume", "--workers", resumed_with
    )
    assert resumed == expected
    assert expected["traces"] or expected["complete"]  # a violation's trace, or a verdict


def test_the_saved_levels_are_the_last_two_completed_ones(tmp_path: Path) -> None:
    cfg = load_model(REASSIGNMENT)
    work = tmp_path / "work"
    stopped = Explorer(cfg, of_model(cfg), Limits(max_depth=5), workdir=work).run()
    assert stopped.stop_reason == "depth limit 5"
    manifest = json.loads((work / "manifest.json").read_text())
    assert (manifest["depth"], manifest["distinct"]) == (5, stopped.distinct_states)
    assert manifest == json.loads((work / "level-00005" / "level.json").read_text())
    assert sorted(p.name for p in work.glob("level-*")) == ["level-00004", "level-00005"]
    assert not list(work.glob(".level-*"))  # nothing half-written left behind
    assert sorted(manifest["files"]) == ["part-00000.pkl", "seen.npy"]
    saved = sum(count for _, count, _ in manifest["parts"])
    links = work / "links"
    assert sorted(p.name for p in links.glob("parents-*")) == [
        f"parents-{level:05d}.npy" for level in range(1, 6)
    ]
    assert saved == len(np.load(links / "parents-00005.npy"))


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["check", "--quiet", "--reports", str(tmp_path / "r"), *args])
    assert code == 2
    err: str = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_a_work_dir_that_is_not_the_runs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = load_model(REASSIGNMENT)
    work = tmp_path / "work"
    Explorer(cfg, of_model(cfg), Limits(max_depth=3), workdir=work).run()
    resume = ("--workdir", str(work), "--resume")

    assert "another model sha256" in refused(tmp_path, capsys, *resume, str(MUTATION))
    nothing = ("--workdir", str(tmp_path / "nothing"), "--resume")
    assert "no such work dir" in refused(tmp_path, capsys, *nothing, str(REASSIGNMENT))
    (tmp_path / "empty").mkdir()
    empty = ("--workdir", str(tmp_path / "empty"), "--resume")
    assert "holds no saved level" in refused(tmp_path, capsys, *empty, str(REASSIGNMENT))
    assert "needs --workdir" in refused(tmp_path, capsys, "--resume", str(REASSIGNMENT))

    level = work / "level-00003" / "level.json"
    level.write_text(level.read_text().replace('"engine": "explorer"', '"engine": "spark"'))
    assert "run of the spark engine" in refused(tmp_path, capsys, *resume, str(REASSIGNMENT))

    for depth in (2, 3):  # both saved levels damaged: nothing whole to resume from
        part = next((work / f"level-{depth:05d}").glob("part-*.pkl"))
        part.write_bytes(part.read_bytes()[:-10])
    level.write_text("{not json")
    message = refused(tmp_path, capsys, *resume, str(REASSIGNMENT))
    assert f"no level in {work} can be resumed from ({level} is unreadable)" in message


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return check(REASSIGNMENT, tmp_path_factory.mktemp("straight"))


def stopped_at_depth_5(tmp_path: Path) -> Path:
    cfg = load_model(REASSIGNMENT)
    work = tmp_path / "work"
    Explorer(cfg, of_model(cfg), Limits(max_depth=5), workdir=work).run()
    return work


def test_a_damaged_level_falls_back_to_the_one_before(
    uninterrupted: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = uninterrupted
    work = stopped_at_depth_5(tmp_path)
    part = work / "level-00005" / "part-00000.pkl"
    part.write_bytes(part.read_bytes()[:-1] + b"x")  # same size, other bytes
    capsys.readouterr()
    assert check(REASSIGNMENT, tmp_path / "resumed", "--workdir", str(work), "--resume") == (
        expected
    )
    note = capsys.readouterr().err
    assert f"level 5 is damaged: {part} is not the file it saved; resuming from level 4" in note


def test_a_missing_manifest_resumes_from_the_newest_whole_level(
    uninterrupted: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = uninterrupted
    work = stopped_at_depth_5(tmp_path)
    (work / "manifest.json").unlink()
    (work / "level-00005" / "level.json").unlink()  # killed before it named level 5
    capsys.readouterr()
    assert check(REASSIGNMENT, tmp_path / "resumed", "--workdir", str(work), "--resume") == (
        expected
    )
    level = work / "level-00005" / "level.json"
    note = capsys.readouterr().err
    assert f"level 5 is incomplete: {level} is missing; resuming from level 4" in note


def test_a_run_stopped_before_its_first_level_starts_again(
    uninterrupted: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    (work / "links").mkdir(parents=True)  # what the run had made when it was killed
    capsys.readouterr()
    resumed = check(REASSIGNMENT, tmp_path / "resumed", "--workdir", str(work), "--resume")
    assert resumed == uninterrupted
    assert f"{work} holds no level yet; starting from the initial state" in capsys.readouterr().err


# --- killed at failpoints (kafkarep/common/failpoints.py) ----------------------------------------

PHASES = ("expanded", "linked", "saved", "staged", "named", "manifest")
LEVELS = 24  # REASSIGNMENT's levels that are expanded into a next one


def kill_points(count: int, seed: int) -> list[tuple[str, int, int]]:
    """`count` distinct (failpoint, level, workers), every phase among the first ones."""
    rng = random.Random(seed)
    everything = [(p, level) for p in PHASES for level in range(1, LEVELS + 1)]
    rng.shuffle(everything)
    first = [next(point for point in everything if point[0] == p) for p in PHASES]
    rest = [point for point in everything if point not in first]
    return [(p, level, 1 + i % 2) for i, (p, level) in enumerate((first + rest)[:count])]


def killed_at(model: Path, work: Path, point: str, workers: int) -> None:
    """`kafkarep check --workdir` in its own process group, armed to die at `point`."""
    process = subprocess.run(
        [sys.executable, "-m", "kafkarep", "check", "--quiet", "--workers", str(workers)]
        + ["--workdir", str(work), "--reports", str(work.parent / "killed"), str(model)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), failpoints.ENV: point},
        capture_output=True,
        start_new_session=True,
        timeout=300,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr[-2000:]


def resumes_after_kills(
    points: list[tuple[str, int, int]], expected: dict[str, Any], tmp_path: Path
) -> None:
    for phase, level, workers in points:
        work = tmp_path / f"{phase}-{level}"
        killed_at(REASSIGNMENT, work, f"{phase}:{level}", workers)
        resumed = check(
            REASSIGNMENT,
            work.parent / f"resumed-{phase}-{level}",
            "--workdir",
            str(work),
            "--resume",
            "--workers",
            str(3 - workers),
        )
        assert resumed == expected, (phase, level, workers)


@pytest.mark.slow
def test_killed_at_a_failpoint_of_each_phase_resumes(
    uninterrupted: dict[str, Any], tmp_path: Path
) -> None:
    resumes_after_kills(kill_points(len(PHASES), seed=1), uninterrupted, tmp_path)


@pytest.mark.slow
def test_killed_at_24_random_failpoints_resumes(
    uninterrupted: dict[str, Any], tmp_path: Path
) -> None:
    resumes_after_kills(kill_points(24, seed=2), uninterrupted, tmp_path)


def test_a_write_killed_half_way_is_dropped_on_resume(tmp_path: Path) -> None:
    """A kill while an array was being written aside leaves `.NAME.tmp.npy` in the parent links'
    and the liveness graph's folders; resuming drops it, and the whole files of the levels kept
    stay (once, such a leftover made `--resume` fail with an internal error)."""
    links_dir, graph_dir = tmp_path / "links", tmp_path / "graph"
    links = ParentLinks(links_dir)
    links.add_level(np.zeros(1, np.int64), np.zeros(1, np.int32))
    GraphFiles(graph_dir).add_level(1, np.zeros(1, np.uint64), np.zeros((1, 2), np.int64))
    for folder, name in ((links_dir, "parents-00002.npy"), (graph_dir, "states-00002.npy")):
        np.save(folder / f".{name}.tmp.npy", np.zeros(1))
    ParentLinks(links_dir, levels=1)
    GraphFiles(graph_dir, levels=1)
    assert sorted(f.name for f in links_dir.iterdir()) == ["actions-00001.npy", "parents-00001.npy"]
    assert sorted(f.name for f in graph_dir.iterdir()) == ["masks-00001.npy", "states-00001.npy"]
