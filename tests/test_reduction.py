"""The state reductions (kafkarep/model/reduction.py) keep every verdict, liveness masks included:
on the reachable states of the models, a state and its reduced form are bisimilar, step by step,
and the explorer's verdicts and shortest counterexample depths are the same with and without
them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.reduction import IDLE_ALTER_PARTITION, STALE_FETCH, reduce
from kafkarep.model.state import ClusterState, Status
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT, reachable

MODELS = ROOT / "models"
# Every model shape and rule option, with the guards the mutations switch off.
SHAPES = sorted(
    p
    for p in (
        *MODELS.glob("*.toml"),
        *MODELS.glob("mutations/*.toml"),
        *MODELS.glob("findings/*"),
        *MODELS.glob("history/*.toml"),
        *MODELS.glob("faults/*.toml"),
        *MODELS.glob("liveness/*.toml"),
    )
    if load_model(p).check.engine == "explorer"
)
ALL = properties.ALL
ALWAYS: list[tuple[str, Any]] = [
    (p.qualified(c), c.check) for p in ALL if p.kind == "always" for c in p.clauses
]
SOMETIMES: list[tuple[str, Any]] = [
    (p.name, c.check) for p in ALL if p.kind == "sometimes" for c in p.clauses
]


# The random walks every test here samples: enough that each kind of reduction happens (a
# refused AlterPartition request needs an election while the request is in flight).
SAMPLE = {"walks": 30, "length": 45, "seed": 2}


# Models whose sampled states have nothing to reduce: no leader changes while a response or a
# request is in flight, and no restart.
NOTHING_TO_REDUCE = {"reassignment_stuck.toml"}


def steps(cfg: ModelConfig, state: ClusterState) -> list[tuple[str, int, ClusterState]]:
    return [(a.name, a.actor, reduce(cfg, t)) for a, t in successors(cfg, state)]


def verdicts(cfg: ModelConfig, state: ClusterState) -> list[object]:
    """Every `always` clause's verdict, and every liveness property's premise and goal masks (the
    liveness check reads them on reduced states)."""
    masks = [
        ((premise(cfg, state) if (premise := p.premise()) else 0) & p.width(cfg))
        | (p.goal()(cfg, state) & p.width(cfg)) << 32
        for p in properties.LIVENESS
    ]
    return [*(check(cfg, state) is None for _, check in ALWAYS), *masks]


@pytest.mark.parametrize("path", SHAPES, ids=lambda p: str(p.relative_to(MODELS)))
def test_a_state_and_its_reduced_form_are_bisimilar(path: Path) -> None:
    cfg = load_model(path)
    reduced_somewhere = 0
    for state in reachable(cfg, **SAMPLE):
        small = reduce(cfg, state)
        if small == state:
            continue
        reduced_somewhere += 1
        # The same steps, in the same order, to states that reduce to the same ones...
        assert steps(cfg, state) == steps(cfg, small), path
        # ...judged the same by every property, `sometimes` steps included.
        assert verdicts(cfg, state) == verdicts(cfg, small), path
        for (a, t), (b, u) in zip(successors(cfg, state), successors(cfg, small), strict=True):
            for _, check in SOMETIMES:
                assert check(cfg, state, a, t) == check(cfg, small, b, u), (path, a)
            # The explorer reduces a successor of a reduced state by the parts that changed.
            assert reduce(cfg, u, small) == reduce(cfg, u)
        assert reduce(cfg, small) == small  # a reduced state is its own reduced form
    if path.name not in NOTHING_TO_REDUCE:
        assert reduced_somewhere > 0, "the sample never exercised a reduction"


def test_each_reduction_is_exercised() -> None:
    """The samples above reach every kind of reduction: a stale fetch response, an idle
    AlterPartition response, a refused AlterPartition request, a restarted broker whose old
    metadata position is released."""
    seen = set()
    for name in (
        "kip966_shipped.toml",
        "history/v35_last_replica_standing.toml",
        "kip966_small.toml",
    ):
        cfg = load_model(MODELS / name)
        for state in reachable(cfg, **SAMPLE):
            small = reduce(cfg, state)
            if small.controller.ap_requests != state.controller.ap_requests:
                seen.add("request")
            for b, r in zip(state.brokers, small.brokers, strict=True):
                if b.fetch_response != r.fetch_response and r.fetch_response == STALE_FETCH:
                    seen.add("fetch")
                if b.ap_response != r.ap_response and r.ap_response == IDLE_ALTER_PARTITION:
                    seen.add("alter_partition")
                if (
                    b.status == Status.RUNNING
                    and not b.initialised
                    and len(small.controller.log) < len(state.controller.log)
                ):
                    seen.add("positions")
    assert seen == {"fetch", "alter_partition", "request", "positions"}


def explore(cfg: ModelConfig, reduction: bool) -> tuple[int, int, dict[str, int]]:
    cfg = cfg._replace(check=cfg.check._replace(reduction=reduction))
    stop = [name for name, _ in cfg.expect.violates]
    result = Explorer(cfg, properties.ALL, Limits(), stop_when_found=stop).run()
    found = {name: v.depth for name, v in result.violations.items()}
    return result.distinct_states, result.depth, found


def _compared(path: Path) -> Any:
    """Models up to 10,000 pinned states in the default suite, up to 60,000 in the slow one."""
    pinned = load_model(path).expect.distinct_states or 0
    marks = [pytest.mark.slow] if pinned > 10_000 else []
    return pytest.param(path, id=str(path.relative_to(MODELS)), marks=marks)


COMPARED = [_compared(p) for p in SHAPES if (load_model(p).expect.distinct_states or 0) <= 60_000]


@pytest.mark.parametrize("path", COMPARED)
def test_verdicts_and_depths_are_the_same_with_and_without_reductions(path: Path) -> None:
    cfg = load_model(path)
    plain, plain_depth, plain_found = explore(cfg, reduction=False)
    reduced, depth, found = explore(cfg, reduction=True)
    assert found == plain_found
    # A reduced state's depth is the least of its class's, so the deepest level may come sooner.
    assert depth <= plain_depth
    assert reduced <= plain
