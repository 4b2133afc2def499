"""One explorer worker: it holds a share of the current level's states, expands them, and keeps
the successors that are new, until the explorer says which of them the level keeps.

Everything a worker returns is small (fingerprints and positions as NumPy arrays); states stay
in the worker that made them, and move only to rebalance the next level. The decisions are the
explorer's, so one in-process worker and several worker processes give the same result.
"""

from __future__ import annotations

import gc
import pickle
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kafkarep.common.failpoints import reach
from kafkarep.engines.controller_batches import in_batches
from kafkarep.engines.frontier import Entry, Frontier, dumps, loads
from kafkarep.engines.graph import save_steps
from kafkarep.engines.kernel import ACTION_BITS, Expander, Judge, Sleep, StateCheck, StepCheck
from kafkarep.engines.seen import contains_sorted
from kafkarep.model import controller
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, digests
from kafkarep.model.reduction import reduce
from kafkarep.model.state import ClusterState
from kafkarep.properties import Property
from kafkarep.properties.fairness import unit

# Successors looked up in the seen set at once: sorted look-ups of a bigger batch share more of
# their binary-search paths (at 15 million states: 660 ns a look-up in batches of 4,096, 440 in
# batches of 65,536; benchmarks/seen_lookup.py).
BATCH = 1 << 16
SAVE_BATCH = 4096  # states a checkpoint pickles at a time


class Candidates(NamedTuple):
    """A worker's new successors of one level (first occurrence of each fingerprint)."""

    fps: np.ndarray  # uint64
    keys: np.ndarray  # int64: parent's global position << 16 | action index
    generated: int
    sometimes: dict[str, int]  # property -> smallest key of a step that reached it
    timed_out: bool


class Worker:
    def __init__(
        self,
        cfg: ModelConfig,
        always: Iterable[tuple[str, StateCheck]],
        sometimes: Iterable[tuple[str, StepCheck]],
        symmetry: bool = False,
        tick: Callable[[int, int], None] | None = None,
        workdir: Path | None = None,
        spill_after: int = 0,
        liveness: tuple[Property, ...] = (),
        por: bool = False,
    ) -> None:
        self.cfg = cfg
        self._batched = cfg.options.controller == "kafka"  # Kafka's classes answer, in batches
        # Partial-order reduction by sleep sets (kernel.Expander.asleep_successors); never
        # while every step is written out for liveness.
        self.por = por
        # Liveness needs the whole graph: every step is written out (`graph.py`), and each new
        # state's premise and goal masks are computed.
        self.liveness = liveness
        self.judge = Judge(cfg, always)
        self.sometimes = tuple(sometimes)
        self.symmetry = symmetry
        self.tick = tick  # progress hook: (states expanded, successors generated) so far
        self.workdir = workdir or Path(".")
        # States held in memory before the rest of a level goes to disk, counting the level
        # being expanded and the candidates for the next one (0: never spill).
        self.spill_after = spill_after
        self.frontier = self._level()
        self.positions = np.empty(0, dtype=np.int64)
        self._new = self._level()
        self._sleeps: list[Sleep] = []  # the sleep set of each of `_new`'s candidates
        self.spilled = 0

    def _level(self) -> Frontier:
        return Frontier(self.workdir, self.spill_after // 2)

    # --- one level ------------------------------------------------------------------------

    def start(self, state: ClusterState) -> int:
        state = reduce(self.cfg, state)
        parts = digests(state)
        self.frontier = self._level()
        self.frontier.append((state, parts, None))
        self.positions = np.zeros(1, dtype=np.int64)
        return Expander(self.cfg, (), (), self.symmetry).key(state, parts)

    def expand(
        self, seen: np.ndarray, deadline: float, reached: set[str], steps: str | None = None
    ) -> Candidates:
        """The level's new successors; with `steps`, every step generated is written there."""
        # States are acyclic tuples: the cycle collector only costs time while millions of them
        # are alive (2-3x), so it is off while a level expands.
        enabled = gc.isenabled()
        gc.disable()
        # Kafka's classes answer the controller steps in batches (controller_batches.py).
        controller.collect(self._batched)
        try:
            return self._expand(seen, deadline, reached, steps)
        finally:
            controller.collect(False)
            if enabled:
                gc.enable()

    def _expand(
        self, seen: np.ndarray, deadline: float, reached: set[str], steps: str | None
    ) -> Candidates:
        first: dict[int, int] = {}  # fingerprint -> index of this level's candidate
        sleeps: list[Sleep] = []
        fps: list[int] = []
        keys: list[int] = []
        new = self._level()
        append = new.append
        batch_fp: list[int] = []
        batch: list[tuple[int, int, ClusterState, Digests, Sleep]] = []
        expander = Expander(self.cfg, self.sometimes, reached, self.symmetry)
        por = self.por and steps is None
        successors, asleep_successors = expander.successors, expander.asleep_successors
        generated = 0
        timed_out = False

        def flush() -> None:
            if not batch:
                return
            old = contains_sorted(seen, np.fromiter(batch_fp, dtype=np.uint64, count=len(batch_fp)))
            # Most successors were seen at an earlier level: only the others are looked at.
            for i in np.flatnonzero(~old).tolist():
                fp, key, state, parts, sleep = batch[i]
                known = first.get(fp)
                if known is not None:
                    # asleep in a state only what is asleep after each of its parents' steps
                    had = sleeps[known]
                    if had is not None:
                        sleeps[known] = (had & sleep or None) if sleep is not None else None
                    continue
                first[fp] = len(fps)
                fps.append(fp)
                keys.append(key)
                sleeps.append(sleep)
                append((state, parts, None))
            batch.clear()
            batch_fp.clear()

        positions = self.positions.tolist()
        step_keys: list[int] = []
        step_fps: list[int] = []
        step_units: list[int] = []

        def expand_one(local: int, entry: Entry) -> Iterable[Any]:
            state, parent_parts, asleep = entry
            base = positions[local] << ACTION_BITS
            if por:
                return asleep_successors(state, parent_parts, base, asleep)
            return successors(state, parent_parts, base)

        expansions: Iterable[tuple[int, Iterable[Any]]]
        if self._batched:
            expansions = in_batches(self.frontier, expand_one, expander)
        else:
            expansions = ((local, expand_one(local, e)) for local, e in enumerate(self.frontier))
        for local, produced in expansions:
            count = len(batch)
            if por:
                for key, _, after, parts, fp, sleep in produced:
                    batch_fp.append(fp)
                    batch.append((fp, key, after, parts, sleep))
            else:
                for key, action, after, parts, fp in produced:
                    batch_fp.append(fp)
                    batch.append((fp, key, after, parts, None))
                    if steps is not None:
                        step_keys.append(key)
                        step_fps.append(fp)
                        step_units.append(unit(action))
            generated += len(batch) - count
            if len(batch) >= BATCH:
                flush()
            if local & 255 == 255:
                if self.tick:
                    self.tick(local + 1, generated)
                if deadline and time.monotonic() > deadline:
                    timed_out = True
                    break
        flush()
        if steps is not None and not timed_out:
            save_steps(steps, step_keys, step_fps, step_units)
        self._new = new
        self._sleeps = sleeps
        return Candidates(
            np.array(fps, dtype=np.uint64),
            np.array(keys, dtype=np.int64),
            generated,
            expander.hits,
            timed_out,
        )

    def sleeps(self, indices: np.ndarray) -> list[Sleep]:
        """The sleep sets of these candidates of the level being expanded."""
        return [self._sleeps[i] for i in indices.tolist()]

    def keep(self, chosen: np.ndarray, met: dict[int, Sleep] | None = None) -> None:
        """Keep the chosen candidates (indices, in next-level order) as the next frontier;
        `met` has the sleep sets of those other workers made too, met across workers."""
        self.frontier.clear()
        level = self._level()
        # Increasing: a worker makes its candidates in key order (parent position, action).
        assert chosen.size < 2 or bool(np.all(chosen[1:] > chosen[:-1]))
        indices = chosen.tolist()
        sleeps = self._sleeps
        for i, sleep in (met or {}).items():
            sleeps[i] = sleep
        level.extend(
            (state, parts, sleeps[i])
            for i, (state, parts, _) in zip(indices, self._new.pick(indices), strict=True)
        )
        self._sleeps = []
        self.spilled += self._new.spilled + level.spilled
        self._new.clear()
        self.frontier = level

    def place(self, positions: np.ndarray) -> None:
        self.positions = positions.astype(np.int64)

    def check(self, skip: set[str]) -> dict[str, tuple[int, str]]:
        """Evaluate every `always` clause on the frontier: clause -> (global position, witness)
        of the first state, in level order, that violates it."""
        positions = self.positions.tolist()
        states = (
            (p, state, parts) for p, (state, parts, _) in zip(positions, self.frontier, strict=True)
        )
        return self.judge.first_violations(states, skip)

    def masks(self) -> np.ndarray:
        """Each frontier state's liveness masks, in level order: (premise, goal) per property,
        cut to the property's subjects."""
        cfg = self.cfg
        checks = [(p.premise(), p.goal(), p.width(cfg)) for p in self.liveness]
        rows = np.zeros((len(self.frontier), 2 * len(checks)), dtype=np.int64)
        for row, (state, _, _) in enumerate(self.frontier):
            for column, (premise, goal, width) in enumerate(checks):
                if premise is not None:
                    rows[row, 2 * column] = premise(cfg, state) & width
                rows[row, 2 * column + 1] = goal(cfg, state) & width
        return rows

    # --- rebalancing -------------------------------------------------------------------------

    def give(self, count: int, from_end: bool) -> bytes:
        """Hand over `count` frontier states, from the end or the start."""
        return dumps(self.frontier.give(count, from_end) if count > 0 else [])

    def take(self, data: bytes, at_end: bool) -> None:
        self.frontier.take(loads(data), at_end)

    # --- checkpoints (`checkpoint.py`) -------------------------------------------------------

    def save(self, path: str, level: int) -> int:
        """Write this worker's share of the level, in order, to a new file; returns its count."""
        count = 0
        with open(path, "wb") as file:
            batch: list[Entry] = []
            for entry in self.frontier:
                batch.append(entry)
                if len(batch) == SAVE_BATCH:
                    pickle.dump(batch, file, pickle.HIGHEST_PROTOCOL)
                    count += len(batch)
                    batch = []
                    reach("saving", level)
            pickle.dump(batch, file, pickle.HIGHEST_PROTOCOL)
            count += len(batch)
        reach("saved", level)
        return count

    def load(self, paths: list[str]) -> int:
        """Make the states saved in these files, in order, this worker's share of the level."""
        level = self._level()
        for path in paths:
            with open(path, "rb") as file:
                while True:
                    try:
                        entries = pickle.load(file)
                    except EOFError:
                        break
                    # a level saved before sleep sets were kept has nothing asleep
                    level.extend(e if len(e) == 3 else (*e, None) for e in entries)
        self.frontier = level
        return len(level)

    def spilled_count(self) -> int:
        return self.spilled

    def size(self) -> int:
        return len(self.frontier)
