"""The seen set: 64-bit fingerprints of every state of the completed levels, as one sorted NumPy
array (8 bytes a state). A level's new fingerprints are merged in once, at the level's end."""

from __future__ import annotations

import numpy as np


class SeenSet:
    def __init__(self) -> None:
        self.sorted = np.empty(0, dtype=np.uint64)

    def __len__(self) -> int:
        return int(self.sorted.size)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """A boolean mask: which of `fps` are already seen."""
        if self.sorted.size == 0 or fps.size == 0:
            return np.zeros(fps.size, dtype=bool)
        index = np.searchsorted(self.sorted, fps)
        index[index == self.sorted.size] = 0
        return self.sorted[index] == fps

    def add(self, fps: np.ndarray) -> None:
        """Merge new, distinct fingerprints not seen before (linear in the set's size)."""
        new = np.sort(fps.astype(np.uint64, copy=False))
        self.sorted = np.insert(self.sorted, np.searchsorted(self.sorted, new), new)

    @property
    def nbytes(self) -> int:
        return int(self.sorted.nbytes)


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate that two distinct states shared a 64-bit fingerprint:
    each of the (generated - distinct) duplicate look-ups could have hit one of `distinct`."""
    return distinct * max(generated - distinct, 0) / 2.0**64


def contains_sorted(sorted_fps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    if sorted_fps.size == 0 or fps.size == 0:
        return np.zeros(fps.size, dtype=bool)
    index = np.searchsorted(sorted_fps, fps)
    index[index == sorted_fps.size] = 0
    return np.asarray(sorted_fps[index] == fps)
