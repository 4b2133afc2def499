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
        return contains_sorted(self.sorted, fps)

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
    """A boolean mask: which of `fps` are in the sorted array. The look-ups go in sorted order,
    so each binary search starts near the last one in memory: 3x faster at 300,000 states and
    8x at 15 million than looking up in the order given (benchmarks/seen_lookup.py)."""
    if sorted_fps.size == 0 or fps.size == 0:
        return np.zeros(fps.size, dtype=bool)
    order = np.argsort(fps)
    queries = fps[order]
    index = np.searchsorted(sorted_fps, queries)
    index[index == sorted_fps.size] = 0
    found = np.empty(fps.size, dtype=bool)
    found[order] = sorted_fps[index] == queries
    return found
