"""The explicit-state explorer: breadth-first, deterministic, shortest counterexamples.

Level by level from the initial state, every enabled action in `FAMILIES` order. A state is
known by its stable 64-bit fingerprint; each new state records its parent's fingerprint and the
index of the action that reached it, so every discovery is rebuilt by replaying action indices
from the initial state, and, the search being breadth-first, it is a shortest one.

`always` clauses are evaluated on every new state, `sometimes` properties on every step until
reached. The search stops when the space is exhausted (complete), when a limit is hit
(incomplete, with the reason), or at the end of the level where every expected violation has
been found (so the counts do not depend on the order of a level).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import fingerprint
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.model.symmetry import canonical
from properties import Property

NO_PARENT = -1


class Limits(NamedTuple):
    max_states: int = 0  # 0: none
    max_depth: int = 0
    max_seconds: float = 0.0


class Discovery(NamedTuple):
    """A violated clause (or a reached `sometimes` property) and the shortest path to it."""

    name: str
    depth: int
    path: tuple[int, ...]  # action indices from the initial state
    witness: str | None


class Progress(NamedTuple):
    distinct: int
    generated: int
    depth: int
    queue: int
    seconds: float
    done: bool = False


class Exploration(NamedTuple):
    distinct_states: int
    generated_states: int
    depth: int
    seconds: float
    complete: bool
    stop_reason: str  # "exhausted", "expected violations found", or the limit hit
    violations: dict[str, Discovery]
    reached: dict[str, Discovery]
    cores: int = 1


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
    ) -> None:
        self.cfg = cfg
        self.always = [
            (p.qualified(c), c.check) for p in properties if p.kind == "always" for c in p.clauses
        ]
        self.sometimes = [
            (p.name, c.check) for p in properties if p.kind == "sometimes" for c in p.clauses
        ]
        self.limits = limits
        self.stop_when_found = set(stop_when_found)
        self.progress = progress
        self.progress_every = progress_every
        self.symmetry = symmetry
        self.parents: dict[int, tuple[int, int]] = {}

    def _key(self, state: ClusterState) -> int:
        return fingerprint(canonical(self.cfg, state) if self.symmetry else state)

    def path_to(self, fp: int) -> tuple[int, ...]:
        path = []
        while True:
            parent, index = self.parents[fp]
            if parent == NO_PARENT:
                return tuple(reversed(path))
            path.append(index)
            fp = parent

    def run(self) -> Exploration:
        cfg, start = self.cfg, time.monotonic()
        violations: dict[str, Discovery] = {}
        reached: dict[str, Discovery] = {}
        pending_sometimes = list(self.sometimes)
        state0 = initial_state(cfg)
        fp0 = self._key(state0)
        self.parents = {fp0: (NO_PARENT, 0)}
        self._check(state0, fp0, 0, violations)
        level: list[tuple[ClusterState, int]] = [(state0, fp0)]
        generated, depth, reason = 1, 0, "exhausted"
        last_report = start
        limits = self.limits
        while level:
            if limits.max_depth and depth >= limits.max_depth:
                reason = f"depth limit {limits.max_depth}"
                break
            next_level: list[tuple[ClusterState, int]] = []
            stop = ""
            for state, fp in level:
                for index, (action, after) in enumerate(successors(cfg, state)):
                    generated += 1
                    if pending_sometimes:
                        for name, check in list(pending_sometimes):
                            if check(cfg, state, action, after):  # type: ignore[call-arg]
                                path = self.path_to(fp) + (index,)
                                reached[name] = Discovery(name, depth + 1, path, None)
                                pending_sometimes.remove((name, check))
                    key = self._key(after)
                    if key in self.parents:
                        continue
                    self.parents[key] = (fp, index)
                    next_level.append((after, key))
                    self._check(after, key, depth + 1, violations)
                now = time.monotonic()
                if limits.max_states and len(self.parents) >= limits.max_states:
                    stop = f"state limit {limits.max_states}"
                    break
                if limits.max_seconds and now - start >= limits.max_seconds:
                    stop = f"time limit {limits.max_seconds:g}s"
                    break
                if self.progress and now - last_report >= self.progress_every:
                    last_report = now
                    self.progress(
                        Progress(len(self.parents), generated, depth, len(next_level), now - start)
                    )
            if stop:
                reason = stop
                break
            if next_level:
                depth += 1
            level = next_level
            if self.stop_when_found and self.stop_when_found <= _found_names(violations):
                reason = "expected violations found"
                break
        seconds = time.monotonic() - start
        complete = reason == "exhausted"
        if self.progress:
            self.progress(Progress(len(self.parents), generated, depth, 0, seconds, done=True))
        return Exploration(
            len(self.parents), generated, depth, seconds, complete, reason, violations, reached
        )

    def _check(
        self, state: ClusterState, fp: int, depth: int, violations: dict[str, Discovery]
    ) -> None:
        for name, check in self.always:
            if name in violations:
                continue
            witness = check(self.cfg, state)  # type: ignore[call-arg]
            if witness is not None:
                violations[name] = Discovery(name, depth, self.path_to(fp), str(witness))


def _found_names(violations: dict[str, Discovery]) -> set[str]:
    """Clause names found, and the property names they belong to."""
    names = set(violations)
    names |= {name.split(".")[0] for name in violations}
    return names
