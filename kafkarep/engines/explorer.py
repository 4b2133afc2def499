"""The explicit-state explorer: breadth-first, deterministic, shortest counterexamples.

The search goes level by level from the initial state, over every enabled action in `FAMILIES`
order. A state is known by its stable 64-bit fingerprint. Workers (one in-process, or one process
per core) hold contiguous shares of the current level, expand them and keep the successors that
are not yet seen. The explorer then decides, for every new fingerprint, which occurrence the level
keeps: the one with the smallest (parent position, action index), which is exactly the one a
single sequential breadth-first search keeps first. So every worker count gives the same counts,
the same next level in the same order, the same parent links and so the same traces.

Memory stays lean: the seen set is a sorted NumPy array of fingerprints (8 bytes a state), the
parent links go to one file per level, and only the current and next levels are held as states.
`always` clauses are evaluated on every new state, `sometimes` properties on every step until
reached. The search stops when the space is exhausted (complete), at a limit (incomplete, with the
reason), or at the end of the level where every expected violation has been found.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kafkarep import properties
from kafkarep.common.exit_codes import UsageError
from kafkarep.common.failpoints import reach
from kafkarep.engines import checkpoint, liveness
from kafkarep.engines.graph import GraphFiles
from kafkarep.engines.kernel import ACTION_BITS, Sleep, Totals, clauses, finish, stop_reason
from kafkarep.engines.links import ParentLinks
from kafkarep.engines.results import Discovery, Exploration, Limits, Progress, RunOptions
from kafkarep.engines.seen import SeenSet
from kafkarep.engines.worker import Candidates, Worker
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.properties import Property
from kafkarep.properties.fairness import describe, is_fair

ACTION_MASK = (1 << ACTION_BITS) - 1
SEEN = "seen.npy"  # a saved level's seen set


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


BYTES_PER_HELD_STATE = 2048  # a state's Python objects and digests, measured with room to spare


def default_spill_after(workers: int) -> int:
    """States each worker may hold before spilling: half of the memory available now."""
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0
    return max(1 << 16, available // 2 // workers // BYTES_PER_HELD_STATE)


class Explorer:
    def __init__(
        self,
        cfg: ModelConfig,
        properties: Iterable[Property],
        limits: Limits = Limits(),
        stop_when_found: Iterable[str] = (),
        progress: Callable[[Progress], None] | None = None,
        progress_every: float = 2.0,
        symmetry: bool = False,
        workers: int = 1,
        spill_after: int | None = None,
        workdir: Path | None = None,
        resume: bool = False,
        por: bool = False,
    ) -> None:
        self.cfg = cfg
        chosen = tuple(properties)
        self.property_names = tuple(p.name for p in chosen)
        self.always, self.sometimes = clauses(chosen)
        self.liveness = tuple(p for p in chosen if p.liveness)
        # Sleep sets skip steps, and liveness reads every step: never both.
        self.por = por and not self.liveness
        self.limits = limits
        self.stop_when_found = set(stop_when_found)
        self.progress = progress
        self.progress_every = progress_every
        self.symmetry = symmetry
        self.workers = max(1, workers)
        # States a worker holds in memory before the rest of the level goes to disk.
        self.spill_after = default_spill_after(self.workers) if spill_after is None else spill_after
        # A named work dir keeps each completed level, for --resume (`checkpoint.py`).
        self.workdir = workdir
        self.resume = resume
        if resume and workdir is None:
            raise UsageError("--resume needs --workdir DIR: the work dir of the run to resume")
        if self.liveness and symmetry:
            raise UsageError(
                "liveness is not checked under symmetry reduction (fairness is per broker, which "
                "symmetry renames): run without --symmetry"
            )

    def run(self) -> Exploration:
        # States are acyclic tuples: the cycle collector only costs time (2-3x) while millions
        # of them are alive, so it is off for the run, in this process and in the workers.
        enabled = gc.isenabled()
        gc.disable()
        pool = _Pool(self)
        try:
            return self._run(pool)
        finally:
            pool.close()
            if enabled:
                gc.enable()

    def _run(self, pool: _Pool) -> Exploration:
        cfg, limits, start = self.cfg, self.limits, time.monotonic()
        deadline = start + limits.max_seconds if limits.max_seconds else 0.0
        seen = SeenSet()
        violations: dict[str, Discovery] = {}
        reached: dict[str, Discovery] = {}
        earlier = 0.0  # seconds spent by the run this one resumes
        saved = self._load(pool) if self.resume else None
        if saved is not None:
            assert self.workdir is not None
            links = ParentLinks(self.workdir / "links", levels=saved["depth"])
            depth, distinct, generated = saved["depth"], saved["distinct"], saved["generated"]
            earlier = saved["seconds"]
            violations = checkpoint.discoveries(saved["violations"])
            reached = checkpoint.discoveries(saved["reached"])
            seen.sorted = np.load(checkpoint.level_dir(self.workdir, depth) / SEEN)
            sizes = pool.resume(saved["parts"])
            graph = self._graph(pool, depth)
        else:
            if self.workdir is not None:
                checkpoint.clear(self.workdir)
            links = ParentLinks((self.workdir or pool.workdir) / "links")
            graph = self._graph(pool, -1)
            fp0 = pool.start(initial_state(cfg))
            seen.add(np.array([fp0], dtype=np.uint64))
            self._record(violations, pool.check(set()), 0, links)
            if graph is not None:
                graph.add_level(0, np.array([fp0], dtype=np.uint64), pool.masks())
            sizes = [1] + [0] * (pool.size - 1)
            generated, depth, distinct = 1, 0, 1
        reason, last = "exhausted", start
        while sum(sizes):
            stop = stop_reason(limits, depth, distinct, self.stop_when_found, violations)
            if stop:
                reason = stop
                break
            parts = pool.expand(
                seen, deadline, set(reached), sizes, depth, distinct, generated, start, graph
            )
            generated += sum(p.generated for p in parts)
            reach("expanded", depth + 1)
            for name, key in _merge_sometimes(parts).items():
                path = links.path_to(depth, key >> ACTION_BITS) + (key & ACTION_MASK,)
                reached[name] = Discovery(name, depth + 1, path, None)
            if any(p.timed_out for p in parts):
                reason = f"time limit {limits.max_seconds:g}s"
                break
            choice = _choose(parts)
            keys, fps = choice.keys, choice.fps
            if not fps.size:
                break
            depth += 1
            distinct += int(fps.size)
            seen.add(fps)
            links.add_level(keys >> ACTION_BITS, keys & ACTION_MASK)
            reach("linked", depth)
            met = _met(choice, pool.sleeps(choice.shared)) if self.por else None
            sizes = pool.keep(choice.chosen, met)
            self._record(violations, pool.check(set(violations)), depth, links)
            if graph is not None:
                graph.add_level(depth, fps, pool.masks())
            now = time.monotonic()
            if self.workdir is not None:
                counts = (depth, distinct, generated, earlier + now - start)
                self._save(pool, seen, counts, violations, reached)
            if self.progress and now - last >= self.progress_every:
                last = now
                self.progress(Progress(distinct, generated, depth, int(fps.size), now - start))
            if deadline and now > deadline:
                reason = f"time limit {limits.max_seconds:g}s"
                break
        spilled = pool.spilled()
        details: tuple[tuple[str, Any], ...] = (("spilled_states", spilled),) if spilled else ()
        if graph is not None:
            details += (("liveness", self._liveness(graph, links, violations, reason)),)
        seconds = earlier + time.monotonic() - start
        return finish(
            Totals(distinct, generated, depth, seconds, reason, violations, reached),
            self.progress,
            pool.size,
            seen.nbytes,
            links.bytes_on_disk(),
            details,
        )

    # --- liveness (`liveness.py`) ---------------------------------------------------------

    def _graph(self, pool: _Pool, levels: int) -> GraphFiles | None:
        if not self.liveness:
            return None
        pool.graph = GraphFiles((self.workdir or pool.workdir) / "graph", levels)
        return pool.graph

    def _liveness(
        self,
        graph: GraphFiles,
        links: ParentLinks,
        violations: dict[str, Discovery],
        reason: str,
    ) -> dict[str, Any]:
        """Check the liveness properties on the complete graph; their lassos join the
        violations. Returns the figures of the check (or why it was not made)."""
        if reason != "exhausted":
            return {"checked": False, "why": f"the search is incomplete ({reason})"}
        started = time.monotonic()
        on_disk = graph.bytes_on_disk()
        loaded = graph.load(len(self.liveness))
        fair = liveness.fairness(loaded, lambda code: is_fair(self.cfg, code))
        for index, prop in enumerate(self.liveness):
            subjects = prop.subject_names(self.cfg)
            found = liveness.check(loaded, index, len(subjects), prop.kind == "eventually", fair)
            if found is None:
                continue
            level = int(np.searchsorted(loaded.levels, found.start, side="right")) - 1
            prefix = links.path_to(level, found.start - int(loaded.levels[level]))
            stem = tuple(int(loaded.action[e]) for e in found.stem)
            cycle = tuple(int(loaded.action[e]) for e in found.cycle)
            loop = len(prefix) + len(stem)
            units = sorted({describe(int(loaded.unit[e])) for e in found.cycle})
            how = (
                f"a cycle of {len(cycle)} steps from state {loop} ({', '.join(units)})"
                if cycle
                else f"stuttering at state {loop}, where no fair step is enabled"
            )
            witness = (
                f"{subjects[found.subject]}: never reaches the goal; the behaviour ends in {how}"
            )
            liveness.confirm(self.cfg, loaded, fair, found, prefix + stem + cycle, loop)
            violations[prop.name] = Discovery(
                prop.name,
                len(prefix) + len(stem) + len(cycle),
                prefix + stem + cycle,
                witness,
                loop,
            )
        return {
            "checked": True,
            "states": loaded.n,
            "edges": int(loaded.src.size),
            "fair_units": int(fair.units.size),
            "graph_bytes_on_disk": on_disk,
            "graph_bytes_in_memory": sum(a.nbytes for a in (*loaded[1:], fair.words, fair.enabled)),
            "seconds": round(time.monotonic() - started, 2),
        }

    def _record(
        self,
        violations: dict[str, Discovery],
        found: dict[str, tuple[int, str]],
        depth: int,
        links: ParentLinks,
    ) -> None:
        for name, (position, witness) in sorted(found.items()):
            if name not in violations:
                violations[name] = Discovery(name, depth, links.path_to(depth, position), witness)

    # --- the work dir (`checkpoint.py`) ---------------------------------------------------

    def _identity(self) -> dict[str, Any]:
        return checkpoint.identity(
            self.cfg, "explorer", self.symmetry, properties=list(self.property_names)
        )

    def _save(
        self,
        pool: _Pool,
        seen: SeenSet,
        counts: tuple[int, int, int, float],
        violations: dict[str, Discovery],
        reached: dict[str, Discovery],
    ) -> None:
        """Keep the level just completed: the workers' shares of its states, the seen set, then
        the manifest that names them."""
        assert self.workdir is not None
        depth, distinct, generated, seconds = counts
        folder = checkpoint.staging(self.workdir, depth)
        shares = pool.save(folder, depth)
        np.save(folder / SEEN, seen.sorted)
        manifest = {
            **self._identity(),
            "depth": depth,
            "distinct": distinct,
            "generated": generated,
            "seconds": seconds,
            "violations": checkpoint.plain(violations),
            "reached": checkpoint.plain(reached),
            "parts": [[name, count, size] for name, count, size in shares],
        }
        checkpoint.commit(self.workdir, depth, folder, manifest)

    def _load(self, pool: _Pool) -> dict[str, Any] | None:
        """The newest saved level that verifies (`checkpoint.saved_level`): its part files, in
        the order the workers saved them; None if the run stopped before saving one."""
        assert self.workdir is not None
        saved = checkpoint.saved_level(self.workdir, self._identity(), ("parts",))
        if saved is None:
            return None
        folder = checkpoint.level_dir(self.workdir, int(saved["depth"]))
        names = [str(part[0]) for part in saved["parts"]]
        if SEEN not in saved["files"] or any(name not in saved["files"] for name in names):
            raise UsageError(f"--resume: {folder / checkpoint.LEVEL}: malformed (its parts)")
        saved["parts"] = [str(folder / name) for name in names]
        return saved


class Choice(NamedTuple):
    """A level's new states: per worker, the indices of its kept candidates in level order, and
    the candidates that more than one worker made (their sleep sets are met across workers)."""

    chosen: list[np.ndarray]
    keys: np.ndarray
    fps: np.ndarray
    shared: list[np.ndarray]  # per worker: indices of its candidates another worker made too
    groups: list[np.ndarray]  # per worker: the fingerprint group of each of those


def _choose(parts: list[Candidates]) -> Choice:
    """For each new fingerprint keep the occurrence with the smallest key (parent position,
    action index); order the next level by key."""
    fps = np.concatenate([p.fps for p in parts]) if parts else np.empty(0, np.uint64)
    keys = np.concatenate([p.keys for p in parts]) if parts else np.empty(0, np.int64)
    owner = np.concatenate([np.full(p.fps.size, w, dtype=np.int64) for w, p in enumerate(parts)])
    local = np.concatenate([np.arange(p.fps.size, dtype=np.int64) for p in parts])
    nothing = [np.empty(0, np.int64) for _ in parts]
    if fps.size == 0:
        return Choice(nothing, keys, fps, nothing, nothing)
    order = np.lexsort((keys, fps))
    sorted_fps = fps[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = sorted_fps[1:] != sorted_fps[:-1]
    winners = order[first]
    winners = winners[np.argsort(keys[winners], kind="stable")]
    chosen = [local[winners[owner[winners] == w]] for w in range(len(parts))]
    # A worker reports each fingerprint once, so a group of several is several workers'.
    group = np.cumsum(first) - 1
    sizes = np.bincount(group)
    several = sizes[group] > 1
    shared = [local[order[several & (owner[order] == w)]] for w in range(len(parts))]
    groups = [group[several & (owner[order] == w)] for w in range(len(parts))]
    return Choice(chosen, keys[winners], fps[winners], shared, groups)


def _met(choice: Choice, sleeps: list[list[Sleep]]) -> list[dict[int, Sleep]]:
    """The sleep set of each kept candidate that several workers made: what is asleep after
    every one of its parents' steps (a step awake after any parent stays awake)."""
    met: dict[int, Sleep] = {}
    for groups, found in zip(choice.groups, sleeps, strict=True):
        for group, sleep in zip(groups.tolist(), found, strict=True):
            if group not in met:
                met[group] = sleep
            else:
                had = met[group]
                met[group] = None if had is None or sleep is None else (had & sleep or None)
    out: list[dict[int, Sleep]] = []
    for shared, groups in zip(choice.shared, choice.groups, strict=True):
        out.append({i: met[g] for i, g in zip(shared.tolist(), groups.tolist(), strict=True)})
    return out


def _merge_sometimes(parts: list[Candidates]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in parts:
        for name, key in part.sometimes.items():
            out[name] = min(out.get(name, key), key)
    return out


# --- the workers: in this process, or one process each ---------------------------------------


class _Pool:
    """Runs the workers' steps, in-process for one worker, over pipes for several."""

    def __init__(self, explorer: Explorer) -> None:
        self.explorer = explorer
        self.size = explorer.workers
        self.workdir = Path(tempfile.mkdtemp(prefix="kafkarep-explore-"))
        self.graph: GraphFiles | None = None
        self.counters: Any = None
        if self.size == 1:
            self.local: Worker | None = _worker(explorer, self.workdir, self._tick)
            self.conns: list[Connection] = []
            self.procs: list[Any] = []
        else:
            self.local = None
            context = multiprocessing.get_context("fork")
            self.counters = context.Array("q", 2 * self.size, lock=False)
            self.conns, self.procs = [], []
            for index in range(self.size):
                parent, child = context.Pipe()
                proc = context.Process(
                    target=_serve,
                    args=(child, explorer, index, self.counters, self.workdir),
                    daemon=True,
                )
                proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
        self._progress_base: tuple[int, int, int, int, float] = (0, 0, 0, 0, 0.0)
        self._last_tick = time.monotonic()

    # progress while a level is being expanded
    def _tick(self, expanded: int, generated: int) -> None:
        explorer = self.explorer
        now = time.monotonic()
        if explorer.progress and now - self._last_tick >= explorer.progress_every:
            self._last_tick = now
            depth, distinct, total, queue, start = self._progress_base
            explorer.progress(
                Progress(distinct, total + generated, depth, queue - expanded, now - start)
            )

    def _call_all(self, method: str, args_per_worker: list[tuple[Any, ...]]) -> list[Any]:
        if self.local is not None:
            return [getattr(self.local, method)(*args_per_worker[0])]
        for conn, args in zip(self.conns, args_per_worker, strict=True):
            conn.send((method, args))
        results: list[Any] = [None] * self.size
        waiting = dict(enumerate(self.conns))
        while waiting:
            ready = wait(list(waiting.values()), timeout=1.0)
            for ready_conn in ready:
                index = self.conns.index(ready_conn)  # type: ignore[arg-type]
                reply = self.conns[index].recv()
                if isinstance(reply, _Failure):
                    raise _raised(index, reply)
                results[index] = reply
                del waiting[index]
            if waiting and method == "expand":
                self._poll_progress()
        return results

    def _poll_progress(self) -> None:
        explorer = self.explorer
        now = time.monotonic()
        if not explorer.progress or now - self._last_tick < explorer.progress_every:
            return
        self._last_tick = now
        expanded = sum(self.counters[2 * i] for i in range(self.size))
        generated = sum(self.counters[2 * i + 1] for i in range(self.size))
        depth, distinct, total, queue, start = self._progress_base
        explorer.progress(
            Progress(distinct, total + generated, depth, queue - expanded, now - start)
        )

    def start(self, state: Any) -> int:
        results = self._call_all("start", [(state,)] + [(None,)] * (self.size - 1))
        fp: int = results[0]
        return fp

    def expand(
        self,
        seen: SeenSet,
        deadline: float,
        reached: set[str],
        sizes: list[int],
        depth: int,
        distinct: int,
        generated: int,
        start: float,
        graph: GraphFiles | None = None,
    ) -> list[Candidates]:
        self._progress_base = (depth, distinct, generated, sum(sizes), start)
        steps = [graph.steps_path(depth, w) if graph else None for w in range(self.size)]
        if self.local is not None:
            return [self.local.expand(seen.sorted, deadline, reached, steps[0])]
        path = self.workdir / f"seen-{depth}.npy"
        np.save(path, seen.sorted)
        for i in range(self.size):
            self.counters[2 * i] = self.counters[2 * i + 1] = 0
        parts: list[Candidates] = self._call_all(
            "expand", [(str(path), deadline, reached, steps[w]) for w in range(self.size)]
        )
        path.unlink(missing_ok=True)
        return parts

    def sleeps(self, indices: list[np.ndarray]) -> list[list[Sleep]]:
        """Each worker's sleep sets of these candidates."""
        if not any(i.size for i in indices):
            return [[] for _ in indices]
        found: list[list[Sleep]] = self._call_all("sleeps", [(i,) for i in indices])
        return found

    def keep(self, chosen: list[np.ndarray], met: list[dict[int, Sleep]] | None) -> list[int]:
        """Adopt the chosen candidates, even out the shares, place them; returns the sizes."""
        self._call_all("keep", [(c, met[w] if met else None) for w, c in enumerate(chosen)])
        return self._arrange([int(c.size) for c in chosen])

    def save(self, folder: Path, depth: int) -> list[tuple[str, int, int]]:
        """Each worker writes its share of the level: (file name, states, bytes) per worker."""
        names = [f"part-{w:05d}.pkl" for w in range(self.size)]
        counts = self._call_all("save", [(str(folder / name), depth) for name in names])
        return [(n, c, (folder / n).stat().st_size) for n, c in zip(names, counts, strict=True)]

    def resume(self, paths: list[str]) -> list[int]:
        """Load a saved level, its files shared out in order, however many workers saved it."""
        share = -(-len(paths) // self.size)  # contiguous groups of files keep the level's order
        groups = [(paths[w * share : (w + 1) * share],) for w in range(self.size)]
        return self._arrange(self._call_all("load", groups))

    def _arrange(self, sizes: list[int]) -> list[int]:
        """Even out the workers' shares and give each its states' positions in the level."""
        if self.local is None:
            sizes = self._rebalance(sizes)
        total, offset = sum(sizes), 0
        places = []
        for size in sizes:
            places.append((np.arange(offset, offset + size, dtype=np.int64),))
            offset += size
        assert offset == total
        self._call_all("place", places)
        return sizes

    def _rebalance(self, sizes: list[int]) -> list[int]:
        """Shift the boundaries between neighbours so every worker holds an even share; the
        level's order is unchanged (worker w holds the w-th contiguous block)."""
        total = sum(sizes)
        target = [
            total // self.size + (1 if w < total % self.size else 0) for w in range(self.size)
        ]
        for _ in range(self.size):
            moved = False
            for w in range(self.size - 1):
                # how many of the first w+1 workers' states should move right (+) or left (-)
                surplus = sum(sizes[: w + 1]) - sum(target[: w + 1])
                if surplus > 0:
                    count = min(surplus, sizes[w])
                    data = self._call_one(w, "give", count, True)
                    self._call_one(w + 1, "take", data, False)
                    sizes[w] -= count
                    sizes[w + 1] += count
                    moved = moved or count > 0
                elif surplus < 0:
                    count = min(-surplus, sizes[w + 1])
                    data = self._call_one(w + 1, "give", count, False)
                    self._call_one(w, "take", data, True)
                    sizes[w + 1] -= count
                    sizes[w] += count
                    moved = moved or count > 0
            if not moved:
                break
        return sizes

    def _call_one(self, index: int, method: str, *args: Any) -> Any:
        conn = self.conns[index]
        conn.send((method, args))
        reply = conn.recv()
        if isinstance(reply, _Failure):
            raise _raised(index, reply)
        return reply

    def check(self, skip: set[str]) -> dict[str, tuple[int, str]]:
        found: dict[str, tuple[int, str]] = {}
        for part in self._call_all("check", [(skip,)] * self.size):
            for name, (position, witness) in part.items():
                if name not in found or position < found[name][0]:
                    found[name] = (position, witness)
        return found

    def masks(self) -> np.ndarray:
        """The level's liveness masks, in level order (workers hold contiguous blocks)."""
        return np.concatenate(self._call_all("masks", [()] * self.size))

    def spilled(self) -> int:
        return sum(self._call_all("spilled_count", [()] * self.size))

    def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(BrokenPipeError, OSError):
                conn.send(("stop", ()))
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
        shutil.rmtree(self.workdir, ignore_errors=True)


class _Failure(NamedTuple):
    message: str
    bad_input: bool = False  # a `UsageError` (a user's property clause that raised): exit 2


def _raised(index: int, failure: _Failure) -> Exception:
    if failure.bad_input:
        return UsageError(failure.message)
    return RuntimeError(f"explorer worker {index} failed: {failure.message}")


def _worker(explorer: Explorer, workdir: Path, tick: Callable[[int, int], None]) -> Worker:
    return Worker(
        explorer.cfg,
        explorer.always,
        explorer.sometimes,
        explorer.symmetry,
        tick,
        workdir,
        explorer.spill_after,
        explorer.liveness,
        explorer.por,
    )


def _serve(conn: Connection, explorer: Explorer, index: int, counters: Any, workdir: Path) -> None:
    """A worker process: run the explorer's commands until told to stop."""

    def tick(expanded: int, generated: int) -> None:
        counters[2 * index] = expanded
        counters[2 * index + 1] = generated

    worker = _worker(explorer, workdir, tick)
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if method == "stop":
            return
        try:
            if method == "start":
                reply: Any = worker.start(args[0]) if args[0] is not None else 0
            elif method == "expand":
                path, deadline, reached, steps = args
                seen = np.load(path, mmap_mode="r")
                reply = worker.expand(seen, deadline, reached, steps)
            else:
                reply = getattr(worker, method)(*args)
        except UsageError as error:
            reply = _Failure(str(error), bad_input=True)
        except Exception as error:
            reply = _Failure(f"{error.__class__.__name__}: {error}")
        conn.send(reply)


def explore(
    cfg: ModelConfig, options: RunOptions, progress: Callable[[Progress], None] | None
) -> Exploration:
    """The explorer as an engine (`engines.registry.ENGINES`): limits and switches from the
    model file, unless the command line overrides them."""
    limits = options.limits or Limits(
        cfg.check.max_states, cfg.check.max_depth, cfg.check.max_seconds
    )
    symmetry = cfg.check.symmetry if options.symmetry is None else options.symmetry
    args = dict(options.engine_args)
    explorer = Explorer(
        cfg,
        properties.of_model(cfg),
        limits,
        stop_when_found=[name for name, _ in cfg.expect.violates],
        progress=progress,
        symmetry=symmetry,
        workers=options.workers or default_workers(),
        spill_after=args.get("spill_after"),
        workdir=args.get("workdir"),
        resume=bool(args.get("resume")),
        por=cfg.check.por if options.por is None else options.por,
    )
    return explorer.run()
