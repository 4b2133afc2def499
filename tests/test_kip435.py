"""KIP-435 incremental reassignment: the worked example step by step, each named
reading, the batch collector, `kafkarep plan`, and properties of plans over random clusters."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.initial import initial_state
from kafkarep.model.replay import replay_path
from kafkarep.model.state import ClusterState
from kafkarep.planner import kip435
from kafkarep.planner.kip435 import (
    PartitionState,
    ReassignmentStep,
    able_to_be_in_sync,
    collect_batch,
    min_isr_floor,
    next_step,
    plan,
    plan_cluster,
)
from kafkarep.properties.model_files import load_model, parse_model
from tests.helpers import ROOT


def targets(result: kip435.Plan) -> list[tuple[int, ...]]:
    return [step.target for step in result.steps]


# --- the KIP's worked example ----------------------------------------------------------------


def test_kip_example_0_to_4_onto_5_to_9_step_by_step() -> None:
    """KIP-435 "Reassignment Example", initial leader 0, batches (0,1)->(5,6); (2,3)->(7,8);
    4->9, so a parallel replica count of 2."""
    result = plan((5, 6, 7, 8, 9), (0, 1, 2, 3, 4), {0, 1, 2, 3, 4}, min_isr=1, parallel_replicas=2)
    steps = [(s.target, s.drop, s.new) for s in result.steps]
    assert steps == [
        ((5, 0, 1, 2, 3, 4), (), (5,)),  # +5, new leader (5) is elected
        ((5, 6, 2, 3, 4), (0, 1), (6,)),  # -[0,1] +[6]
        ((5, 6, 7, 8, 4), (2, 3), (7, 8)),  # -[2,3] +[7,8]
        ((5, 6, 7, 8, 9), (4,), (9,)),  # -[4] +[9], requested order is matched
    ]
    assert [s.moves_leader for s in result.steps] == [True, False, False, False]
    assert result.waited_for == ()


@pytest.mark.parametrize("min_isr", [1, 2, 3, 4, 5])
def test_kip_example_does_not_depend_on_min_isr_when_all_in_sync(min_isr: int) -> None:
    result = plan((5, 6, 7, 8, 9), (0, 1, 2, 3, 4), {0, 1, 2, 3, 4}, min_isr, 2)
    assert targets(result)[1:] == [(5, 6, 2, 3, 4), (5, 6, 7, 8, 4), (5, 6, 7, 8, 9)]


def test_kip_min_isr_first_example_adds_two_at_once() -> None:
    """KIP-435: "4 brokers, min.insync.replicas set to 3 but there are only 1 in-sync replica,
    then we immediately add 2 other in one step", beyond a parallel replica count of 1."""
    step = next_step((0, 2, 3), (0, 1), {0}, min_isr=3, parallel_replicas=1)
    assert step is not None
    assert (step.drop, step.new, step.target) == ((1,), (2, 3), (0, 2, 3))
    assert able_to_be_in_sync(step, {0}) == 3


def test_first_step_returns_none_when_done() -> None:
    assert next_step((1, 2), (1, 2), {1}, 1, 1) is None
    assert plan((1, 2), (1, 2), {1}, 1, 1).steps == ()


# --- the readings ----------------------------------------------------------------------------


def test_reading_leader_step_adds_only_the_new_preferred_leader() -> None:
    """READING_LEADER_STEP: even with room for more (R = 5) and excess replicas to drop."""
    step = next_step((5, 6, 7), (0, 1, 2), {0, 1, 2}, 1, 5)
    assert step is not None and (step.drop, step.new, step.target) == ((), (5,), (5, 0, 1, 2))


def test_reading_leader_step_with_min_isr_deficit() -> None:
    """READING_LEADER_STEP with READING_MIN_ISR_DEFICIT: ISR {0} of MinISR 3."""
    step = next_step((5, 6, 7), (0, 1, 2), {0}, 3, 1)
    assert step is not None and step.new == (5, 6) and step.drop == ()


def test_reading_restore_size_and_unused_n() -> None:
    """READING_RESTORE_SIZE: a replication factor increase adds one replica per step with R = 1
    (READING_UNUSED_N: the KIP's n = max(R, 7 - 3) = 4 would allow four at once)."""
    result = plan((0, 1, 2, 3, 4, 5, 6), (0, 1, 2), {0, 1, 2}, 1, 1)
    assert [s.new for s in result.steps] == [(3,), (4,), (5,), (6,)]
    shrink = plan((0,), (0, 1, 2, 3, 4), {0, 1, 2, 3, 4}, 1, 2)
    assert targets(shrink) == [(0, 3, 4), (0,)]


def literal_kip_step(ftr: tuple[int, ...], cr: tuple[int, ...], parallel: int) -> ReassignmentStep:
    """Steps 2.2-2.3 of the KIP as written: the first R excess replicas in CR order, with
    READING_RESTORE_SIZE for the adds and no MinISR check on the drops."""
    excess = tuple(r for r in cr if r not in ftr)
    drop = excess[:parallel]
    missing = tuple(r for r in ftr if r not in cr)
    adds = max(0, min(len(ftr) - (len(cr) - len(drop)), parallel, len(missing)))
    return kip435._step(ftr, cr, drop, missing[:adds])


def test_reading_out_of_sync_first_keeps_min_isr_where_the_literal_text_does_not() -> None:
    """READING_OUT_OF_SYNC_FIRST: CR (0,1,2) with 2 out of sync, FTR (0,3), MinISR 2, R = 1.
    The literal first-R rule drops the in-sync 1 and leaves one replica able to be in sync."""
    isr = {0, 1}
    literal = literal_kip_step((0, 3), (0, 1, 2), 1)
    assert literal.drop == (1,) and able_to_be_in_sync(literal, isr) == 1  # below MinISR 2
    step = next_step((0, 3), (0, 1, 2), isr, 2, 1)
    assert step is not None and step.drop == (2,) and able_to_be_in_sync(step, isr) == 2
    assert targets(plan((0, 3), (0, 1, 2), isr, 2, 1)) == [(0, 1), (0, 3)]


def test_reading_min_isr_floor_waits_for_the_target_to_catch_up() -> None:
    """READING_MIN_ISR_FLOOR: dropping the in-sync 2 would leave only 1 of MinISR 2 in sync
    (0 is out of sync): the step equals CR, the controller waits; the plan lets 0 catch up."""
    step = next_step((0, 1), (0, 1, 2), {1, 2}, 2, 1)
    assert step is not None and step.waits and not step.drop and not step.new
    result = plan((0, 1), (0, 1, 2), {1, 2}, 2, 1)
    assert result.waited_for == (0,) and targets(result) == [(0, 1)]


def test_no_replica_in_sync_waits() -> None:
    """KIP-435 "Performing reassignment", 2.2: "at least one replica ISR"."""
    step = next_step((3, 4), (1, 2), set(), 1, 1)
    assert step is not None and step.waits


def test_reading_min_isr_floor_uses_the_target_size() -> None:
    """A final target smaller than MinISR can still be reached: the floor is min(MinISR, 1)."""
    assert min_isr_floor((0,), 3) == 1
    assert targets(plan((0,), (0, 1, 2), {0, 1, 2}, 3, 1)) == [(0, 2), (0,)]


def test_reading_target_order_puts_the_final_target_first() -> None:
    """READING_TARGET_ORDER: a pure reordering is one step; kept old replicas go last."""
    assert targets(plan((2, 1, 0), (0, 1, 2), {0, 1, 2}, 1, 1)) == [(2, 1, 0)]
    step = next_step((2, 3, 4), (0, 1, 2), {0, 1, 2}, 1, 1)
    assert step is not None and step.target == (2, 3, 1) and step.moves_leader


def test_reading_leader_first_batch() -> None:
    """READING_LEADER_FIRST_BATCH: leader movements first, at most L, then the rest up to P."""

    def step(cr: tuple[int, ...], tr: tuple[int, ...]) -> ReassignmentStep:
        return ReassignmentStep(cr, (), (), tr, tr)

    moving = [(f"m{i}", step((1, 2), (3, 1, 2))) for i in range(3)]
    still = [(f"s{i}", step((1, 2), (1, 2, 3))) for i in range(3)]
    waiting = [("w", step((1, 2), (1, 2)))]
    pending = [still[0], moving[0], waiting[0], still[1], moving[1], moving[2], still[2]]
    keys = [k for k, _ in collect_batch(pending, parallel_partitions=4, leader_movements=2)]
    assert keys == ["m0", "m1", "s0", "s1"]
    keys = [k for k, _ in collect_batch(pending, parallel_partitions=2, leader_movements=5)]
    assert keys == ["m0", "m1"]
    keys = [k for k, _ in collect_batch(still[:1] + waiting, 3, 1)]
    assert keys == ["s0"]  # cannot fill the batch; a waiting step never runs


def test_plan_cluster_interleaves_partitions_in_batches() -> None:
    partitions = {
        "a": PartitionState((5, 6, 7, 8, 9), (0, 1, 2, 3, 4), frozenset(range(5)), 1),
        "b": PartitionState((1, 2), (1, 3), frozenset({1, 3}), 1),
        "c": PartitionState((4, 1), (1, 2), frozenset({1, 2}), 1),
    }
    batches = plan_cluster(
        partitions, parallel_replicas=2, parallel_partitions=2, leader_movements=1
    )
    shown = [[(k, s.target) for k, s in batch] for batch in batches]
    assert shown == [
        [("a", (5, 0, 1, 2, 3, 4)), ("b", (1, 2))],  # one leader movement, then filled
        [("c", (4, 1, 2)), ("a", (5, 6, 2, 3, 4))],  # b is done
        [("a", (5, 6, 7, 8, 4)), ("c", (4, 1))],
        [("a", (5, 6, 7, 8, 9))],
    ]


def test_bad_input_is_a_plan_error() -> None:
    with pytest.raises(kip435.PlanError, match="twice"):
        next_step((1, 1), (1, 2), {1}, 1, 1)
    with pytest.raises(kip435.PlanError, match="not a current replica"):
        next_step((1,), (1, 2), {3}, 1, 1)
    with pytest.raises(kip435.PlanError, match="at least 1"):
        next_step((1,), (1, 2), {1}, 0, 1)
    with pytest.raises(kip435.PlanError, match="empty"):
        next_step((), (1, 2), {1}, 1, 1)


# --- properties over random clusters ---------------------------------------------------------

BROKERS = st.integers(min_value=0, max_value=7)


@st.composite
def partitions(draw: st.DrawFn) -> PartitionState:
    current = tuple(draw(st.lists(BROKERS, min_size=1, max_size=5, unique=True)))
    target = tuple(draw(st.lists(BROKERS, min_size=1, max_size=5, unique=True)))
    isr = frozenset(draw(st.sets(st.sampled_from(current))))
    min_isr = draw(st.integers(min_value=1, max_value=4))
    return PartitionState(target, current, isr, min_isr)


def check_step(step: ReassignmentStep, isr: frozenset[int], min_isr: int, r: int) -> None:
    ftr, cr = step.final_target, step.current
    assert set(step.drop) <= set(cr) - set(ftr)  # only excess replicas leave
    assert set(step.new) <= set(ftr) - set(cr)  # only missing target replicas join
    assert set(step.target) == (set(cr) - set(step.drop)) | set(step.new)
    assert len(step.target) == len(set(step.target))
    # Batch limits: R drops; R adds, or more only as far as MinISR demands.
    assert len(step.drop) <= r
    kept_in_sync = len((set(cr) - set(step.drop)) & isr)
    floor = min_isr_floor(ftr, min_isr)
    assert len(step.new) <= r or kept_in_sync + len(step.new) <= floor
    # Never fewer replicas able to be in sync than MinISR when the partition had them.
    had = len(set(cr) & isr)
    assert able_to_be_in_sync(step, isr) >= min(floor, had)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(partitions(), st.integers(min_value=1, max_value=4))
def test_plan_properties(p: PartitionState, r: int) -> None:
    result = plan(p.final_target, p.current, p.isr, p.min_isr, r)
    if p.current == p.final_target:
        assert result.steps == ()
        return
    # The last step equals the final target, in order; the plan is bounded.
    assert result.steps[-1].target == p.final_target
    assert len(result.steps) <= kip435.step_bound(p.final_target, p.current)
    isr = frozenset(p.current) if result.waited_for else p.isr
    assert set(result.waited_for) == (set(p.current) - p.isr if result.waited_for else set())
    for step in result.steps:
        check_step(step, isr, p.min_isr, r)
        isr = frozenset(step.target)
    # The first step a controller would take from the real ISR keeps MinISR too.
    first = next_step(p.final_target, p.current, p.isr, p.min_isr, r)
    assert first is not None
    if not first.waits:
        check_step(first, p.isr, p.min_isr, r)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(partitions(), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=1, max_value=3),
)
def test_batch_properties(
    states: list[PartitionState], r: int, parallel_partitions: int, leader_movements: int
) -> None:
    cluster = dict(enumerate(states))
    batches = plan_cluster(cluster, r, parallel_partitions, leader_movements)
    assert len(batches) <= sum(kip435.step_bound(p.final_target, p.current) for p in states)
    done: dict[int, list[tuple[int, ...]]] = {key: [] for key in cluster}
    for batch in batches:
        assert 1 <= len(batch) <= parallel_partitions
        assert sum(step.moves_leader for _, step in batch) <= leader_movements
        assert len({key for key, _ in batch}) == len(batch)
        for key, step in batch:
            done[key].append(step.target)
    for key, p in cluster.items():
        # Batching changes when a step runs, never what it is.
        assert done[key] == targets(plan(p.final_target, p.current, p.isr, p.min_isr, r))


# --- kafkarep plan ---------------------------------------------------------------------------


def test_cli_prints_and_writes_the_kip_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan.json"
    code = main(
        [
            "plan",
            "--current",
            "0,1,2,3,4",
            "--target",
            "5,6,7,8,9",
            "--isr",
            "0,1,2,3,4",
            "--min-isr",
            "2",
            "--parallel-replicas",
            "2",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "(5, 6, 7, 8, 4)" in printed and "(2, 3)" in printed and "(7, 8)" in printed
    assert json.loads(out.read_text()) == {
        "steps": [[5, 0, 1, 2, 3, 4], [5, 6, 2, 3, 4], [5, 6, 7, 8, 4], [5, 6, 7, 8, 9]]
    }


def test_cli_shows_a_wait(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["plan", "--current", "0,1,2", "--target", "0,1", "--isr", "1,2", "--min-isr", "2"])
        == 0
    )
    assert "catch up" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--current", "0,1,x", "--target", "1"], "not a comma-separated list"),
        (["--current", "0,1,1", "--target", "1"], "twice"),
        (["--current", "0,1", "--target", ""], "at least one broker"),
        (["--current", "0,1", "--target", "1", "--isr", "4"], "not a current replica"),
        (["--current", "0,1", "--target", "1", "--min-isr", "2"], "out of range"),
        (["--current", "0,1", "--target", "1", "--min-isr", "0"], "out of range"),
        (["--current", "0,1", "--target", "1", "--min-isr", "-1"], "positive integer"),
        (["--current", "0,1", "--target", "1", "--parallel-replicas", "0"], "at least 1"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# --- a plan driven through the KRaft rules -----------------------------------------------------

PLAN_MODEL = ROOT / "models" / "kip435_plan.toml"
PRIORITY = (
    "produce",
    "plan_elect_preferred",
    "plan_step",
    "fetch",
    "fetch_response",
    "handle_alter_partition",
    "alter_partition_response",
    "apply_metadata",
)


def rank(action: Action) -> tuple[int, int]:
    newest = -action.arg if isinstance(action.arg, int) and action.name == "apply_metadata" else 0
    return PRIORITY.index(action.name), newest


def drive(cfg: ModelConfig, limit: int = 200) -> tuple[list[Action], ClusterState]:
    """A fault-free run: the first enabled action by PRIORITY (the newest metadata first)."""
    state = initial_state(cfg)
    taken: list[Action] = []
    goal = cfg.setting("plan", "target")
    while len(taken) < limit:
        p = state.partition
        settled = all(b.applied_epoch == p.partition_epoch for b in state.brokers)
        if p.replicas == tuple(goal) and p.leader == goal[0] and settled:
            return taken, state
        options = [(a, s) for a, s in successors(cfg, state) if a.name in PRIORITY]
        action, state = min(options, key=lambda o: rank(o[0]))
        taken.append(action)
    raise AssertionError(
        f"the plan did not finish in {limit} steps: {[a.describe() for a in taken]}"
    )


def test_plan_model_runs_the_planner_steps_through_the_kraft_rules() -> None:
    cfg = load_model(PLAN_MODEL)
    taken, final = drive(cfg)
    steps = [a.arg for a in taken if a.name == "plan_step"]
    assert steps == targets(plan((2,), (1,), {1}, cfg.min_isr, 1)) == [(2, 1), (2,)]
    names = [a.name for a in taken]
    # The new preferred leader is elected between the two steps, once it has caught up.
    assert names.index("plan_step") < names.index("plan_elect_preferred")
    assert names.index("plan_elect_preferred") < len(names) - 1 - names[::-1].index("plan_step")
    assert final.ghost.true_hwm == 1
    leader = final.broker(2).replica
    assert leader is not None and [v for _, v in leader.log] == list(final.ghost.committed)
    assert final.broker(1).replica is None  # dropped by the second step


def test_plan_model_finds_a_seeded_bug() -> None:
    """With the ISR-join condition "fetch offset at the HWM" off, the step's new replica joins
    the ISR before it holds the committed write, the step completes, and the controller elects
    it: Leader Completeness fails. So the plan model can catch a reassignment bug."""
    raw = tomllib.loads(PLAN_MODEL.read_text())
    raw["rules"]["disable_guards"] = ["isr_join.fetch_offset_at_hwm"]
    raw["expect"] = {}
    cfg = parse_model(raw)
    result = Explorer(
        cfg,
        properties.of_model(cfg),
        Limits(),
        stop_when_found=["leader_completeness"],
    ).run()
    found = result.violations["leader_completeness.committed_log"]
    trace = replay_path(cfg, found.path)
    names = [s.action.name for s in trace.steps]
    assert names.count("plan_step") == 1
    joins = [s for s in trace.steps if s.action.name == "fetch" and "proposes it" in s.outcome]
    assert joins, "the new replica is proposed for the ISR while the leader handles its fetch"
    assert trace.final.partition.leader == 2


def test_plan_section_is_validated() -> None:
    base = {"cluster": {"brokers": 2, "replicas": [1]}}
    with pytest.raises(ModelError, match="unknown broker id 3"):
        parse_model({**base, "plan": {"target": [3]}})
    with pytest.raises(ModelError, match="twice"):
        parse_model({**base, "plan": {"target": [2, 2]}})
    with pytest.raises(ModelError, match="parallel_replicas"):
        parse_model({**base, "plan": {"target": [2], "parallel_replicas": 0}})
