"""`[rules] refuse_guards` in the prover's encoding: a guard made to refuse refuses there as in
the concrete rules (`Encoding.check` runs the model's own guard through `Guard.passes`), so the
liveness models that seed one are proved like the others; the auxiliary invariants hold on
every reachable state of those models (their whole state spaces)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.properties.model_files import load_model
from kafkarep.rules import guards
from kafkarep.rules.guards import Guard
from kafkarep.symbolic import invariants
from kafkarep.symbolic.agreement import check_invariants
from kafkarep.symbolic.agreement.rules import check as agreement
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.invariants.strengthening import STRUCTURE
from tests.helpers import ROOT, prove

LIVENESS = ROOT / "models" / "liveness"
# a data-plane guard, an ISR-join guard, the controller's unfence: each made to refuse
REFUSING = {
    "follower_never_appends": ("fetch_response.fetch_offset_matches", 49),
    "isr_join_refused": ("isr_join.fetch_offset_at_hwm", 10_548),
    "unfence_refused": ("unfence.caught_up_with_metadata", 233),
}
# Every one of those guards is read by what both sides run: the families' enabled conditions
# and steps (`kafkarep/model/actions/`, over `kafkarep/model/domain.py`), so there is no
# encoding of a refusal to get wrong.
LEMMAS = tuple(i for i in invariants.ALL_INVARIANTS if i.name in STRUCTURE)


def model(name: str) -> Path:
    return LIVENESS / f"{name}.toml"


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_the_encoding_agrees_with_a_refused_guard(name: str) -> None:
    cfg = load_model(model(name))
    guard, _ = REFUSING[name]
    assert guards.REFUSED + guard in cfg.options.disabled_guards
    found = agreement(cfg, 6)
    assert not found.disagreements, found.disagreements[0]


real_passes = Guard.passes


def passes_ignoring_refusal(self: Guard, disabled: frozenset[str], *args: object) -> object:
    """The seeded bug the models had before: a refused guard read as on."""
    return real_passes(
        self, frozenset(d for d in disabled if d != guards.REFUSED + self.qualified), *args
    )


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_a_refusal_is_read_by_what_both_sides_run(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seeded bug changes the steps both sides take, and they still agree: the prover runs
    the model's conditions and steps, refusal and all."""
    before = agreement(load_model(model(name)), 6)
    monkeypatch.setattr(Guard, "passes", passes_ignoring_refusal)
    found = agreement(load_model(model(name)), 6)
    assert not found.disagreements and found.enabled > 0
    assert (found.states, found.enabled) != (before.states, before.enabled)


@pytest.mark.slow
def test_the_safety_properties_are_proved_where_the_follower_never_appends(
    tmp_path: Path,
) -> None:
    """Its ELR, with MinISR 1, holds one member at most (`registration_shape`): without that
    clause, `controller_shape` under `unfence` had a counterexample to induction (an unfenced
    broker in the ELR beside the one elected). Under Kafka's `makeLeader` ("reset", the
    default) each completeness proof stops at the one obligation the model's [prove] notes,
    under `apply_metadata`; every other obligation is discharged."""
    code, report = prove(
        tmp_path, "--no-bmc", "--workers", "1", str(model("follower_never_appends"))
    )
    assert code == 0, report["problems"]
    results = report["results"]
    assert [r["status"] for r in results] == ["unknown", "unknown", "proved"]
    for result in results[:2]:
        assert result["obligations_proved"] == result["obligations"] - 1
        assert [o["action"] for o in result["not_discharged"]] == ["apply_metadata"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REFUSING))
def test_the_invariants_hold_on_every_reachable_state(name: str) -> None:
    _, states = REFUSING[name]
    found, unsound = check_invariants(
        load_model(model(name)), 60, LEMMAS, invariants.FACTS, workers=2
    )
    assert found == states  # the whole state space (the model's pinned count)
    assert not unsound, [u.invariant for u in unsound]


@pytest.mark.slow
def test_the_min_isr_one_elr_clause_holds_and_a_wrong_one_is_caught(tmp_path: Path) -> None:
    """With MinISR 1 only the last ISR member enters the ELR (`registration_shape`). On the
    model where the follower never appends, with two fences (the leader's puts it in the ELR),
    the clause holds on every reachable state, and a stronger, wrong one, 'with MinISR 1 the
    ELR stays empty', is caught there."""
    from kafkarep.symbolic.lemmas import Invariant

    fenced = tmp_path / "fenced.toml"
    text = model("follower_never_appends").read_text()
    fenced.write_text(text.replace("\n[check]", "\n[faults]\nfences = 2\n\n[check]"))
    cfg = load_model(fenced)
    states, unsound = check_invariants(cfg, 60, LEMMAS, invariants.FACTS, workers=2)
    assert states == 13_635
    assert not unsound, [u.invariant for u in unsound]

    def elr_empty(enc: Encoding, sym: object) -> object:
        return enc.sets.empty(sym.partition.elr)  # type: ignore[attr-defined]

    wrong = Invariant("elr_empty", elr_empty, "wrong")
    _, unsound = check_invariants(cfg, 60, (wrong,), ())
    assert [u.invariant for u in unsound] == ["elr_empty"]
