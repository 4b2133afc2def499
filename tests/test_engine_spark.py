"""The Spark engine gives the local explorer's answers: the same distinct and generated counts
(Spark takes every step, as the explorer does with `--no-por`), depth, verdicts and the same
shortest counterexamples (the same paths), on embedded Spark and on a local cluster of separate
executor processes; an injected task failure is retried without changing them, and a run killed
at any phase of a level resumes from its work dir to the same counts.

The default run shares one embedded Spark (local[2]) across this module; the local cluster, the
killed run and the bigger models are `slow` (and `spark`)."""

from __future__ import annotations

import gc
import json
import os
import pickle
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkarep.cli.main import main
from kafkarep.common import failpoints
from kafkarep.common.exit_codes import UsageError
from kafkarep.engines import spark, spark_context, spark_tasks
from kafkarep.engines.expectations import problems
from kafkarep.engines.explorer import explore as explorer_engine
from kafkarep.engines.results import Exploration, Limits, RunOptions
from kafkarep.model.config import ModelConfig
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

pytestmark = pytest.mark.spark

MODELS = ROOT / "models"
LRS = MODELS / "history" / "v35_last_replica_standing.toml"
SMALL = MODELS / "mutations" / "hwm_below_min_isr.toml"  # 3 levels, a seeded bug
SEEDED_6 = MODELS / "mutations" / "elr_keeps_unclean_shutdown.toml"  # a bug of 6 steps
DEEP = MODELS / "zookeeper_unclean_kraft.toml"  # holds, 26 levels of a few hundred states
# Small enough for the default run: full explorations (to the expected violations).
COMPARED = [
    SMALL,
    LRS,
    MODELS / "zookeeper_unclean.toml",
    MODELS / "mutations" / "elr_keeps_unclean_shutdown.toml",
    MODELS / "mutations" / "isr_join_fetch_offset_at_hwm.toml",
]
# The first two in the default tier, the others in the slow one.
DEFAULT_MODELS = [
    m if m in (SMALL, LRS) else pytest.param(m, marks=pytest.mark.slow) for m in COMPARED
]
BIG = 300_000  # models pinned above this (or not pinned) are compared on a bounded run


def outcome(e: Exploration) -> dict[str, Any]:
    """Everything two engines must agree on."""
    return {
        "distinct": e.distinct_states,
        "generated": e.generated_states,
        "depth": e.depth,
        "complete": e.complete,
        "stop": e.stop_reason,
        "violations": {n: (d.depth, d.path, d.witness) for n, d in sorted(e.violations.items())},
        "reached": {n: (d.depth, d.path) for n, d in sorted(e.reached.items())},
    }


def run_explorer(cfg: ModelConfig, limits: Limits | None = None) -> Exploration:
    # Spark takes every step: its generated count is the explorer's without sleep sets
    return explorer_engine(cfg, RunOptions(limits=limits, workers=1, por=False), None)


def run_spark(cfg: ModelConfig, limits: Limits | None = None, **engine: Any) -> Exploration:
    options = RunOptions(engine="spark", limits=limits, engine_args=tuple(engine.items()))
    return spark.explore(cfg, options, None)


@pytest.fixture(scope="module")
def embedded() -> Iterator[Any]:
    sc = spark_context.start_spark("local[2]")
    try:
        yield sc
    finally:
        sc.stop()


def test_a_task_leaves_what_the_worker_keeps_frozen() -> None:
    """PySpark's daemon runs a full `gc.collect()` after every task of a reused worker; a task
    freezes the worker's heap first, so that collection does not walk the caches the worker
    keeps (it cost more CPU than the tasks). The task's own garbage is still freed."""
    gc.unfreeze()
    cfg = load_model(SMALL)
    task = spark_tasks.Task(cfg, 1, False, 0, 0.0, frozenset(), frozenset())
    try:
        out = spark_tasks.seed(task)
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()
        _, chunk = out[0]
        assert isinstance(chunk, spark_tasks.Chunk) and chunk.positions.tolist() == [0]
    finally:
        gc.unfreeze()


class _Broadcast:
    def __init__(self, value: Any) -> None:
        self.value = value


def test_materialize_takes_the_parents_its_worker_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A level's states, expanded by a worker, are the next level's parents: `materialize` in the
    same worker takes them from there instead of unpickling them again, with the same output as
    from the bytes (another worker's case)."""
    cfg = load_model(SMALL)
    task = spark_tasks.Task(cfg, 1, False, 0, 0.0, frozenset(), frozenset(), workdir="run")
    try:
        seeded = spark_tasks.seed(task)
        expanded = spark_tasks.expand(task, 0, seeded)
        (decided,) = spark_tasks.decide(task, 0, expanded)
        keys = np.sort(decided.keys)
        winners = _Broadcast((keys, np.zeros(keys.size, dtype=np.int32)))
        following = task._replace(level=1)
        # another run sharing the work dir and the worker (a suite's next model) misses
        assert spark_tasks._expanded_here(following._replace(cfg=load_model(LRS)), 0) == []
        assert spark_tasks._expanded_here(following._replace(symmetry=True), 0) == []
        unpickled: list[int] = []
        states = spark_tasks._states

        def counted(chunks: Any) -> Any:
            out = states(chunks)
            unpickled.append(len(out))
            return out

        monkeypatch.setattr(spark_tasks, "_states", counted)
        here = spark_tasks.materialize(following, winners, 0, [decided])
        assert unpickled == []  # the parents came from the worker's own expansion
        elsewhere = spark_tasks.materialize(following, winners, 0, [decided])
        assert unpickled == [1]  # taken once: now they come from the bytes
        assert [type(v).__name__ for _, v in here] == [type(v).__name__ for _, v in elsewhere]
        chunks = [v for _, v in here if isinstance(v, spark_tasks.Chunk)]
        again = [v for _, v in elsewhere if isinstance(v, spark_tasks.Chunk)]
        assert [(c.positions.tolist(), pickle.loads(c.states)) for c in chunks] == [
            (c.positions.tolist(), pickle.loads(c.states)) for c in again
        ]
        assert sum(c.positions.size for c in chunks) == keys.size > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("model", DEFAULT_MODELS, ids=lambda p: Path(str(p)).stem)
def test_same_answers_as_the_explorer(embedded: Any, model: Path) -> None:
    cfg = load_model(model)
    expected, found = run_explorer(cfg), run_spark(cfg)
    assert outcome(found) == outcome(expected)
    assert problems(cfg, found) == problems(cfg, expected)
    if cfg.expect.result == "violates":  # a seeded bug is found, with its shortest trace
        assert found.violations
        for name, depth in cfg.expect.violates:
            hits = [d for clause, d in found.violations.items() if clause.startswith(name)]
            assert hits and (depth is None or min(d.depth for d in hits) == depth)
    assert dict(found.details)["master"] == "local[2,4]"


@pytest.mark.parametrize(
    "expect",
    [
        'result = "holds"\nwithin_depth = 5',
        'result = "violates"\nviolates = { leader_candidate_completeness = 6 }\nwithin_depth = 6',
    ],
    ids=["holds-within-5", "violated-at-6"],
)
def test_a_bounded_verdict_is_settled_at_its_bound(
    embedded: Any, tmp_path: Path, expect: str
) -> None:
    """`[expect] within_depth`: Spark stops at the bound with the explorer's count and answers;
    the seeded bug's shortest trace has 6 steps, so the last level (judged, not expanded) is
    where it is found within 6, and nothing is found within 5."""
    text = SEEDED_6.read_text()
    model = tmp_path / "bounded.toml"
    model.write_text(text[: text.index("[expect]")] + f"[expect]\n{expect}\n")
    cfg = load_model(model)
    expected, found = run_explorer(cfg), run_spark(cfg)
    assert outcome(found) == outcome(expected)
    bound = cfg.expect.within_depth
    assert found.depth == bound and found.stop_reason == f"depth limit {bound}"
    assert bool(found.violations) == (cfg.expect.result == "violates")
    assert problems(cfg, found) == problems(cfg, expected) == ()


def test_partition_count_does_not_change_the_answers(embedded: Any) -> None:
    cfg = load_model(SMALL)
    found = run_spark(cfg, partitions=5)
    assert dict(found.details)["partitions"] == 5
    assert outcome(found) == outcome(run_explorer(cfg))


def test_state_and_depth_limits_stop_at_the_same_level(embedded: Any) -> None:
    cfg = load_model(MODELS / "kip966_small.toml")
    for limits in (Limits(max_depth=5), Limits(max_states=400)):
        expected, found = run_explorer(cfg, limits), run_spark(cfg, limits)
        assert not found.complete
        assert outcome(found) == outcome(expected)


def test_cli_summary_exit_codes_and_replayable_traces(
    embedded: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summaries = {}
    for engine in ("explorer", "spark"):
        summary = tmp_path / f"{engine}.json"
        args = ["check", "--quiet", "--engine", engine, "--workers", "1", "--no-por"]
        args += ["--json", str(summary)]
        assert main([*args, "--reports", str(tmp_path / engine), str(SMALL)]) == 0
        summaries[engine] = json.loads(summary.read_text())["models"][0]
    local, distributed = summaries["explorer"], summaries["spark"]
    assert distributed["engine"] == "spark" and distributed["expectations_met"]
    for field in ("distinct_states", "generated_states", "depth", "complete", "stop_reason"):
        assert distributed[field] == local[field]
    lengths = {r["property"]: (r["status"], r["trace_length"]) for r in distributed["results"]}
    assert lengths == {r["property"]: (r["status"], r["trace_length"]) for r in local["results"]}
    trace = next(r["trace_file"] for r in distributed["results"] if r["status"] == "violated")
    assert main(["replay", "--quiet", trace]) == 0

    # an expectation not met (the pinned depth) is exit code 1, as with the explorer
    wrong = tmp_path / "wrong_depth.toml"
    wrong.write_text(SMALL.read_text().replace("min_isr_commit = 3", "min_isr_commit = 4"))
    assert (
        main(["check", "--quiet", "--engine", "spark", "--reports", str(tmp_path), str(wrong)]) == 1
    )
    assert main(["check", "--quiet", "--engine", "spark", "--resume", str(SMALL)]) == 2
    assert "--resume needs --workdir" in capsys.readouterr().err


@pytest.mark.parametrize("stage", ["materialize", "decide"])
def test_failed_task_is_retried_with_the_same_answers(
    embedded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    monkeypatch.setenv(spark_tasks.FAULT_ENV, f"{stage}:1")
    cfg = load_model(SMALL)
    found = run_spark(cfg, workdir=tmp_path)
    attempts = sorted(p.name for p in (tmp_path / "faults").iterdir())
    assert attempts == [f"{stage}-1-attempt0", f"{stage}-1-attempt1"]  # failed, then retried
    assert outcome(found) == outcome(run_explorer(cfg))


def test_resume_continues_a_stopped_run_to_the_same_counts(embedded: Any, tmp_path: Path) -> None:
    cfg = load_model(MODELS / "mutations" / "elr_keeps_unclean_shutdown.toml")
    first = run_spark(cfg, Limits(max_depth=3), workdir=tmp_path)
    assert first.stop_reason == "depth limit 3"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["depth"] == 3 and manifest["distinct"] == first.distinct_states
    assert sorted(p.name for p in tmp_path.glob("level-*")) == ["level-00002", "level-00003"]
    assert sorted(manifest["files"]) == [f"part-{p:05d}.pkl" for p in range(2)]
    resumed = run_spark(cfg, workdir=tmp_path, resume=True)
    assert outcome(resumed) == outcome(run_explorer(cfg))

    with pytest.raises(UsageError, match="another model sha256"):
        run_spark(load_model(SMALL), workdir=tmp_path, resume=True)
    with pytest.raises(UsageError, match="no such work dir"):
        run_spark(cfg, workdir=tmp_path / "nothing", resume=True)


# --- slow: separate processes, bigger models ------------------------------------------------


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`kafkarep check ...` in its own process group (so a test can kill Spark with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "kafkarep", "check", "--quiet", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str], seconds: float = 600) -> int:
    try:
        _, err = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    assert process.returncode in (0, 1), err[-2000:]
    return process.returncode


@pytest.mark.slow
def test_local_cluster_with_a_failed_task(tmp_path: Path) -> None:
    """Two executor JVMs with their own Python workers: states, fingerprints and the code
    itself (shipped as a zip) cross process boundaries; a task fails once on an executor."""
    summary = tmp_path / "summary.json"
    process = cli(
        "--engine",
        "spark",
        "--master",
        "local-cluster[2,1,1024]",
        "--workdir",
        str(tmp_path / "work"),
        "--reports",
        str(tmp_path),
        "--json",
        str(summary),
        str(LRS),
        env={spark_tasks.FAULT_ENV: "expand:2"},
    )
    assert finish(process) == 0
    report = json.loads(summary.read_text())["models"][0]
    assert report["engine"] == "spark" and report["details"]["master"].startswith("local-cluster")
    expected = run_explorer(load_model(LRS))
    assert report["distinct_states"] == expected.distinct_states
    assert report["generated_states"] == expected.generated_states
    assert report["depth"] == expected.depth
    lengths = {r["property"]: r["trace_length"] for r in report["results"] if r["trace_length"]}
    assert lengths == {
        **{n: d.depth for n, d in expected.violations.items()},
        **{n: d.depth for n, d in expected.reached.items()},
    }
    faults = sorted(p.name for p in (tmp_path / "work" / "faults").iterdir())
    assert faults == ["expand-2-attempt0", "expand-2-attempt1"]


PHASES = ("expanded", "linked", "saved", "staged", "named", "manifest")


def kill_points(count: int, levels: int, seed: int) -> list[tuple[str, int]]:
    """`count` distinct (failpoint, level), every phase among the first ones."""
    rng = random.Random(seed)
    everything = [(p, level) for p in PHASES for level in range(1, levels + 1)]
    rng.shuffle(everything)
    first = [next(point for point in everything if point[0] == p) for p in PHASES]
    return (first + [point for point in everything if point not in first])[:count]


@pytest.mark.slow
def test_killed_at_20_random_failpoints_resumes_to_the_same_counts(
    embedded: Any, tmp_path: Path
) -> None:
    """SIGKILL to the driver, its JVM and the Python workers (kafkarep/common/failpoints.py) at
    20 points across levels and phases, a decide task's partition file among them; each run
    resumes, on the embedded Spark, to the uninterrupted counts."""
    expected = run_explorer(load_model(DEEP))
    assert expected.complete
    for phase, level in kill_points(20, levels=expected.depth - 1, seed=3):
        work, scratch = tmp_path / f"{phase}-{level}", tmp_path / f"scratch-{phase}-{level}"
        scratch.mkdir()  # what the killed run leaves behind
        process = cli(
            *("--engine", "spark", "--workdir", str(work), "--reports", str(tmp_path), str(DEEP)),
            env={
                "TMPDIR": str(scratch),
                "SPARK_LOCAL_DIRS": str(scratch),
                "SPARK_SUBMIT_OPTS": f"-Djava.io.tmpdir={scratch}",
                failpoints.ENV: f"{phase}:{level}",
            },
        )
        _, err = process.communicate(timeout=300)
        assert process.returncode == -signal.SIGKILL, (phase, level, err[-2000:])
        resumed = run_spark(load_model(DEEP), workdir=work, resume=True)
        assert outcome(resumed) == outcome(expected), (phase, level)


def every_other_model() -> list[Path]:
    return sorted(p for p in MODELS.rglob("*.toml") if p not in COMPARED)


@pytest.mark.slow
@pytest.mark.parametrize("model", every_other_model(), ids=lambda p: p.stem)
def test_same_answers_on_every_model(embedded: Any, model: Path) -> None:
    # Spark leaves a model's liveness out (docs/liveness.md); the safety answers are compared
    cfg = load_model(model)
    cfg = cfg._replace(check=cfg.check._replace(liveness=False))
    pinned = cfg.expect.distinct_states or 0
    limits = Limits(max_states=50_000) if not pinned or pinned > BIG else None
    expected, found = run_explorer(cfg, limits), run_spark(cfg, limits)
    assert outcome(found) == outcome(expected)
    assert problems(cfg, found) == problems(cfg, expected)
