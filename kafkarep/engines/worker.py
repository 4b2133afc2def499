"""One explorer worker: it holds a share of the current level's states, expands them, and keeps
the successors that are new, until the explorer says which of them the level keeps.

Everything a worker returns is small (fingerprints and positions as NumPy arrays); states stay
in the worker that made them, and move only to rebalance the next level. The decisions are the
explorer's, so one in-process worker and several worker processes give the same result.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kafkarep.engines.frontier import Frontier, dumps, loads
from kafkarep.engines.seen import contains_sorted
from kafkarep.model.actions import active
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, combine, digests, fingerprint
from kafkarep.model.reduction import reduce, reducer
from kafkarep.model.state import ClusterState
from kafkarep.model.symmetry import canonical
from properties.base import needs_partition_change, reads

ACTION_BITS = 16  # a key is parent position << 16 | action index
# Successors looked up in the seen set at once: sorted look-ups of a bigger batch share more of
# their binary-search paths (at 15 million states: 660 ns a look-up in batches of 4,096, 440 in
# batches of 65,536; benchmarks/seen_lookup.py).
BATCH = 1 << 16


def conjunction(clauses: list[Callable[..., Any]]) -> Callable[[ModelConfig, Any], bool]:
    """One function that is True when every clause holds (returns None) on a state: the
    clauses called one after the other, without a loop's overhead per clause."""
    calls = " and ".join(f"c{i}(cfg, state) is None" for i in range(len(clauses))) or "True"
    namespace: dict[str, Any] = {f"c{i}": clause for i, clause in enumerate(clauses)}
    exec(f"def all_hold(cfg, state):\n    return {calls}\n", namespace)  # generated
    all_hold: Callable[[ModelConfig, Any], bool] = namespace["all_hold"]
    return all_hold


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
        always: list[tuple[str, Callable[..., Any]]],
        sometimes: list[tuple[str, Callable[..., Any]]],
        symmetry: bool = False,
        tick: Callable[[int, int], None] | None = None,
        workdir: Path | None = None,
        spill_after: int = 0,
    ) -> None:
        self.cfg = cfg
        self.always = always
        self.sometimes = dict(sometimes)
        self.symmetry = symmetry
        self.tick = tick  # progress hook: (states expanded, successors generated) so far
        self.workdir = workdir or Path(".")
        # States held in memory before the rest of a level goes to disk, counting the level
        # being expanded and the candidates for the next one (0: never spill).
        self.spill_after = spill_after
        self.frontier = self._level()
        self.positions = np.empty(0, dtype=np.int64)
        self._new = self._level()
        self.spilled = 0
        # controller digest -> the controller-only clauses' witnesses (None: all hold)
        self._controller_verdicts: dict[int, tuple[tuple[str, str | None], ...] | None] = {}
        self._controller_clauses: list[tuple[str, Callable[..., Any]]] = []

    def _level(self) -> Frontier:
        return Frontier(self.workdir, self.spill_after // 2)

    # --- one level ------------------------------------------------------------------------

    def start(self, state: ClusterState) -> int:
        state = reduce(self.cfg, state)
        parts = digests(state)
        self.frontier = self._level()
        self.frontier.append((state, parts))
        self.positions = np.zeros(1, dtype=np.int64)
        return self._key(state, parts)

    def _key(self, state: ClusterState, parts: Digests) -> int:
        if self.symmetry:
            return fingerprint(canonical(self.cfg, state))
        return combine(parts)

    def expand(self, seen: np.ndarray, deadline: float, reached: set[str]) -> Candidates:
        # States are acyclic tuples: the cycle collector only costs time while millions of them
        # are alive (2-3x), so it is off while a level expands.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._expand(seen, deadline, reached)
        finally:
            if enabled:
                gc.enable()

    def _expand(self, seen: np.ndarray, deadline: float, reached: set[str]) -> Candidates:
        cfg = self.cfg
        first: set[int] = set()  # fingerprints of this level's candidates so far
        fps: list[int] = []
        keys: list[int] = []
        new = self._level()
        append = new.append
        batch_fp: list[int] = []
        batch: list[tuple[int, int, ClusterState, Digests]] = []
        hits: dict[str, int] = {}
        # (name, check, whether only a step that changes the partition can reach it)
        pending = [
            (n, c, needs_partition_change(c)) for n, c in self.sometimes.items() if n not in reached
        ]
        generated = 0
        timed_out = False

        def flush() -> None:
            if not batch:
                return
            old = contains_sorted(seen, np.fromiter(batch_fp, dtype=np.uint64, count=len(batch_fp)))
            # Most successors were seen at an earlier level: only the others are looked at.
            for i in np.flatnonzero(~old).tolist():
                fp, key, state, parts = batch[i]
                if fp in first:
                    continue
                first.add(fp)
                fps.append(fp)
                keys.append(key)
                append((state, parts))
            batch.clear()
            batch_fp.clear()

        key_of = self._key
        positions = self.positions.tolist()
        families = [(f.actions, f.apply) for f in active(cfg)]
        reduce_one = reducer(cfg)
        for local, (state, parent_parts) in enumerate(self.frontier):
            base = positions[local] << ACTION_BITS
            index = -1  # the action's index among the state's successors
            # `successors(cfg, state)` unrolled: one generator less per successor.
            for actions, apply in families:
                for action in actions(cfg, state):
                    index += 1
                    after = reduce_one(apply(cfg, state, action), state)
                    for name, check, on_change in pending:
                        if on_change and after.controller.log[-1] is state.controller.log[-1]:
                            continue
                        if check(cfg, state, action, after):
                            # The first step to reach it: the smallest key.
                            hits[name] = base | index
                            pending = [p for p in pending if p[0] != name]
                    parts = digests(after, state, parent_parts)
                    fp = key_of(after, parts)
                    batch_fp.append(fp)
                    batch.append((fp, base | index, after, parts))
            generated += index + 1
            if len(batch) >= BATCH:
                flush()
            if local & 255 == 255:
                if self.tick:
                    self.tick(local + 1, generated)
                if deadline and time.monotonic() > deadline:
                    timed_out = True
                    break
        flush()
        self._new = new
        return Candidates(
            np.array(fps, dtype=np.uint64),
            np.array(keys, dtype=np.int64),
            generated,
            hits,
            timed_out,
        )

    def keep(self, chosen: np.ndarray) -> None:
        """Keep the chosen candidates (indices, in next-level order) as the next frontier."""
        self.frontier.clear()
        level = self._level()
        # Increasing: a worker makes its candidates in key order (parent position, action).
        assert chosen.size < 2 or bool(np.all(chosen[1:] > chosen[:-1]))
        level.extend(self._new.pick(chosen.tolist()))
        self.spilled += self._new.spilled + level.spilled
        self._new.clear()
        self.frontier = level

    def place(self, positions: np.ndarray) -> None:
        self.positions = positions.astype(np.int64)

    def check(self, skip: set[str]) -> dict[str, tuple[int, str]]:
        """Evaluate every `always` clause on the frontier: clause -> (global position, witness)
        of the first state, in level order, that violates it."""
        found: dict[str, tuple[int, str]] = {}
        cfg = self.cfg
        todo = [(n, c) for n, c in self.always if n not in skip and reads(c) == "state"]
        all_hold = conjunction([c for _, c in todo])
        # Clauses of the controller alone, once per controller state (its digest is the key):
        # many states share one. None: they all hold.
        of_controller = [
            (n, c) for n, c in self.always if n not in skip and reads(c) == "controller"
        ]
        known = self._controller_verdicts
        if len(known) > 1 << 20 or of_controller != self._controller_clauses:
            known.clear()
            self._controller_clauses = of_controller
        for position, (state, parts) in zip(self.positions.tolist(), self.frontier, strict=True):
            if of_controller:
                if parts[0] in known:
                    witnesses = known[parts[0]]
                else:
                    verdicts = tuple((name, check(cfg, state)) for name, check in of_controller)
                    witnesses = known[parts[0]] = (
                        verdicts if any(w is not None for _, w in verdicts) else None
                    )
                for name, witness in witnesses or ():
                    if witness is not None and name not in found:
                        found[name] = (position, str(witness))
            if all_hold(cfg, state):
                continue
            for name, check in todo:
                witness = check(cfg, state)
                if witness is not None:
                    found[name] = (position, str(witness))
            # Only the first violation of each clause is reported: look no more for those.
            todo = [(n, c) for n, c in todo if n not in found]
            all_hold = conjunction([c for _, c in todo])
        return found

    # --- rebalancing -------------------------------------------------------------------------

    def give(self, count: int, from_end: bool) -> bytes:
        """Hand over `count` frontier states, from the end or the start."""
        return dumps(self.frontier.give(count, from_end) if count > 0 else [])

    def take(self, data: bytes, at_end: bool) -> None:
        self.frontier.take(loads(data), at_end)

    def spilled_count(self) -> int:
        return self.spilled

    def size(self) -> int:
        return len(self.frontier)
