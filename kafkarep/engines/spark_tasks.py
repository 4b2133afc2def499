"""What the Spark engine runs on the executors: the three stages of a level.

A level's states and the seen set are spread over P partitions by fingerprint (partition =
fingerprint mod P). Level d is one Spark job of three stages, two shuffles between them:

1. `materialize`, on the partitions holding level d-1: re-apply to each parent only the actions
   the driver chose for level d (enumerating a state's enabled actions is cheap, applying them
   is not), evaluate the `always` clauses on the new states, and send each state to the
   partition that owns its fingerprint (level 0: `seed`, the initial state);
2. `expand`, on the owners: every state of level d is expanded with the model's `successors`,
   the `sometimes` properties are checked on every step, and each successor's fingerprint and
   key (parent position << 16 | action index) go to the owner of that fingerprint;
3. `decide`, on the owners: the fingerprints not seen before, each with its smallest key, which
   is the occurrence the local explorer keeps; the partition's seen set grows by them.

The driver collects the keys and sorts them: a state's position in its level is the rank of
its key, as in the local explorer, and the sorted keys are the level's parent links. For every
successor only a fingerprint and a key cross the network; a state crosses it once. What a stage
hands on to its own partition (the seen set, the level's states) rides along the shuffles, so
each stage reads one input and the only cached data is stage 3's output.

Every function is deterministic in its input, so a task Spark retries gives the same output.
"""

from __future__ import annotations

import gc
import pickle
import time
from collections.abc import Callable, Iterable
from functools import cache, wraps
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
from pyspark import TaskContext

from kafkarep.common.failpoints import reach
from kafkarep.engines.checkpoint import write_atomically
from kafkarep.engines.kernel import ACTION_BITS, Expander, Found, Judge, model_clauses
from kafkarep.engines.seen import contains_sorted
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, digests
from kafkarep.model.initial import initial_state
from kafkarep.model.reduction import reduce
from kafkarep.model.state import ClusterState

ACTION_MASK = (1 << ACTION_BITS) - 1
FAULT_ENV = "KAFKAREP_SPARK_FAULT"  # test hook: "<stage>:<level>", see `inject_fault`
F = TypeVar("F", bound=Callable[..., Any])


class Task(NamedTuple):
    """What every task of a level's job needs."""

    cfg: ModelConfig
    partitions: int
    symmetry: bool
    level: int  # the level materialized and expanded
    deadline: float  # wall-clock seconds (time.time()) after which expansion stops; 0: none
    violated: frozenset[str]  # always-clauses already violated: not evaluated again
    reached: frozenset[str]  # sometimes-properties already reached: not evaluated again
    workdir: str = ""  # the run's work dir
    save: bool = False  # decide writes its output to the work dir, for --resume
    fault: str = ""  # the injected fault, "<stage>:<level>" (tests only)


# What goes through the shuffles, each keyed by the partition it goes to.


class Chunk(NamedTuple):
    positions: np.ndarray  # int64: the states' positions in their level
    states: bytes  # pickled: the list of the states, in the same order, and of their digests

    @staticmethod
    def of(positions: list[int], states: list[ClusterState], parts: list[Digests]) -> Chunk:
        # The component digests travel with the states: recomputing them means hashing whole
        # components, and a successor's fingerprint reuses its parent's (as in the explorer).
        data = pickle.dumps((states, parts), protocol=5)
        return Chunk(np.array(positions, dtype=np.int64), data)


class Checked(NamedTuple):
    found: Found  # a share's violations of the always-clauses
    seconds: float = 0.0  # CPU seconds materializing it


class Seen(NamedTuple):
    fps: np.ndarray  # uint64, sorted: a partition's seen set


class Candidates(NamedTuple):
    fps: np.ndarray  # uint64: successors' fingerprints (each once)
    keys: np.ndarray  # int64: the smallest key of each


class Expanded(NamedTuple):
    """What one partition's expansion tells the driver."""

    generated: int
    sometimes: dict[str, int]  # property -> smallest key of a step that reached it
    timed_out: bool
    violations: Found  # the expanded level's
    seconds: tuple[float, float] = (0.0, 0.0)  # CPU seconds materializing, expanding the share


class Parents(NamedTuple):
    chunks: tuple[Chunk, ...]  # the expanded level's states: the next level's parents


class Decided(NamedTuple):
    """A partition after level d: the cached output of stage 3, the input of the next job."""

    seen: np.ndarray  # uint64, sorted: the partition's seen set, through level d+1
    keys: np.ndarray  # int64: the keys of level d+1's states this partition owns
    parents: tuple[Chunk, ...]  # the partition's states of level d
    expanded: tuple[Expanded, ...]
    seconds: float = 0.0  # CPU seconds deciding


@cache
def judge(cfg: ModelConfig) -> Judge:
    """The model's judge, one per Python worker: its controller verdicts outlive a task."""
    return Judge(cfg, model_clauses(cfg).always)


def identity(partition: int) -> int:
    """The partition function of every shuffle: records are keyed by their partition."""
    return partition


def inject_fault(task: Task, stage: str) -> None:
    """Test hook: fail the first attempt of partition 0's `stage` task at the chosen level, so a
    test sees Spark retry it. Each attempt leaves a marker file in the work dir's faults/."""
    if task.fault != f"{stage}:{task.level}":
        return
    context = TaskContext.get()
    if context is None or context.partitionId() != 0:
        return
    attempt = context.attemptNumber()
    folder = Path(task.workdir) / "faults"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stage}-{task.level}-attempt{attempt}").touch()
    if attempt == 0:
        raise RuntimeError(f"injected fault in {stage} at level {task.level}")


def _quiet_gc(function: F) -> F:
    """States are acyclic tuples: the cycle collector only costs time while a task holds many.
    After the task, what the worker keeps (the judge's and the rules' caches) is frozen out of
    the collector's sight: PySpark's daemon runs a full `gc.collect()` after every task of a
    reused worker, which otherwise walks those caches each time (it took more CPU than the
    tasks themselves). Frozen objects are still freed when their last reference goes."""

    @wraps(function)
    def run(*args: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args)
        finally:
            gc.freeze()
            if enabled:
                gc.enable()

    return run  # type: ignore[return-value]


def merge_found(parts: Iterable[Found]) -> Found:
    out: Found = {}
    for part in parts:
        for name, (position, witness) in part.items():
            if name not in out or position < out[name][0]:
                out[name] = (position, witness)
    return out


def _states(chunks: Iterable[Chunk]) -> list[tuple[int, ClusterState, Digests]]:
    """The chunks' positions, states and digests, in level order."""
    out: list[tuple[int, ClusterState, Digests]] = []
    for chunk in chunks:
        states, parts = pickle.loads(chunk.states)
        out += zip(chunk.positions.tolist(), states, parts, strict=True)
    out.sort(key=lambda entry: entry[0])
    return out


# What a worker process expanded last: (run, partition) -> (level, its states in level order).
# The next level's `materialize` of the partition needs those states again as parents; when it
# runs in the same worker (always on `local[1]`, often elsewhere) it takes them from here instead
# of unpickling the same bytes again. A miss reads the bytes, as before. A run is named by all
# that decides a partition's states (two runs of a suite may share a work dir and a worker).
Held = tuple[int, list[tuple[int, ClusterState, Digests]]]
_EXPANDED: dict[tuple[object, ...], Held] = {}


def _run(task: Task, partition: int) -> tuple[object, ...]:
    return (task.workdir, task.cfg, task.symmetry, task.partitions, partition)


def _keep_expanded(
    task: Task, partition: int, level: list[tuple[int, ClusterState, Digests]]
) -> None:
    key = _run(task, partition)
    for held, (kept, _) in list(_EXPANDED.items()):
        if held[:-1] != key[:-1] or kept != task.level:  # the worker keeps the level it expands
            del _EXPANDED[held]
    _EXPANDED[key] = (task.level, level)


def _expanded_here(task: Task, partition: int) -> list[tuple[int, ClusterState, Digests]]:
    kept = _EXPANDED.pop(_run(task, partition), None)
    return kept[1] if kept is not None and kept[0] == task.level - 1 else []


# --- stage 1: level d's states, from their parents -------------------------------------------


@_quiet_gc
def seed(task: Task, _: int = 0) -> list[tuple[int, Any]]:
    """Level 0: the initial state, to its owner, and every partition's (empty) seen set."""
    state = initial_state(task.cfg)
    state = reduce(task.cfg, state)
    parts = digests(state)
    found = judge(task.cfg).first_violations([(0, state, parts)], task.violated)
    fp = Expander(task.cfg, (), (), task.symmetry).key(state, parts)
    owner = fp % task.partitions
    chunk = Chunk.of([0], [state], [parts])
    seen = [
        (q, Seen(np.array([fp] if q == owner else [], dtype=np.uint64)))
        for q in range(task.partitions)
    ]
    return [(owner, chunk), (owner, Checked(found)), *seen]


@_quiet_gc
def materialize(
    task: Task, winners: Any, partition: int, decided: Iterable[Decided]
) -> list[tuple[int, Any]]:
    """Level d's states whose parents are in this partition, to their owners; the partition's
    violations of the always-clauses and its seen set, to itself."""
    inject_fault(task, "materialize")
    began = time.process_time()
    keys, owners = winners.value
    gc.disable()  # reading a broadcast value turns the collector back on (pyspark's Broadcast.load)
    owner_of = owners.tolist()
    cfg = task.cfg
    expander = Expander(cfg, (), (), task.symmetry)
    children: dict[int, tuple[list[int], list[ClusterState], list[Digests]]] = {}
    made: list[tuple[int, ClusterState, Digests]] = []
    out: list[tuple[int, Any]] = []
    for record in decided:
        out.append((partition, Seen(record.seen)))
        parents = _expanded_here(task, partition) or _states(record.parents)
        if not parents:
            continue
        shifted = np.array([p for p, _, _ in parents], dtype=np.int64) << ACTION_BITS
        low = np.searchsorted(keys, shifted).tolist()
        high = np.searchsorted(keys, shifted + (1 << ACTION_BITS)).tolist()
        for (_, state, parts), lo, hi in zip(parents, low, high, strict=True):
            if lo == hi:
                continue
            wanted = dict(zip((keys[lo:hi] & ACTION_MASK).tolist(), range(lo, hi), strict=True))
            for index, child, child_parts in expander.chosen(state, parts, set(wanted)):
                position = wanted[index]
                share = children.setdefault(owner_of[position], ([], [], []))
                share[0].append(position)
                share[1].append(child)
                share[2].append(child_parts)
                made.append((position, child, child_parts))
    made.sort(key=lambda entry: entry[0])  # the judge wants level order
    found = judge(cfg).first_violations(made, task.violated)
    for owner, share in sorted(children.items()):
        out.append((owner, Chunk.of(*share)))
    out.append((partition, Checked(found, time.process_time() - began)))
    return out


# --- stage 2: an owner's share of level d, expanded -------------------------------------------


def violations(items: Iterable[tuple[int, Any]]) -> list[Found]:
    """Only the share's violations (a level that is checked but not expanded)."""
    return [merge_found(item.found for _, item in items if isinstance(item, Checked))]


@_quiet_gc
def expand(task: Task, partition: int, items: Iterable[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """Every successor of the share's states, as (fingerprint, smallest key) to its owner; the
    seen set, the states and what the driver needs to know, to this partition's decide."""
    inject_fault(task, "expand")
    began = time.process_time()
    cfg, symmetry = task.cfg, task.symmetry
    chunks: list[Chunk] = []
    checked: list[Checked] = []
    seen: Any = None
    for _, item in items:
        if isinstance(item, Chunk):
            chunks.append(item)
        elif isinstance(item, Checked):
            checked.append(item)
        else:
            seen = item
    expander = Expander(cfg, model_clauses(cfg).sometimes, task.reached, symmetry)
    fps: list[int] = []
    keys: list[int] = []
    generated, timed_out = 0, False
    # in level order, so the first step reaching a sometimes-property has the smallest key
    level = _states(chunks)
    _keep_expanded(task, partition, level)
    for count, (position, state, parts) in enumerate(level):
        for key, _, _, _, fp in expander.successors(state, parts, position << ACTION_BITS):
            fps.append(fp)
            keys.append(key)
        if count & 255 == 255 and task.deadline and time.time() > task.deadline:
            timed_out = True
            break
    generated = len(fps)
    fp_array, key_array = first_occurrences(
        np.array(fps, dtype=np.uint64), np.array(keys, dtype=np.int64)
    )
    owner = (fp_array % np.uint64(task.partitions)).astype(np.int64)
    out: list[tuple[int, Any]] = []
    for q in np.unique(owner).tolist():
        mask = owner == q
        out.append((q, Candidates(fp_array[mask], key_array[mask])))
    found = merge_found(c.found for c in checked)
    seconds = (sum(c.seconds for c in checked), time.process_time() - began)
    expanded = Expanded(generated, expander.hits, timed_out, found, seconds)
    out += [(partition, expanded), (partition, Parents(tuple(chunks)))]
    if seen is not None:
        out.append((partition, seen))
    return out


def first_occurrences(fps: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct fingerprint once, with its smallest key."""
    if fps.size == 0:
        return fps, keys
    order = np.lexsort((keys, fps))
    sorted_fps = fps[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = sorted_fps[1:] != sorted_fps[:-1]
    winners = order[first]
    return fps[winners], keys[winners]


# --- stage 3: the new states, against the seen set -------------------------------------------


@_quiet_gc
def decide(task: Task, partition: int, items: Iterable[tuple[int, Any]]) -> list[Decided]:
    inject_fault(task, "decide")
    began = time.process_time()
    seen = np.empty(0, np.uint64)
    arrays: list[Candidates] = []
    expanded: list[Expanded] = []
    parents: tuple[Chunk, ...] = ()
    for _, item in items:
        if isinstance(item, Candidates):
            arrays.append(item)
        elif isinstance(item, Seen):
            seen = item.fps
        elif isinstance(item, Expanded):
            expanded.append(item)
        else:
            parents = item.chunks
    if arrays:
        fps = np.concatenate([a.fps for a in arrays])
        keys = np.concatenate([a.keys for a in arrays])
    else:
        fps, keys = np.empty(0, np.uint64), np.empty(0, np.int64)
    new = ~contains_sorted(seen, fps)
    fps, keys = first_occurrences(fps[new], keys[new])
    merged = np.insert(seen, np.searchsorted(seen, fps), fps) if fps.size else seen
    seconds = time.process_time() - began
    decided = Decided(merged, np.sort(keys), parents, tuple(expanded), seconds)
    if task.save:
        save(task.workdir, task.level + 1, partition, decided._replace(expanded=()))
    return [decided]


def summary(
    partition: int, decided: Iterable[Decided]
) -> list[tuple[int, np.ndarray, tuple[Expanded, ...], float]]:
    """What the driver collects: the partition's new keys, its expansion's outcome, the CPU
    seconds of its decide."""
    return [(partition, d.keys, d.expanded, d.seconds) for d in decided]


# --- the work dir's copy of a level, for --resume ----------------------------------------------


def level_dir(workdir: str, level: int) -> Path:
    return Path(workdir) / f"level-{level:05d}"


def save(workdir: str, level: int, partition: int, decided: Decided) -> None:
    """Write a partition's outcome atomically, so a retried task leaves the same file."""
    folder = level_dir(workdir, level)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"part-{partition:05d}.pkl"
    write_atomically(path, pickle.dumps(decided, protocol=5))
    reach("saved", level)


def load(workdir: str, level: int, partition: int) -> Decided:
    decided: Decided = pickle.loads(
        (level_dir(workdir, level) / f"part-{partition:05d}.pkl").read_bytes()
    )
    return decided
