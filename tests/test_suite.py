"""`kafkarep suite`: every model judged in one process, exit codes as for `check`, JUnit XML that a
JUnit parser reads (with the failing model and clause named), skipped and unavailable models,
the pinned state count and the trend against a baseline."""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.engines import registry
from kafkarep.output.suite import STATE_SPACE, assign_problems, select
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

LRS = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
SHIPPED = ROOT / "models" / "kip966_shipped.toml"


def flip(text: str, depth: int) -> str:
    """A model expecting violations, rewritten to expect that it holds, searched to `depth`
    (a model that holds is searched to the end otherwise)."""
    text = re.sub(r'(?m)^result = "violates"', 'result = "holds"', text)
    text = re.sub(r"(?m)^violates = \{[^}]*\}.*$", "", text)
    if re.search(r"(?m)^\[check\]", text):
        return re.sub(r"(?m)^\[check\]$", f"[check]\nmax_depth = {depth}", text)
    return text + f"\n[check]\nmax_depth = {depth}\n"


def lrs_model(pin: int | None = None) -> str:
    """The Last Replica Standing model, with no pinned state count or with `pin`."""
    text = re.sub(r"(?m)^distinct_states = .*\n", "", LRS.read_text())
    if pin is None:
        return text
    return text.replace('result = "violates"', f'result = "violates"\ndistinct_states = {pin}')


def shortest_mutation() -> tuple[Path, int]:
    """The mutation model (models/mutations) whose seeded bug shows soonest; the Last Replica
    Standing model while there is none."""
    found = []
    for path in sorted((ROOT / "models" / "mutations").glob("*.toml")):
        expect = tomllib.loads(path.read_text()).get("expect", {})
        depths = [d for d in expect.get("violates", {}).values() if isinstance(d, int)]
        if expect.get("result") == "violates" and depths:
            found.append((min(depths), path.name, path))
    if not found:
        return LRS, 7
    depth, _, path = min(found)
    return path, depth


def suite(tmp_path: Path, *args: str) -> int:
    reports = tmp_path / "reports"
    return main(["suite", "--workers", "1", "--reports", str(reports), *args])


def junit_cases(path: Path) -> dict[tuple[str, str], ET.Element]:
    """Read the JUnit XML, checking the structure CI systems rely on on the way."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    cases: dict[tuple[str, str], ET.Element] = {}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        assert suite.tag == "testsuite"
        assert {"name", "tests", "failures", "errors", "skipped", "time"} <= set(suite.attrib)
        float(suite.get("time", "x"))
        children = [c for c in suite if c.tag == "testcase"]
        assert {c.tag for c in suite} <= {"properties", "testcase", "system-out", "system-err"}
        counts = {"tests": len(children), "failures": 0, "errors": 0, "skipped": 0}
        for case in children:
            assert case.get("name") and case.get("classname") == suite.get("name")
            float(case.get("time", "x"))
            results = [c for c in case if c.tag in ("failure", "error", "skipped")]
            assert len(results) <= 1
            for result in results:
                key = {"failure": "failures", "error": "errors", "skipped": "skipped"}[result.tag]
                counts[key] += 1
                assert result.get("message")
            cases[(str(suite.get("name")), str(case.get("name")))] = case
        for key, value in counts.items():
            assert int(suite.get(key, "-1")) == value, (suite.get("name"), key)
            totals[key] += value
    for key, value in totals.items():
        assert int(root.get(key, "-1")) == value
    return cases


def test_suite_of_models_passes_and_junit_parses(tmp_path: Path) -> None:
    models = tmp_path / "models"
    (models / "nested").mkdir(parents=True)
    (models / "nested" / "lrs.toml").write_text(lrs_model())
    (models / "shipped.toml").write_text(SHIPPED.read_text())  # [suite] slow = true
    (models / "excluded.toml").write_text("this is not TOML, but it is excluded")
    code = suite(tmp_path, str(models), "--exclude", "excluded*")
    assert code == 0
    reports = tmp_path / "reports"
    cases = junit_cases(reports / "junit.xml")
    suite_names = {s for s, _ in cases}
    assert any(name.endswith("nested.lrs") for name in suite_names)
    lrs = next(name for name in suite_names if name.endswith("nested.lrs"))
    committed = cases[(lrs, "leader_completeness.committed_log")]
    assert not [c for c in committed if c.tag in ("failure", "error")]
    out = committed.find("system-out")
    assert out is not None and "crash_lossy" in (out.text or "")  # the expected trace
    assert cases[(lrs, "log_matching.stable_prefix")].find("failure") is None
    assert cases[(lrs, STATE_SPACE)].find("failure") is None
    shipped = next(name for name in suite_names if name.endswith("shipped"))
    skipped = cases[(shipped, "run")].find("skipped")
    assert skipped is not None and "--slow" in skipped.get("message", "")
    excluded = next(name for name in suite_names if name.endswith("excluded"))
    skipped = cases[(excluded, "run")].find("skipped")
    assert skipped is not None and "excluded by --exclude" in skipped.get("message", "")

    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(reports / "junit.xml"))
    parsed = {(s.name, c.name): c for s in xml for c in s}
    assert set(parsed) == set(cases)
    assert parsed[(lrs, "leader_completeness.committed_log")].is_passed
    assert parsed[(shipped, "run")].is_skipped

    document = json.loads((reports / "suite.json").read_text())
    assert document["suite"]["exit_code"] == 0
    [model] = document["models"]
    assert model["outcome"] == "met" and model["expectations_met"]
    assert {m["outcome"] for m in document["not_run"]} == {"skipped"}
    assert (reports / "html" / "index.html").is_file()


def test_flipped_mutation_exits_1_and_junit_names_the_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutation, depth = shortest_mutation()
    models = tmp_path / "models"
    models.mkdir()
    flipped = models / f"flipped_{mutation.stem}.toml"
    flipped.write_text(flip(mutation.read_text(), depth))
    assert load_model(flipped).expect.result == "holds"
    (models / "lrs.toml").write_text(lrs_model())
    # The same model with a wrong pinned count: the state_space case fails, nothing else.
    (models / "pinned.toml").write_text(lrs_model(pin=9000))
    capsys.readouterr()
    code = suite(tmp_path, str(models))
    assert code == 1
    output = capsys.readouterr().out
    document = json.loads((tmp_path / "reports" / "suite.json").read_text())
    explored = next(m for m in document["models"] if m["model"].endswith("pinned.toml"))
    states = explored["distinct_states"]
    assert "NOT MET" in output and f"{states - 9000:+,}" in output  # the change against the pin

    cases = junit_cases(tmp_path / "reports" / "junit.xml")
    failed = {key for key, case in cases.items() if case.find("failure") is not None}
    flipped_suite = next(s for s, _ in cases if s.endswith(flipped.stem))
    violated = {c for s, c in failed if s == flipped_suite}
    assert violated, "the flipped model's violations must fail its cases"
    for clause in violated:
        failure = cases[(flipped_suite, clause)].find("failure")
        assert failure is not None
        assert f"unexpected violation of {clause}" in failure.get("message", "")
        text = failure.text or ""
        assert "step" in text and "reproduce: kafkarep replay" in text  # the trace table
    pinned_suite = next(s for s, _ in cases if s.endswith("pinned"))
    assert {c for s, c in failed if s == pinned_suite} == {STATE_SPACE}
    assert f"{states:,} != pinned 9,000" in str(
        cases[(pinned_suite, STATE_SPACE)][0].get("message")
    )
    lrs_suite = next(s for s, _ in cases if s.endswith(".lrs"))
    assert not {c for s, c in failed if s == lrs_suite}

    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "reports" / "junit.xml"))
    assert xml.failures == len(failed)
    failing = {(s.name, c.name) for s in xml for c in s if not c.is_passed and not c.is_skipped}
    assert failing == failed


def _engine_failing(error: Exception) -> Any:
    def engine(*args: Any) -> Any:
        raise error

    return engine


def test_unavailable_and_crashing_engines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "a_lrs.toml").write_text(lrs_model())
    sampled = lrs_model().replace("[expect]", '[check]\nengine = "hypothesis"\n\n[expect]')
    (models / "b_sampled.toml").write_text(sampled)
    missing = ModuleNotFoundError("No module named 'hypothesis_engine_missing'")
    monkeypatch.setitem(registry.ENGINES, "hypothesis", _engine_failing(missing))
    assert suite(tmp_path, str(models)) == 2  # an engine not available: bad input
    cases = junit_cases(tmp_path / "reports" / "junit.xml")
    error = next(c for (s, n), c in cases.items() if s.endswith("b_sampled")).find("error")
    assert error is not None and error.get("type") == "EngineUnavailable"
    assert "hypothesis_engine_missing" in error.get("message", "")
    lrs = [c for (s, _), c in cases.items() if s.endswith("a_lrs")]
    assert lrs and all(c.find("failure") is None for c in lrs)  # the others still ran

    monkeypatch.delitem(registry.ENGINES, "hypothesis")
    capsys.readouterr()
    assert suite(tmp_path, str(models)) == 2
    assert "engine 'hypothesis' is not available" in capsys.readouterr().out

    monkeypatch.setitem(registry.ENGINES, "hypothesis", _engine_failing(RuntimeError("boom")))
    assert suite(tmp_path, str(models)) == 3  # an internal error, after running the rest
    cases = junit_cases(tmp_path / "reports" / "junit.xml")
    error = next(c for (s, n), c in cases.items() if s.endswith("b_sampled")).find("error")
    assert error is not None and error.get("type") == "InternalError"
    assert "RuntimeError: boom" in error.get("message", "")


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert suite(tmp_path, str(tmp_path / "nowhere")) == 2
    assert "no such model file or directory" in capsys.readouterr().err
    assert suite(tmp_path, "--engine", "nope", str(LRS)) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert suite(tmp_path, str(empty)) == 2
    assert suite(tmp_path, str(LRS), "--exclude", "v35*") == 2  # nothing left to run
    assert "nothing to run" in capsys.readouterr().err
    broken = tmp_path / "broken.toml"
    broken.write_text(lrs_model() + "\n[suite]\nslow = 3\n")
    assert suite(tmp_path, str(broken)) == 2
    assert "[suite] slow must be true or false" in capsys.readouterr().err
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"models": 3}')
    assert suite(tmp_path, str(LRS), "--baseline", str(baseline)) == 2
    assert f"{baseline}: models: expected a list, got an integer" in capsys.readouterr().err


def test_baseline_trend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "lrs.toml").write_text(lrs_model())
    # A `kafkarep check` summary is a baseline too: the same "models" entries.
    first = tmp_path / "check.json"
    assert (
        main(
            [
                "check",
                "--quiet",
                "--workers",
                "1",
                "--reports",
                str(tmp_path / "r"),
                "--json",
                str(first),
                str(models / "lrs.toml"),
            ]
        )
        == 0
    )
    document = json.loads(first.read_text())
    document["models"][0]["distinct_states"] -= 100
    document["models"][0]["seconds"] = 100.0
    first.write_text(json.dumps(document))
    capsys.readouterr()
    assert suite(tmp_path, str(models), "--baseline", str(first)) == 0
    output = capsys.readouterr().out
    assert "states vs baseline" in output
    states = document["models"][0]["distinct_states"] + 100
    change = f"+100 ({100 / (states - 100):+.1%})"
    assert change in output
    assert re.search(r"-9\d\.\ds \(-\d+%\)", output)  # about 1s now against 100s before
    page = (tmp_path / "reports" / "html" / "index.html").read_text()
    assert change in page


def test_select_and_exclude(tmp_path: Path) -> None:
    (tmp_path / "models" / "mutations").mkdir(parents=True)
    for name in ("models/a.toml", "models/mutations/m.toml", "models/kip966_shipped.toml"):
        (tmp_path / name).write_text("")
    chosen = select([tmp_path / "models", tmp_path / "models" / "a.toml"], ["mutations/*"])
    assert [s.path.name for s in chosen] == ["a.toml", "kip966_shipped.toml", "m.toml"]
    assert [s.excluded_by for s in chosen] == [None, None, "mutations/*"]
    assert not chosen[0].named  # found in the directory first
    chosen = select([tmp_path / "models"], ["*shipped*", "a"])
    assert [s.excluded_by for s in chosen] == ["a", "*shipped*", None]


def test_named_slow_model_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slow = tmp_path / "slow_lrs.toml"
    slow.write_text(lrs_model() + "\n[suite]\nslow = true\n")
    assert suite(tmp_path, str(slow)) == 0  # named on the command line: it runs
    assert suite(tmp_path, str(tmp_path)) == 2  # found in a directory: skipped, nothing to run
    capsys.readouterr()


def test_only_slow_runs_what_slow_adds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--only-slow, the nightly's share: the slow model runs, the quick one is skipped with the
    reason; a directory with no slow model has nothing to run (exit 2)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "quick.toml").write_text(lrs_model())
    (models / "slow.toml").write_text(lrs_model() + "\n[suite]\nslow = true\n")
    capsys.readouterr()
    assert suite(tmp_path, "--only-slow", str(models)) == 0
    document = json.loads((tmp_path / "reports" / "suite.json").read_text())
    outcomes = {Path(m["model"]).stem: m["outcome"] for m in document["models"]}
    not_run = {Path(m["model"]).stem: m["reason"] for m in document["not_run"]}
    assert outcomes == {"slow": "met"}
    assert not_run == {"quick": "not slow: --only-slow runs what --slow adds"}
    (models / "slow.toml").unlink()
    assert suite(tmp_path, "--only-slow", str(models)) == 2
    capsys.readouterr()


def test_problems_go_to_the_case_they_name() -> None:
    names = [
        "leader_completeness.committed_log",
        "leader_completeness.acked_writes",
        "record_committed",
        "leader_completeness",
    ]
    problems = [
        "unexpected violation of leader_completeness.committed_log at depth 7: leader 1 ...",
        "leader_completeness violated at depth 6, expected depth 7 (update [expect] ...)",
        "sometimes-property record_committed never reached",
        "distinct states 9,564 != pinned 9,000 (update [expect] distinct_states on purpose)",
        "search incomplete (depth limit 3): cannot say the model holds",
    ]
    assigned = assign_problems(problems, names)
    assert assigned == {
        "leader_completeness.committed_log": [problems[0]],
        "leader_completeness": [problems[1]],
        "record_committed": [problems[2]],
        STATE_SPACE: problems[3:],
    }
