"""Seen-set look-ups against a sorted array: in the order given and in sorted order (what
`kafkarep.engines.seen.contains_sorted` does), and, sorted, by batch size (the explorer's
`worker.BATCH`).

    python benchmarks/seen_lookup.py
"""

from __future__ import annotations

import time

import numpy as np

from kafkarep.engines.seen import contains_sorted
from kafkarep.engines.worker import BATCH


def per_lookup(seen: np.ndarray, batches: list[np.ndarray], lookup: object) -> float:
    """Nanoseconds per fingerprint looked up, over fresh batches (a batch looked up twice
    finds its search paths in the cache, which the explorer's never do)."""
    began = time.perf_counter()
    for batch in batches:
        lookup(seen, batch)  # type: ignore[operator]
    return (time.perf_counter() - began) / sum(b.size for b in batches) * 1e9


def fresh(rng: np.random.Generator, seen: np.ndarray, size: int, count: int) -> list[np.ndarray]:
    """Batches as the explorer's: most successors were seen before (three in four here)."""
    out = []
    for _ in range(count):
        old = seen[rng.integers(0, seen.size, size * 3 // 4)]
        new = rng.integers(0, 2**63, size - old.size, dtype=np.int64).astype(np.uint64)
        out.append(np.concatenate([old, new]))
    return out


def unsorted(seen: np.ndarray, batch: np.ndarray) -> np.ndarray:
    index = np.searchsorted(seen, batch)
    index[index == seen.size] = 0
    return np.asarray(seen[index] == batch)


def main() -> None:
    rng = np.random.default_rng(1)
    sizes = (4096, BATCH, 65536)
    print("nanoseconds per look-up")
    head = " ".join(f"{f'sorted, {n:,}':>15}" for n in sizes)
    print(f"{'seen':>12} {'given, 4,096':>13} {head}   (batch size; the explorer's: {BATCH:,})")
    for size in (300_000, 3_000_000, 15_000_000):
        seen = np.sort(rng.integers(0, 2**63, size, dtype=np.int64).astype(np.uint64))
        lookups = 2**21  # per figure, in batches of the column's size
        batches = {n: fresh(rng, seen, n, lookups // n) for n in sizes}
        small = batches[4096]
        assert (unsorted(seen, small[0]) == contains_sorted(seen, small[0])).all()
        given = per_lookup(seen, small, unsorted)
        cells = " ".join(f"{per_lookup(seen, batches[n], contains_sorted):>15,.0f}" for n in sizes)
        print(f"{size:>12,} {given:>13,.0f} {cells}")


if __name__ == "__main__":
    main()
