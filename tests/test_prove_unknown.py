"""`[prove] unknown`: a model file says which property is expected to stay `unknown`, naming the
obligation induction does not discharge. The note is accepted only while that obligation is
among those not discharged, refused when the property is proved or violated (so it cannot go
stale silently), and a malformed note is one line, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.cli.suite_prove import check_settings
from kafkarep.model.config import ModelConfig
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.symbolic.induction import Obligation
from kafkarep.symbolic.prove import Result
from kafkarep.symbolic.verdict import judge
from tests.helpers import ROOT, error_line, prove

# min_isr_commit is violated here (depth 3), so induction cannot prove it: with --no-bmc it is
# `unknown`, and an obligation is not discharged
HWM = ROOT / "models" / "mutations" / "hwm_below_min_isr.toml"
SMALL = ROOT / "models" / "kip966_small.toml"  # min_isr_commit is proved by induction (216)
FAST = ("--no-bmc", "--property", "min_isr_commit", "--workers", "1")


def with_note(tmp_path: Path, model: Path, note: str, name: str = "m.toml") -> Path:
    path = tmp_path / name
    line = f'unknown = {{ min_isr_commit = "{note}" }}\n'
    text = model.read_text()
    if "\n[prove]\n" in text:  # the model's own [prove] section takes the note
        text = text.replace("\n[prove]\n", "\n[prove]\n" + line, 1)
    else:
        text += "\n[prove]\n" + line
    path.write_text(text)
    return path


def test_a_note_naming_the_obligation_not_discharged_is_accepted(tmp_path: Path) -> None:
    code, report = prove(tmp_path, *FAST, str(HWM))
    assert code == 1  # violates expects min_isr_commit violated; induction alone says unknown
    assert report["problems"] == ["min_isr_commit is expected to be violated but is unknown"]
    (result,) = report["results"]
    first = result["not_discharged"][0]
    obligation = f"{first['invariant']} under {first['action']}"
    noted = with_note(tmp_path, HWM, obligation)
    code, report = prove(tmp_path, *FAST, str(noted))
    assert code == 0, report["problems"]
    assert report["expectations_met"] and report["problems"] == []
    assert report["expected_unknown"] == {"min_isr_commit": obligation}
    # a discharged obligation (the clause holds initially) does not explain the unknown
    stale = with_note(tmp_path, HWM, f"{first['invariant']} under initial", "stale.toml")
    code, report = prove(tmp_path, *FAST, str(stale))
    assert code == 1
    (problem,) = report["problems"]
    assert problem.startswith(
        f"min_isr_commit is unknown, but not for the reason noted ([prove] unknown: "
        f"{first['invariant']} under initial not discharged): not discharged: {obligation}"
    )


def test_a_note_on_a_proved_property_is_refused(tmp_path: Path) -> None:
    noted = with_note(tmp_path, SMALL, "min_isr_commit.hwm under fetch")
    code, report = prove(tmp_path, *FAST, str(noted))
    assert code == 1
    assert report["problems"] == [
        "min_isr_commit is expected unknown ([prove] unknown: min_isr_commit.hwm under fetch) "
        "but proved: remove the note"
    ]


def _cfg(result: str = "holds", violated: str = "min_isr_commit", **section: object) -> ModelConfig:
    expect: dict[str, object] = {"result": result}
    if result == "violates":
        expect["violates"] = {violated: 3}
    raw = {"cluster": {"brokers": 3, "min_isr": 2}, "expect": expect, "prove": section}
    return parse_model(raw, "m.toml")


def _unknown(prop: str, *failed: tuple[str, str]) -> Result:
    obligations = tuple(Obligation(i, a, "failed", 0.1) for i, a in failed)
    return Result(prop, "unknown", "induction", None, 1.0, obligations, obligations)


def test_judge() -> None:
    note = {"min_isr_commit": "controller_shape under restart"}
    cfg = _cfg(unknown=note)
    explained = _unknown("min_isr_commit", ("controller_shape", "restart"))
    other = _unknown("min_isr_commit", ("history.shape", "restart"))
    proved = Result("min_isr_commit", "proved", "induction", None, 1.0)
    violated = Result("min_isr_commit", "violated", "bmc", 3, 1.0)
    lc = _unknown("leader_completeness", ("controller_shape", "restart"))
    assert judge(cfg, [explained]) == []
    assert judge(_cfg(), [explained]) == ["min_isr_commit is expected to hold but is unknown"]
    assert judge(cfg, [other]) == [
        "min_isr_commit is unknown, but not for the reason noted ([prove] unknown: "
        "controller_shape under restart not discharged): not discharged: history.shape under "
        "restart; update the note"
    ]
    assert judge(cfg, [proved]) == [
        "min_isr_commit is expected unknown ([prove] unknown: controller_shape under restart) "
        "but proved: remove the note"
    ]
    # the note is per property: another property's unknown is still judged
    assert judge(cfg, [explained, lc]) == ["leader_completeness is expected to hold but is unknown"]
    # on a model expecting the violation, the note stands in for it; a violation found is not
    # unknown any more
    violates = _cfg("violates", unknown=note)
    assert judge(violates, [explained]) == []
    assert judge(violates, [violated]) == [
        "min_isr_commit is expected unknown ([prove] unknown: controller_shape under restart) "
        "but violated: remove the note"
    ]
    assert judge(_cfg("violates"), [violated]) == []
    assert judge(_cfg("violates"), [other]) == [
        "min_isr_commit is expected to be violated but is unknown"
    ]
    # a model expecting only violations prove does not check (here a liveness property)
    # expects the properties prove checks to hold
    liveness = _cfg("violates", "write_answered")
    assert judge(liveness, [proved]) == []
    assert judge(liveness, [other]) == [
        "min_isr_commit is expected to hold (the model expects no violation of it) but is unknown"
    ]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            'unknown = "min_isr_commit.hwm under fetch"',
            '[prove] unknown must be a table: { property = "INVARIANT under FAMILY" }',
        ),
        (
            'unknown = [["min_isr_commit", "min_isr_commit.hwm under fetch"]]',
            '[prove] unknown must be a table: { property = "INVARIANT under FAMILY" }',
        ),
        (
            'unknown = { log_matching = "log_matching under fetch" }',
            "[prove] unknown.log_matching: prove supports the properties leader_completeness, "
            "leader_candidate_completeness, min_isr_commit, not 'log_matching'",
        ),
        (
            'unknown = { min_isr_commit = "min_isr_commit.hwm after fetch" }',
            '[prove] unknown.min_isr_commit must be "INVARIANT under FAMILY" (an obligation '
            "prove reports not discharged), not 'min_isr_commit.hwm after fetch'",
        ),
        (
            "unknown = { min_isr_commit = 3 }",
            '[prove] unknown.min_isr_commit must be "INVARIANT under FAMILY" (an obligation '
            "prove reports not discharged), not 3",
        ),
        (
            'properties = ["leader_completeness"]\n'
            'unknown = { min_isr_commit = "min_isr_commit.hwm under fetch" }',
            "[prove] unknown.min_isr_commit: the model does not prove min_isr_commit (it proves "
            "leader_completeness): remove the note",
        ),
        ('slow = "yes"', "[prove] slow must be true or false"),
    ],
)
def test_a_bad_note_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, message: str
) -> None:
    model = tmp_path / "m.toml"
    model.write_text(SMALL.read_text() + f"\n[prove]\n{section}\n")
    line = error_line(capsys, "prove", "--reports", str(tmp_path), str(model))
    assert line == f"kafkarep prove: error: {model}: {message}"
    # the suite refuses it before running anything
    line = error_line(capsys, "suite", "--prove", "--reports", str(tmp_path), str(model))
    assert line == f"kafkarep suite: error: {model}: {message}"


def test_every_bundled_prove_section_is_well_formed() -> None:
    """The [prove] sections of the bundled models, their notes included, pass the checks (the
    prove runs judge the notes: docs/prove.md)."""
    for path in sorted((ROOT / "models").rglob("*.toml")):
        check_settings(load_model(path))
