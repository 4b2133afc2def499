"""Proofs on the reassignment shape: replicas outside the current assignment, adding and
removing sets, completion under Kafka's rule and the protocol description's. The MinISR rule is
proved by induction; the invariants that make it inductive hold on every reachable state, and a
wrong reassignment rule breaks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.properties.model_files import load_model
from kafkarep.symbolic import invariants
from kafkarep.symbolic.agreement import check_invariants
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.induction import Prover
from kafkarep.symbolic.invariants import assignment, quorum
from kafkarep.symbolic.invariants.assignment import Assignment, assignments
from kafkarep.symbolic.invariants.copies import registration_copies
from kafkarep.symbolic.invariants.strengthening import QUORUM, STRUCTURE
from kafkarep.symbolic.lemmas import Fact, Invariant
from kafkarep.symbolic.ops import Term, and_, eq, implies, ne
from kafkarep.symbolic.state import ClusterState, PartitionRegistration
from tests.helpers import ROOT, prove

KAFKA = ROOT / "models" / "reassignment.toml"
DESCRIPTION = ROOT / "models" / "reassignment_protocol_description.toml"
LEMMAS = tuple(i for i in invariants.ALL_INVARIANTS if i.name in STRUCTURE)
# (state, path) pairs of the exploration: paths that recorded different history variables are
# kept apart (`agreement.exploration.Path`)
STATES, STATES_TO_10 = 21868, 1895


@pytest.mark.slow
@pytest.mark.parametrize("model", [KAFKA, DESCRIPTION], ids=["kafka", "protocol-description"])
def test_min_isr_commit_is_proved_on_the_reassignment_shape(tmp_path: Path, model: Path) -> None:
    code, report = prove(
        tmp_path, "--no-bmc", "--property", "min_isr_commit", "--workers", "2", str(model)
    )
    assert code == 0
    (result,) = report["results"]
    assert result["status"] == "proved" and result["method"] == "induction"
    assert result["obligations"] == result["obligations_proved"] == 198


def test_the_assignments_are_the_ones_the_reassignment_rules_reach() -> None:
    cfg = load_model(KAFKA)
    reached = {(a, starts, cancels) for a, starts, cancels, _ in assignments(cfg)}
    original = Assignment((1, 2, 3), frozenset(), frozenset())
    moving = Assignment((1, 2, 4, 3), frozenset({4}), frozenset({3}))
    done = Assignment((1, 2, 4), frozenset(), frozenset())
    # the start spends the one reassignment whether or not it completes at once
    assert reached == {(original, 1, 0), (moving, 0, 0), (done, 0, 0)}
    with_cancel = cfg._replace(budget=cfg.budget._replace(reassignment_cancels=1))
    back = {(a, s, c) for a, s, c, _ in assignments(with_cancel)}
    assert (original, 0, 0) in back  # a cancel reverts to the original replicas
    named = {a: n for a, _, _, n in assignments(cfg)}
    assert named[done] == frozenset({1, 2, 3, 4})  # the ELR may keep the removed replica


def test_a_replica_is_removed_or_added_for_good_only_with_one_reassignment() -> None:
    """What the deletion clauses assume (`assignment.once_removed`, `once_added`): with one
    reassignment an original replica dropped stays dropped and one added stays; with a second
    reassignment (to another target) or a cancel neither is assumed."""
    cfg = load_model(KAFKA)
    assert assignment.once_removed(cfg, 3) and assignment.once_added(cfg, 4)
    two = cfg._replace(budget=cfg.budget._replace(reassignments=2))
    assert not assignment.once_removed(two, 3) and not assignment.once_added(two, 4)
    cancels = cfg._replace(budget=cfg.budget._replace(reassignment_cancels=1))
    assert assignment.once_removed(cancels, 3) and not assignment.once_added(cancels, 4)


@pytest.mark.slow
@pytest.mark.parametrize("model", [KAFKA, DESCRIPTION], ids=["kafka", "protocol-description"])
def test_the_invariants_hold_on_every_reachable_state_to_depth_12(model: Path) -> None:
    states, unsound = check_invariants(load_model(model), 12, LEMMAS, invariants.FACTS, workers=2)
    assert states == 4984
    assert not unsound, [u.invariant for u in unsound]


@pytest.mark.slow
def test_the_quorum_argument_holds_on_every_reachable_state_to_depth_10() -> None:
    """The completeness proofs' invariants and facts (the quorum argument, restated over a
    leader's continuous leadership: `Ghost.led_since`) hold where a completion keeps the leader
    in a new epoch."""
    states, unsound = check_invariants(load_model(KAFKA), 10, QUORUM, workers=2)
    assert states == STATES_TO_10
    assert not unsound, [u.invariant for u in unsound]


def test_the_quorum_argument_over_leader_epochs_is_caught() -> None:
    """Seeded: `fetched_in_epoch` as it reads without reassignment (a follower the leader knows
    has reached the leader's own epoch). The completion's bump keeps the leader and what it
    knows of its followers, so that is false on reachable states."""

    def own_epoch(enc: Encoding, sym: ClusterState) -> Term:
        since = tuple(b.replica.view.leader_epoch for b in sym.brokers)
        return quorum.fetched_in_epoch(enc, sym._replace(ghost=sym.ghost._replace(led_since=since)))

    wrong = Invariant("fetched_in_epoch_at_own_epoch", own_epoch, "seeded")
    _, unsound = check_invariants(load_model(KAFKA), 6, (wrong,), ())
    assert [u.invariant for u in unsound] == ["fetched_in_epoch_at_own_epoch"]


def test_a_wrong_completion_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded: the invariant's assignments computed with a completion that keeps the removing
    replicas. The real completion then reaches an assignment outside the set: the reachable
    states show it, and induction cannot prove the controller's shape under it."""

    def keeps_everyone(d: object, replicas: object, removing: object) -> object:
        return replicas

    monkeypatch.setattr(assignment, "completed_replicas", keeps_everyone)
    cfg = load_model(KAFKA)
    _, unsound = check_invariants(cfg, 12, LEMMAS, invariants.FACTS)
    assert "controller_shape" in [u.invariant for u in unsound]
    prover = Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS, 60, invariants.pair)
    together = frozenset(invariants.needed("min_isr_commit"))
    failed = [
        prover.consecution("controller_shape", family, together).status
        for family in ("handle_alter_partition", "reassign")
    ]
    assert "failed" in failed


def test_a_fact_is_assumed_of_the_registration_a_step_replaces_not_of_the_new_one() -> None:
    """Where the model reassigns, a history fact's obligation under a step that replaces the
    controller's registration assumes the fact of the registration replaced (a record of the
    log: `Goals.goal`). Seeded: a per-broker fact true of the first registration only. The
    reassignment's start writes the second, so its obligation must fail; assuming the fact of
    the new registration instead would prove it."""

    def first(enc: Encoding, record: PartitionRegistration, sym: ClusterState, b: int) -> Term:
        return record.partition_epoch <= 1

    def every_broker(enc: Encoding, record: PartitionRegistration, sym: ClusterState) -> Term:
        return and_(*(first(enc, record, sym, b) for b in range(1, enc.n + 1)))

    seeded = Fact("first_only", every_broker, "seeded", first)
    cfg = load_model(KAFKA)
    prover = Prover(
        cfg, invariants.ALL_INVARIANTS, invariants.FACTS + (seeded,), 60, invariants.pair
    )
    together = frozenset(invariants.needed("min_isr_commit"))
    assert prover.initiation("history.first_only").status == "proved"
    assert prover.consecution("history.first_only", "reassign", together).status == "failed"


def test_a_leader_the_replica_list_drops_is_the_only_one_elected_past() -> None:
    """Seeded: `quorum.nobody_past` without its exemption (every later copy of the metadata
    names the leader of an earlier one, even once the replica list drops it). From an initial
    leader the reassignment removes (broker 3), the completion elects another: caught on
    reachable states, while `fetched_in_epoch`, which holds the real clause, holds there."""

    def never_past(enc: Encoding, sym: ClusterState) -> Term:
        copies = registration_copies(enc, sym)
        return and_(
            *(
                implies(and_(a[0], b[0], ne(a[3], -1), b[2] >= a[2]), eq(b[3], a[3]))
                for a in copies
                for b in copies
            )
        )

    cfg = load_model(KAFKA)
    led_by_3 = cfg._replace(leader=3)
    wrong = Invariant("never_elected_past", never_past, "seeded")
    real = next(i for i in invariants.ALL_INVARIANTS if i.name == "fetched_in_epoch")
    _, unsound = check_invariants(led_by_3, 8, (wrong, real), ())
    assert [u.invariant for u in unsound] == ["never_elected_past"]


def test_the_isr_shrinks_only_with_a_new_epoch() -> None:
    """Seeded: `quorum.isr_grows_in_epoch` across epochs (a later copy of the metadata always
    holds an earlier one's ISR). The completion drops the removed replica from the ISR in a new
    leader epoch: caught on reachable states."""

    def always_grows(enc: Encoding, sym: ClusterState) -> Term:
        copies = registration_copies(enc, sym)
        return and_(
            *(
                implies(and_(a[0], b[0], a[1] <= b[1]), enc.sets.subset(a[4], b[4]))
                for a in copies
                for b in copies
            )
        )

    wrong = Invariant("isr_always_grows", always_grows, "seeded")
    _, unsound = check_invariants(load_model(KAFKA), 12, (wrong,), ())
    assert [u.invariant for u in unsound] == ["isr_always_grows"]


@pytest.mark.slow
def test_the_invariants_hold_on_every_reachable_state() -> None:
    """Every invariant and history fact, the quorum argument's too, on the whole state space of
    Kafka's completion rule. (The protocol description's stricter rule reaches the same states;
    its lemmas are checked to depth 12 above and proved by `suite --prove` in .ci/run, so its
    whole-space run, 15 minutes of the nightly, is left out.)"""
    states, unsound = check_invariants(load_model(KAFKA), 60, LEMMAS + QUORUM, workers=2)
    assert states == STATES
    assert not unsound, [u.invariant for u in unsound]
