"""The explored state graph of a small model, as a networkx graph (`output/dot.py` draws it).

Breadth-first from the initial state with the search kernel (`engines/kernel.py`): the
explorer's successors in its order, reduced as it stores them, each known by the explorer's
fingerprint (of its canonical form when symmetry is on), every `always` clause of the model's
properties judged on every state. Nodes carry their state, depth and the clauses they violate
(with the witnesses); edges (a multigraph: two actions may lead to the same state) carry the
action's index, the action and its outcome; the graph carries the model. The search refuses to
go past `max_states`: a graph of more states than that is not readable anyway.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import networkx as nx

from kafkarep.engines.kernel import Expander, Judge, model_clauses
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, digests
from kafkarep.model.initial import initial_state
from kafkarep.model.reduction import reduce
from kafkarep.model.replay import outcome
from kafkarep.model.state import ClusterState


class GraphTooLarge(Exception):
    """The model has more states than the graph may hold."""


def node_id(fp: int) -> str:
    return f"s{fp:016x}"


def explore_graph(
    cfg: ModelConfig, max_states: int, max_depth: int = 0, symmetry: bool | None = None
) -> Any:
    """The state graph (a networkx MultiDiGraph); GraphTooLarge past `max_states` states.
    With `max_depth`, states at that depth are not expanded (marked `frontier`)."""
    use_symmetry = cfg.check.symmetry if symmetry is None else symmetry
    # The explorer's kernel: the same successors, reduced, and the same fingerprints.
    expander = Expander(cfg, (), (), use_symmetry)
    judge = Judge(cfg, model_clauses(cfg).always)
    graph = nx.MultiDiGraph(name=cfg.name, model=cfg.path, cfg=cfg, symmetry=use_symmetry)

    def add(node: str, state: ClusterState, depth: int) -> None:
        violated = judge.violated(state)
        graph.add_node(
            node,
            state=state,
            depth=depth,
            violations=tuple(name for name, _ in violated),
            witnesses=tuple(witness for _, witness in violated),
            frontier=False,
        )
        if len(graph) > max_states:
            raise GraphTooLarge(
                f"{cfg.path}: more than {max_states:,} states (depth {depth} reached); "
                "raise --max-states, limit --max-depth, or graph a smaller model"
            )

    first = reduce(cfg, initial_state(cfg))
    first_parts = digests(first)
    root = node_id(expander.key(first, first_parts))
    add(root, first, 0)
    graph.graph["initial"] = root
    queue: deque[tuple[ClusterState, Digests, str, int]] = deque([(first, first_parts, root, 0)])
    while queue:
        state, parts, node, depth = queue.popleft()
        if max_depth and depth >= max_depth:
            graph.nodes[node]["frontier"] = True
            continue
        for index, action, after, after_parts, fp in expander.successors(state, parts, 0):
            target = node_id(fp)
            if target not in graph:
                add(target, after, depth + 1)
                queue.append((after, after_parts, target, depth + 1))
            graph.add_edge(
                node,
                target,
                index=index,
                action=action,
                outcome=outcome(cfg, state, action, after),
            )
    graph.graph["complete"] = not any(d["frontier"] for _, d in graph.nodes(data=True))
    return graph
