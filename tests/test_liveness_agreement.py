"""The explorer's liveness check and `kafkarep replay` agree (docs/liveness.md, "No fair step
enabled"): every lasso the explorer reports on a liveness model replays, and a lasso made unfair
on purpose (a fair step enabled on the cycle, never taken) is refused by both: by `replay`, and
by the explorer, whose graph has that step enabled there and which judges every lasso it found
with replay's own `fairness.lasso_problem` before it reports it.

Seeded: either side's enabled set made wrong makes a test here fail: the graph missing a fair
unit (the explorer then finds a lasso the rules refuse, and stops with `LassoNotConfirmed`), or
`enabled_units` missing one (replay then confirms an unfair lasso)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines import liveness
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import replay_path
from kafkarep.properties import fairness
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = ROOT / "models"
# Every model with liveness on: the liveness folder in the default tier, the larger ones slow.
LIVENESS = sorted((MODELS / "liveness").glob("*.toml"))
LARGER = [p for p in sorted(MODELS.glob("*.toml")) if load_model(p).check.liveness]
EVERY = [
    *LIVENESS,
    *(pytest.param(p, marks=pytest.mark.slow) for p in LARGER),
]


def _name(path: object) -> str:
    return str(Path(str(path)).relative_to(MODELS))


def _lassos(tmp_path: Path, model: Path) -> list[Path]:
    """The traces of the liveness violations `kafkarep check` reports on the model."""
    code = main(["check", "--quiet", "--workers", "1", "--reports", str(tmp_path), str(model)])
    assert code in (0, 1), code
    (report,) = json.loads((tmp_path / "summary.json").read_text())["models"]
    names = [
        r["property"]
        for r in report["results"]
        if r["status"] == "violated" and r.get("loop") is not None
    ]
    return [next(tmp_path.glob(f"traces/*/{name}.itf.json")) for name in names]


@pytest.mark.parametrize("model", EVERY, ids=_name)
def test_every_lasso_the_explorer_reports_replays(
    tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for trace in _lassos(tmp_path, model):
        capsys.readouterr()
        assert main(["replay", "--quiet", str(trace)]) == 0, capsys.readouterr().out


def test_the_lagging_controller_model_holds_in_both_commands(tmp_path: Path) -> None:
    """The model of issue 55: the leader's retries against a lagging controller are not a fair
    behaviour (the controller catching up stays enabled), so every liveness property holds."""
    model = MODELS / "liveness" / "lagging_controller_retries.toml"
    assert _lassos(tmp_path, model) == []


def _unfair_stutter(cfg: ModelConfig, path: list[int]) -> tuple[list[int], int]:
    """A prefix of the path cut where a fair step is enabled, claimed to stutter there."""
    trace = replay_path(cfg, tuple(path))
    states = [trace.initial, *(s.after for s in trace.steps)]
    for end in range(len(states) - 1, -1, -1):
        if fairness.enabled_units(cfg, states[end]):
            return path[:end], end
    raise AssertionError("no state of the lasso has a fair step enabled")


def _unfair_trace(tmp_path: Path, cfg: ModelConfig, model: Path) -> tuple[Path, dict[str, Any]]:
    """A lasso the explorer reported on the model, rewritten into an unfair stutter."""
    trace = _lassos(tmp_path, model)[0]
    document = json.loads(trace.read_text())
    meta = document["#meta"]["kafkarep"]
    meta["path"], meta["loop"] = _unfair_stutter(cfg, meta["path"])
    document["states"] = document["states"][: meta["loop"] + 1]
    trace.write_text(json.dumps(document))
    return trace, meta


@pytest.mark.parametrize("model", [p for p in LIVENESS if load_model(p).expect.violates], ids=_name)
def test_a_lasso_made_unfair_is_refused_by_both(
    tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = load_model(model)
    trace, meta = _unfair_trace(tmp_path, cfg, model)
    capsys.readouterr()
    assert main(["replay", "--quiet", str(trace)]) == 1
    assert "the cycle is not fair" in capsys.readouterr().out
    # The explorer's graph has a fair unit enabled at that state too, so its search never takes
    # the state for a stutter; and its own confirmation refuses the lasso.
    graph, fair = _graph(cfg)
    node = _node(graph, meta["path"])
    assert fair.enabled[node].any()
    lasso = liveness.Lasso(0, node, (), ())
    with pytest.raises(liveness.LassoNotConfirmed, match="is enabled at the stutter"):
        liveness.confirm(cfg, graph, fair, lasso, tuple(meta["path"]), meta["loop"])


def _graph(cfg: ModelConfig) -> tuple[liveness.Graph, liveness.Fairness]:
    """The explorer's state graph of a model, as its liveness check loads it."""
    kept: dict[str, object] = {}
    real = liveness.fairness

    def keep(graph: liveness.Graph, is_fair: object) -> liveness.Fairness:
        kept["graph"], kept["fair"] = graph, real(graph, is_fair)  # type: ignore[arg-type]
        return kept["fair"]  # type: ignore[return-value]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(liveness, "fairness", keep)
        Explorer(cfg, properties.of_model(cfg), Limits(), workers=1).run()
    return kept["graph"], kept["fair"]  # type: ignore[return-value]


def _node(graph: liveness.Graph, path: list[int]) -> int:
    """The state id a path of action indices leads to in the graph."""
    node = 0
    for action in path:
        low, high = np.searchsorted(graph.src, [node, node + 1])
        (edge,) = [e for e in range(int(low), int(high)) if graph.action[e] == action]
        node = int(graph.dst[edge])
    return node


def test_a_graph_missing_a_fair_unit_is_caught_before_a_lasso_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seeded on the explorer's side: the graph loses the controller's catching up, the step
    that ends the lagging controller's refusals. The search then finds a lasso (the retries
    forever) that the rules refuse, and the run stops rather than report it."""
    cfg = load_model(MODELS / "liveness" / "lagging_controller_retries.toml")
    catch_up = fairness.FAMILY_INDEX["controller_catches_up"] << fairness.SUBJECT_BITS
    real = liveness.fairness

    def blind(graph: liveness.Graph, is_fair: object) -> liveness.Fairness:
        return real(graph, lambda code: code != catch_up and is_fair(code))  # type: ignore[operator]

    monkeypatch.setattr(liveness, "fairness", blind)
    with pytest.raises(liveness.LassoNotConfirmed, match="controller_catches_up"):
        Explorer(cfg, properties.of_model(cfg), Limits(), workers=1).run()


def test_replay_with_an_enabled_set_missing_a_unit_would_confirm_an_unfair_lasso(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seeded on replay's side: with `enabled_units` blind to every unit, the unfair stutter of
    the test above is confirmed; so that test fails when replay's enabled set is wrong."""
    model = LIVENESS[0]
    cfg = load_model(model)
    trace, _ = _unfair_trace(tmp_path, cfg, model)
    monkeypatch.setattr(fairness, "enabled_units", lambda cfg, state: frozenset())
    capsys.readouterr()
    assert main(["replay", "--quiet", str(trace)]) == 0
    assert "confirmed" in capsys.readouterr().out
