"""A user's own properties (`[check] extra_properties`, docs/user-properties.md): the worked example
in properties/fenced_leader.py is found violated at its pinned depth on Kafka 4.0's rules and
holds with KAFKA-19522's change, in the explorer (in-process and with forked workers), Spark,
Hypothesis, the suite (a JUnit case per clause) and `replay`; its names are names a model may
expect; a bad module, or a clause that raises while a model is checked, is one line and exit
code 2. `prove` proves the property where it holds and finds it violated where not; a predicate
that is not the clause's verdict is found by the agreement check, and a property without one is
refused in one line.

Default tier: the explorer, Hypothesis, the suite, replay and every bad input (about 10 s on two
cores); Spark's runs are `slow` (an embedded Spark takes seconds to start)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.common.exit_codes import BAD_INPUT, EXPECTATION_NOT_MET, OK
from kafkarep.engines.explorer import explore as explorer_engine
from kafkarep.engines.results import Exploration, RunOptions
from kafkarep.model.config import ModelError
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

MODELS = ROOT / "models" / "user_properties"
VIOLATES = MODELS / "fenced_leader_kafka_4_0.toml"  # Kafka 4.0's rules
HOLDS = MODELS / "fenced_leader_kafka_19522.toml"  # with KAFKA-19522's change
MODULE = ROOT / "properties" / "fenced_leader.py"
CLAUSE = "fenced_broker_not_leader.controller"
DEPTH = 2  # the pinned shortest violation
HOLDS_STATES = 5588  # the pinned count of the model that holds


def _check(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    summary = tmp_path / "summary.json"
    code = main(["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), *args])
    return code, json.loads(summary.read_text())["models"][0]


def _results(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["property"]: r for r in report["results"]}


# --- the worked example ------------------------------------------------------------------------


def test_the_models_name_the_module_relative_to_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path is the model file's, not the working directory's: loaded from elsewhere, the
    model still finds properties/fenced_leader.py, and carries its source."""
    monkeypatch.chdir(tmp_path)
    for model in (VIOLATES, HOLDS):
        cfg = load_model(model)
        [module] = cfg.check.extra_properties
        assert Path(module.path).resolve() == MODULE and module.source == MODULE.read_text()
        names = [p.name for p in properties.of_model(cfg)]
        assert names[-2:] == ["fenced_broker_not_leader", "last_known_leader_elected"]
        assert names[:-2] == [p.name for p in properties.ALL]  # the built-in ones first


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_explorer_finds_the_violation_and_replay_confirms_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    code, report = _check(tmp_path, "--workers", workers, str(VIOLATES))
    assert code == OK and report["expectations_met"]
    result = _results(report)[CLAUSE]
    assert (result["status"], result["trace_length"]) == ("violated", DEPTH)
    assert report["distinct_states"] == 22  # pinned at the level where it is found
    # no built-in clause is violated: the property is the one that sees this change
    assert [r["property"] for r in report["results"] if r["status"] == "violated"] == [CLAUSE]
    capsys.readouterr()
    assert main(["replay", "--quiet", result["trace_file"]]) == OK
    assert f"confirmed: {CLAUSE} violated after {DEPTH} steps: leader 1 " in capsys.readouterr().out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_change_makes_it_hold(tmp_path: Path, workers: str) -> None:
    code, report = _check(tmp_path, "--workers", workers, str(HOLDS))
    assert code == OK and report["expectations_met"] and report["complete"]
    assert report["distinct_states"] == HOLDS_STATES
    results = _results(report)
    assert results[CLAUSE]["status"] == "holds"
    assert results["last_known_leader_elected"]["status"] == "reached"  # not vacuous


def test_hypothesis_finds_it_and_samples_the_fix_without_a_violation(tmp_path: Path) -> None:
    code, report = _check(tmp_path / "v", "--engine", "hypothesis", "--seed", "1", str(VIOLATES))
    assert code == OK
    assert _results(report)[CLAUSE]["trace_length"] == DEPTH  # shrunk to the shortest
    args = ("--engine", "hypothesis", "--seed", "1", "--examples", "60", str(HOLDS))
    code, report = _check(tmp_path / "h", *args)
    assert code == OK and _results(report)[CLAUSE]["status"] == "holds"


def test_the_suite_reports_a_case_per_clause(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    args = ["suite", "--quiet", "--reports", str(tmp_path), "--junit", str(junit)]
    assert main([*args, str(VIOLATES), str(HOLDS)]) == OK
    cases: dict[tuple[str, str], bool] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        cases[case.get("classname", "").rsplit(".", 1)[-1], case.get("name", "")] = failed
    for model in ("fenced_leader_kafka_4_0", "fenced_leader_kafka_19522"):
        assert (model, CLAUSE) in cases and (model, "last_known_leader_elected") in cases
    assert not any(cases.values())  # the expected violation is a passing case


def test_expectations_may_name_the_models_own_properties(tmp_path: Path) -> None:
    """`[expect] violates` and `reached`, `[check] properties` take the module's names (a clause
    name too); a name no module declares is still refused."""
    text = VIOLATES.read_text().replace("../../properties/", str(MODULE.parent) + "/")
    chosen = text.replace("[check]\n", '[check]\nproperties = ["fenced_broker_not_leader"]\n')
    by_clause = chosen.replace("{ fenced_broker_not_leader = 2 }", f'{{ "{CLAUSE}" = 2 }}')
    model = tmp_path / "chosen.toml"
    model.write_text(by_clause)
    cfg = load_model(model)
    assert cfg.expect.violates == ((CLAUSE, 2),)
    assert [p.name for p in properties.of_model(cfg)] == ["fenced_broker_not_leader"]
    model.write_text(text.replace("fenced_broker_not_leader = 2", "fenced_broker_no_leader = 2"))
    with pytest.raises(ModelError, match="unknown property 'fenced_broker_no_leader'"):
        load_model(model)


# --- bad modules: one line, exit code 2 ---------------------------------------------------------

PROPERTY = """
from kafkarep.properties.base import always


def clause(cfg, state):
{body}


PROPERTIES = (always("{name}", "doc", "source", clause=clause),)
"""


def _model(tmp_path: Path, modules: list[str]) -> Path:
    model = tmp_path / "m.toml"
    listed = ", ".join(f'"{m}"' for m in modules)
    model.write_text(
        "[cluster]\nbrokers = 2\nreplicas = [1, 2]\nisr = [1]\nrecords = 0\n"
        f"[faults]\nfences = 1\n[check]\nextra_properties = [{listed}]\n"
    )
    return model


def _one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == BAD_INPUT
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1, err
    return lines[0]


def _property(name: str = "mine", body: str = "    return None") -> str:
    return PROPERTY.format(name=name, body=body)


BAD_MODULES = {
    "syntax error": ("def broken(:\n", "bad.py:1: SyntaxError: "),
    "missing import": ("import os\nimport no_such_module\n", "bad.py:2: ModuleNotFoundError: "),
    "raises on import": ("PROPERTIES = ()\n1 / 0\n", "bad.py:2: ZeroDivisionError: "),
    "no PROPERTIES": ("X = 1\n", "bad.py: defines no PROPERTIES"),
    "PROPERTIES not a tuple": ("PROPERTIES = 3\n", "bad.py: PROPERTIES is an int, not a tuple"),
    "empty PROPERTIES": ("PROPERTIES = ()\n", "bad.py: PROPERTIES is empty"),
    "not a Property": ("PROPERTIES = ('mine',)\n", "bad.py: PROPERTIES[0] is a str, not a"),
    "a built-in name": (_property("metadata"), "bad.py: property 'metadata' has the name of a"),
    "a liveness property": (
        "from kafkarep.properties.liveness import LIVENESS\n"
        "PROPERTIES = (LIVENESS[0]._replace(name='mine'),)\n",
        "bad.py: PROPERTIES[0]: mine is a liveness property (leads_to); a module adds always",
    ),
    "declared twice": (
        _property() + "PROPERTIES = PROPERTIES * 2\n",
        "bad.py: property 'mine' is declared twice",
    ),
}


@pytest.mark.parametrize("case", list(BAD_MODULES))
def test_a_bad_module_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    source, message = BAD_MODULES[case]
    (tmp_path / "bad.py").write_text(source)
    line = _one_line_error(capsys, "check", str(_model(tmp_path, ["bad.py"])))
    assert f"m.toml: {tmp_path}/{message}" in line
    assert "Traceback" not in line


def test_a_bad_path_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "props.txt").write_text(_property())
    (tmp_path / "dir.py").mkdir()
    for given, message in (
        ("missing.py", f"{tmp_path}/missing.py: no such Python file (a path is relative to"),
        ("props.txt", "props.txt: not a Python file (.py)"),
        ("dir.py", f"{tmp_path}/dir.py: cannot read (IsADirectoryError)"),
    ):
        line = _one_line_error(capsys, "check", str(_model(tmp_path, [given])))
        assert f"m.toml: [check] extra_properties: {message}" in line


def test_two_modules_may_not_declare_one_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text(_property())
    (tmp_path / "b.py").write_text(_property())
    line = _one_line_error(capsys, "check", str(_model(tmp_path, ["a.py", "b.py"])))
    assert f"b.py: property 'mine' has the name of a property of {tmp_path}/a.py" in line


RAISES = (
    "    if state.partition.leader == -1:\n        raise KeyError('no leader')\n    return None"
)


@pytest.mark.parametrize(
    "engine", [("--workers", "1"), ("--workers", "2"), ("--engine", "hypothesis")]
)
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (RAISES, "bad.py:7: clause mine.clause raised KeyError: 'no leader'"),
        (
            "    return state.partition.leader > 0",
            "bad.py: clause mine.clause returned True, not None (holds) or a witness sentence "
            "(str)",
        ),
    ],
    ids=["raises", "returns-a-bool"],
)
def test_a_clause_that_fails_while_checking_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    engine: tuple[str, str],
    body: str,
    message: str,
) -> None:
    """Found in a state one step in (the leader fenced), in the process that judged it: the
    explorer's own, a forked worker, or a Hypothesis example; one line naming the clause and
    the module's line, exit code 2."""
    (tmp_path / "bad.py").write_text(_property(body=body))
    model = _model(tmp_path, ["bad.py"])
    reports = ("--reports", str(tmp_path / "reports"))
    line = _one_line_error(capsys, "check", "--quiet", *engine, *reports, str(model))
    assert line == f"kafkarep check: error: {tmp_path}/{message}"


def test_prove_proves_the_property_and_finds_its_violation(tmp_path: Path) -> None:
    """The clause declares its predicate over a domain, so `prove` proves it by induction with
    KAFKA-19522's change and finds the violation without it, a trace `replay` confirms."""
    pytest.importorskip("z3")
    summary = tmp_path / "prove.json"
    args = ["prove", "--quiet", "--reports", str(tmp_path), "--json", str(summary)]
    assert main([*args, str(HOLDS), str(VIOLATES)]) == OK
    holds, violates = json.loads(summary.read_text())["models"]
    (proved,) = holds["results"]
    assert (proved["property"], proved["status"], proved["method"]) == (
        "fenced_broker_not_leader",
        "proved",
        "induction",
    )
    assert proved["obligations"] == proved["obligations_proved"] == 204
    (found,) = violates["results"]
    assert (found["status"], found["depth"], found["clause"]) == ("violated", DEPTH, CLAUSE)
    assert main(["replay", "--quiet", found["trace_file"]]) == OK


def _with_module(tmp_path: Path, source: str) -> Path:
    """VIOLATES with its property module replaced by `source`."""
    module = tmp_path / "fenced_leader.py"
    module.write_text(source)
    model = tmp_path / "model.toml"
    model.write_text(VIOLATES.read_text().replace("../../properties/fenced_leader.py", str(module)))
    return model


def test_prove_checks_the_predicate_against_the_clause(tmp_path: Path) -> None:
    """Seeded: a predicate that says the property always holds, beside the clause that finds the
    fenced leader. The agreement check finds the two apart on a reachable state, and nothing is
    proved or searched."""
    pytest.importorskip("z3")
    wrong = MODULE.read_text().replace(
        "@predicate(leader_acceptable)", "@predicate(lambda d, cfg, state: True)"
    )
    summary = tmp_path / "prove.json"
    model = _with_module(tmp_path, wrong)
    args = ["prove", "--quiet", "--reports", str(tmp_path), "--json", str(summary), str(model)]
    assert main(args) == EXPECTATION_NOT_MET
    (report,) = json.loads(summary.read_text())["models"]
    assert [r["status"] for r in report["results"]] == ["disagrees"]
    (first, *_) = report["agreement"]["disagreements"]
    assert first["problem"] == f"clause {CLAUSE}: symbolic True, concrete False"
    assert first["where"] == f"{tmp_path}/fenced_leader.py: <lambda>"  # the predicate


def test_prove_refuses_a_property_without_its_predicate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("z3")
    model = _with_module(
        tmp_path, MODULE.read_text().replace("@predicate(leader_acceptable)\n", "")
    )
    line = _one_line_error(capsys, "prove", "--reports", str(tmp_path), str(model))
    assert line.startswith(f"kafkarep prove: error: {model}: prove does not encode this model: ")
    assert "fenced_broker_not_leader declare no predicate over a domain" in line


# --- Spark ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded() -> Iterator[Any]:
    from kafkarep.engines import spark_context

    sc = spark_context.start_spark("local[2]")
    try:
        yield sc
    finally:
        sc.stop()


def _spark(cfg: Any) -> Exploration:
    from kafkarep.engines import spark

    return spark.explore(cfg, RunOptions(engine="spark"), None)


@pytest.mark.slow
@pytest.mark.spark
def test_spark_executors_build_the_properties_from_the_model(embedded: Any, tmp_path: Path) -> None:
    """The executors are Python processes of their own: they build the module from the source
    the model carries, so it need not exist where they run (here: deleted after loading). The
    answers are the explorer's."""
    shutil.copy(MODULE, tmp_path / "fenced_leader.py")
    model = tmp_path / VIOLATES.name
    model.write_text(VIOLATES.read_text().replace("../../properties/", ""))
    cfg = load_model(model)
    (tmp_path / "fenced_leader.py").unlink()
    found = _spark(cfg)
    local = explorer_engine(cfg, RunOptions(workers=1, por=False), None)
    assert found.violations[CLAUSE].depth == DEPTH
    assert found.violations[CLAUSE].path == local.violations[CLAUSE].path
    assert found.distinct_states == local.distinct_states == 22


@pytest.mark.slow
@pytest.mark.spark
def test_spark_holds_where_the_explorer_does(embedded: Any) -> None:
    found = _spark(load_model(HOLDS))
    assert found.complete and not found.violations
    assert found.distinct_states == HOLDS_STATES
    assert "last_known_leader_elected" in found.reached


@pytest.mark.slow
@pytest.mark.spark
def test_spark_reports_a_clause_that_raises_in_one_line(
    embedded: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.py").write_text(_property(body=RAISES))
    model = _model(tmp_path, ["bad.py"])
    args = ("check", "--quiet", "--engine", "spark", "--reports", str(tmp_path), str(model))
    assert main(list(args)) == BAD_INPUT
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == (
        f"kafkarep check: error: {tmp_path}/bad.py:7: clause mine.clause raised KeyError: "
        "'no leader'"
    )
