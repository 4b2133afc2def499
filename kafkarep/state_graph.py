"""The explored state graph of a small model, as a networkx graph and as Graphviz DOT.

Breadth-first from the initial state with the search kernel (`engines/kernel.py`): the
explorer's successors in its order, reduced as it stores them, each known by the explorer's
fingerprint (of its canonical form when symmetry is on), every `always` clause of the model's
properties judged on every state. Nodes carry their depth, a
short label and the clauses they violate; edges (a multigraph: two actions may lead to the same
state) carry the action and its outcome. The search refuses to go past `max_states`: a graph of
more states than that is not readable anyway.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import networkx as nx

from kafkarep.engines.kernel import Expander, Judge, model_clauses
from kafkarep.model.actions import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, digests
from kafkarep.model.initial import initial_state
from kafkarep.model.reduction import reduce
from kafkarep.model.replay import outcome
from kafkarep.model.state import ClusterState, Role
from kafkarep.output.steps import fields

ROLE = {Role.LEADER: "L", Role.FOLLOWER: "F", Role.NONE: "-"}
QUIET_OUTCOMES = ("ok", "partition changed")  # not worth a line on an edge


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
    graph = nx.MultiDiGraph(name=cfg.name, model=cfg.path, symmetry=use_symmetry)

    def add(node: str, state: ClusterState, depth: int) -> None:
        violated = judge.violated(state)
        graph.add_node(
            node,
            depth=depth,
            label=state_label(cfg, state),
            violations=tuple(name for name, _ in violated),
            witnesses=tuple(witness for _, witness in violated),
            tooltip="; ".join(f"{k}={v}" for k, v in fields(cfg, state).items()),
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
                action=action.describe(),
                actor=action.actor,
                label=edge_label(action, outcome(cfg, state, action, after)),
            )
    graph.graph["complete"] = not any(d["frontier"] for _, d in graph.nodes(data=True))
    return graph


def edge_label(action: Action, result: str) -> str:
    actor = "ctl" if action.actor == 0 else f"b{action.actor}"
    label = f"{actor}: {action.describe()}"
    return label if result in QUIET_OUTCOMES else f"{label}\n{result}"


def state_label(cfg: ModelConfig, state: ClusterState) -> str:
    p = state.partition
    lines = [
        f"L{p.leader} LE{p.leader_epoch} PE{p.partition_epoch} ISR{_set(p.isr)}"
        + (f" ELR{_set(p.elr)}" if cfg.options.elr_enabled else "")
    ]
    for b, broker in enumerate(state.brokers, 1):
        replica = broker.replica
        up = "" if broker.status.running else " down"
        if replica is None:
            lines.append(f"b{b}{up}")
            continue
        log = ",".join(f"{v}e{e}" for e, v in replica.log)
        lines.append(f"b{b} {ROLE[replica.role]}{up} [{log}] hwm {replica.hwm}")
    lines.append(f"true HWM {state.ghost.true_hwm}")
    return "\n".join(lines)


def _set(ids: frozenset[int]) -> str:
    return "{" + ",".join(map(str, sorted(ids))) + "}"


def _quote(text: str, align: str = "\\n") -> str:
    """A DOT string: quotes and backslashes escaped, lines joined by `align` (\\n or \\l)."""
    lines = [line.replace("\\", "\\\\").replace('"', '\\"') for line in text.split("\n")]
    body = align.join(lines) + (align if align == "\\l" else "")
    return f'"{body}"'


def to_dot(graph: Any) -> str:
    """Graphviz DOT: edges labelled with actions, violating states red (with their clauses),
    the initial state bold, unexpanded frontier states dashed."""
    title = f"{graph.graph.get('name', 'model')}: {len(graph):,} states, "
    title += f"{graph.number_of_edges():,} transitions"
    bad = sum(1 for _, d in graph.nodes(data=True) if d["violations"])
    if bad:
        title += f", {bad:,} violating"
    if not graph.graph.get("complete", True):
        title += " (partial: depth-limited)"
    out = [
        f"digraph {_quote(str(graph.graph.get('name', 'model')))} {{",
        f'  graph [label={_quote(title)}, labelloc=t, fontname="DejaVu Sans Mono"];',
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
        'fontname="DejaVu Sans Mono", fontsize=10];',
        '  edge [fontname="DejaVu Sans Mono", fontsize=9, color="#495057"];',
    ]
    initial = graph.graph.get("initial")
    for node, data in graph.nodes(data=True):
        label = f"#{data['depth']}\n{data['label']}"
        attrs = [f"label={_quote(label, chr(92) + 'l')}", f"tooltip={_quote(data['tooltip'])}"]
        if data["violations"]:
            label = "VIOLATES " + ", ".join(data["violations"]) + "\n" + label
            attrs[0] = f"label={_quote(label, chr(92) + 'l')}"
            attrs += ['fillcolor="#ffc9c9"', 'color="#e03131"', "penwidth=2"]
            attrs.append(f"violations={_quote(' '.join(data['violations']))}")
        if node == initial:
            attrs += ["penwidth=3", 'fillcolor="#e7f5ff"' if not data["violations"] else ""]
        if data["frontier"]:
            attrs.append('style="rounded,filled,dashed"')
        out.append(f"  {_quote(node)} [{', '.join(a for a in attrs if a)}];")
    for source, target, data in graph.edges(data=True):
        out.append(f"  {_quote(source)} -> {_quote(target)} [label={_quote(data['label'])}];")
    out.append("}")
    return "\n".join(out) + "\n"
