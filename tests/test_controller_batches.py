"""Kafka's classes answer the explorer's controller steps in batches (`controller = "kafka"`,
docs/oracle.md): each step is asked once, in far fewer batches than steps, and the search keeps
the states, verdicts and traces it has when each step is asked alone, also where Kafka's answer is
not the rules' that stood in for it. Without Java: "Kafka" here is the rules of the case's release
without KAFKA-19522's acceptability test, the patched class of the walkthrough."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines import controller_batches, worker
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.kernel import Expander
from kafkarep.kafka.errors import Error
from kafkarep.model import controller
from kafkarep.model.config import with_kafka_controller
from kafkarep.model.initial import initial_state
from kafkarep.oracle import conformance, kafka_controller
from kafkarep.properties.model_files import load_model
from kafkarep.rules import Changed, FenceBroker, Rejected
from tests.helpers import ROOT

FENCED_LEADER = ROOT / "models" / "user_properties" / "fenced_leader_kafka_4_1.toml"


@pytest.fixture
def batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each batch "Kafka" is asked."""
    asked: list[int] = []

    def ask(self: kafka_controller.KafkaController, cases: Iterable[dict[str, Any]]) -> list[Any]:
        cases = list(cases)
        asked.append(len(cases))
        self.asked += len(cases)
        return [_without_19522(case, self.release) for case in cases]

    monkeypatch.setattr(kafka_controller.KafkaController, "ask", ask)
    return asked


def _without_19522(case: dict[str, Any], release: str) -> dict[str, Any]:
    metadata = conformance.case_metadata(case, release)
    options = metadata.options._replace(last_known_leader_acceptable=False)
    metadata = metadata._replace(options=options)
    action = case["action"]
    outcome = conformance.ACTIONS[action["type"]](metadata, action)
    return conformance.outcome_answer(metadata, action, outcome)


def explore(tmp_path: Path, batched: bool) -> Any:
    cfg = with_kafka_controller(load_model(FENCED_LEADER))
    kafka_controller.use(report=tmp_path / f"differ-{batched}")
    real = controller.collect
    with pytest.MonkeyPatch.context() as patch:
        if not batched:  # every step asked alone, as it is met
            patch.setattr(worker.controller, "collect", lambda on: real(False))
        try:
            return Explorer(cfg, properties.of_model(cfg), workers=1).run()
        finally:
            kafka_controller.close()


def test_batches_keep_the_states_verdicts_and_traces(tmp_path: Path, batches: list[int]) -> None:
    alone = explore(tmp_path, False)
    steps = len(batches)
    assert set(batches) == {1} and steps > 100
    batches.clear()
    together = explore(tmp_path, True)
    assert sum(batches) == steps and len(batches) == 19, batches  # a batch or two a level
    assert together == alone._replace(seconds=together.seconds)
    # "Kafka" differs from the rules that stood in: the seeded change is found, at depth 2
    assert together.violations["fenced_broker_not_leader.controller"].depth == 2
    assert len(list((tmp_path / "differ-True").glob("*.json"))) > 0


def test_a_state_met_unanswered_is_expanded_again_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three states; the second's first expansion meets a step with no answer. The chunk's
    expansions come out in frontier order, the second's from after the batch, and the
    `sometimes` hit its first expansion made is rewound."""
    expander = Expander(load_model(FENCED_LEADER), ())
    asked: list[int] = []

    def ask() -> int:
        asked.append(1)
        return 1

    monkeypatch.setitem(controller.ASKERS, "kafka", ask)
    answered = {"b": False}

    def expand(local: int, entry: str) -> Iterator[str]:
        if entry == "b" and not answered["b"]:
            expander.hits["reached"] = local  # made from the provisional answer
            controller._COLLECTING.unanswered += 1
            answered["b"] = True
            return iter(["b-provisional"])
        return iter([f"{entry}-1", f"{entry}-2"])

    out = list(controller_batches.in_batches(["a", "b", "c"], expand, expander))
    assert out == [(0, ["a-1", "a-2"]), (1, ["b-1", "b-2"]), (2, ["c-1", "c-2"])]
    assert asked == [1] and expander.hits == {}


def test_a_witness_is_the_one_found_when_each_step_is_asked_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seeded: a `sometimes` property reached from the second state, whose first expansion meets
    a step with no answer, and from the third, whose steps are known. Asked alone, the second
    state's step is the witness; so it is in batches (the third is only collected until the
    second's step is answered)."""
    cfg = load_model(FENCED_LEADER)
    expander = Expander(cfg, [("reached", lambda *_: False)])
    monkeypatch.setitem(controller.ASKERS, "kafka", lambda: 1)
    answered = {"b": False}

    def expand(local: int, entry: str) -> Iterator[str]:
        if entry == "b" and not answered["b"]:
            controller._COLLECTING.unanswered += 1
            answered["b"] = True
        if entry in ("b", "c") and expander.pending:  # as `Expander._watch` does
            expander.hits["reached"] = local
            expander.pending = []
        return iter([entry])

    out = list(controller_batches.in_batches(["a", "b", "c"], expand, expander))
    assert out == [(0, ["a"]), (1, ["b"]), (2, ["c"])]
    assert expander.hits == {"reached": 1}


def test_a_step_no_batch_answers_stops_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    expander = Expander(load_model(FENCED_LEADER), ())
    monkeypatch.setitem(controller.ASKERS, "kafka", lambda: 0)

    def expand(local: int, entry: str) -> Iterator[str]:
        controller._COLLECTING.unanswered += 1
        return iter([entry])

    with pytest.raises(controller_batches.BatchError, match="no batch answers"):
        list(controller_batches.in_batches(["a"], expand, expander))


def test_a_provisional_answer_is_never_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """While steps are collected, an unknown step gives the rules' outcome and is not cached:
    met again after its batch, it is Kafka's (here a seeded Kafka that refuses every step)."""
    asked: list[int] = []

    def refuse(self: kafka_controller.KafkaController, cases: Iterable[Any]) -> list[Any]:
        cases = list(cases)
        asked.append(len(cases))
        return [{"outcome": "rejected", "error": "INVALID_REQUEST"} for _ in cases]

    monkeypatch.setattr(kafka_controller.KafkaController, "ask", refuse)
    cfg = with_kafka_controller(load_model(FENCED_LEADER))
    kafka_controller.use()
    metadata = controller.metadata(initial_state(cfg), cfg)
    request = FenceBroker(1)
    controller.collect(True)
    try:
        first = controller.fence_broker(metadata, request)
        assert controller.unanswered() == 1 and asked == []
        assert controller.ask_unanswered() == 1 and asked == [1]
        second = controller.fence_broker(metadata, request)
        assert controller.unanswered() == 1  # answered now: nothing stood in
        assert controller.fence_broker(metadata, request) is second  # and cached
    finally:
        controller.collect(False)
        kafka_controller.close()
        controller.forget()  # the seeded answers stay out of later tests
    assert isinstance(first, Changed)  # the rules': broker 1 leaves the ISR
    assert second == Rejected(Error.INVALID_REQUEST, kafka_controller.KAFKA_GUARD)
