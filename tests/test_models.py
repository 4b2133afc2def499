"""Every explorer model in `models/` meets its [expect]: the verdict, the pinned shortest depths,
the pinned state count, and every counterexample replays through the rules.

The small models run here, in the default suite (marked `models`: `.ci/run` leaves them to
`kafkarep suite models`, so that each model is checked once); the larger ones only in `kafkarep
suite` (`.ci/run`, and `.ci/nightly` with `--slow`), which replays their counterexamples too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.model.config import ModelConfig
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

FAST_LIMIT = 60_000  # pinned distinct states up to which a model runs here


def _explorer_models() -> list[tuple[Path, ModelConfig]]:
    models = []
    for path in sorted((ROOT / "models").rglob("*.toml")):
        cfg = load_model(path)
        if cfg.check.engine == "explorer":
            models.append((path, cfg))
    return models


MODELS = _explorer_models()


def _param(path: Path) -> object:
    return pytest.param(path, id=str(path.relative_to(ROOT / "models")))


def test_every_explorer_model_pins_its_expectation() -> None:
    assert len(MODELS) >= 10
    for path, cfg in MODELS:
        assert cfg.expect.result in ("holds", "violates"), path
        assert cfg.expect.distinct_states, f"{path}: pin [expect] distinct_states"
        if cfg.expect.result == "violates":
            assert all(depth for _, depth in cfg.expect.violates), f"{path}: pin the depths"


@pytest.mark.models
@pytest.mark.parametrize(
    "path",
    [_param(p) for p, c in MODELS if (c.expect.distinct_states or 0) <= FAST_LIMIT],
)
def test_model_meets_its_expectations(path: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    args = ["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), str(path)]
    code = main(args)
    report = json.loads(summary.read_text())["models"][0]
    assert code == 0, report["problems"]
    assert report["expectations_met"]
    violated = [r for r in report["results"] if r["status"] == "violated"]
    assert bool(violated) == (load_model(path).expect.result == "violates")
    for result in violated:
        assert main(["replay", "--quiet", result["trace_file"]]) == 0, result["property"]


def test_a_mutation_is_not_found_without_its_seeded_bug(tmp_path: Path) -> None:
    """The mutation models fail because of the guard they switch off, not the shape around it."""
    mutation = ROOT / "models" / "mutations" / "isr_join_fetch_offset_at_hwm.toml"
    repaired = tmp_path / "repaired.toml"
    text = mutation.read_text().replace('disable_guards = ["isr_join.fetch_offset_at_hwm"]', "")
    repaired.write_text(text)
    summary = tmp_path / "summary.json"
    args = ["check", "--quiet", "--max-depth", "9", "--reports", str(tmp_path)]
    assert main([*args, "--json", str(summary), str(repaired)]) == 1
    report = json.loads(summary.read_text())["models"][0]
    assert not any(r["status"] == "violated" for r in report["results"])
    assert any("expected a violation" in p for p in report["problems"])
