"""Parent links, one file per level, out of memory: for every state of level d, the position of
its parent in level d-1 and the index of the action that reached it. A path is rebuilt by
walking back from (level, position) to the initial state."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np


class ParentLinks:
    def __init__(self, workdir: Path | None = None, levels: int = 0) -> None:
        """Links in `workdir` (else a temporary folder); `levels` > 0 continues a saved run
        after that level, dropping the files of any later level it wrote before it stopped."""
        self._owned = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix="kafkarep-links-")) if workdir is None else workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.levels = levels  # levels written, level 0 (the initial state) has none
        for file in whole_arrays(self.dir):
            if int(file.stem.rpartition("-")[2]) > levels:
                file.unlink()

    def add_level(self, parents: np.ndarray, actions: np.ndarray) -> None:
        self.levels += 1
        # whole or absent: a run killed while writing them resumes from the level before
        save_array(self.dir / f"parents-{self.levels:05d}.npy", parents.astype(np.int64))
        save_array(self.dir / f"actions-{self.levels:05d}.npy", actions.astype(np.int32))

    def path_to(self, level: int, position: int) -> tuple[int, ...]:
        path = []
        while level > 0:
            parents = np.load(self.dir / f"parents-{level:05d}.npy", mmap_mode="r")
            actions = np.load(self.dir / f"actions-{level:05d}.npy", mmap_mode="r")
            path.append(int(actions[position]))
            position = int(parents[position])
            level -= 1
        return tuple(reversed(path))

    def bytes_on_disk(self) -> int:
        return sum(f.stat().st_size for f in self.dir.glob("*.npy"))

    def close(self) -> None:
        if self._owned:
            shutil.rmtree(self.dir, ignore_errors=True)


def whole_arrays(folder: Path) -> list[Path]:
    """The array files in `folder` that `save_array` finished; what a killed write left aside
    is removed (it is written again)."""
    for file in folder.glob(".*.tmp.npy"):
        file.unlink()
    return sorted(folder.glob("[!.]*.npy"))


def save_array(path: Path, array: np.ndarray) -> None:
    """An array file that appears whole or not at all: written aside, then renamed."""
    temporary = path.with_name(f".{path.name}.tmp.npy")
    np.save(temporary, array)
    os.replace(temporary, path)
