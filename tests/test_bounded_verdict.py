"""A bounded verdict (`[expect] within_depth = D`): the model's expectations hold for every path of
at most D steps. The run stops after depth D, and a stop there settles `holds` and the pinned
count, but nothing beyond the bound is claimed: a bug whose shortest trace is one step longer
is not found."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK
from kafkarep.model.config import ModelError
from kafkarep.properties.model_files import load_model
from tests.helpers import error_line

# A seeded bug whose shortest counterexample has 6 steps.
MUTATION = Path("models/mutations/elr_keeps_unclean_shutdown.toml")
SHORTEST = 6


def bounded(tmp_path: Path, expect: str, name: str = "bounded") -> Path:
    """The mutation model with its [expect] section replaced."""
    text = MUTATION.read_text()
    body = text[: text.index("[expect]")]
    path = tmp_path / f"{name}.toml"
    path.write_text(f"{body}[expect]\n{expect}\n")
    return path


def check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: Path, *flags: str
) -> tuple[int, dict[str, Any], str]:
    summary = tmp_path / "summary.json"
    capsys.readouterr()
    code = main(["check", "--reports", str(tmp_path), "--json", str(summary), *flags, str(model)])
    out = capsys.readouterr().out
    return code, json.loads(summary.read_text())["models"][0], out


def test_the_bound_sets_the_depth_limit_and_conflicts_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = load_model(bounded(tmp_path, 'result = "holds"\nwithin_depth = 5'))
    assert cfg.check.max_depth == 5 and cfg.expect.within_depth == 5
    deeper = bounded(
        tmp_path,
        'result = "violates"\nviolates = { leader_candidate_completeness = 6 }\nwithin_depth = 5',
        "deeper",
    )
    with pytest.raises(ModelError, match="deeper than within_depth = 5"):
        load_model(deeper)
    line = error_line(capsys, "check", str(deeper))
    assert "deeper.toml" in line and "within_depth" in line
    clash = bounded(tmp_path, 'result = "holds"\nwithin_depth = 5', "clash")
    clash.write_text(clash.read_text() + "\n[check]\nmax_depth = 7\n")
    assert "differ" in error_line(capsys, "check", str(clash))
    live = bounded(tmp_path, 'result = "holds"\nwithin_depth = 5', "live")
    live.write_text(live.read_text() + "\n[check]\nliveness = true\n")
    assert "cannot settle liveness" in error_line(capsys, "check", str(live))
    for bad in ("0", "true", '"5"'):
        path = bounded(tmp_path, f'result = "holds"\nwithin_depth = {bad}', "bad")
        assert "within_depth must be a positive integer" in error_line(capsys, "check", str(path))


def test_holds_within_a_bound_one_step_short_of_the_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = bounded(tmp_path, f'result = "holds"\nwithin_depth = {SHORTEST - 1}')
    code, report, out = check(tmp_path, capsys, model)
    assert code == OK, out
    assert report["depth"] == SHORTEST - 1 and not report["complete"] and not report["problems"]
    assert all(r["status"] != "violated" for r in report["results"])
    assert f"complete to depth {SHORTEST - 1}" in out
    # The states within the bound are those a depth-limited run of the same model reaches.
    code, limited, _ = check(tmp_path, capsys, MUTATION, "--max-depth", str(SHORTEST - 1))
    assert limited["distinct_states"] == report["distinct_states"]


def test_the_bug_is_found_at_the_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = f'result = "violates"\nviolates = {{ leader_candidate_completeness = {SHORTEST} }}'
    model = bounded(tmp_path, f"{expect}\nwithin_depth = {SHORTEST}")
    code, report, out = check(tmp_path, capsys, model)
    assert code == OK, out
    violated = {
        r["property"]: r["trace_length"] for r in report["results"] if r["status"] == "violated"
    }
    assert violated == {"leader_candidate_completeness.elr": SHORTEST}
    assert report["stop_reason"] == f"depth limit {SHORTEST}"
    assert report["scope"] == f"complete to depth {SHORTEST}"


def test_a_run_stopped_short_of_the_bound_settles_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = bounded(tmp_path, 'result = "holds"\nwithin_depth = 5\ndistinct_states = 1')
    code, report, out = check(tmp_path, capsys, model, "--max-depth", "3")
    assert code == EXPECTATION_NOT_MET
    assert report["problems"] == [
        "search incomplete (depth limit 3): cannot say the model holds within 5 steps"
    ]
    assert report["scope"] == "incomplete"
    assert "incomplete (depth limit 3)" in out


def test_the_pinned_count_within_the_bound_is_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = bounded(tmp_path, 'result = "holds"\nwithin_depth = 5')
    _, report, _ = check(tmp_path, capsys, model)
    count = report["distinct_states"]
    pinned = bounded(tmp_path, f'result = "holds"\nwithin_depth = 5\ndistinct_states = {count}')
    assert check(tmp_path, capsys, pinned)[0] == OK
    wrong = bounded(tmp_path, f'result = "holds"\nwithin_depth = 5\ndistinct_states = {count + 1}')
    code, report, _ = check(tmp_path, capsys, wrong)
    assert code == EXPECTATION_NOT_MET
    assert any(
        re.match(rf"distinct states {count:,} != pinned {count + 1:,}", p)
        for p in report["problems"]
    )


def test_a_suite_meets_a_bounded_model_and_says_how_far(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    bounded(models, f'result = "holds"\nwithin_depth = {SHORTEST - 1}')
    reports = tmp_path / "reports"
    assert (
        main(["suite", str(models), "--reports", str(reports), "--junit", str(tmp_path / "j.xml")])
        == OK
    )
    facts = {
        p.get("name"): p.get("value")
        for p in ET.parse(tmp_path / "j.xml").getroot().iter("property")
    }
    assert facts["outcome"] == "met" and facts["complete"] == "false"
    assert facts["scope"] == f"complete to depth {SHORTEST - 1}"


def test_liveness_is_never_settled_by_a_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = bounded(tmp_path, 'result = "holds"\nwithin_depth = 4')
    code, report, _ = check(tmp_path, capsys, model, "--liveness")
    assert code == EXPECTATION_NOT_MET and report["scope"] == "incomplete"
    assert any("settles the safety properties only" in p for p in report["problems"])
    named = bounded(tmp_path, 'result = "holds"\nwithin_depth = 4', "named")
    named.write_text(named.read_text() + '\n[check]\nproperties = ["write_answered"]\n')
    line = error_line(capsys, "check", str(named))
    assert "named.toml" in line and "cannot settle liveness" in line and "write_answered" in line


def test_a_run_resumed_from_beyond_the_bound_settles_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A work dir saved deeper than the bound (a flag took the run further) does not make the
    states it holds the states within the bound."""
    model = bounded(tmp_path, 'result = "holds"\nwithin_depth = 4')
    work = str(tmp_path / "work")
    code, deeper, _ = check(tmp_path, capsys, model, "--max-depth", "5", "--workdir", work)
    assert code == EXPECTATION_NOT_MET and deeper["depth"] == 5
    code, resumed, _ = check(tmp_path, capsys, model, "--workdir", work, "--resume")
    assert code == EXPECTATION_NOT_MET and resumed["scope"] == "incomplete"
    assert resumed["distinct_states"] == deeper["distinct_states"]
    code, fresh, _ = check(tmp_path, capsys, model)
    assert code == OK and fresh["scope"] == "complete to depth 4"
    assert fresh["distinct_states"] < deeper["distinct_states"]
