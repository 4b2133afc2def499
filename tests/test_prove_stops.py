"""Proofs on a shape where brokers stop (unclean shutdowns, lossy ones, restarts) and ELR is off:
Kafka 3.5's Last Replica Standing model, with 3.9.1's follower check of a response's leader epoch
(KAFKA-18991), for which the lemmas are written. The MinISR rule holds there and is proved; the
completeness properties do not, and bounded model checking shows it with traces that replay. On
the release's own model (no such check) the MinISR proof stops at a fetch response."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.properties.model_files import load_model
from kafkarep.symbolic import invariants
from kafkarep.symbolic.agreement import check_invariants
from kafkarep.symbolic.induction import Prover
from kafkarep.symbolic.invariants.common import replica
from kafkarep.symbolic.invariants.strengthening import STRUCTURE
from kafkarep.symbolic.lemmas import Invariant, PairFact
from kafkarep.symbolic.ops import and_, implies, not_
from tests.helpers import ROOT, prove

LRS = ROOT / "tests" / "data" / "models" / "v35_follower_checks_response_epoch.toml"
V35 = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
SHIPPED = ROOT / "models" / "kip966_shipped.toml"
KAFKA_19522 = (
    ROOT / "models" / "findings" / "last_known_leader_after_unclean_shutdown_kafka_19522.toml"
)


@pytest.mark.slow
def test_min_isr_commit_is_proved_with_elr_off_and_brokers_that_stop(tmp_path: Path) -> None:
    code, report = prove(
        tmp_path, "--no-bmc", "--property", "min_isr_commit", "--workers", "2", str(LRS)
    )
    assert code == 0
    (result,) = report["results"]
    assert result["status"] == "proved" and result["method"] == "induction"
    assert result["obligations"] == result["obligations_proved"] == 234


@pytest.mark.slow
def test_the_invariants_hold_on_every_reachable_state_of_the_model() -> None:
    cfg = load_model(LRS)
    lemmas = tuple(i for i in invariants.ALL_INVARIANTS if i.name in STRUCTURE)
    states, unsound = check_invariants(cfg, 7, lemmas, invariants.FACTS, workers=2)
    assert states == 10716
    assert not unsound, [u.invariant for u in unsound]


def _keeps_committed_log(enc: Any, sym: Any) -> Any:
    """Wrong: a broker that has not caught up since it stopped still holds the committed log
    (a lossy unclean shutdown loses all of it)."""
    return and_(
        *(
            implies(not_(sym.brokers[b - 1].initialised), replica(sym, b).leo >= sym.ghost.true_hwm)
            for b in range(1, enc.n + 1)
        )
    )


@pytest.mark.slow
def test_two_workers_find_what_one_does() -> None:
    """The states are shared between two processes: the same states are counted, and each wrong
    invariant or fact is reported at the same first state as by one process."""
    cfg = load_model(LRS)
    wrong = Invariant("stopped_keeps_committed", _keeps_committed_log, "wrong")
    only_shrinks = PairFact(
        "isr_only_shrinks", lambda enc, a, b, sym: enc.sets.subset(b.isr, a.isr), "wrong"
    )
    one = check_invariants(cfg, 6, (wrong,), (only_shrinks,))
    assert one[0] == 4911
    assert [u.invariant for u in one[1]] == ["stopped_keeps_committed", "history.isr_only_shrinks"]
    # with 5, the two are first false in states that different workers evaluate
    for workers in (2, 5):
        assert check_invariants(cfg, 6, (wrong,), (only_shrinks,), workers=workers) == one
    assert check_invariants(cfg, 6, (wrong,), (), limit=100, workers=2) == check_invariants(
        cfg, 6, (wrong,), (), limit=100
    )


def test_a_wrong_invariant_about_stopped_brokers_is_caught() -> None:
    cfg = load_model(LRS)
    wrong = Invariant("stopped_keeps_committed", _keeps_committed_log, "wrong")
    _, unsound = check_invariants(cfg, 7, (wrong,), ())
    assert [u.invariant for u in unsound] == ["stopped_keeps_committed"]
    prover = Prover(
        cfg, invariants.ALL_INVARIANTS + (wrong,), invariants.FACTS, 60, invariants.pair
    )
    together = frozenset((*invariants.needed("min_isr_commit"), "stopped_keeps_committed"))
    obligation = prover.consecution("stopped_keeps_committed", "crash_lossy", together)
    assert obligation.status == "failed" and obligation.cti is not None


@pytest.mark.slow
@pytest.mark.parametrize(("model", "obligations"), [(SHIPPED, 234), (KAFKA_19522, 252)])
def test_min_isr_commit_is_proved_where_the_last_known_leader_recovers(
    tmp_path: Path, model: Path, obligations: int
) -> None:
    """ELR on with brokers that stop: the election of the last known leader leaves the partition
    RECOVERING, its leader alone in the ISR (`structure.recovering_alone`)."""
    code, report = prove(
        tmp_path, "--no-bmc", "--property", "min_isr_commit", "--workers", "2", str(model)
    )
    assert code == 0
    (result,) = report["results"]
    assert result["status"] == "proved" and result["method"] == "induction"
    assert result["obligations"] == result["obligations_proved"] == obligations


def _never_recovering(enc: Any, sym: Any) -> Any:
    """Wrong here: the partition is never RECOVERING (what `registration_shape` said before the
    election of the last known leader was allowed for)."""
    return not_(sym.partition.recovering)


@pytest.mark.slow
def test_the_invariants_hold_where_the_last_known_leader_recovers() -> None:
    """Every reachable state to depth 11 of the KAFKA-19522 model, RECOVERING ones among them;
    and a wrong invariant about them is caught in the same search."""
    wrong = Invariant("never_recovering", _never_recovering, "wrong")
    lemmas = tuple(i for i in invariants.ALL_INVARIANTS if i.name in STRUCTURE) + (wrong,)
    states, unsound = check_invariants(
        load_model(KAFKA_19522), 11, lemmas, invariants.FACTS, workers=2
    )
    assert states == 437581
    assert [u.invariant for u in unsound] == ["never_recovering"]


@pytest.mark.slow
def test_last_replica_standing_verdicts_by_proof(tmp_path: Path) -> None:
    """`kafkarep prove` on the model as it is: both completeness properties violated with traces
    `kafkarep replay` confirms, the MinISR rule proved; the model's expectations met."""
    code, report = prove(tmp_path, "--workers", "2", str(LRS))
    assert code == 0 and report["expectations_met"]
    results = {r["property"]: r for r in report["results"]}
    assert results["min_isr_commit"]["status"] == "proved"
    for name in ("leader_completeness", "leader_candidate_completeness"):
        assert results[name]["status"] == "violated", name
        assert results[name]["method"] == "induction+bmc"
        assert main(["replay", "--quiet", results[name]["trace_file"]]) == 0


def test_the_release_without_the_follower_check_stops_at_a_fetch_response() -> None:
    """Kafka 3.5's follower takes a response by its fetch offset alone: the lemma that one leader
    holds each epoch does not follow under `fetch_response` there, and does with the check."""
    together = frozenset(invariants.needed("min_isr_commit"))
    for path, status in ((V35, "failed"), (LRS, "proved")):
        prover = Prover(
            load_model(path), invariants.ALL_INVARIANTS, invariants.FACTS, 60, invariants.pair
        )
        obligation = prover.consecution("one_leader_per_epoch", "fetch_response", together)
        assert obligation.status == status, path.name
