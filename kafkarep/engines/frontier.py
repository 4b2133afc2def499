"""A level of the search (states with their component digests, in level order) that spills to disk.

Up to `limit` entries stay in memory; past that, entries go to chunk files in the explorer's
work folder (`CHUNK` entries each, fewer for a small limit), read back one chunk at a time when
the level is walked. Worker
processes share that folder, so rebalancing a level between them moves whole chunk files by
name and pickles only what is in memory. With no limit a level is one in-memory list, as fast
as a plain list.
"""

from __future__ import annotations

import itertools
import os
import pickle
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kafkarep.model.encoding import Digests

CHUNK = 1 << 15

# a state, its component digests, and the sleep keys of the steps it need not take (or None)
Entry = tuple[Any, Digests, Any]


class Spilled:
    """A chunk of entries in a file."""

    __slots__ = ("count", "path")

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.count = count

    def load(self) -> list[Entry]:
        with open(self.path, "rb") as file:
            entries: list[Entry] = pickle.load(file)
        return entries

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)


Segment = list[Entry] | Spilled

_names = itertools.count()


class Frontier:
    def __init__(self, directory: Path, limit: int = 0) -> None:
        self.directory = directory
        self.limit = limit  # entries held in memory before spilling; 0: never spill
        self.chunk = min(CHUNK, limit) if limit else CHUNK
        self.segments: list[Segment] = []
        self.in_memory = 0
        self.spilled = 0  # entries written to disk over this frontier's life

    def __len__(self) -> int:
        return sum(len(s) if isinstance(s, list) else s.count for s in self.segments)

    def __iter__(self) -> Iterator[Entry]:
        for segment in self.segments:
            yield from segment if isinstance(segment, list) else segment.load()

    def pick(self, positions: list[int]) -> Iterator[Entry]:
        """The entries at these positions (increasing); chunks holding none are not read."""
        base = done = 0
        for segment in self.segments:
            end = base + (len(segment) if isinstance(segment, list) else segment.count)
            upto = bisect_left(positions, end, done)
            if upto > done:
                entries = segment if isinstance(segment, list) else segment.load()
                yield from (entries[k - base] for k in positions[done:upto])
            done, base = upto, end
            if done == len(positions):
                return

    def append(self, entry: Entry) -> None:
        segments = self.segments
        if not segments or not isinstance(segments[-1], list):
            segments.append([])
        tail = segments[-1]
        assert isinstance(tail, list)
        tail.append(entry)
        self.in_memory += 1
        if self.limit and self.in_memory > self.limit and len(tail) >= self.chunk:
            segments[-1] = self._write(tail)

    def extend(self, entries: Iterable[Entry]) -> None:
        if self.limit:
            for entry in entries:
                self.append(entry)
            return
        if not self.segments or not isinstance(self.segments[-1], list):
            self.segments.append([])
        tail = self.segments[-1]
        assert isinstance(tail, list)
        before = len(tail)
        tail.extend(entries)
        self.in_memory += len(tail) - before

    def clear(self) -> None:
        for segment in self.segments:
            if isinstance(segment, Spilled):
                segment.drop()
        self.segments, self.in_memory = [], 0

    def _write(self, entries: list[Entry]) -> Spilled:
        path = self.directory / f"frontier-{os.getpid()}-{next(_names)}.pickle"
        with open(path, "wb") as file:
            pickle.dump(entries, file, protocol=pickle.HIGHEST_PROTOCOL)
        self.in_memory -= len(entries)
        self.spilled += len(entries)
        return Spilled(path, len(entries))

    # --- moving entries between workers (rebalancing keeps the level's order) -------------

    def give(self, count: int, from_end: bool) -> list[Segment]:
        """Remove `count` entries from one end; returns them as segments (files by name)."""
        out: list[Segment] = []
        while count > 0:
            segment = self.segments.pop() if from_end else self.segments.pop(0)
            size = len(segment) if isinstance(segment, list) else segment.count
            if size > count:  # split it: the part that stays goes back where it was
                entries = segment if isinstance(segment, list) else segment.load()
                if isinstance(segment, Spilled):
                    segment.drop()
                    self.in_memory += size
                keep, moved = (
                    (entries[: size - count], entries[size - count :])
                    if from_end
                    else (entries[count:], entries[:count])
                )
                if from_end:
                    self.segments.append(keep)
                else:
                    self.segments.insert(0, keep)
                segment, size = moved, count
            if isinstance(segment, list):
                self.in_memory -= size
            out.append(segment)
            count -= size
        return out[::-1] if from_end else out

    def take(self, segments: list[Segment], at_end: bool) -> None:
        for segment in segments:
            if isinstance(segment, list):
                self.in_memory += len(segment)
        self.segments = self.segments + segments if at_end else segments + self.segments


def dumps(segments: list[Segment]) -> bytes:
    return pickle.dumps(
        [s if isinstance(s, list) else (str(s.path), s.count) for s in segments],
        protocol=pickle.HIGHEST_PROTOCOL,
    )


def loads(data: bytes) -> list[Segment]:
    return [s if isinstance(s, list) else Spilled(Path(s[0]), s[1]) for s in pickle.loads(data)]
