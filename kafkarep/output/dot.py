"""A state graph (`engines/state_graph.py`) as Graphviz DOT, written by pydot.

Every state a node labelled with its depth, the controller's leader, epochs and ISR, each
broker's role, log and HWM and the True HWM, its full state (`steps.fields`) as a tooltip; every
action an edge labelled with the actor, the action and, when it tells something, its outcome.
States that violate a clause are red and start with `VIOLATES <clause>`, the initial state is
bold, unexpanded frontier states are dashed.
"""

from __future__ import annotations

from typing import Any

import pydot

from kafkarep.model.actions import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState, Role
from kafkarep.output.steps import fields

ROLE = {Role.LEADER: "L", Role.FOLLOWER: "F", Role.NONE: "-"}
QUIET_OUTCOMES = ("ok", "partition changed")  # not worth a line on an edge
FONT = "DejaVu Sans Mono"


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


def tooltip(cfg: ModelConfig, state: ClusterState) -> str:
    return "; ".join(f"{k}={v}" for k, v in fields(cfg, state).items())


def _set(ids: frozenset[int]) -> str:
    return "{" + ",".join(map(str, sorted(ids))) + "}"


def _text(text: str) -> str:
    """Text for a DOT string: pydot quotes it and escapes quotes and line breaks (a centred
    line), not backslashes, which DOT reads as escapes."""
    return text.replace("\\", "\\\\")


def _left(text: str) -> str:
    """Text for a DOT string whose lines are left-justified (each ends with DOT's `\\l`)."""
    return "".join(_text(line) + "\\l" for line in text.split("\n"))


def to_dot(graph: Any) -> str:
    """Graphviz DOT: edges labelled with actions, violating states red (with their clauses),
    the initial state bold, unexpanded frontier states dashed."""
    cfg: ModelConfig = graph.graph["cfg"]
    name = str(graph.graph.get("name", "model"))
    title = f"{name}: {len(graph):,} states, {graph.number_of_edges():,} transitions"
    bad = sum(1 for _, d in graph.nodes(data=True) if d["violations"])
    if bad:
        title += f", {bad:,} violating"
    if not graph.graph.get("complete", True):
        title += " (partial: depth-limited)"
    dot = pydot.Dot(
        _text(name), graph_type="digraph", label=_text(title), labelloc="t", fontname=FONT
    )
    dot.set_node_defaults(
        shape="box", style="rounded,filled", fillcolor="#ffffff", fontname=FONT, fontsize=10
    )
    dot.set_edge_defaults(fontname=FONT, fontsize=9, color="#495057")
    initial = graph.graph.get("initial")
    for node, data in graph.nodes(data=True):
        label = f"#{data['depth']}\n{state_label(cfg, data['state'])}"
        attrs: dict[str, Any] = {}
        if data["violations"]:
            label = "VIOLATES " + ", ".join(data["violations"]) + "\n" + label
        attrs["label"] = _left(label)
        attrs["tooltip"] = _text(tooltip(cfg, data["state"]))
        if data["violations"]:
            attrs.update(fillcolor="#ffc9c9", color="#e03131", penwidth=2)
            attrs["violations"] = _text(" ".join(data["violations"]))
        if node == initial:
            attrs["penwidth"] = 3
            if not data["violations"]:
                attrs["fillcolor"] = "#e7f5ff"
        if data["frontier"]:
            attrs["style"] = "rounded,filled,dashed"
        dot.add_node(pydot.Node(node, **attrs))
    for source, target, data in graph.edges(data=True):
        label = edge_label(data["action"], data["outcome"])
        dot.add_edge(pydot.Edge(source, target, label=_text(label)))
    text: str = dot.to_string()
    return text
