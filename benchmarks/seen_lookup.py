"""Seen-set look-ups: a batch of 4,096 fingerprints against a sorted array, in the order given
and in sorted order (what `kafkarep.engines.seen.contains_sorted` does).

    python benchmarks/seen_lookup.py
"""

from __future__ import annotations

import time

import numpy as np

from kafkarep.engines.seen import contains_sorted


def per_batch(seen: np.ndarray, batch: np.ndarray, lookup: object, rounds: int = 100) -> float:
    began = time.perf_counter()
    for _ in range(rounds):
        lookup(seen, batch)  # type: ignore[operator]
    return (time.perf_counter() - began) / rounds * 1e6


def unsorted(seen: np.ndarray, batch: np.ndarray) -> np.ndarray:
    index = np.searchsorted(seen, batch)
    index[index == seen.size] = 0
    return np.asarray(seen[index] == batch)


def main() -> None:
    rng = np.random.default_rng(1)
    print(f"{'seen':>12} {'given order':>14} {'sorted order':>14}  (microseconds per batch)")
    for size in (300_000, 3_000_000, 15_000_000):
        seen = np.sort(rng.integers(0, 2**63, size, dtype=np.int64).astype(np.uint64))
        batch = rng.integers(0, 2**63, 4096, dtype=np.int64).astype(np.uint64)
        assert (unsorted(seen, batch) == contains_sorted(seen, batch)).all()
        a, b = per_batch(seen, batch, unsorted), per_batch(seen, batch, contains_sorted)
        print(f"{size:>12,} {a:>14,.0f} {b:>14,.0f}")


if __name__ == "__main__":
    main()
