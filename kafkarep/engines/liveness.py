"""Liveness on the explored graph: fair cycles that never reach the goal, as lassos.

For a property P ~> Q and one of its subjects, a violation is a behaviour that reaches a state
where P holds and Q does not, then never reaches Q again, while weakly fair to every fair unit
(`properties/fairness.py`): a unit that stays enabled is eventually taken. `eventually Q` is the
same from the initial state. On a finite graph such a behaviour ends in a strongly connected
component of the states where Q is false whose every fair unit is taken on an edge inside it or
is disabled at one of its states (for weak fairness that test on the component is exact: a
cycle inside it that is fair exists iff it holds). A behaviour may stutter, as in TLA+, so a
single state where no fair unit is enabled is such a component.

The components come from SciPy's sparse graph routines (Tarjan's algorithm, iterative, in C),
the states that can reach a fair one from a breadth-first search backwards; the lasso is the
shortest path from the initial state to the first state (in breadth-first order) where P holds
and Q does not and from which a fair component is reachable, then a shortest path inside the Q-free
states to the component, then a cycle through it that visits a witness of each unit's fairness
(an edge that takes it, or a state where it is disabled).

The graph's states are the explorer's: reduced (`model/reduction.py`) and fingerprinted. Before a
lasso is reported, `confirm` replays its path through the plain rules and judges the concrete
lasso with `properties/fairness.lasso_problem`, the judgement `kafkarep replay` makes. A lasso
the rules do not confirm is never reported: the run ends with an internal error that names the
first state of the cycle where the graph's enabled fair units differ from the rules' (a reduction
that is not a bisimulation there) or, if none differ, the problem.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from kafkarep.engines.graph import Graph
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import replay_path
from kafkarep.properties.fairness import describe, enabled_units, lasso_problem

UNREACHED = -9999  # SciPy's predecessor of a state a search did not reach


class Lasso(NamedTuple):
    """A violation: `start` (a state id) reached by the parent links, then `stem` and `cycle`
    as edge indices; the cycle's last edge returns to its first state (no edges: a stutter)."""

    subject: int
    start: int
    stem: tuple[int, ...]
    cycle: tuple[int, ...]


class Fairness(NamedTuple):
    words: np.ndarray  # (edges, W) uint64: the bit of each edge's fair unit, 0 if unfair
    enabled: np.ndarray  # (n, W) uint64: the fair units enabled in each state
    units: np.ndarray  # the fair unit codes, by bit


def fairness(graph: Graph, is_fair: Callable[[int], bool]) -> Fairness:
    codes = np.unique(graph.unit)
    fair = np.array([c for c in codes.tolist() if is_fair(int(c))], dtype=np.int64)
    width = max(1, -(-fair.size // 64))
    words = np.zeros((graph.src.size, width), dtype=np.uint64)
    enabled = np.zeros((graph.n, width), dtype=np.uint64)
    if fair.size:
        position = np.searchsorted(fair, graph.unit)
        position = np.minimum(position, fair.size - 1)
        is_fair_edge = fair[position] == graph.unit
        for word in range(width):
            inside = is_fair_edge & (position // 64 == word)
            bits = np.zeros(graph.src.size, dtype=np.uint64)
            bits[inside] = np.left_shift(np.uint64(1), (position[inside] % 64).astype(np.uint64))
            words[:, word] = bits
            np.bitwise_or.at(enabled[:, word], graph.src, bits)
    return Fairness(words, enabled, fair)


def check(
    graph: Graph, index: int, subjects: int, eventually: bool, fair: Fairness
) -> Lasso | None:
    """The first subject (by bit) for which property `index` of the graph's masks is violated,
    with a lasso; None when it holds for every subject."""
    for subject in range(subjects):
        goal = (graph.goal[:, index] >> subject) & 1 == 1
        if eventually:
            starts = np.zeros(graph.n, dtype=bool)
            starts[0] = not goal[0]
        else:
            starts = ((graph.premise[:, index] >> subject) & 1 == 1) & ~goal
        if not starts.any():
            continue
        lasso = _violation(graph, ~goal, starts, fair)
        if lasso is not None:
            return Lasso(subject, *lasso)
    return None


def _violation(
    graph: Graph, free: np.ndarray, starts: np.ndarray, fair: Fairness
) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    n = graph.n
    inside = free[graph.src] & free[graph.dst]  # the edges among goal-free states
    src, dst = graph.src[inside], graph.dst[inside]
    matrix = csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(n, n))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    count = int(labels.max()) + 1 if n else 0
    width = fair.enabled.shape[1]
    everywhere = np.full((count, width), np.iinfo(np.uint64).max, dtype=np.uint64)
    taken = np.zeros((count, width), dtype=np.uint64)
    states = np.flatnonzero(free)
    same = labels[src] == labels[dst]
    edge_words = fair.words[inside]
    for word in range(width):
        np.bitwise_and.at(everywhere[:, word], labels[states], fair.enabled[states, word])
        np.bitwise_or.at(taken[:, word], labels[src[same]], edge_words[same, word])
    fair_component = ~np.any(everywhere & ~taken, axis=1)
    bad = free & fair_component[labels]
    if not bad.any():
        return None
    # Backwards from the fair components: a virtual state n points at every state in one.
    targets = np.flatnonzero(bad)
    rows = np.concatenate([dst, np.full(targets.size, n)])
    cols = np.concatenate([src, targets])
    backwards = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    _, towards = breadth_first_order(backwards, n, directed=True, return_predecessors=True)
    reaching = starts & (towards[:n] != UNREACHED)
    if not reaching.any():
        return None
    start = int(np.flatnonzero(reaching)[0])
    path = [start]
    while towards[path[-1]] != n:
        path.append(int(towards[path[-1]]))
    stem = tuple(_edge(graph, a, b, inside) for a, b in itertools.pairwise(path))
    entry = path[-1]
    component = labels == labels[entry]
    cycle = _fair_cycle(
        graph, entry, component, inside & component[graph.src] & component[graph.dst], fair
    )
    return start, stem, cycle


def _fair_cycle(
    graph: Graph, entry: int, component: np.ndarray, edges: np.ndarray, fair: Fairness
) -> tuple[int, ...]:
    """A cycle from `entry` through the component visiting, for every fair unit enabled in it,
    a state where the unit is disabled or else an edge that takes it."""
    members = np.flatnonzero(component)
    witnesses: list[tuple[str, int]] = []  # ("state", id) or ("edge", index)
    for bit in range(fair.units.size):
        word, mask = bit // 64, np.uint64(1) << np.uint64(bit % 64)
        on = (fair.enabled[members, word] & mask) != 0
        if not on.any():
            continue
        if not on[members == entry].all():
            continue  # disabled at the entry, which every cycle from it visits
        if not on.all():
            witnesses.append(("state", int(members[np.flatnonzero(~on)[0]])))
            continue
        taking = np.flatnonzero(edges & ((fair.words[:, word] & mask) != 0))
        witnesses.append(("edge", int(taking[0])))
    src, dst = graph.src[edges], graph.dst[edges]
    matrix = csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(graph.n, graph.n))
    cycle: list[int] = []
    here = entry
    for kind, item in witnesses:
        target = item if kind == "state" else int(graph.src[item])
        cycle += _walk(graph, matrix, here, target, edges)
        here = target
        if kind == "edge":
            cycle.append(item)
            here = int(graph.dst[item])
    cycle += _walk(graph, matrix, here, entry, edges)
    return tuple(cycle)


def _walk(graph: Graph, matrix: csr_matrix, start: int, end: int, edges: np.ndarray) -> list[int]:
    """The edges of a shortest path from start to end over the given edges."""
    if start == end:
        return []
    _, before = breadth_first_order(matrix, start, directed=True, return_predecessors=True)
    path = [end]
    while path[-1] != start:
        path.append(int(before[path[-1]]))
    path.reverse()
    return [_edge(graph, a, b, edges) for a, b in itertools.pairwise(path)]


def _edge(graph: Graph, a: int, b: int, allowed: np.ndarray) -> int:
    """The first edge (smallest action index) from a to b among the allowed ones."""
    low, high = np.searchsorted(graph.src, [a, a + 1])
    for index in range(int(low), int(high)):
        if graph.dst[index] == b and allowed[index]:
            return index
    raise AssertionError(f"no edge {a} -> {b}")


class LassoNotConfirmed(RuntimeError):
    """The state graph has a fair lasso that the rules, replayed, do not: a bug in kafkarep."""


def confirm(
    cfg: ModelConfig, graph: Graph, fair: Fairness, lasso: Lasso, path: tuple[int, ...], loop: int
) -> None:
    """Replay a lasso's path (the parent links' prefix, then its stem and cycle) through the
    plain rules and judge it as `kafkarep replay` does; raise `LassoNotConfirmed` if the rules
    refuse it."""
    trace = replay_path(cfg, path)
    states = [trace.initial, *(step.after for step in trace.steps)]
    problem = lasso_problem(cfg, states, [step.action for step in trace.steps], loop)
    if problem is None:
        return
    entry = int(graph.dst[lasso.stem[-1]]) if lasso.stem else lasso.start
    nodes = [entry, *(int(graph.dst[e]) for e in lasso.cycle[:-1])]
    for offset, node in enumerate(nodes):
        mine = _units(fair, node)
        theirs = enabled_units(cfg, states[loop + offset])
        if mine != theirs:
            problem = (
                f"at state {loop + offset} the state graph has {_names(mine)} enabled and the "
                f"rules {_names(theirs)}: the explorer's state there is not the rules' (the "
                "reductions of kafkarep/model/reduction.py, switched off by --no-reduction)"
            )
            break
    raise LassoNotConfirmed(f"a lasso on the state graph is not a fair behaviour: {problem}")


def _units(fair: Fairness, node: int) -> frozenset[int]:
    return frozenset(
        int(code)
        for bit, code in enumerate(fair.units.tolist())
        if int(fair.enabled[node, bit // 64]) >> (bit % 64) & 1
    )


def _names(units: frozenset[int]) -> str:
    return "{" + ", ".join(describe(code) for code in sorted(units)) + "}" if units else "none"
