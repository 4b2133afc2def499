"""The explorer's work dir: a run killed with SIGKILL in the middle resumes with `--resume` to
the counts, depth, verdicts and traces of an uninterrupted run, with any number of workers;
a work dir that is not the run's is refused in one line (exit 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.properties import select
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


def test_the_saved_level_is_the_last_completed_one(tmp_path: Path) -> None:
    cfg = load_model(REASSIGNMENT)
    work = tmp_path / "work"
    stopped = Explorer(cfg, select(cfg.check.properties), Limits(max_depth=5), workdir=work).run()
    assert stopped.stop_reason == "depth limit 5"
    manifest = json.loads((work / "manifest.json").read_text())
    assert (manifest["depth"], manifest["distinct"]) == (5, stopped.distinct_states)
    assert [p.name for p in work.glob("level-*")] == ["level-00005"]
    assert not list(work.glob(".level-*"))  # nothing half-written left behind
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
    Explorer(cfg, select(cfg.check.properties), Limits(max_depth=3), workdir=work).run()
    resume = ("--workdir", str(work), "--resume")

    assert "another model sha256" in refused(tmp_path, capsys, *resume, str(MUTATION))
    nothing = ("--workdir", str(tmp_path / "nothing"), "--resume")
    assert "manifest.json not found" in refused(tmp_path, capsys, *nothing, str(REASSIGNMENT))
    assert "needs --workdir" in refused(tmp_path, capsys, "--resume", str(REASSIGNMENT))

    part = next((work / "level-00003").glob("part-*.pkl"))
    part.write_bytes(part.read_bytes()[:-10])  # truncated: the manifest records its size
    message = refused(tmp_path, capsys, *resume, str(REASSIGNMENT))
    assert str(part) in message and "not the size the manifest records" in message

    manifest = work / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"engine": "explorer"', '"engine": "spark"'))
    assert "run of the spark engine" in refused(tmp_path, capsys, *resume, str(REASSIGNMENT))
    manifest.write_text("{not json")
    assert f"cannot read {manifest}" in refused(tmp_path, capsys, *resume, str(REASSIGNMENT))
