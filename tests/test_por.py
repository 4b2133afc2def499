"""Partial-order reduction by sleep sets (docs/explorer.md#partial-order-reduction).

The reduction skips steps, never states: on every model the explorer must keep the same states
per level, so the same counts, depth, verdicts, shortest counterexamples and traces, with fewer
steps generated. The independence relation it rests on (`kafkarep/model/independence.py`) is
checked claim by claim on reachable states, and a seeded wrong claim is caught, or, with the
check off, loses what the model is known to reach.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines import kernel
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Exploration, Limits
from kafkarep.model import independence
from kafkarep.model.config import ModelConfig
from kafkarep.model.independence import NotIndependent
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = ROOT / "models"
FAST = 10_000  # pinned distinct states up to which a model is compared in the default suite
# kip966_small with one ISR shrink, to depth 16: kip966_small is compared (below), and so are the
# ISR shrinks of the small models that have one (zookeeper_unclean, faults/lagging_controller);
# run without and with the reduction, in Python, it alone took 3,488 s of the nightly tier
NOT_COMPARED = {"kip966_small_isr_shrink.toml"}
V35 = MODELS / "history" / "v35_last_replica_standing.toml"


def _run(
    cfg: ModelConfig, por: bool, workers: int = 1, limits: Limits | None = None
) -> Exploration:
    """The model's safety properties (liveness reads every step, so it switches sleep sets off),
    to the model's own depth bound (`[expect] within_depth`) unless `limits` says."""
    if limits is None:
        limits = Limits(max_depth=cfg.check.max_depth)
    chosen = [p for p in properties.of_model(cfg) if not p.liveness]
    stop = [name for name, _ in cfg.expect.violates]
    return Explorer(cfg, chosen, limits, stop_when_found=stop, workers=workers, por=por).run()


def _answers(result: Exploration) -> dict[str, Any]:
    found = {n: (d.depth, d.path) for n, d in result.violations.items()}
    reached = {n: (d.depth, d.path) for n, d in result.reached.items()}
    return {
        "distinct": result.distinct_states,
        "depth": result.depth,
        "complete": result.complete,
        "violations": found,
        "reached": reached,
    }


def _models(largest: int) -> list[Any]:
    out = []
    for path in sorted(MODELS.rglob("*.toml")):
        cfg = load_model(path)
        pinned = cfg.expect.distinct_states or 0
        if cfg.check.engine != "explorer" or pinned > 2_000_000 or path.name in NOT_COMPARED:
            continue
        marks = [pytest.mark.slow] if pinned > largest else []
        out.append(pytest.param(path, id=str(path.relative_to(MODELS)), marks=marks))
    return out


@pytest.mark.parametrize("path", _models(FAST))
def test_sleep_sets_keep_every_answer_of_every_model(path: Path) -> None:
    cfg = load_model(path)
    plain, reduced = _run(cfg, por=False), _run(cfg, por=True)
    assert _answers(reduced) == _answers(plain)
    assert reduced.generated_states <= plain.generated_states


def test_sleep_sets_skip_steps_on_the_reassignment_model() -> None:
    """Pinned, so that a change in the reduction is seen: 102,380 steps without it."""
    cfg = load_model(MODELS / "reassignment.toml")
    assert _run(cfg, por=False).generated_states == 102_380
    assert _run(cfg, por=True).generated_states == 56_179


def test_every_worker_count_generates_the_same_steps() -> None:
    """A state two workers reach is asleep only in what both parents left asleep."""
    cfg = load_model(MODELS / "kip435_plan.toml")
    one, two = _run(cfg, por=True, workers=1), _run(cfg, por=True, workers=2)
    assert (one.distinct_states, one.generated_states) == (
        two.distinct_states,
        two.generated_states,
    )
    assert _answers(one) == _answers(two)


AUDITED = [
    "reassignment.toml",
    "kip435_plan.toml",
    "faults/lagging_controller.toml",  # a lagging controller: compaction held back
    "history/v35_last_replica_standing.toml",  # lossy unclean shutdowns
    "history/kafka_6880_zombie_replica_fetch.toml",  # delayed fetches
    "history/kafka_14139_stale_broker_epoch.toml",  # restarts
    "findings/last_known_leader_after_unclean_shutdown.toml",
    "zookeeper_unclean_kraft.toml",
]
FAST_AUDITED = (
    "reassignment.toml",
    "faults/lagging_controller.toml",
    "zookeeper_unclean_kraft.toml",
)


@pytest.mark.parametrize(
    "name",
    [n if n in FAST_AUDITED else pytest.param(n, marks=pytest.mark.slow) for n in AUDITED],
)
def test_every_claim_of_independence_holds_on_reachable_states(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With KAFKAREP_POR_AUDIT=1 every claim the search makes (two enabled steps with disjoint
    footprints) is checked by applying both orders; the first 8,000 states of each model."""
    monkeypatch.setenv("KAFKAREP_POR_AUDIT", "1")
    cfg = load_model(MODELS / name)
    result = _run(cfg, por=True, limits=Limits(max_states=8_000))
    assert result.distinct_states >= min(8_000, cfg.expect.distinct_states or 0)


def _seed_wrong_independence(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fetch response declared independent of the metadata its own broker applies (they share
    the broker's replica: a new leader epoch drops the response in one order only)."""
    real = independence.footprint

    def wrong(state: Any, action: Any) -> int:
        if action.name == "apply_metadata":
            return 0
        return real(state, action)

    monkeypatch.setattr(kernel, "footprint", wrong)


def test_a_dependent_pair_declared_independent_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _seed_wrong_independence(monkeypatch)
    monkeypatch.setenv("KAFKAREP_POR_AUDIT", "1")
    with pytest.raises(NotIndependent, match="declared independent"):
        _run(load_model(V35), por=True)


def test_a_dependent_pair_declared_independent_loses_what_the_model_reaches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The audit off (no claim re-checked), the same wrong claim loses states: the reduction is
    only as sound as the relation, which is why the relation is checked."""
    cfg = load_model(V35)
    plain = _answers(_run(cfg, por=False))
    _seed_wrong_independence(monkeypatch)
    monkeypatch.setenv("KAFKAREP_POR_AUDIT", str(10**12))
    assert _answers(_run(cfg, por=True)) != plain


def test_a_broken_claim_in_a_worker_process_ends_the_run_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A claim found broken in one of several worker processes (forked, so they see the seeded
    footprint) stops `kafkarep check` with exit 3 and one line naming the two steps, no
    traceback."""
    _seed_wrong_independence(monkeypatch)
    monkeypatch.setenv("KAFKAREP_POR_AUDIT", "1")
    monkeypatch.delenv("KAFKAREP_DEBUG", raising=False)
    args = ["check", "--quiet", "--workers", "2", "--reports", str(tmp_path), str(V35)]
    assert main(args) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "NotIndependent" in err[0] and "declared independent" in err[0]
    assert "apply_metadata" in err[0] and "--no-por" in err[0]
