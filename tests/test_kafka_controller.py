"""Kafka's own controller inside the explorer (`[rules] controller = "kafka"`, `kafkarep check
--controller kafka`, `--audit-controller`; docs/oracle.md): Kafka's classes answer a model with
the rules' states and verdicts; a patched PartitionChangeBuilder (KAFKA-19522's acceptability
test skipped) is found, each step where it and the rules differ reported as a conformance case;
the audit asks every distinct step of a search and finds the same difference from the other side.
Without Java: every step of a search writes as a conformance case and reads back as the rules'
outcome. Bad input is one line and exit 2."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.kafka.releases import RELEASES
from kafkarep.model import controller
from kafkarep.model.config import with_kafka_controller
from kafkarep.oracle import conformance, harness, kafka_controller
from kafkarep.oracle.harness import Oracle
from kafkarep.properties.model_files import parse_model
from kafkarep.rules import Changed
from tests.helpers import ROOT

MISSING = harness.missing() or (None if shutil.which("javac") else "javac is not installed")
needs_java = pytest.mark.skipif(MISSING is not None, reason=f"no oracle: {MISSING}")

FINDING = ROOT / "models" / "findings" / "make_leader_resets_pending_isr.toml"
FENCED_LEADER = ROOT / "models" / "user_properties" / "fenced_leader_kafka_4_1.toml"
WITHOUT_19522 = ROOT / "models" / "user_properties" / "fenced_leader_kafka_4_1_without_19522.toml"
GUARD = "if (!isAcceptableLeader.test(partition.lastKnownElr[0])) {"
SKIPPED = "if (false && !isAcceptableLeader.test(partition.lastKnownElr[0])) {"
STEPS = 179  # the distinct controller steps of fenced_leader_kafka_4_1's search


def check(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`kafkarep check --quiet` in tmp_path: the exit code and the first model's summary."""
    summary = tmp_path / "summary.json"
    code = main(["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), *args])
    report = json.loads(summary.read_text())["models"][0] if summary.exists() else {}
    return code, report


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kafka 4.1.0's PartitionChangeBuilder without KAFKA-19522's acceptability test, compiled."""
    work = tmp_path_factory.mktemp("patch")
    builder = "org.apache.kafka.controller.PartitionChangeBuilder"
    assert main(["kafka-patch", "--source", builder, "--kafka", "4.1.0", "--out", str(work)]) == 0
    source = work / "PartitionChangeBuilder.java"
    text = source.read_text()
    assert text.count(GUARD) == 1
    source.write_text(text.replace(GUARD, SKIPPED))
    classes = work / "classes"
    args = ["kafka-patch", str(source), "--kafka", "4.1.0", "--out", str(classes)]
    assert main(args) == 0
    return classes


@needs_java
def test_kafka_answers_with_the_rules_states_and_verdicts(tmp_path: Path) -> None:
    """Kafka 4.1.0's own classes answer fenced_leader_kafka_4_1 as the rules do: its pinned
    count and verdict, every step asked once between the two workers and in batches, none that
    differs. (The
    makeLeader finding is checked so by .ci/run, every non-slow model by .ci/nightly.)"""
    code, report = check(tmp_path, "--controller", "kafka", str(FENCED_LEADER))
    assert code == 0, report["problems"]
    assert report["distinct_states"] == 5588  # the rules' pin
    assert report["controller"] == "Kafka 4.1.0's classes"
    assert report["controller_disagreements"] == 0
    assert report["controller_steps"] == STEPS  # the audit's count of the same search
    assert 0 < report["controller_batches"] < STEPS // 5  # asked in batches, a worker's each
    answers = sorted((tmp_path / "controller-answers" / FENCED_LEADER.stem).glob("*.json"))
    assert len(answers) == STEPS


@needs_java
def test_a_patched_class_is_found_and_each_difference_reported(
    tmp_path: Path, patched: Path
) -> None:
    code, report = check(
        tmp_path, "--controller", "kafka", "--kafka-classes", str(patched), str(FENCED_LEADER)
    )
    assert code == 1  # the model's [expect] is the unpatched release's: it holds
    violated = {r["property"]: r for r in report["results"] if r["status"] == "violated"}
    assert violated["fenced_broker_not_leader.controller"]["trace_length"] == 2
    assert report["controller"] == f"Kafka 4.1.0 with classes from {patched}"
    folder = tmp_path / "controller-disagreements" / "fenced_leader_kafka_4_1"
    cases = [json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))]
    assert len(cases) == report["controller_disagreements"] > 0
    # the trace says who answered, and replays with the same classes
    trace = next(tmp_path.glob("traces/*/fenced_broker_not_leader.controller.itf.json"))
    meta = json.loads(trace.read_text())["#meta"]["kafkarep"]
    assert (meta["controller"], meta["kafka_classes"]) == ("kafka", str(patched))
    assert main(["replay", "--quiet", str(trace)]) == 0
    # each is a conformance case whose expectation is the patched class's answer, and the rules
    # of 4.1.0 answer it otherwise
    with Oracle("4.1.0", kafka_classes=patched) as oracle:
        for case, reply in zip(cases, oracle.ask_many(cases), strict=True):
            assert harness.answer(reply) == case["expect"]
            assert conformance.check_case(case, "4.1.0"), case["id"]


@needs_java
def test_each_model_of_a_run_asks_kafka_afresh(tmp_path: Path, patched: Path) -> None:
    """Two models in one process: the second's steps are not answered from the first's cache."""
    summary = tmp_path / "summary.json"
    args = ["check", "--quiet", "--workers", "1", "--reports", str(tmp_path), "--json"]
    args += [str(summary), "--controller", "kafka", "--kafka-classes", str(patched)]
    assert main([*args, str(FENCED_LEADER), str(FENCED_LEADER)]) == 1
    first, second = json.loads(summary.read_text())["models"]
    assert first["controller_steps"] == second["controller_steps"] > 0
    assert first["controller_disagreements"] == second["controller_disagreements"] > 0


@needs_java
def test_the_audit_asks_every_distinct_step(
    tmp_path: Path, patched: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = check(tmp_path, "--audit-controller", str(FENCED_LEADER))
    assert code == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"controller audit: {STEPS} distinct steps, {STEPS} agreed"
    )
    assert report["controller"] == "the rules at Kafka 4.1.0"
    # the rules of 4.1.0 against the patched class: the steps where the last known leader is
    # fenced differ, and the run says so with exit 1
    code, report = check(
        tmp_path, "--audit-controller", "--kafka-classes", str(patched), str(FENCED_LEADER)
    )
    audit = report["controller_audit"]
    assert code == 1 and audit["steps"] == STEPS and STEPS - audit["agreed"] > 0
    assert len(audit["disagreements"]) == STEPS - audit["agreed"]
    # the rules with the matching option agree with the patched class on every step taken
    code, report = check(
        tmp_path, "--audit-controller", "--kafka-classes", str(patched), str(WITHOUT_19522)
    )
    audit = report["controller_audit"]
    assert code == 0 and audit["steps"] == audit["agreed"] > 0


def test_every_step_writes_as_a_case_and_reads_back(tmp_path: Path) -> None:
    """No Java: the steps of a search as conformance cases (checked against the rules as they are
    written), and each rules' answer read back as the outcome the model commits."""
    controller.forget()
    kafka_controller.record_steps(tmp_path / "steps")
    try:
        code = main(
            ["check", "--quiet", "--workers", "1", "--reports", str(tmp_path), str(FENCED_LEADER)]
        )
    finally:
        kafka_controller.record_steps(None)
    assert code == 0
    steps = [json.loads(f.read_text()) for f in sorted((tmp_path / "steps").glob("*.json"))]
    assert len(steps) == STEPS
    kinds = {step["case"]["action"]["type"] for step in steps}
    assert kinds == {"fence_broker", "unfence_broker", "register_broker", "alter_partition"}
    for step in steps:
        case = step["case"]
        metadata = conformance.case_metadata(case, "4.1.0")
        outcome = kafka_controller.outcome_of(step["rules"], metadata)
        again = conformance.outcome_answer(metadata, case["action"], outcome)
        assert again == step["rules"], case["id"]
        if isinstance(outcome, Changed):  # its record takes the registration there, epochs too
            assert metadata.partition.apply(outcome.record) == outcome.registration, case["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kafka-jar", "no.jar", str(FINDING)], "no.jar does not exist"),
        (["--kafka-classes", str(ROOT / "models"), str(FINDING)], "has no .class file"),
        (
            ["--controller", "kafka", str(ROOT / "models" / "zookeeper_unclean.toml")],
            'controller = "zookeeper" is not Kafka\'s KRaft controller',
        ),
        (
            [
                "--controller",
                "kafka",
                str(ROOT / "models" / "mutations" / "alter_partition_partition_epoch.toml"),
            ],
            "which have no option for alter_partition.partition_epoch_current",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["check", "--quiet", "--reports", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@needs_java
def test_classes_without_a_kafka_controller_are_refused(
    tmp_path: Path, patched: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "--quiet", "--reports", str(tmp_path), "--kafka-classes", str(patched)]
    assert main([*args, str(FINDING)]) == 2
    assert "need --controller kafka or --audit-controller" in capsys.readouterr().err


@pytest.mark.slow
@needs_java
@pytest.mark.parametrize("release", RELEASES)
def test_kafka_s_classes_answer_the_finding_as_the_rules_at_every_release(
    tmp_path: Path, release: str
) -> None:
    """The makeLeader finding at each release the oracle checks, explored twice: answered by the
    rules and by Kafka's classes of that release; the same states, depth and violations, and no
    step where the two differ."""
    raw = tomllib.loads(FINDING.read_text())
    raw["rules"]["kafka_version"] = release
    rules = parse_model(raw, str(FINDING))
    kafka = with_kafka_controller(rules)
    found = []
    for cfg in (rules, kafka):
        controller.forget()
        kafka_controller.use(report=tmp_path / release)
        try:
            result = Explorer(cfg, properties.select(cfg.check.properties), workers=1).run()
        finally:
            kafka_controller.close()
        found.append((result.distinct_states, result.depth, sorted(result.violations)))
    assert found[0] == found[1]
    assert "leader_candidate_completeness.isr" in found[0][2]
    assert not list((tmp_path / release).glob("*.json"))  # no step differed
