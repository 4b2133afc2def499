"""Inductive proofs with Z3: the MinISR commit rule (and, in the slow suite, Leader Completeness
and Leader Candidate Completeness) is proved for the KIP-966 model's shape; a seeded bug breaks
an obligation with a counterexample to induction, printed and labelled."""

from __future__ import annotations

import json
from itertools import permutations, product
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.cli.prove import with_brokers
from kafkarep.output.proofs import LABEL
from kafkarep.properties.model_files import load_model
from kafkarep.symbolic import invariants
from kafkarep.symbolic.agreement import check_invariants
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.induction import Prover
from kafkarep.symbolic.lemmas import Fact, Invariant, PairFact, fixing, representative
from kafkarep.symbolic.symmetry import symmetric_families
from tests.helpers import ROOT

MODELS = ROOT / "models"


def prover(model: str) -> Prover:
    cfg = load_model(MODELS / model)
    return Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS, 60, invariants.pair)


def test_min_isr_commit_is_proved_by_induction_for_the_kip966_shape(tmp_path: Path) -> None:
    summary = tmp_path / "prove.json"
    code = main(
        ["prove", "--quiet", "--no-bmc", "--property", "min_isr_commit", "--json", str(summary),
         "--workers", "2", "--reports", str(tmp_path), str(MODELS / "kip966_small.toml")]
    )  # fmt: skip
    assert code == 0
    (result,) = json.loads(summary.read_text())["models"][0]["results"]
    assert result["status"] == "proved" and result["method"] == "induction"
    names = invariants.needed("min_isr_commit")
    assert result["obligations"] == result["obligations_proved"] > 10 * len(names)


def test_without_the_min_isr_guard_the_hwm_clause_is_not_inductive() -> None:
    p = prover("mutations/hwm_below_min_isr.toml")
    together = frozenset(invariants.needed("min_isr_commit"))
    obligation = p.consecution("min_isr_commit.hwm", "fetch", together)
    assert obligation.status == "failed" and obligation.cti is not None
    before, instance, after = obligation.cti
    assert not before.ghost.hwm_below_min_isr and after.ghost.hwm_below_min_isr
    assert instance.family == "fetch"


def test_a_failed_obligation_prints_a_labelled_counterexample_to_induction(
    tmp_path: Path, capsys: object
) -> None:
    summary = tmp_path / "prove.json"
    code = main(
        ["prove", "--no-bmc", "--property", "min_isr_commit", "--json", str(summary),
         "--reports", str(tmp_path), str(MODELS / "mutations" / "hwm_below_min_isr.toml")]
    )  # fmt: skip
    assert code == 1  # the mutation expects a violation; induction alone cannot show one
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert LABEL in out and "not discharged" in out
    (result,) = json.loads(summary.read_text())["models"][0]["results"]
    assert result["status"] == "unknown"
    assert result["not_discharged"][0]["status"] == "failed"
    ctis = list(tmp_path.glob("traces/*/cti.*.itf.json"))
    assert ctis and LABEL in ctis[0].read_text()


@pytest.mark.slow
def test_every_auxiliary_invariant_holds_on_every_reachable_state() -> None:
    """An invariant used to strengthen a proof must be true of every reachable state: each one
    (and each history fact, on every record a broker may still apply) is evaluated on every
    state of a breadth-first exploration of the KIP-966 model (the shape they are proved for)."""
    cfg = load_model(MODELS / "kip966_small.toml")
    states, unsound = check_invariants(cfg, 9, workers=2)
    assert states > 6000
    assert not unsound, [u.invariant for u in unsound]


def test_a_wrong_invariant_is_caught_on_reachable_states() -> None:
    """The check finds a plausible but wrong invariant: 'an ELR member holds the leader's
    whole log' (false once the leader writes a record after the ELR formed)."""
    from kafkarep.symbolic.invariants.common import holds_prefix, replica
    from kafkarep.symbolic.ops import and_, eq, implies
    from kafkarep.symbolic.state import LEADER

    def elr_holds_leader_log(enc: Any, sym: Any) -> Any:
        parts = []
        for lead in range(1, enc.n + 1):
            lr = replica(sym, lead)
            for m in range(1, enc.n + 1):
                if m != lead:
                    member = and_(eq(lr.role, LEADER), enc.sets.has(sym.partition.elr, m))
                    parts.append(
                        implies(member, holds_prefix(enc, replica(sym, m), lr.log, lr.leo))
                    )
        return and_(*parts)

    cfg = load_model(MODELS / "kip966_small.toml")
    wrong = Invariant("elr_holds_leader_log", elr_holds_leader_log, "wrong")
    _, unsound = check_invariants(cfg, 4, (wrong,), ())
    assert [u.invariant for u in unsound] == ["elr_holds_leader_log"]


def test_a_wrong_pair_fact_is_caught_on_reachable_states_and_by_induction() -> None:
    """A plausible but wrong fact of two records, 'a later record's ISR is within an older
    one's' (an AlterPartition adds members): the reachable-state check finds it, and its
    obligation fails under the controller's handling of AlterPartition."""
    s = load_model(MODELS / "kip966_small.toml")

    def shrinks_only(enc: Any, a: Any, b: Any, sym: Any) -> Any:
        return enc.sets.subset(b.isr, a.isr)

    wrong = PairFact("isr_only_shrinks", shrinks_only, "wrong")
    _, unsound = check_invariants(s, 8, (), (wrong,))
    assert [u.invariant for u in unsound] == ["history.isr_only_shrinks"]
    p = Prover(s, invariants.ALL_INVARIANTS, invariants.FACTS + (wrong,), 60, invariants.pair)
    together = frozenset((*invariants.needed("min_isr_commit"), "history.isr_only_shrinks"))
    assert p.initiation("history.isr_only_shrinks").status == "proved"
    obligation = p.consecution("history.isr_only_shrinks", "handle_alter_partition", together)
    assert obligation.status == "failed"


def test_a_per_broker_fact_is_checked_for_a_broker_other_than_the_actor() -> None:
    """Under a symmetric family a fact made of one conjunct per broker is shown for brokers 1
    and 2 only. A wrong one broken only in the conjunct of a broker that is not the step's
    actor ('while a record names b its leader, nobody else holds records': broker 1 appending
    from leader 2 breaks b = 2) still fails."""
    from kafkarep.symbolic.ops import and_, eq, implies

    def by(enc: Any, snap: Any, sym: Any, b: int) -> Any:
        others = [k.replica.leo <= 0 for c, k in enumerate(sym.brokers, 1) if c != b]
        return implies(eq(snap.leader, b), and_(*others))

    def holds(enc: Any, snap: Any, sym: Any) -> Any:
        return and_(*(by(enc, snap, sym, b) for b in range(1, enc.n + 1)))

    wrong = Fact("alone_holds", holds, "wrong", by)
    cfg = load_model(MODELS / "kip966_small.toml")
    p = Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS + (wrong,), 60, invariants.pair)
    assert "fetch_response" in p.symmetric and p.enc.n == 3
    together = frozenset((*invariants.needed("min_isr_commit"), "history.alone_holds"))
    obligation = p.consecution("history.alone_holds", "fetch_response", together)
    assert obligation.status == "failed" and obligation.cti is not None
    before, instance, after = obligation.cti
    assert instance.actor == 1 and after.brokers[0].replica.leo > before.brokers[0].replica.leo


def test_a_step_naming_a_second_broker_is_taken_once_and_a_third_broker_is_checked() -> None:
    """A leader's handling of a follower's fetch names both: of broker 1's fetches only the one
    from leader 2 is taken (the others rename to it, fixing 1), and a per-broker fact is then
    shown for brokers 1, 2 and 3. A wrong one broken by that step only in a bystander's
    conjunct ('a follower with no fetch response in flight has every leader's HWM': the leader
    advances its HWM past broker 3's) fails; shown for brokers 1 and 2 only, as for a step
    naming one broker, it would pass (broker 1 has a response in flight, 2 is the leader)."""
    from kafkarep.symbolic.ops import and_, eq, implies, ne, not_
    from kafkarep.symbolic.state import LEADER

    def by(enc: Any, snap: Any, sym: Any, b: int) -> Any:
        mine = sym.brokers[b - 1]
        waiting = and_(ne(mine.replica.role, LEADER), not_(mine.fetch_response.present))
        others = [
            implies(eq(k.replica.role, LEADER), k.replica.hwm <= mine.replica.hwm)
            for c, k in enumerate(sym.brokers, 1)
            if c != b
        ]
        return implies(waiting, and_(*others))

    def holds(enc: Any, snap: Any, sym: Any) -> Any:
        return and_(*(by(enc, snap, sym, b) for b in range(1, enc.n + 1)))

    wrong = Fact("leaders_hwm_known", holds, "wrong", by)
    cfg = with_brokers(load_model(MODELS / "kip966_small.toml"), 4)
    together = frozenset((*invariants.needed("min_isr_commit"), "history.leaders_hwm_known"))

    def asked(fixed: int | None) -> Any:
        p = Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS + (wrong,), 60, invariants.pair)
        assert [(i.actor, i.fixed) for i in p._taken("fetch")] == [(1, 2)]
        assert p.goals.fixed["fetch"] == 2 and p.goals.fixed["produce"] == 1
        if fixed is not None:  # the shortcut seeded wrong
            p.goals.fixed["fetch"] = fixed
        return p.consecution("history.leaders_hwm_known", "fetch", together)

    obligation = asked(None)
    assert obligation.status == "failed" and obligation.cti is not None
    before, instance, after = obligation.cti
    assert (instance.family, instance.actor, instance.fixed) == ("fetch", 1, 2)
    assert after.brokers[1].replica.hwm > before.brokers[2].replica.hwm
    assert asked(1).status == "proved"


# Obligations of the completeness strengthening that failed before the invariants about
# leaders of later epochs, rolled-back proposals and stale leaders were added (each was a
# counterexample to induction then).
ONCE_FAILING = (
    ("commit_quorum", "fetch_response"),
    ("commit_quorum", "alter_partition_response"),
    ("current_quorum", "alter_partition_response"),
    ("answer_quorum", "fetch_response"),
    ("followed_leader_complete", "alter_partition_response"),
    ("truncation_keeps", "alter_partition_response"),
    ("fetched_in_epoch", "apply_metadata"),
    ("later_leaders_hold", "produce"),
    # closed by the pair facts, `rejoined` and the record's own candidates in designated_keeps
    ("history.leader_holds", "apply_metadata"),
    ("history.lacking_leader_left", "apply_metadata"),
    ("history.designated_keeps", "apply_metadata"),
    ("history.lacking_leader_left_by", "fetch_response"),
    ("history.rejoined", "fence"),
)


def test_the_strengthening_discharges_what_it_was_added_for() -> None:
    prop = "leader_completeness"
    p = prover("kip966_small.toml").with_facts(invariants.facts_for(prop))
    together = frozenset(invariants.needed(prop))
    for name, family in ONCE_FAILING:
        assert p.consecution(name, family, together).status == "proved", (name, family)


def completeness_is_proved(tmp_path: Path, brokers: int) -> None:
    """Leader Completeness and Leader Candidate Completeness: every obligation of the
    strengthening (660) is discharged for the KIP-966 shape with this many brokers."""
    summary = tmp_path / "prove.json"
    code = main(
        ["prove", "--quiet", "--no-bmc", "--property", "leader_completeness",
         "--property", "leader_candidate_completeness", "--json", str(summary),
         "--brokers", str(brokers), "--workers", "2", "--reports", str(tmp_path),
         str(MODELS / "kip966_small.toml")]
    )  # fmt: skip
    assert code == 0
    results = json.loads(summary.read_text())["models"][0]["results"]
    assert [r["status"] for r in results] == ["proved", "proved"]
    assert all(r["obligations"] == r["obligations_proved"] > 600 for r in results)


@pytest.mark.slow
def test_completeness_is_proved_by_induction_for_three_brokers(tmp_path: Path) -> None:
    completeness_is_proved(tmp_path, 3)


@pytest.mark.slow
@pytest.mark.parametrize("brokers", [4, 5])
def test_completeness_is_proved_by_induction_for_four_and_five_brokers(
    tmp_path: Path, brokers: int
) -> None:
    completeness_is_proved(tmp_path, brokers)


def test_a_wrong_history_fact_is_caught_by_a_step_that_keeps_the_registration() -> None:
    """A step that leaves the controller's registration as it is shows a history fact of the
    arbitrary record only, and a per-broker fact for brokers 1 and 2 only, assumed of them
    only: a wrong per-broker fact ('the record's leader has written nothing') still fails under
    produce, the record being the current registration and its leader broker 1."""

    def empty(enc: Any, snap: Any, sym: Any, b: int) -> Any:
        from kafkarep.symbolic.ops import eq, implies

        return implies(eq(snap.leader, b), sym.brokers[b - 1].replica.leo == 0)

    def every(enc: Any, snap: Any, sym: Any) -> Any:
        from kafkarep.symbolic.ops import and_

        return and_(*(empty(enc, snap, sym, b) for b in range(1, enc.n + 1)))

    wrong = Fact("leader_wrote_nothing", every, "wrong", empty, shared=False)
    cfg = load_model(MODELS / "kip966_small.toml")
    p = Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS + (wrong,), 60, invariants.pair)
    together = frozenset((*invariants.needed("min_isr_commit"), "history.leader_wrote_nothing"))
    assert p.initiation("history.leader_wrote_nothing").status == "proved"
    probes = p._context("produce", together)[1]
    assert probes and all(q.keeps_current for q in probes)
    assert not any(q.keeps_current for q in p._context("fence", together)[1])
    obligation = p.consecution("history.leader_wrote_nothing", "produce", together)
    assert obligation.status == "failed" and obligation.cti is not None
    _, instance, after = obligation.cti
    assert (instance.family, instance.actor) == ("produce", 1)
    assert after.brokers[0].replica.leo > 0


@pytest.mark.slow
def test_the_inductive_part_of_the_completeness_strengthening_is_proved() -> None:
    """Every obligation of these invariants and history facts is discharged for every action
    (with the completeness strengthening)."""
    prop = "leader_completeness"
    p = prover("kip966_small.toml").with_facts(invariants.facts_for(prop))
    together = frozenset(invariants.needed(prop))
    names = (
        "lagging_candidates",
        "later_leaders_hold",
        "rollback_quorum",
        "stale_leaders_alone",
        "same_epoch_isr",
        "leaderless_fenced",
        "lacking_leaders_left",
        "history.lagging_members",
        "history.stale_leader_alone",
        "history.no_growth_before_leader",
        "history.designated_lagging",
        "history.same_epoch_record",
    )
    for name in names:
        assert p.initiation(name).status == "proved"
        for family in p.families:
            assert p.consecution(name, family, together).status == "proved", (name, family)
    assert p.consecution("followers_known", "apply_metadata", together).status == "proved"


def test_symmetry_applies_only_when_brokers_are_interchangeable() -> None:
    kip966 = prover("kip966_small.toml")
    controller_events = {"fence", "unfence", "handle_alter_partition"}
    assert "fetch" in kip966.symmetric and "apply_metadata" in kip966.symmetric
    assert controller_events <= kip966.symmetric  # induction's elections are free
    # with the exact elections (first eligible in replica order) the controller's are not
    exact = symmetric_families(Encoding(load_model(MODELS / "kip966_small.toml")))
    assert "fetch" in exact and not exact & controller_events
    assert not prover("reassignment.toml").symmetric  # a broker that is no replica; reassigns


def test_a_wrong_invariant_is_caught_by_broker_ones_step() -> None:
    """Under a symmetric family only broker 1's steps are taken: a wrong invariant that names
    no broker ('no replica has records above its HWM', broken by any leader's produce) still
    fails, with a counterexample to induction that is broker 1's produce."""

    def holds(enc: Any, sym: Any) -> Any:
        from kafkarep.symbolic.ops import and_

        return and_(*(b.replica.leo <= b.replica.hwm for b in sym.brokers))

    wrong = Invariant("nothing_above_hwm", holds, "wrong")
    cfg = load_model(MODELS / "kip966_small.toml")
    p = Prover(cfg, invariants.ALL_INVARIANTS + (wrong,), invariants.FACTS, 60, invariants.pair)
    assert "produce" in p.symmetric
    together = frozenset((*invariants.needed("min_isr_commit"), "nothing_above_hwm"))
    assert p.initiation("nothing_above_hwm").status == "proved"
    obligation = p.consecution("nothing_above_hwm", "produce", together)
    assert obligation.status == "failed" and obligation.cti is not None
    _, instance, after = obligation.cti
    one = after.brokers[0].replica
    assert (instance.family, instance.actor) == ("produce", 1) and one.leo > one.hwm

    # only broker 1's steps are taken: its own, and the controller's events about it (elections
    # being free for induction, no step reads the order of the replica list); of its fetches,
    # the one from broker 2 (that from 3 renames to it, swapping 2 and 3)
    def steps(family: str) -> set[tuple[int, object]]:
        return {(q.instance.actor, q.instance.fixed) for q in p._context(family, together)[1]}

    assert steps("produce") == {(1, None)} and steps("fetch") == {(1, 2)}
    assert steps("fence") == {(0, 1)} and steps("handle_alter_partition") == {(0, 1)}


def test_one_representative_stands_for_each_orbit_of_the_renamings_left() -> None:
    """Of the tuples of brokers a conjunct may name (0 for none, repeats allowed), exactly one
    of each orbit of the renamings that fix brokers 1 to k is `representative`; with no
    renaming (None), every tuple is."""
    for n in (3, 4, 5):
        for fixed in (0, 1, 2):
            movable = list(range(fixed + 1, n + 1))
            renamings = [dict(zip(movable, image, strict=True)) for image in permutations(movable)]
            for length in (1, 2, 3):
                for named in product(range(n + 1), repeat=length):
                    orbit = {tuple(r.get(b, b) for b in named) for r in renamings}
                    kept = [t for t in orbit if representative(fixed, *t)]
                    assert len(kept) == 1, (n, fixed, named, kept)
                    assert representative(None, *named)
    assert fixing(1, 2) == 2 and fixing(2, 1) == 2 and fixing(None, 3) is None


def test_each_copy_of_the_registration_is_owned_by_the_broker_that_holds_it() -> None:
    """`copy_owners` names, for each of `registration_copies`, the broker whose state holds it
    (0 for the controller's): the tuple a conjunct about a copy is indexed by."""
    from kafkarep.symbolic.invariants.copies import copy_owners, registration_copies

    enc = Encoding(with_brokers(load_model(MODELS / "kip966_small.toml"), 4))
    sym = enc.fresh("x")
    copies, owners = registration_copies(enc, sym), copy_owners(enc)
    assert len(copies) == len(owners) and owners[0] == 0
    assert copies[0][1].eq(sym.partition.partition_epoch)
    for (_, partition_epoch, *_), owner in zip(copies[1:], owners[1:], strict=True):
        held = sym.brokers[owner - 1]
        assert any(
            partition_epoch.eq(own)
            for own in (held.replica.view.partition_epoch, held.ap_response.partition_epoch)
        )


def test_a_pairwise_invariant_is_checked_for_two_bystanders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An invariant about two brokers is shown, under a symmetric family, for one pair of each
    orbit of the renamings that fix the step's broker: (1, 2), (2, 1) and (2, 3) for broker 1's
    fence. A wrong one ('the ISR is never its leader and one other broker'), which fencing
    leader 1 of ISR {1, 2, 3} breaks only for the pair of bystanders (2, 3), fails; with pairs
    among brokers 1 and 2 only, it would pass."""
    from kafkarep.symbolic import lemmas
    from kafkarep.symbolic.ops import and_, eq, not_

    def pairs(enc: Any, sym: Any, fixed: int | None = None) -> Any:
        s, p = enc.sets, sym.partition
        return and_(
            *(
                not_(and_(eq(p.leader, x), s.eq(p.isr, s.union(s.bit(x), s.bit(y)))))
                for x in range(1, enc.n + 1)
                for y in range(1, enc.n + 1)
                if x != y and lemmas.representative(fixed, x, y)
            )
        )

    wrong = Invariant("never_two", pairs, "wrong", orbit=pairs)
    cfg = with_brokers(load_model(MODELS / "kip966_small.toml"), 4)
    together = frozenset((*invariants.needed("min_isr_commit"), "never_two"))

    def asked() -> Any:
        p = Prover(cfg, invariants.ALL_INVARIANTS + (wrong,), invariants.FACTS, 60, invariants.pair)
        assert p.goals.fixed_by("fence") == 1
        return p.consecution("never_two", "fence", together)

    obligation = asked()
    assert obligation.status == "failed" and obligation.cti is not None
    before, instance, after = obligation.cti
    assert (instance.family, instance.fixed) == ("fence", 1)
    # ISRs as bit sets (bit b for broker b): the ISR {leader, y} with neither of them broker 1
    leader, isr = after.partition.leader, after.partition.isr
    assert leader in (2, 3, 4) and isr & (1 << leader) and bin(isr).count("1") == 2
    assert not isr & (1 << 1) and before.partition.isr & (1 << 1)

    # the shortcut seeded wrong: pairs among the brokers renaming fixes and one more
    def among(fixed: int | None, *named: int) -> bool:
        return fixed is None or all(b <= fixed + 1 for b in named)

    # (only this invariant reads it through the module: the real ones import the name)
    monkeypatch.setattr(lemmas, "representative", among)
    assert asked().status == "proved"


def test_a_conjunct_about_three_brokers_is_checked_for_three_bystanders() -> None:
    """A conjunct about broker b made of conjuncts about b and two others (as
    `applied_as_leader` is: b's application, then pairs of leaders) shows, for b = 2, the pairs
    representative once 2 is fixed too (`fixing`): (3, 4) among them. A wrong invariant ('an
    active broker b outside the ISR never sees it be its leader x and one other y') that leader
    1's fence breaks only for (2; 3, 4) fails; with the pairs representative under the step's
    renamings alone, (3, 4) would be left out (4 is not the next broker past 3) and it would
    pass."""
    from kafkarep.symbolic.ops import and_, eq, not_

    def about(enc: Any, sym: Any, b: int, fixed: int | None) -> Any:
        s, p = enc.sets, sym.partition
        outside = and_(sym.registry[b - 1].active, not_(s.has(p.isr, b)))
        return and_(
            *(
                not_(and_(outside, eq(p.leader, x), s.eq(p.isr, s.union(s.bit(x), s.bit(y)))))
                for x in range(1, enc.n + 1)
                for y in range(1, enc.n + 1)
                if len({b, x, y}) == 3 and representative(fixed, x, y)
            )
        )

    def orbit(enc: Any, sym: Any, fixed: int | None = None) -> Any:
        return and_(
            *(
                about(enc, sym, b, nested(fixed, b))
                for b in range(1, enc.n + 1)
                if representative(fixed, b)
            )
        )

    nested = fixing
    wrong = Invariant("never_two_seen", orbit, "wrong", orbit=orbit)
    cfg = with_brokers(load_model(MODELS / "kip966_small.toml"), 4)
    together = frozenset((*invariants.needed("min_isr_commit"), "never_two_seen"))

    def asked() -> Any:
        p = Prover(cfg, invariants.ALL_INVARIANTS + (wrong,), invariants.FACTS, 60, invariants.pair)
        return p.consecution("never_two_seen", "fence", together)

    obligation = asked()
    assert obligation.status == "failed" and obligation.cti is not None
    _, _, after = obligation.cti
    assert (after.partition.leader, after.partition.isr) == (3, 1 << 3 | 1 << 4)

    # the shortcut seeded wrong: the pairs under broker 2's conjunct as if 2 were not fixed
    def unfixed(fixed: int | None, *named: int) -> int | None:
        return fixed

    nested = unfixed
    assert asked().status == "proved"


def test_a_wrong_election_is_caught_under_the_controllers_symmetric_families(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A free election that may pick any replica, outside the ISR and ELR too: the controller's
    families, shown for broker 1's events only, still fail (their obligations are not vacuous)."""
    real = Terms.widen_election

    def wrong(self, p, replicas, valid, unclean_ok, prior, first):  # type: ignore[no-untyped-def]
        return real(self, p, replicas, valid, lambda r: True, False, first)

    monkeypatch.setattr(Terms, "widen_election", wrong)
    p = prover("kip966_small.toml").with_facts(invariants.facts_for("leader_completeness"))
    together = frozenset(invariants.needed("leader_completeness"))
    for family in ("fence", "unfence", "handle_alter_partition"):
        assert family in p.symmetric
        obligation = p.consecution("leader_candidate_completeness.isr", family, together)
        assert obligation.status == "failed" and obligation.cti is not None


def test_workers_stopping_at_a_failure_take_the_sequential_order() -> None:
    """Where a property's own clause fails (induction does not close), the workers meet it as
    soon as one process does: the clauses first, not the heavy history facts (which took the
    5-broker proofs from 92 s to 1,130 s). Discharging everything, the heaviest go first."""
    names = list(invariants.needed("leader_completeness"))
    p = prover("kip966_small.toml")
    assert p.job_order(names, stop_at_failure=True) == names
    everything = p.job_order(names, stop_at_failure=False)
    assert sorted(everything) == sorted(names)
    assert everything[0] in p.by_part and everything[0] != names[0]  # asked by part: heavier


@pytest.mark.slow
def test_obligations_discharged_in_two_processes_are_the_same() -> None:
    names = list(invariants.needed("min_isr_commit"))
    sequential = prover("mutations/hwm_below_min_isr.toml").prove(names)
    parallel = prover("mutations/hwm_below_min_isr.toml").prove(names, workers=2)
    assert [(o.invariant, o.action, o.status) for o in sequential] == [
        (o.invariant, o.action, o.status) for o in parallel
    ]
    failed = [o for o in parallel if o.status == "failed"]
    assert failed and all(o.cti is not None for o in failed)
    # stopping at the first failure: the workers stop early, the list is still the same
    sequential = prover("mutations/hwm_below_min_isr.toml").prove(names, stop_at_failure=True)
    parallel = prover("mutations/hwm_below_min_isr.toml").prove(
        names, stop_at_failure=True, workers=2
    )
    assert [(o.invariant, o.action, o.status) for o in sequential] == [
        (o.invariant, o.action, o.status) for o in parallel
    ]
    assert parallel[-1].status == "failed" and parallel[-1].cti is not None


def _conjunction_of(parts: list[tuple[list[Any], Any]]) -> Any:
    import z3

    return z3.And(*(z3.Implies(z3.And(*premises), part) for premises, part in parts))


@pytest.mark.slow
def test_a_goal_asked_in_parts_is_the_goal() -> None:
    """`conjuncts` splits a step's goal into parts asked one by one (their disjunction broken
    is the goal broken): the parts' conjunction is equivalent to the goal, for the shapes the
    goals have and for a real goal (`history.applied_as_leader`, two parts). A split that drops
    a part, or a premise, is caught here."""
    import z3

    from kafkarep.symbolic import induction

    p, q, a, b, c = z3.Bools("p q a b c")
    goals = [
        z3.Implies(p, z3.And(a, b)),
        z3.Or(z3.Not(p), z3.And(a, z3.Implies(q, b), c)),
        z3.Or(z3.And(a, b), z3.Not(q)),
        z3.And(z3.Implies(p, a), z3.Or(b, c)),
        z3.Or(a, b),
        a,
    ]
    cfg = load_model(MODELS / "kip966_small.toml")
    prover = Prover(cfg, invariants.ALL_INVARIANTS, invariants.FACTS, 60, invariants.pair)
    prover = prover.with_facts(invariants.facts_for("leader_completeness"))
    real = prover._goal_term("history.applied_as_leader", "apply_metadata", True)
    goals.append(real)

    def equivalent(x: Any, y: Any) -> bool:
        solver = z3.Solver()
        solver.add(x != y)
        return bool(solver.check() == z3.unsat)

    for goal in goals:
        assert equivalent(goal, _conjunction_of(induction.conjuncts(goal))), goal
    assert len(induction.conjuncts(real)) == 2
    # seeded: a split that keeps only the first part, or forgets the premises
    first_only = induction.conjuncts(goals[0])[:1]
    assert not equivalent(goals[0], _conjunction_of(first_only))
    no_premises: list[tuple[list[Any], Any]] = [
        ([], part) for _, part in induction.conjuncts(goals[1])
    ]
    assert not equivalent(goals[1], _conjunction_of(no_premises))


def _dropped(p: Prover, name: str, family: str, together: frozenset[str]) -> list[Any]:
    """The conclusions `_left_to_show` drops from an obligation's goal, each as the query that
    would ask it: the step's guard and the part's premises, the conclusion broken."""
    import z3

    from kafkarep.symbolic import induction, ops

    out = []
    for probe in p._context(family, together)[1]:
        goal = p._goal_term(name, family, not probe.keeps_current)
        parts = induction.conjuncts(z3.substitute(goal, *probe.successor))
        guard = ops.bool_term(p._guard(probe, name))
        left = p._left_to_show(parts, together, guard)
        kept = {c.get_id() for _, part in left for c in induction.flat(part)}
        for premises, part in parts:
            out += [
                z3.And(guard, *premises, z3.Not(c))
                for c in induction.flat(part)
                if c.get_id() not in kept
            ]
    return out


def test_what_the_context_assumes_is_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A conclusion the obligation already assumes (an invariant about fields the step keeps
    is, after the substitution, the very term the context assumes) is dropped, and no query
    asks it. Every dropped conclusion follows from the context, the guard and the premises:
    Z3 confirms it here, and refutes one that a wrong shortcut drops."""
    import z3

    from kafkarep.symbolic import induction

    def holds(enc: Any, sym: Any) -> Any:
        from kafkarep.symbolic.ops import and_

        return and_(*(b.replica.leo <= b.replica.hwm for b in sym.brokers))

    wrong = Invariant("nothing_above_hwm", holds, "wrong: a leader's produce breaks it")
    cfg = load_model(MODELS / "kip966_small.toml")
    p = Prover(cfg, invariants.ALL_INVARIANTS + (wrong,), invariants.FACTS, 60, invariants.pair)
    together = frozenset((*invariants.needed("min_isr_commit"), "nothing_above_hwm"))
    solver = p._context("produce", together)[0]
    dropped = [q for name in sorted(together) for q in _dropped(p, name, "produce", together)]
    assert len(dropped) > 20
    assert all(p._check(solver, query)[0] == "proved" for query in dropped)
    asked: list[Any] = []
    check = induction.Prover._check

    def counting(self: Prover, s: Any, goal: Any) -> Any:
        asked.append(goal)
        return check(self, s, goal)

    monkeypatch.setattr(induction.Prover, "_check", counting)
    assert p.consecution("alter_partition_messages", "produce", together).status == "proved"
    assert asked == []  # a produce step keeps what it is about
    assert p.consecution("nothing_above_hwm", "produce", together).status == "failed"
    assert asked
    # seeded: a shortcut that takes the post-state's conjuncts for assumed drops the one the
    # step breaks (and so proves the wrong invariant); the check above refutes it
    seeded = Prover(cfg, p.invariants, p.all_facts, 60, invariants.pair)
    probe = seeded._context("produce", together)[1][0]
    after = seeded._conjunct_ids(
        z3.substitute(seeded._goal_term("nothing_above_hwm", "produce", True), *probe.successor)
    )
    seeded.assumed_conjuncts[together] = seeded._assumed_conjuncts(together) | after
    assert seeded.consecution("nothing_above_hwm", "produce", together).status == "proved"
    context = seeded._context("produce", together)[0]
    queries = _dropped(seeded, "nothing_above_hwm", "produce", together)
    assert any(seeded._check(context, query)[0] == "failed" for query in queries)


def test_an_invariant_marked_by_part_is_asked_part_by_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rejoined_caught_up` is marked `by_part`: under `apply_metadata` each conjunct left of
    each step's goal is its own query, and the obligation is proved so. Not marked, the same
    goal is asked in one query with the family's other steps."""
    cfg = load_model(MODELS / "kip966_small.toml")
    queries: list[Any] = []
    check = Prover._check

    def counted(self: Prover, solver: Any, query: Any) -> Any:
        queries.append(query)
        return check(self, solver, query)

    monkeypatch.setattr(Prover, "_check", counted)
    together = frozenset(invariants.needed("leader_completeness"))
    name = "rejoined_caught_up"
    marked = next(i for i in invariants.ALL_INVARIANTS if i.name == name)
    assert marked.by_part
    counts = {}
    for inv in (marked, marked._replace(by_part=False)):
        lemmas = tuple(inv if i.name == name else i for i in invariants.ALL_INVARIANTS)
        prover = Prover(cfg, lemmas, invariants.FACTS, 120, invariants.pair)
        prover = prover.with_facts(invariants.facts_for("leader_completeness"))
        queries.clear()
        assert prover.consecution(name, "apply_metadata", together).status == "proved"
        counts[inv.by_part] = len(queries)
    assert counts[False] == 1
    assert counts[True] > 10
