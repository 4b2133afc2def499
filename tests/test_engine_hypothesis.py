"""The Hypothesis engine finds seeded bugs, shrinks them to short traces that replay, and runs the
model-built state machines as ordinary tests.

Default suite: the fast profile and the quick mutations, at fixed seeds. `-m slow`: the long
profile on the correct models (the 5-broker ones included), every other violating mutation and
finding within its stated budget, and the mutations whose guard is redundant. The mutation tests
name their seed; the machine tests are derandomised when `CI` is set (Hypothesis's convention),
elsewhere each run draws fresh examples.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis.stateful import run_state_machine_as_test

from kafkarep.cli.main import main
from kafkarep.engines.expectations import problems
from kafkarep.engines.hypothesis_machine import (
    PROFILES,
    Violation,
    explore,
    hypothesis_settings,
    machine_class,
    new_session,
    plan_for,
)
from kafkarep.engines.results import Discovery, Exploration, RunOptions
from kafkarep.engines.shorten import shorten
from kafkarep.model.actions import Action, active, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.properties.completeness import isr_members_complete
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

LRS = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
SMALL = ROOT / "models" / "kip966_small.toml"
MUTATIONS = ROOT / "models" / "mutations"
LARGE = sorted((ROOT / "models" / "large").glob("*.toml"))
CI = bool(os.environ.get("CI"))


def _check(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    summary = tmp_path / "summary.json"
    code = main(["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), *args])
    return code, json.loads(summary.read_text())["models"][0]


def _results(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["property"]: r for r in report["results"]}


def _path_of(cfg: ModelConfig, actions: list[Action]) -> tuple[int, ...]:
    state, path = initial_state(cfg), []
    for wanted in actions:
        options = list(successors(cfg, state))
        index = next(i for i, (action, _) in enumerate(options) if action == wanted)
        path.append(index)
        state = options[index][1]
    return tuple(path)


# --- the machine ---------------------------------------------------------------------------------


def test_the_machine_is_built_from_the_model() -> None:
    cfg = load_model(LRS)
    machine = machine_class(new_session(cfg))
    rules = {r.function.__name__ for r in machine.setup_state().rules}
    assert rules == {f.name for f in active(cfg)} | {"stutter"}
    assert "reassign" not in rules and "crash_lossy" in rules  # only what the budgets allow
    assert [i.function.__name__ for i in machine.setup_state().invariants] == [
        "always_properties_hold"
    ]
    assert machine.__name__ == "V35LastReplicaStandingMachine"


def test_a_machine_failure_carries_a_replayable_path() -> None:
    cfg = load_model(MUTATIONS / "hwm_below_min_isr.toml")
    plan = plan_for(cfg, (("seed", 3), ("examples", 200)))
    machine = machine_class(new_session(cfg))
    with pytest.raises(Violation) as raised:
        run_state_machine_as_test(machine, settings=hypothesis_settings(plan, derandomize=True))
    violation = raised.value
    names = [name for name, _ in violation.clauses]
    assert any(name.startswith(("min_isr_commit", "leader_candidate")) for name in names)
    state = initial_state(cfg)
    for index in violation.path:
        state = list(successors(cfg, state))[index][1]
    assert any(check(cfg, state) for name, check in machine.session.always if name in names)


def test_shorten_drops_the_steps_a_violation_does_not_need() -> None:
    """The 5-step Last Replica Standing with four unrelated steps mixed in shortens back to 5."""
    cfg = load_model(LRS)
    padded = [
        Action("produce", 1),
        Action("fetch", 3),  # broker 3 (fenced, out of sync) fetching changes nothing that matters
        Action("fence", 0, 2),
        Action("fetch_response", 3),
        Action("apply_metadata", 2, 1),
        Action("apply_metadata", 1, 1),
        Action("apply_metadata", 3, 1),
        Action("crash_lossy", 1),
        Action("restart", 1),
    ]
    path = _path_of(cfg, padded)

    def violated(state: Any) -> bool:
        return isr_members_complete(cfg, state) is not None

    short = shorten(cfg, path, violated)
    assert len(short) == 5
    state = initial_state(cfg)
    names = []
    for index in short:
        action, state = list(successors(cfg, state))[index]
        names.append(action.name)
    assert violated(state)
    assert names == ["produce", "fence", "apply_metadata", "crash_lossy", "restart"]


def test_shorten_drops_a_step_before_it_substitutes_one() -> None:
    """A 20-step path with a seeded bug (an ISR join at the HWM instead of the leader's LEO):
    broker 2 is fenced, rejoins and is proposed, all of which the violation (broker 3 proposed
    below the HWM) does not need. Dropping those steps, rather than matching the orphaned ones
    to others, reaches the shortest trace, 8 steps."""
    cfg = load_model(MUTATIONS / "isr_join_fetch_offset_at_hwm.toml")
    sampled = [
        Action("fence", 0, 2),
        Action("produce", 1),
        Action("fetch", 2),
        Action("apply_metadata", 2, 1),
        Action("unfence", 0, 2),
        Action("apply_metadata", 1, 1),
        Action("apply_metadata", 3, 1),
        Action("unfence", 0, 3),
        Action("apply_registrations", 1),
        Action("fetch_response", 2),
        Action("fetch", 2),
        Action("handle_alter_partition", 0, 1),
        Action("apply_metadata", 1, 1),
        Action("fetch_response", 2),
        Action("fetch", 2),
        Action("fetch_response", 2),
        Action("apply_metadata", 2, 1),
        Action("alter_partition_response", 1),
        Action("fetch", 3),
        Action("handle_alter_partition", 0, 1),
    ]

    def violated(state: Any) -> bool:
        return isr_members_complete(cfg, state) is not None

    short = shorten(cfg, _path_of(cfg, sampled), violated)
    assert len(short) == dict(cfg.expect.violates)["leader_candidate_completeness"] == 8
    state = initial_state(cfg)
    for index in short:
        state = list(successors(cfg, state))[index][1]
    assert violated(state)


# --- the engine through `kafkarep check` ---------------------------------------------------------


def test_finds_last_replica_standing_shrinks_it_and_the_trace_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _check(tmp_path, "--engine", "hypothesis", "--seed", "4", str(LRS))
    assert code == 0, report["problems"]
    assert report["engine"] == "hypothesis" and not report["complete"]
    results = _results(report)
    lcc = results["leader_candidate_completeness.isr"]
    lc = results["leader_completeness.committed_log"]
    assert lcc["status"] == "violated" and 5 <= lcc["trace_length"] <= 10
    assert lc["status"] == "violated" and 7 <= lc["trace_length"] <= 14
    assert results["log_matching.stable_prefix"]["status"] == "holds"
    details = report["details"]
    assert details["seed"] == 4 and "--seed 4" in details["rerun"]
    assert details["examples to find"]["leader_candidate_completeness.isr"] <= 500
    assert details["action frequencies"]["crash_lossy"] > 0
    out = capsys.readouterr().out
    assert "seed: 4" in out and "rerun: kafkarep check" in out
    for result in (lcc, lc):
        document = json.loads(Path(result["trace_file"]).read_text())
        assert document["#meta"]["kafkarep"]["engine"] == "hypothesis"
        assert len(document["states"]) == result["trace_length"] + 1
        assert main(["replay", "--quiet", result["trace_file"]]) == 0


def test_the_same_seed_gives_the_same_run() -> None:
    cfg = load_model(MUTATIONS / "hwm_below_min_isr.toml")
    options = RunOptions(engine="hypothesis", engine_args=(("seed", 11), ("examples", 300)))
    first, second = explore(cfg, options, None), explore(cfg, options, None)
    assert first.violations and first.violations == second.violations
    assert first.reached == second.reached
    assert first.distinct_states == second.distinct_states
    assert first.details == second.details
    other = explore(cfg, options._replace(engine_args=(("seed", 12), ("examples", 300))), None)
    assert dict(other.details)["seed"] == 12 and other.details != first.details


def test_a_correct_model_holds_under_the_fast_profile(tmp_path: Path) -> None:
    examples, steps = PROFILES["fast"]
    args = ("--engine", "hypothesis", "--seed", "1", "--examples", str(examples))
    code, report = _check(tmp_path, *args, "--steps", str(steps), str(SMALL))
    assert code == 0, report["problems"]
    assert not any(r["status"] == "violated" for r in report["results"])
    assert report["stop_reason"] == "sampled 100 examples of up to 30 steps"
    assert report["distinct_states"] > 100 and report["generated_states"] > 1000
    reached = {r["property"] for r in report["results"] if r["status"] == "reached"}
    assert {"record_committed", "leader_changed"} <= reached
    assert report["details"]["swarm"].endswith("held back on average")


def test_swarm_off_and_flag_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.toml"
    base = SMALL.read_text()
    model.write_text(base + "\n[hypothesis]\nswarm = false\nexamples = 20\nsteps = 10\nseed = 5\n")
    code, report = _check(tmp_path, "--engine", "hypothesis", str(model))
    assert code == 0 and report["details"]["swarm"] == "off"
    assert (
        report["details"]["seed"] == 5 and "--examples 20 --steps 10" in report["details"]["rerun"]
    )
    capsys.readouterr()
    check = ["check", "--reports", str(tmp_path), "--engine", "hypothesis"]
    assert main([*check, "--examples", "0", str(SMALL)]) == 2
    assert "--examples must be at least 1" in capsys.readouterr().err
    model.write_text(base + '\n[hypothesis]\nprofile = "endless"\n')
    assert main([*check, str(model)]) == 2
    err = capsys.readouterr().err
    assert "profile 'endless' is unknown" in err and len(err.strip().splitlines()) == 1


def test_a_time_limit_stops_a_sampled_run(tmp_path: Path) -> None:
    args = ("--engine", "hypothesis", "--seed", "1", "--examples", "100000", "--max-seconds", "1")
    code, report = _check(tmp_path, *args, str(LARGE[0]))
    assert report["stop_reason"] == "time limit 1s" and report["seconds"] < 15
    # No violation in the sample; one second on a loaded machine may end it before it reaches
    # every `sometimes` state the model lists, which is then the only thing reported.
    assert all("never reached" in p for p in report["problems"]), report["problems"]
    assert code == (1 if report["problems"] else 0)


def test_sampled_runs_are_judged_as_samples() -> None:
    cfg, holds = load_model(LRS), load_model(SMALL)
    path = (0,) * 12

    def run(depths: dict[str, int], stop: str = "expected violations found") -> Exploration:
        found = {name: Discovery(name, depth, path[:depth], "w") for name, depth in depths.items()}
        reached = {name: Discovery(name, 1, (0,), None) for name in holds.expect.reached}
        return Exploration(10, 20, 12, 1.0, False, stop, found, reached)

    within = run({"leader_completeness.committed_log": 9, "leader_candidate_completeness.isr": 10})
    assert problems(cfg, within, sampled=True) == ()
    assert problems(cfg, within) != ()  # the explorer's own depths are exact
    too_long = run(
        {"leader_completeness.committed_log": 15, "leader_candidate_completeness.isr": 5}
    )
    assert any("should have 7 to 14" in p for p in problems(cfg, too_long, sampled=True))
    assert problems(holds, run({}, "sampled 10 examples"), sampled=True) == ()
    assert problems(holds, run({}, "sampled 10 examples")) != ()  # the explorer's must complete


# --- mutations: found within a stated budget, shrunk to at most twice the shortest --------------

# The stated budget of examples per violating model (the figures in docs/hypothesis.md and
# docs/history.md: it covers the most examples any measured seed needed); the test runs seed 1
# unless SEEDS says otherwise.
BUDGETS = {
    "hwm_below_min_isr": 200,
    "elr_keeps_unclean_shutdown": 500,
    "isr_join_fetch_offset_at_hwm": 500,
    "kafka_14139_stale_broker_epoch": 20000,
    "alter_partition_partition_epoch": 40000,
    "kafka_7128_isr_join_below_leso": 2000,
    "last_known_leader_after_unclean_shutdown": 2000,
    "last_known_leader_after_unclean_shutdown_kafka_19522": 2000,
    "make_leader_resets_pending_isr": 5000,
    "make_leader_resets_pending_isr_elr_off": 5000,
    "kip101_truncation_to_hwm": 1000,
    "kafka_6361_single_round_truncation": 5000,
    "v35_last_replica_standing": 2000,
    "lagging_controller": 5000,
    "kafka_16540_min_isr_change_keeps_elr": 2000,
}
# The seed, where seed 1 does not find the violation or shrink it to twice the shortest depth.
# KAFKA-14139 at 3.4.0's options: seed 1 does not find it in 20,000 examples, seeds 2 and 3 in
# 18,605 and 5,434.
SEEDS = {"kafka_14139_stale_broker_epoch": 3}
# Violating models Hypothesis has not found within a budget yet, and why (docs/history.md).
NOT_FOUND = {
    "alter_partition_partition_epoch": "not found in 40,000 examples of seed 1 since the leader's "
    "own checks: the 15-step trace needs a stale AlterPartition, an ISR expansion that the "
    "leader now makes only while handling a fetch, and a lossy restart, in one order",
    "kafka_13141_diverging_fetch_counted": "leader_candidate_completeness in 3 examples of seed 1, "
    "but not the lost write (leader_completeness and the others) in 5,000: the leader must fail "
    "between the ISR commit and the diverged follower's truncation",
    "kafka_6880_zombie_replica_fetch": "not found in 30,000 examples of seeds 1, 2 and 3 since "
    "the model runs 2.0's follower (OffsetsForLeaderEpoch before it fetches, two more steps) and "
    "HWM: the 14-step trace needs one broker to apply an older leader epoch after fetching from a "
    "newer one, while the other leads",
    "kafka_18723_late_send": "not found in 5,000 examples of seed 1 (28 late sends taken in "
    "all): the 18-step trace needs two records of the old leader split across two fetches, the "
    "answer to the second held while the new leader writes two records and the old leader "
    "truncates and copies them, and only then the late send",
    "fetch_broker_epoch_not_stale": "not found in 10,000 examples of seed 1: the 16-step trace "
    "needs a fetch held across its sender's lossy restart, the new incarnation proposed for the "
    "ISR, and the held fetch delivered before the ISR is committed, in one order",
}
QUICK = {"hwm_below_min_isr", "elr_keeps_unclean_shutdown", "isr_join_fetch_offset_at_hwm"}
FINDINGS = ROOT / "models" / "findings"
HISTORY = ROOT / "models" / "history"
FAULTS = ROOT / "models" / "faults"


def _mutations(result: str) -> list[Any]:
    """The mutation models (and, for `violates`, the findings) that expect `result`; the ones
    not QUICK run under -m slow."""
    paths = sorted(MUTATIONS.glob("*.toml"))
    if result == "violates":
        paths += sorted(FINDINGS.glob("*.toml")) + sorted(HISTORY.glob("*.toml"))
        paths += sorted(FAULTS.glob("*.toml"))
    params = []
    for path in paths:
        if load_model(path).expect.result != result:
            continue
        if result == "violates" and path.stem in NOT_FOUND:
            continue  # not a test until Hypothesis finds it (docs/history.md)
        marks = [] if path.stem in QUICK else [pytest.mark.slow]
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.mark.parametrize("path", _mutations("violates"))
def test_every_violating_mutation_is_found_and_shrunk(path: Path, tmp_path: Path) -> None:
    assert path.stem in BUDGETS, "state the examples budget of a new violating model"
    seed = str(SEEDS.get(path.stem, 1))
    args = ("--engine", "hypothesis", "--seed", seed, "--examples", str(BUDGETS[path.stem]))
    code, report = _check(tmp_path, *args, str(path))
    assert code == 0, report["problems"]  # found, and no longer than twice the pinned depth
    results = _results(report)
    for name, depth in load_model(path).expect.violates:
        hits = [r for p, r in results.items() if p == name or p.startswith(name + ".")]
        found = [r for r in hits if r["status"] == "violated"]
        assert found, name
        assert depth is None or depth <= min(r["trace_length"] for r in found) <= 2 * depth
        for result in found:
            assert main(["replay", "--quiet", result["trace_file"]]) == 0


@pytest.mark.parametrize("path", _mutations("holds"))
def test_a_mutation_whose_guard_is_redundant_holds(path: Path, tmp_path: Path) -> None:
    """The explorer shows these guards redundant at the models' bounds; the engine's default
    profile finds nothing either."""
    code, report = _check(tmp_path, "--engine", "hypothesis", "--seed", "1", str(path))
    assert code == 0, report["problems"]
    assert report["stop_reason"] == "sampled 500 examples of up to 50 steps"
    assert not any(r["status"] == "violated" for r in report["results"])


# --- the machines as ordinary tests --------------------------------------------------------------


def _machine_test(path: Path, profile: str) -> type:
    cfg = load_model(path)
    examples, steps = PROFILES[profile]
    plan = plan_for(cfg, (("examples", examples), ("steps", steps), ("seed", 0)))
    case: type = machine_class(new_session(cfg)).TestCase
    case.settings = hypothesis_settings(plan, derandomize=CI, quiet=False)  # type: ignore[attr-defined]
    return case


TestKip966SmallFast = _machine_test(SMALL, "fast")
TestKip966FiveBrokersFast = _machine_test(
    ROOT / "models" / "large" / "kip966_5_brokers.toml", "fast"
)
TestReassignmentFast = _machine_test(ROOT / "models" / "reassignment.toml", "fast")
TestKip966SmallLong = pytest.mark.slow(_machine_test(SMALL, "long"))
TestReassignmentLong = pytest.mark.slow(
    _machine_test(ROOT / "models" / "reassignment.toml", "long")
)


@pytest.mark.slow
@pytest.mark.parametrize("path", LARGE, ids=[p.stem for p in LARGE])
def test_large_models_hold_under_the_long_profile(path: Path, tmp_path: Path) -> None:
    examples, steps = PROFILES["long"]
    args = ("--engine", "hypothesis", "--seed", "1", "--examples", str(examples))
    code, report = _check(tmp_path, *args, "--steps", str(steps), str(path))
    assert code == 0, report["problems"]
    assert not any(r["status"] == "violated" for r in report["results"])
