"""Liveness under weak fairness (kafkarep/engines/liveness.py, properties/liveness.py): the
checker finds fair lassos and only fair ones, on small hand-made graphs where the answer is
known; the explorer's lassos replay and `replay` refuses one that does not close or is not fair;
the fairness of a family decides a verdict; other engines refuse liveness in one line.

The seeded liveness bugs themselves (models/liveness/) are run by tests/test_models.py, which
pins each lasso's length and replays it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kafkarep.cli.main import main
from kafkarep.engines import liveness
from kafkarep.engines.graph import Graph
from tests.helpers import ROOT

LIVENESS = ROOT / "models" / "liveness"
FAIR, UNFAIR = 1, 2  # unit codes of the hand-made graphs


def graph(n: int, edges: list[tuple[int, int, int]], goal: list[int], premise: list[int]) -> Graph:
    """A graph of n states; edges (src, dst, unit) sorted by source; one property's masks."""
    edges = sorted(edges)
    column = np.array
    return Graph(
        n,
        column([e[0] for e in edges], dtype=np.int64),
        column([e[1] for e in edges], dtype=np.int64),
        np.arange(len(edges), dtype=np.int32),
        column([e[2] for e in edges], dtype=np.int32),
        column(premise, dtype=np.int64).reshape(n, 1),
        column(goal, dtype=np.int64).reshape(n, 1),
        column([0, n], dtype=np.int64),
    )


def violated(g: Graph, eventually: bool = False) -> liveness.Lasso | None:
    fair = liveness.fairness(g, lambda code: code == FAIR)
    return liveness.check(g, 0, 1, eventually, fair)


def test_a_fair_cycle_without_the_goal_is_a_violation() -> None:
    # 0 -> 1 -> 0 forever by fair steps; state 2 (the goal) is reachable by an unfair one only
    g = graph(3, [(0, 1, FAIR), (1, 0, FAIR), (1, 2, UNFAIR)], [0, 0, 1], [1, 0, 0])
    lasso = violated(g)
    assert lasso is not None and lasso.start == 0 and lasso.subject == 0
    assert [int(g.src[e]) for e in lasso.cycle] == [0, 1] and not lasso.stem


def test_a_cycle_that_starves_a_fair_step_is_not_a_violation() -> None:
    """The model's only cycle is unfair: a fair step to the goal stays enabled along it and is
    never taken, so no fair behaviour stays on it."""
    edges = [(0, 1, UNFAIR), (1, 0, UNFAIR), (0, 2, FAIR), (1, 2, FAIR)]
    assert violated(graph(3, edges, [0, 0, 1], [1, 0, 0])) is None
    # enabled in one state of the cycle only, weak fairness does not force it: a violation (the
    # shortest: stuttering in state 0, where nothing fair is enabled)
    edges = [(0, 1, UNFAIR), (1, 0, UNFAIR), (1, 2, FAIR)]
    lasso = violated(graph(3, edges, [0, 0, 1], [1, 0, 0]))
    assert lasso is not None and lasso.cycle == () and lasso.start == 0


def test_stuttering_is_fair_only_where_no_fair_step_is_enabled() -> None:
    assert violated(graph(2, [(0, 1, FAIR)], [0, 1], [1, 0])) is None
    lasso = violated(graph(2, [(0, 1, UNFAIR)], [0, 1], [1, 0]))
    assert lasso is not None and lasso.cycle == () and lasso.start == 0


def test_leads_to_starts_where_the_premise_holds() -> None:
    # 0 -> 1 (premise) -> 2 stutters without the goal; 0 itself lacks the goal but no premise
    g = graph(4, [(0, 1, FAIR), (1, 2, FAIR), (0, 3, FAIR)], [0, 0, 0, 1], [0, 1, 0, 0])
    lasso = violated(g)
    assert lasso is not None and lasso.start == 1 and len(lasso.stem) == 1
    assert violated(graph(2, [(0, 1, FAIR)], [0, 0], [0, 0])) is None  # premise never holds
    assert violated(g, eventually=True) is not None  # from the initial state: 0 -> 1 -> 2


def test_each_fairness_unit_is_witnessed_on_the_cycle() -> None:
    """Two fair units enabled everywhere on a component: the lasso's cycle takes both."""
    other = 3
    edges = [(0, 1, FAIR), (1, 0, FAIR), (1, 0, other), (0, 1, other)]
    g = graph(2, edges, [0, 0], [1, 0])
    fair = liveness.fairness(g, lambda code: code in (FAIR, other))
    lasso = liveness.check(g, 0, 1, False, fair)
    assert lasso is not None
    assert {int(g.unit[e]) for e in lasso.cycle} == {FAIR, other}


def _check(tmp_path: Path, *args: str) -> tuple[int, dict]:
    summary = tmp_path / "summary.json"
    code = main(["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), *args])
    return code, json.loads(summary.read_text())["models"][0] if summary.exists() else {}


def test_fairness_of_a_family_decides_the_verdict(tmp_path: Path) -> None:
    """metadata_stalls.toml violates metadata_converges with metadata propagation unfair; the
    same bounds with it fair hold."""
    text = (LIVENESS / "metadata_stalls.toml").read_text()
    fair = tmp_path / "fair.toml"
    fair.write_text(text.replace('unfair = ["apply_metadata"]', "").split("[expect]")[0])
    _, report = _check(tmp_path, "--workers", "1", str(fair))
    statuses = {r["property"]: r["status"] for r in report["results"]}
    assert statuses["metadata_converges"] == "holds"
    assert all(statuses[p] == "holds" for p in ("eventually_unfenced", "replicas_in_sync"))


def test_workers_and_resume_give_the_same_lassos(tmp_path: Path) -> None:
    model = str(LIVENESS / "isr_join_refused.toml")
    _, one = _check(tmp_path / "one", "--workers", "1", model)
    _, two = _check(tmp_path / "two", "--workers", "2", model)
    work = tmp_path / "work"
    _check(tmp_path / "a", "--workers", "2", "--workdir", str(work), "--max-depth", "6", model)
    _, resumed = _check(tmp_path / "b", "--workers", "1", "--workdir", str(work), "--resume", model)

    def lassos(report: dict) -> dict[str, tuple[int, int]]:
        found = [r for r in report["results"] if r["status"] == "violated"]
        return {r["property"]: (r["trace_length"], r["loop"]) for r in found}

    assert lassos(one) == lassos(two) == lassos(resumed) != {}
    for name in lassos(one):
        trace = tmp_path / "one" / "traces" / "liveness-isr_join_refused" / f"{name}.itf.json"
        paths = [
            json.loads(
                (
                    tmp_path / d / "traces" / "liveness-isr_join_refused" / f"{name}.itf.json"
                ).read_text()
            )["#meta"]["kafkarep"]["path"]
            for d in ("one", "two", "b")
        ]
        assert paths[0] == paths[1] == paths[2], name
        assert trace.exists()


def _lasso_trace(tmp_path: Path, model: Path, name: str) -> Path:
    code, _ = _check(tmp_path, "--workers", "1", str(model))
    assert code == 0
    return next(tmp_path.glob(f"traces/*/{name}.itf.json"))


def test_replay_refuses_a_lasso_that_does_not_close_or_is_unfair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _lasso_trace(
        tmp_path, LIVENESS / "follower_never_appends.toml", "acked_write_replicated"
    )
    assert main(["replay", "--quiet", str(trace)]) == 0
    assert "confirmed: acked_write_replicated violated for value 1" in capsys.readouterr().out
    document = json.loads(trace.read_text())
    meta = document["#meta"]["kafkarep"]
    loop, steps = meta["loop"], len(meta["path"])
    assert 0 <= loop < steps  # a real cycle: fetch and drop the answer, again and again
    meta["loop"] = loop - 1  # the last state is not that one
    trace.write_text(json.dumps(document))
    assert main(["replay", "--quiet", str(trace)]) == 1
    assert "the cycle does not close" in capsys.readouterr().out
    # cut the closing step and claim the behaviour stutters there: the follower could fetch
    meta["loop"], meta["path"] = steps - 1, meta["path"][:-1]
    document["states"] = document["states"][:-1]
    trace.write_text(json.dumps(document))
    assert main(["replay", "--quiet", str(trace)]) == 1
    assert "the cycle is not fair" in capsys.readouterr().out


def test_other_engines_refuse_liveness_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(LIVENESS / "elr_election.toml")
    for engine in ("hypothesis", "spark"):
        code = main(
            [
                "check",
                "--quiet",
                "--engine",
                engine,
                "--liveness",
                "--reports",
                str(tmp_path),
                model,
            ]
        )
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"the {engine} engine does not check liveness" in err
    code = main(["check", "--quiet", "--symmetry", "--reports", str(tmp_path), model])
    err = capsys.readouterr().err
    assert code == 2 and "symmetry" in err and len(err.strip().splitlines()) == 1


def test_an_incomplete_search_decides_no_liveness(tmp_path: Path) -> None:
    code, report = _check(tmp_path, "--max-depth", "3", str(LIVENESS / "isr_join_refused.toml"))
    statuses = {r["property"]: r["status"] for r in report["results"]}
    assert statuses["write_answered"] == statuses["replicas_in_sync"] == "unknown"
    assert code == 1  # its expected violations were not found


def test_the_suite_reports_liveness_like_safety(tmp_path: Path) -> None:
    """`kafkarep suite` on the liveness models: every seeded liveness bug found as expected, the
    holding model holds; JUnit has a case per liveness property; the HTML report draws each
    lasso. (`lagging_controller_retries`, the largest, is left to
    `test_liveness_agreement.test_the_lagging_controller_model_holds_in_both_commands`.)"""
    models = [p for p in sorted(LIVENESS.glob("*.toml")) if p.stem != "lagging_controller_retries"]
    argv = ["suite", "--quiet", "--workers", "1", "--reports", str(tmp_path)]
    code = main([*argv, *map(str, models)])
    assert code == 0
    junit = (tmp_path / "junit.xml").read_text()
    assert 'testcase name="acked_write_replicated"' in junit
    assert 'testcase name="leader_elected_from_elr"' in junit
    page = (tmp_path / "html" / "index.html").read_text()
    assert page.count("lasso: ") >= len(models) - 1
    assert "repeat forever" in page and "stays in state" in page  # a cycle and a stutter
