"""The explored state graph, kept on disk for the liveness check (`liveness.py`).

A state is known by its place in breadth-first order (its id: the states of the levels before
it, then its position in its level). Per level the explorer writes the level's fingerprints in
order and each state's liveness masks (premise and goal bits per property); each worker writes,
for the level it expands, every step it generated, new successor or not: the parent's position,
the action's index, the successor's fingerprint and the step's fairness unit. `load` turns them
into id-to-id edges once the search is complete.

Files past the level a run resumes from are dropped, as the parent links' are; every file is
written aside and renamed, as theirs are.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from kafkarep.engines.kernel import ACTION_BITS
from kafkarep.engines.links import save_array, whole_arrays


class Graph(NamedTuple):
    """The complete graph: `n` states; edges sorted by source, as the levels expanded them."""

    n: int
    src: np.ndarray  # int64 state ids
    dst: np.ndarray  # int64
    action: np.ndarray  # int32: the action's index among the source's enabled actions
    unit: np.ndarray  # int32: the step's fairness unit (properties/fairness.py)
    premise: np.ndarray  # (n, properties) int64 masks
    goal: np.ndarray  # (n, properties) int64 masks
    levels: np.ndarray  # int64: the first id of each level, and n at the end


class GraphFiles:
    def __init__(self, folder: Path, levels: int = -1) -> None:
        """Files in `folder`; `levels` >= 0 continues a saved run after that level: the states
        of later levels and the steps out of that level and later ones are dropped (they are
        made again)."""
        self.dir = folder
        self.dir.mkdir(parents=True, exist_ok=True)
        if levels < 0:
            for file in whole_arrays(self.dir):
                file.unlink()
        for file in whole_arrays(self.dir):
            kind, level = file.stem.split("-")[:2]
            if int(level) > levels or (kind == "steps" and int(level) >= levels):
                file.unlink()

    def steps_path(self, level: int, worker: int) -> str:
        """Where a worker writes the steps out of `level` it generated."""
        return str(self.dir / f"steps-{level:05d}-{worker:05d}.npy")

    def add_level(self, level: int, fps: np.ndarray, masks: np.ndarray) -> None:
        save_array(self.dir / f"states-{level:05d}.npy", fps.astype(np.uint64))
        save_array(self.dir / f"masks-{level:05d}.npy", masks.astype(np.int64))

    def load(self, properties: int) -> Graph:
        states = sorted(self.dir.glob("states-*.npy"))
        fps = [np.load(f) for f in states]
        sizes = np.array([f.size for f in fps], dtype=np.int64)
        levels = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        every = np.concatenate(fps) if fps else np.empty(0, np.uint64)
        masks = [np.load(str(f).replace("states-", "masks-")) for f in states]
        mask = np.concatenate(masks) if masks else np.empty((0, 2 * properties), np.int64)
        order = np.argsort(every, kind="stable")
        ordered = every[order]
        src, dst, action, unit = [], [], [], []
        for file in sorted(self.dir.glob("steps-*.npy")):
            level = int(file.stem.split("-")[1])
            steps = np.load(file)  # rows: key, fingerprint, unit (as int64)
            keys = steps[:, 0]
            successors = np.ascontiguousarray(steps[:, 1]).view(np.uint64)
            found = np.searchsorted(ordered, successors)
            if found.size and (found.max() >= ordered.size or (ordered[found] != successors).any()):
                raise ValueError(f"{file}: a step reaches a state the search did not keep")
            src.append(levels[level] + (keys >> ACTION_BITS))
            dst.append(order[found].astype(np.int64))
            action.append((keys & ((1 << ACTION_BITS) - 1)).astype(np.int32))
            unit.append(steps[:, 2].astype(np.int32))
        return Graph(
            int(every.size),
            _cat(src, np.int64),
            _cat(dst, np.int64),
            _cat(action, np.int32),
            _cat(unit, np.int32),
            mask[:, 0::2],
            mask[:, 1::2],
            levels,
        )

    def bytes_on_disk(self) -> int:
        return sum(f.stat().st_size for f in self.dir.glob("*.npy"))


def save_steps(path: str, keys: list[int], fps: list[int], units: list[int]) -> None:
    """A worker's steps out of one level, whole or absent."""
    rows = np.empty((len(keys), 3), dtype=np.int64)
    rows[:, 0] = keys
    rows[:, 1] = np.array(fps, dtype=np.uint64).view(np.int64)
    rows[:, 2] = units
    save_array(Path(path), rows)


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype)
