"""`kafkarep reproduce` without a cluster: the fields compared, the order steps are taken in (a
step Kafka is not ready for taken after one it commutes with, never after one it does not), a
step whose effect the cluster lacks reported with the field, the refusals before any cluster
starts, and the command's bad input. The real-cluster run is tests/kraft/test_reproduce_cluster.py
(the nightly tier)."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.cli.replay import load_counterexample
from kafkarep.common.exit_codes import BAD_INPUT
from kafkarep.model.actions import Action
from kafkarep.model.independence import sleep_key
from kafkarep.model.replay import Trace
from kafkarep.model.state import ClusterState
from kafkarep.reproduce import driver, setup, steps
from kafkarep.reproduce.projection import View, changed, differences, model_view
from tests.helpers import ROOT

FINDING = ROOT / "models" / "findings" / "make_leader_resets_pending_isr.toml"


@pytest.fixture(scope="module")
def finding_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The makeLeader finding's counterexample, written by `kafkarep check`."""
    reports = tmp_path_factory.mktemp("reports")
    summary = reports / "summary.json"
    main(["check", "--quiet", "--reports", str(reports), "--json", str(summary), str(FINDING)])
    (trace,) = reports.glob("traces/*/leader_candidate_completeness.isr.itf.json")
    return trace


def test_a_step_is_checked_on_the_fields_it_changes(finding_trace: Path) -> None:
    loaded = load_counterexample(finding_trace, None)
    last = loaded.trace.steps[-1]  # broker 1 applies the record of the first expansion
    assert last.action == Action("apply_metadata", 1, 2)
    step = changed(model_view(loaded.cfg, last.before), model_view(loaded.cfg, last.after))
    assert step == {"b1.hwm": 1, "b1.pending": None, "acked": 1}
    recorded = {**step, "b1.hwm": 0}
    assert differences(step, recorded) == ["b1.hwm is 0, the model's 1"]
    assert differences(step, {}) == [
        f"{k} is unrecorded, the model's {v}" for k, v in sorted(step.items())
    ]


class FakeKafka:
    """Takes every step as the model does, except where told: `late` steps are not ready at
    their first attempt, `stuck` ones never are, and `wrong` fields are recorded otherwise. It
    knows a step by the name the explorer gives it across states (`sleep_key`) and how many of
    that name it has taken."""

    def __init__(self, trace: Trace, **options: Any) -> None:
        self.cfg = trace.cfg
        self.state = trace.initial
        self.late: set[int] = set(options.get("late", ()))
        self.stuck: set[int] = set(options.get("stuck", ()))
        self.wrong: View = options.get("wrong", {})
        self.numbers: dict[Hashable, list[int]] = {}
        for number, step in enumerate(trace.steps, 1):
            self.numbers.setdefault(sleep_key(step.before, step.action), []).append(number)
        self.recorded = self

    def drive(self, _: Any, action: Action, before: ClusterState, after: ClusterState) -> str:
        numbers = self.numbers[sleep_key(before, action)]
        if numbers[0] in self.stuck or numbers[0] in self.late:
            self.late.discard(numbers[0])
            raise steps.NotReady(f"no thread held for step {numbers[0]}")
        numbers.pop(0)
        self.state = after
        return f"took {action.name}"

    def view(self, *, controller: bool) -> View:
        return model_view(self.cfg, self.state) | self.wrong


def take(
    monkeypatch: pytest.MonkeyPatch, trace_path: Path, **options: Any
) -> tuple[list[driver.Row], FakeKafka]:
    trace = load_counterexample(trace_path, None).trace
    kafka = FakeKafka(trace, **options)
    monkeypatch.setattr(driver, "CHECK_SECONDS", 0.0)
    monkeypatch.setattr(steps, "DRIVERS", {name: kafka.drive for name in steps.DRIVERS})
    rows = driver._take(trace.cfg, trace, kafka, lambda row: None)  # type: ignore[arg-type]
    return rows, kafka


def test_every_step_reached_in_the_trace_s_order(
    monkeypatch: pytest.MonkeyPatch, finding_trace: Path
) -> None:
    rows, _ = take(monkeypatch, finding_trace)
    assert [row.number for row in rows] == list(range(1, 16))
    assert all(row.reached and row.kafka.startswith("reached: took ") for row in rows)


def test_a_step_not_ready_goes_after_one_it_commutes_with(
    monkeypatch: pytest.MonkeyPatch, finding_trace: Path
) -> None:
    """Step 9 (broker 2 takes its fetch response) waits in Kafka behind the AlterPartition its
    fetch proposed; step 10 (the controller handles it) commutes with it, so it goes first."""
    rows, kafka = take(monkeypatch, finding_trace, late={9})
    assert [row.number for row in rows] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12, 13, 14, 15]
    assert all(row.reached for row in rows)
    assert kafka.state == load_counterexample(finding_trace, None).trace.final


def test_a_step_not_ready_before_a_dependent_one_is_not_taken(
    monkeypatch: pytest.MonkeyPatch, finding_trace: Path
) -> None:
    """Step 14 (the controller commits the second expansion, answering broker 1) and step 15
    (broker 1 applies a metadata record) both touch broker 1: no swap."""
    rows, _ = take(monkeypatch, finding_trace, stuck={14})
    assert [row.number for row in rows] == list(range(1, 15))
    assert not rows[-1].reached
    assert rows[-1].kafka == "Kafka did not take this step: no thread held for step 14"


def test_a_field_kafka_did_not_reach_stops_the_run(
    monkeypatch: pytest.MonkeyPatch, finding_trace: Path
) -> None:
    """Seeded: a Kafka whose leader keeps its HWM at 0 (as a fix of the finding would)."""
    rows, _ = take(monkeypatch, finding_trace, wrong={"b1.hwm": 0})
    assert rows[-1].number == 15 and not rows[-1].reached
    assert "b1.hwm is 0, the model's 1" in rows[-1].kafka
    assert all(row.reached for row in rows[:-1])


def test_what_the_driver_cannot_take_is_refused_before_a_cluster_starts(
    monkeypatch: pytest.MonkeyPatch, finding_trace: Path
) -> None:
    loaded = load_counterexample(finding_trace, None)
    with pytest.raises(driver.CannotReproduce, match="no check on a real cluster for min_isr"):
        driver.check_drivable(loaded.cfg, loaded.trace, "min_isr_commit.acked")
    monkeypatch.setattr(steps, "DRIVERS", {k: v for k, v in steps.DRIVERS.items() if k != "fetch"})
    with pytest.raises(driver.CannotReproduce, match=r"no driver for the step\(s\) fetch;"):
        driver.check_drivable(loaded.cfg, loaded.trace, loaded.clause)


def test_an_initial_state_the_harness_cannot_build_is_refused(finding_trace: Path) -> None:
    loaded = load_counterexample(finding_trace, None)
    initial = loaded.trace.initial
    setup.check_initial(loaded.cfg, initial)  # the finding's: ISR {1, 2}, broker 3 fenced
    replica = initial.broker(2).replica
    assert replica is not None
    written = initial.with_broker(
        2, initial.broker(2)._replace(replica=replica._replace(log=((1, 1),)))
    )
    with pytest.raises(setup.CannotSetUp, match="broker 2's log is not empty"):
        setup.check_initial(loaded.cfg, written)
    partition = initial.partition._replace(isr=frozenset({1}))
    shrunk = initial._replace(controller=initial.controller._replace(log=(partition,)))
    with pytest.raises(setup.CannotSetUp, match=r"ISR \[1\] is not the replicas less the fenced"):
        setup.check_initial(loaded.cfg, shrunk)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.itf.json"], "missing.itf.json"),
        (
            ["TRACE", "--kafka", "3.9.2"],
            "--kafka: the harness runs Kafka 4.1.0 and later, not 3.9.2",
        ),
        (["TRACE", "--kafka", "four"], "--kafka: 'four' is not a release"),
        (["TRACE", "--agent", "no.jar"], "--agent: no.jar: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], finding_trace: Path, arguments: list[str], message: str
) -> None:
    given = [str(finding_trace) if a == "TRACE" else a for a in arguments]
    assert main(["reproduce", *given]) == BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


class HeldFetcher:
    """A Driving whose follower 3 is held at its own fetch response (to a fetch sent before the
    set-up stopped it), so that its next fetch reaches the leader only once that one goes."""

    def __init__(self) -> None:
        self.passed: list[tuple[int, str]] = []
        self.recorded = self

    def last_seq(self, broker: int) -> int:
        return 0

    def broker_view(self, broker: int) -> dict[str, Any]:
        return {}

    def pass_one(self, node: int, point: str, **_: Any) -> dict[str, Any]:
        if point == "fetch" and (3, "fetch_response") not in self.passed:
            raise steps.NotReady("no thread of broker 1 held at fetch")
        self.passed.append((node, point))
        return {"fetch_offset": 0}

    def await_event(self, *_: Any, **__: Any) -> Any:
        return {"proposed_isr": [1, 2, 3]}


def test_a_fetch_behind_a_response_from_before_the_trace(finding_trace: Path) -> None:
    """Step 12, broker 3's fetch: its fetcher is held at a response to a fetch from before the
    trace (the model has none pending); that response goes first, then the fetch."""
    trace = load_counterexample(finding_trace, None).trace
    step = trace.steps[11]
    assert step.action == Action("fetch", 3, None) and step.before.broker(3).fetch_response is None
    driving = HeldFetcher()
    did = steps.fetch(driving, step.action, step.before, step.after)  # type: ignore[arg-type]
    assert driving.passed == [(3, "fetch_response"), (1, "fetch")]
    assert "broker 3 first took a response to a fetch from before the trace" in did
    assert did.endswith("proposed ISR [1, 2, 3]")
