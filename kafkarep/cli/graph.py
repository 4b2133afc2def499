"""`kafkarep graph MODEL --dot FILE`: the explored state graph of a small model, for Graphviz.

Every reachable state is a node (its depth, the controller's leader, epochs and ISR, each
broker's role, log and HWM), every enabled action an edge labelled with the actor, the action
and, when it tells something, its outcome. States that violate a property clause are red and name
it; the initial state is bold. Render with `dot -Tsvg FILE -o graph.svg`. Models with more than
--max-states states are refused (exit 2); --max-depth draws the neighbourhood of the initial
state only (the unexpanded states are dashed). Exit 0 when the file is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from kafkarep.common.exit_codes import OK, UsageError
from kafkarep.engines.state_graph import GraphTooLarge, explore_graph
from kafkarep.model.config import ModelError
from kafkarep.output.dot import to_dot
from kafkarep.properties.model_files import load_model

DEFAULT_MAX_STATES = 5000


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "graph",
        help="write the explored state graph of a small model as Graphviz DOT",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", type=Path, metavar="MODEL", help="a model file (TOML)")
    parser.add_argument(
        "--dot", type=Path, required=True, metavar="FILE", help="the DOT file to write"
    )
    parser.add_argument(
        "--max-states",
        type=int,
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"refuse models with more states (default {DEFAULT_MAX_STATES:,})",
    )
    parser.add_argument(
        "--max-depth",
        type=int,
        default=0,
        metavar="N",
        help="expand states up to this depth only (default: all)",
    )
    parser.add_argument(
        "--symmetry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="merge broker-id symmetric states (default: the model's)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.max_states < 1:
        raise UsageError("--max-states must be >= 1")
    if args.max_depth < 0:
        raise UsageError("--max-depth must be >= 0")
    try:
        cfg = load_model(args.model)
        graph = explore_graph(cfg, args.max_states, args.max_depth, args.symmetry)
    except (ModelError, GraphTooLarge) as error:
        raise UsageError(str(error)) from None
    try:
        args.dot.parent.mkdir(parents=True, exist_ok=True)
        args.dot.write_text(to_dot(graph))
    except OSError as error:
        raise UsageError(f"{args.dot}: cannot write ({error.strerror})") from None
    bad = [n for n, d in graph.nodes(data=True) if d["violations"]]
    clauses = sorted({c for n in bad for c in graph.nodes[n]["violations"]})
    scope = "complete" if graph.graph["complete"] else f"to depth {args.max_depth}"
    console = Console(width=160)
    console.print(
        f"{cfg.name}: {len(graph):,} states, {graph.number_of_edges():,} transitions ({scope}), "
        f"{len(bad):,} violating" + (f" ({', '.join(clauses)})" if clauses else ""),
        highlight=False,
    )
    console.print(
        f"wrote {args.dot}; render: dot -Tsvg {args.dot} -o {args.dot.with_suffix('.svg')}",
        highlight=False,
    )
    return OK
