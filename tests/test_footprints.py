"""Each action family declares beside itself what its steps touch (`Family.footprint`, in the
vocabulary of `kafkarep/model/footprint.py`), and the partial-order reduction reads only that.
Here every footprinted step of reachable states runs and what it wrote (`footprint.touched`)
must lie within what it declared. The reads are checked by applying both orders of every pair
the search declares independent (tests/test_por.py)."""

from __future__ import annotations

import pytest

from kafkarep.model import footprint as fp
from kafkarep.model.actions import BY_NAME, FAMILIES, Action, apply, enabled
from kafkarep.model.config import ModelConfig
from kafkarep.model.independence import FOOTPRINTED, footprint
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT, reachable

MODELS = ROOT / "models"
# Between them every footprinted family and every fault that shapes what those steps meet:
# restarts and stale responses, lossy unclean shutdowns, clean ones without the controller,
# delayed fetches, a lagging controller, acks=1 writes, a MinISR change, ELR, reassignment, the
# ZooKeeper-era controller.
SHAPES = (
    "kip966_small.toml",
    "reassignment.toml",
    "faults/lagging_controller.toml",
    "faults/acks_1.toml",
    "faults/clean_stops.toml",
    "faults/min_isr_change.toml",
    "history/v35_last_replica_standing.toml",
    "history/kafka_6880_zombie_replica_fetch.toml",
    "history/kafka_14139_stale_broker_epoch.toml",
    "zookeeper_unclean_kraft.toml",
)


def beyond_footprint(cfg: ModelConfig, states: list[ClusterState]) -> tuple[list[str], set[str]]:
    """Each step of these states that wrote outside its declared footprint (with what it wrote
    that it did not declare), and the families whose steps were run."""
    found, run = [], set()
    for state in states:
        for action in enabled(cfg, state):
            declared = footprint(state, action)
            if declared == fp.DEPENDENT:
                continue
            run.add(action.name)
            extra = fp.touched(state, apply(cfg, state, action)) & ~declared
            if extra:
                found.append(f"{action.describe()} by {action.actor_name()}: {_bits(extra)}")
    return found, run


def _bits(mask: int) -> str:
    names = [n for n, bit in (("receives", 1), ("commits", 2), ("acks", 4)) if mask & bit]
    names += ["controller"] if mask & fp.CONTROLLER else []
    for broker in range(1, 16):
        names += [f"broker {broker} data"] if mask & fp.data(broker) else []
        names += [f"broker {broker} rest"] if mask & fp.meta(broker) else []
    return ", ".join(names)


def _states(name: str) -> tuple[ModelConfig, list[ClusterState]]:
    cfg = load_model(MODELS / name)
    return cfg, list(reachable(cfg, walks=40, length=40, seed=7, levels=3))


@pytest.mark.parametrize("name", SHAPES)
def test_no_step_writes_outside_its_footprint(name: str) -> None:
    cfg, states = _states(name)
    found, run = beyond_footprint(cfg, states)
    assert found == []
    assert run  # the walk met footprinted steps


def test_every_footprinted_family_is_run_by_some_shape() -> None:
    run: set[str] = set()
    for name in SHAPES:
        run |= beyond_footprint(*_states(name))[1]
    assert run == FOOTPRINTED


def test_footprints_are_declared_beside_their_actions() -> None:
    """One declaration per family: the relation reads `Family.footprint` and nothing else, and
    every declaration lives in the module of its action."""
    assert {f.name for f in FAMILIES if f.footprint is not None} == FOOTPRINTED
    for family in FAMILIES:
        if family.footprint is not None:
            assert family.footprint.__module__ == family.apply.__module__, family.name
    assert len(FOOTPRINTED) == 11


def test_a_footprint_too_narrow_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded: a fetch declared to touch the follower only (it records the follower's position
    at the leader, and may move the leader's HWM)."""
    from kafkarep.model import independence

    def follower_only(state: ClusterState, action: Action) -> int:
        return fp.data(action.actor)

    assert BY_NAME["fetch"].footprint is not None
    monkeypatch.setitem(independence._DECLARED, "fetch", follower_only)
    cfg, states = _states("kip966_small.toml")
    found, _ = beyond_footprint(cfg, states)
    assert found and all(line.startswith("fetch by broker") for line in found)
    assert any("rest" in line for line in found)


def test_touched_names_the_parts_a_step_changed() -> None:
    """`touched` itself: a produce writes its leader's log (data) and the receivers; a fence
    writes the controller."""
    cfg, states = _states("kip966_small.toml")
    state = states[0]
    produce = next(a for a in enabled(cfg, state) if a.name == "produce")
    wrote = fp.touched(state, apply(cfg, state, produce))
    assert wrote & fp.data(produce.actor) and wrote & fp.RECEIVES
    assert not wrote & fp.CONTROLLER
    fence = next(a for a in enabled(cfg, state) if a.name == "fence")
    assert fp.touched(state, apply(cfg, state, fence)) & fp.CONTROLLER
    assert fp.touched(state, state) == 0
