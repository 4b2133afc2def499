"""The Spark engine: the explorer's breadth-first search, level by level on Apache Spark.

`kafkarep check MODEL --engine spark [--master URL] [--partitions N] [--workdir DIR] [--resume]`

The states of a level and the seen set are split over N partitions by fingerprint. The executors
expand the states with the model's own `successors`, evaluate the same property clauses and keep
the fingerprints not seen before, each with its smallest key (parent position, action index),
which is the local explorer's choice among duplicate successors (`spark_tasks` has the stages of
a level). The driver sorts each level's keys into the level's parent links, so the distinct
count, the depth, the verdicts and the shortest counterexamples are the local engine's, and the
traces are rebuilt from the links on the driver.

Masters: embedded `local[*]` by default; `local-cluster[...]`, `spark://host:7077` or any other
master URL otherwise (the engine ships its own code to the executors). `local[N]` runs with four
attempts per task (`local[N,4]`), as a cluster does, so a failed task is retried there too.

The work dir (`--workdir`, else a temporary one) holds the parent links, one pair of NumPy
files per level. With `--workdir` the executors also write each partition's outcome of the last
level (its seen set, its states of the level before, its keys of the level), and the driver then
`manifest.json` (the counts, violations and level so far), so `--resume` continues a killed run
from its last complete level to the same final counts.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pyspark import StorageLevel

from kafkarep.common.exit_codes import UsageError
from kafkarep.common.failpoints import reach
from kafkarep.engines import checkpoint
from kafkarep.engines import spark_tasks as tasks
from kafkarep.engines.kernel import Totals, finish, stop_reason
from kafkarep.engines.links import ParentLinks
from kafkarep.engines.results import Discovery, Exploration, Limits, Progress
from kafkarep.engines.spark_context import first_line, spark_context
from kafkarep.engines.spark_tasks import ACTION_BITS, ACTION_MASK, Task
from kafkarep.model.config import ModelConfig


def explore(
    cfg: ModelConfig, options: Any, progress: Callable[[Progress], None] | None
) -> Exploration:
    """The engine entry point (kafkarep.engines.registry.ENGINES["spark"])."""
    args = dict(options.engine_args)
    workdir: Path | None = args.get("workdir")
    if args.get("resume") and workdir is None:
        raise UsageError("--resume needs --workdir DIR: the work dir of the run to resume")
    limits = options.limits or Limits(
        cfg.check.max_states, cfg.check.max_depth, cfg.check.max_seconds
    )
    symmetry = cfg.check.symmetry if options.symmetry is None else options.symmetry
    run = SparkRun(
        spark_context(args.get("master")),
        cfg,
        limits,
        symmetry,
        stop_when_found=[name for name, _ in cfg.expect.violates],
        progress=progress,
        partitions=int(args.get("partitions") or 0),
        workdir=workdir,
        resume=bool(args.get("resume")),
    )
    return run.run()


# --- one run ---------------------------------------------------------------------------------


class SparkRun:
    def __init__(
        self,
        sc: Any,
        cfg: ModelConfig,
        limits: Limits,
        symmetry: bool,
        stop_when_found: list[str],
        progress: Callable[[Progress], None] | None,
        partitions: int = 0,
        workdir: Path | None = None,
        resume: bool = False,
    ) -> None:
        self.sc = sc
        self.cfg = cfg
        self.limits = limits
        self.symmetry = symmetry
        self.stop_when_found = set(stop_when_found)
        self.progress = progress
        self.requested_partitions = partitions
        self.partitions = partitions or int(sc.defaultParallelism)
        self.keep = workdir is not None  # a named work dir keeps the last level, for --resume
        self.workdir = (
            Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="kafkarep-spark-"))
        )
        self.resume = resume
        self.fault = os.environ.get(tasks.FAULT_ENV, "")
        self.deadline = 0.0
        self.cached: list[Any] = []  # RDDs and broadcasts to release
        self.cpu = {"materialize": 0.0, "expand": 0.0, "decide": 0.0}  # tasks' CPU seconds

    def run(self) -> Exploration:
        try:
            return self._run()
        except UsageError:
            raise
        except Exception as error:
            if error.__class__.__name__ == "Py4JJavaError":
                bad = bad_input(str(error))  # a user's property clause that raised, say
                if bad is not None:
                    raise UsageError(bad) from None
                raise RuntimeError(f"Spark job failed: {first_line(error)}") from None
            raise
        finally:
            self._release(*list(self.cached))
            if not self.keep:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def _task(self, level: int, violated: Any, reached: Any) -> Task:
        return Task(
            self.cfg,
            self.partitions,
            self.symmetry,
            level,
            self.deadline,
            frozenset(violated),
            frozenset(reached),
            str(self.workdir),
            self.keep,
            self.fault,
        )

    def _cache(self, item: Any) -> Any:
        """Keep an RDD (or a broadcast) until `_release`."""
        if hasattr(item, "persist"):
            item.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(item)
        return item

    def _release(self, *items: Any) -> None:
        for item in items:
            if item is not None and item in self.cached:
                self.cached.remove(item)
                with contextlib.suppress(Exception):
                    item.destroy() if hasattr(item, "destroy") else item.unpersist()

    def _run(self) -> Exploration:
        saved = (self._load_manifest() if self.resume else None) or {}
        sc, limits, P = self.sc, self.limits, self.partitions
        start = time.monotonic()
        self.deadline = time.time() + limits.max_seconds if limits.max_seconds else 0.0
        violations: dict[str, Discovery] = {}
        reached: dict[str, Discovery] = {}
        earlier = 0.0  # seconds spent by the run this one resumes
        decided: Any = None  # the cached outcome of the last level's job
        winners: Any = None  # the broadcast keys of the level to materialize, and their owners
        decided_winners: Any = None  # the broadcast `decided` was computed with (for recovery)
        if saved:
            depth, distinct, generated = saved["depth"], saved["distinct"], saved["generated"]
            level_size, earlier = saved["level_size"], saved["seconds"]
            violations = checkpoint.discoveries(saved["violations"])
            reached = checkpoint.discoveries(saved["reached"])
            links = ParentLinks(self.workdir / "links", levels=depth)
            decided = self._cache(
                sc.parallelize(range(P), P).map(partial(tasks.load, str(self.workdir), depth))
            )
            keys, owner = _level_keys(decided.mapPartitionsWithIndex(tasks.summary).collect())
            winners = self._cache(sc.broadcast((keys, owner)))
        else:
            self._clear_workdir()
            links = ParentLinks(self.workdir / "links")
            depth, distinct, generated, level_size = 0, 1, 1, 1
        reason = "exhausted"
        while True:
            # One Spark job: materialize level `depth`, check it, expand it, decide the next.
            task = self._task(depth, violations, reached)
            if decided is None:
                stage1 = sc.parallelize([0], 1).flatMap(partial(tasks.seed, task))
            else:
                stage1 = decided.mapPartitionsWithIndex(partial(tasks.materialize, task, winners))
            level = stage1.partitionBy(P, tasks.identity)
            expanding = not (
                (limits.max_depth and depth >= limits.max_depth)
                or (limits.max_states and distinct >= limits.max_states)
            )
            outcome: list[tuple[int, np.ndarray, tuple[tasks.Expanded, ...], float]] = []
            if expanding:
                following = self._cache(
                    level.mapPartitionsWithIndex(partial(tasks.expand, task))
                    .partitionBy(P, tasks.identity)
                    .mapPartitionsWithIndex(partial(tasks.decide, task))
                )
                outcome = following.mapPartitionsWithIndex(tasks.summary).collect()
                reach("expanded", depth + 1)
                expanded = [e for _, _, part, _ in outcome for e in part]
                for _, _, part, deciding in outcome:
                    self.cpu["decide"] += deciding
                    for e in part:
                        self.cpu["materialize"] += e.seconds[0]
                        self.cpu["expand"] += e.seconds[1]
                found = tasks.merge_found(e.violations for e in expanded)
                self._release(decided, decided_winners)
                decided, decided_winners = following, winners
            else:
                expanded = []
                found = tasks.merge_found(level.mapPartitions(tasks.violations).collect())
            self._record(violations, found, depth, links)
            # the explorer's end of a level, then its checks before expanding the next one
            if depth > 0 and self.progress:
                seconds = earlier + time.monotonic() - start
                self.progress(Progress(distinct, generated, depth, level_size, seconds))
            if depth > 0 and self.deadline and time.time() > self.deadline:
                reason = f"time limit {limits.max_seconds:g}s"
                break
            stop = stop_reason(limits, depth, distinct, self.stop_when_found, violations)
            if stop:
                reason = stop
                break
            generated += sum(e.generated for e in expanded)
            self._reach(reached, expanded, depth, links)
            if any(e.timed_out for e in expanded):
                reason = f"time limit {limits.max_seconds:g}s"
                break
            keys, owner = _level_keys(outcome)
            if not keys.size:
                break
            depth += 1
            distinct += int(keys.size)
            level_size = int(keys.size)
            links.add_level(keys >> ACTION_BITS, keys & ACTION_MASK)
            reach("linked", depth)
            winners = self._cache(sc.broadcast((keys, owner)))
            if self.keep:
                self._save_manifest(
                    {
                        "depth": depth,
                        "distinct": distinct,
                        "generated": generated,
                        "level_size": level_size,
                        "seconds": earlier + time.monotonic() - start,
                        "violations": checkpoint.plain(violations),
                        "reached": checkpoint.plain(reached),
                    }
                )
        seconds = earlier + time.monotonic() - start
        return finish(
            Totals(distinct, generated, depth, seconds, reason, violations, reached),
            self.progress,
            int(sc.defaultParallelism),
            8 * distinct,
            links.bytes_on_disk(),
            (
                ("master", sc.master),
                ("partitions", P),
                ("task_cpu_seconds", {k: round(v, 3) for k, v in self.cpu.items()}),
            ),
        )

    @staticmethod
    def _record(
        violations: dict[str, Discovery], found: tasks.Found, depth: int, links: ParentLinks
    ) -> None:
        for name, (position, witness) in sorted(found.items()):
            if name not in violations:
                violations[name] = Discovery(name, depth, links.path_to(depth, position), witness)

    @staticmethod
    def _reach(
        reached: dict[str, Discovery],
        expanded: list[tasks.Expanded],
        depth: int,
        links: ParentLinks,
    ) -> None:
        hits: dict[str, int] = {}
        for e in expanded:
            for name, key in e.sometimes.items():
                hits[name] = min(hits.get(name, key), key)
        for name, key in sorted(hits.items()):
            path = links.path_to(depth, key >> ACTION_BITS) + (key & ACTION_MASK,)
            reached[name] = Discovery(name, depth + 1, path, None)

    # --- the work dir (`checkpoint.py`) -----------------------------------------------------

    def _identity(self) -> dict[str, Any]:
        return checkpoint.identity(self.cfg, "spark", self.symmetry, partitions=self.partitions)

    def _clear_workdir(self) -> None:
        if self.keep:
            checkpoint.clear(self.workdir)

    def _save_manifest(self, counts: dict[str, Any]) -> None:
        """Make the level just decided (its partitions are written by the decide tasks) the one
        to resume from."""
        checkpoint.commit(self.workdir, counts["depth"], None, {**self._identity(), **counts})

    def _load_manifest(self) -> dict[str, Any] | None:
        """The newest saved level that verifies (`checkpoint.saved_level`), with a partition
        file for each partition it was saved with; None if the run stopped before saving one."""
        saved = checkpoint.saved_level(self.workdir, self._identity(), ("level_size", "partitions"))
        if saved is None:
            return None
        if self.requested_partitions and self.requested_partitions != saved["partitions"]:
            raise UsageError(
                f"--resume: the run in {self.workdir} used {saved['partitions']} partitions"
            )
        self.partitions = int(saved["partitions"])
        folder = tasks.level_dir(str(self.workdir), int(saved["depth"]))
        missing = [p for p in range(self.partitions) if f"part-{p:05d}.pkl" not in saved["files"]]
        if missing:
            raise UsageError(f"--resume: {folder} lacks the files of partitions {missing}")
        return saved


def bad_input(text: str) -> str | None:
    """The message of a `UsageError` a task raised (a user's property clause that raised), from
    the text of the error that crossed from the executor through the JVM; None when none did."""
    found = re.findall(r"^(?:\w+\.)*UsageError: (.+)$", text, flags=re.MULTILINE)
    return found[-1].strip() if found else None


def _level_keys(outcome: list[tuple[int, np.ndarray, Any, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The new level's keys in order (a state's position is its key's rank), and the partition
    that owns each state."""
    if not outcome:
        return np.empty(0, np.int64), np.empty(0, np.int32)
    keys = np.concatenate([row[1] for row in outcome])
    owner = np.concatenate([np.full(row[1].size, row[0], dtype=np.int32) for row in outcome])
    order = np.argsort(keys, kind="stable")
    return keys[order], owner[order]
