"""`kafkarep graph`: the explored state graph agrees with the explorer (same states, violations
at the same shortest depth), edges carry actions, violating states are marked, and models too
big for a picture are refused."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx
import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.engines.state_graph import explore_graph
from kafkarep.output.dot import edge_label, to_dot
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

LRS = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
# The Last Replica Standing on two brokers: small enough to draw whole.
TWO_BROKERS = """
[model]
description = "Last Replica Standing on two brokers"
[cluster]
brokers = 2
replicas = [1, 2]
isr = [1, 2]
min_isr = 2
records = 1
[rules]
metadata_version = "3.5"
hwm_requires_min_isr = false
hwm_waits_for_caught_up_followers = false
[faults]
fences = 1
lossy_unclean_shutdowns = 1
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "lrs2.toml"
    path.write_text(TWO_BROKERS)
    return path


def test_graph_agrees_with_the_explorer(small: Path) -> None:
    cfg = load_model(small)
    graph = explore_graph(cfg, max_states=5000, max_depth=5)
    run = Explorer(cfg, properties.ALL, Limits(max_depth=5)).run()
    assert len(graph) == run.distinct_states
    root = graph.graph["initial"]
    depth = nx.single_source_shortest_path_length(graph, root)
    assert all(graph.nodes[n]["depth"] == d for n, d in depth.items())
    bad = [n for n, d in graph.nodes(data=True) if d["violations"]]
    assert bad, "the seeded Last Replica Standing must show as a violating state"
    for clause, found in run.violations.items():
        marked = [n for n in bad if clause in graph.nodes[n]["violations"]]
        assert min(depth[n] for n in marked) == found.depth
    # Following the explorer's action indices from the initial state reaches a marked state.
    node = root
    for index in run.violations["leader_candidate_completeness.isr"].path:
        [node] = [t for _, t, d in graph.out_edges(node, data=True) if d["index"] == index]
    assert "leader_candidate_completeness.isr" in graph.nodes[node]["violations"]
    labels = {
        edge_label(d["action"], d["outcome"]).split("\n")[0] for _, _, d in graph.edges(data=True)
    }
    assert {"b1: produce", "ctl: fence(2)", "b1: crash_lossy"} <= labels


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot on a newer pyparsing
def test_graph_command_writes_dot(small: Path, tmp_path: Path) -> None:
    dot = tmp_path / "out" / "graph.dot"
    assert main(["graph", str(small), "--dot", str(dot), "--max-depth", "5"]) == 0
    text = dot.read_text()
    graph = explore_graph(load_model(small), 5000, 5)
    assert text == to_dot(graph)
    nodes = re.findall(r"^(s[0-9a-f]{16}) \[", text, re.M)
    edges = re.findall(r'^(s[0-9a-f]{16}) -> (s[0-9a-f]{16}) \[label="([^"]+)"\];$', text, re.M)
    assert len(nodes) == len(graph) and len(edges) == graph.number_of_edges()
    assert set(nodes) == set(graph.nodes)
    red = re.findall(r'^(s[0-9a-f]{16}) \[.*fillcolor="#ffc9c9".*\];$', text, re.M)
    assert set(red) == {n for n, d in graph.nodes(data=True) if d["violations"]}
    assert "VIOLATES leader_candidate_completeness.isr" in text

    pydot = pytest.importorskip("pydot")
    [parsed] = pydot.graph_from_dot_data(text)
    assert len(parsed.get_edges()) == graph.number_of_edges()
    violating = [n for n in parsed.get_nodes() if n.get("violations")]
    assert {n.get_name().strip('"') for n in violating} == set(red)


def test_graph_refuses_big_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dot = tmp_path / "big.dot"
    assert main(["graph", str(LRS), "--dot", str(dot), "--max-states", "200"]) == 2
    assert "more than 200 states" in capsys.readouterr().err
    assert not dot.exists()
    assert main(["graph", str(tmp_path / "missing.toml"), "--dot", str(dot)]) == 2
    assert main(["graph", str(LRS), "--dot", str(dot), "--max-states", "0"]) == 2
