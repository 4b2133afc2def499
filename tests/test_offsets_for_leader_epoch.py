"""The follower's own `OffsetsForLeaderEpoch` request (`[rules] offsets_for_leader_epoch`, Kafka
0.11.0 to 2.7.x): a follower that starts following a leader, or a new leader epoch, asks where
to truncate before it fetches, once; a fetch's answer then names no divergence. Before
KAFKA-10554 (2.8.0) this is how every follower truncated; models/history's 0.11 to 2.0 models
run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.actions import successors
from kafkarep.model.actions.data import fetch_truncation
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from tests.helpers import ROOT, step

FIXED = ROOT / "models" / "history" / "kafka_6361_single_round_truncation_fixed.toml"


def model(**rules: Any) -> ModelConfig:
    return parse_model(
        {
            "cluster": {"brokers": 2, "replicas": [1, 2], "isr": [1, 2], "records": 2},
            "rules": {"offsets_for_leader_epoch": True, **rules},
            "faults": {"fences": 1},
        }
    )


def diverged(cfg: ModelConfig) -> ClusterState:
    """Broker 1 writes record 1 in epoch 1 and is fenced; it follows broker 2, which leads in
    epoch 2 and writes record 2 at the same offset; broker 1 is unfenced."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "fence", 0, 1)
    state = step(cfg, state, "apply_metadata", 1, 1)
    state = step(cfg, state, "apply_metadata", 2, 1)
    state = step(cfg, state, "produce", 2)
    state = step(cfg, state, "unfence", 0, 1)
    return step(cfg, state, "apply_registrations", 2)


def names(cfg: ModelConfig, state: ClusterState, actor: int) -> set[str]:
    return {a.name for a, _ in successors(cfg, state) if a.actor == actor}


def test_a_new_follower_asks_before_it_fetches_and_truncates_once() -> None:
    cfg = model()
    state = diverged(cfg)
    follower = state.broker(1).replica
    assert follower is not None and follower.truncating and follower.log == ((1, 1),)
    assert "fetch" not in names(cfg, state, 1)
    state = step(cfg, state, "offsets_for_leader_epoch", 1)
    answer = state.broker(1).fetch_response
    assert answer is not None and answer.epochs and answer.diverging == (1, 0)
    state = step(cfg, state, "fetch_response", 1)
    follower = state.broker(1).replica
    assert follower is not None and follower.log == () and not follower.truncating
    assert "offsets_for_leader_epoch" not in names(cfg, state, 1)
    state = step(cfg, step(cfg, state, "fetch", 1), "fetch_response", 1)
    follower = state.broker(1).replica
    assert follower is not None and follower.log == ((2, 2),)


def test_a_fetch_answer_names_no_divergence_only_an_offset_out_of_range() -> None:
    cfg = model()
    state = diverged(cfg)
    state = step(cfg, state, "offsets_for_leader_epoch", 1)
    state = step(cfg, step(cfg, state, "fetch_response", 1), "fetch", 1)
    response = state.broker(1).fetch_response
    assert response is not None and response.diverging is None and not response.epochs
    assert fetch_truncation(cfg) == "high-watermark"
    assert fetch_truncation(model(offsets_for_leader_epoch=False)) == "leader-epoch"


def test_without_the_option_the_fetch_names_the_divergence() -> None:
    cfg = model(offsets_for_leader_epoch=False)
    state = diverged(cfg)
    follower = state.broker(1).replica
    assert follower is not None and not follower.truncating
    state = step(cfg, state, "fetch", 1)
    response = state.broker(1).fetch_response
    assert response is not None and response.diverging == (1, 0) and not response.epochs


def test_a_fetch_answer_in_flight_when_the_follower_starts_truncating_is_dropped() -> None:
    cfg = model()
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, state, "fetch", 2)  # its answer, record 1, is in flight
    state = step(cfg, state, "fence", 0, 1)
    state = step(cfg, state, "apply_metadata", 2, 1)  # broker 2 leads: no longer a follower
    state = step(cfg, state, "fetch_response", 2)
    follower = state.broker(2).replica
    assert follower is not None and follower.log == ()


@pytest.mark.parametrize("truncation", ["leader-epoch", "kip-101"])
def test_the_option_runs_with_both_epoch_algorithms(truncation: str) -> None:
    cfg = model(truncation=truncation)
    state = step(cfg, diverged(cfg), "offsets_for_leader_epoch", 1)
    follower = step(cfg, state, "fetch_response", 1).broker(1).replica
    assert follower is not None and follower.log == () and not follower.truncating


def test_before_kip_101_there_is_no_such_request() -> None:
    with pytest.raises(ModelError, match="offsets_for_leader_epoch"):
        model(truncation="high-watermark")


def test_prove_refuses_it() -> None:
    with pytest.raises(AbstractionError, match="offsets_for_leader_epoch"):
        Encoding(model())


def _violated(path: Path, disabled: frozenset[str] = frozenset()) -> set[str]:
    cfg = load_model(path)
    cfg = cfg._replace(options=cfg.options._replace(disabled_guards=disabled))
    result = Explorer(cfg, properties.ALL, Limits()).run()
    return {name.split(".")[0] for name in result.violations}


def test_a_follower_that_fetches_before_its_truncation_keeps_diverged_records() -> None:
    """The seeded bug: with `fetch.truncation_complete` off, a follower fetches as soon as it
    follows the new leader, before it asked where to truncate, and the fetch's answer names no
    divergence. On KAFKA-6361's fixed bounds (KIP-279) the logs then differ below the HWM."""
    assert _violated(FIXED) == set()
    assert "log_matching" in _violated(FIXED, frozenset({"fetch.truncation_complete"}))
