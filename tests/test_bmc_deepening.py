"""Bounded model checking deepens: depth 0, 1, 2, ... on one solver, stopping at the
first depth with a violation (so it is a shortest one), and a search that runs out of time says
which depth it had cleared.

Every bundled model whose `[expect]` pins a violation of a property `prove` checks at a depth of
at most 8 is found violated at exactly that depth by `prove --no-induction`, with a trace
`kafkarep replay` accepts. Skipped, by the selection below (`test_the_selection_is_the_one_named`
pins it):

- `faults/lagging_controller` (leader_completeness 6, leader_candidate_completeness 6): prove
  does not encode controller failovers with a lagging controller;
- `mutations/fetch_broker_epoch_not_stale` (leader_candidate_completeness 16): prove does not
  encode delayed fetches;
- `history/kafka_16540_min_isr_change_keeps_elr` (leader_candidate_completeness 5): prove does
  not encode a change of min.insync.replicas;
- `history/kafka_13141_diverging_fetch_counted` (leader_candidate_completeness 9): prove does not
  encode a leader that counts a diverging fetch;
- `history/kafka_18723_late_send` (leader_candidate_completeness 18): prove does not encode a
  response sent after the leader's log changed;
- `zookeeper_unclean` (both completeness properties at 5): prove encodes the KRaft controller
  only;
- `history/kafka_6880_zombie_replica_fetch`, `history/kafka_7128_isr_join_below_leso` and
  `history/kip101_truncation_to_hwm`: the ZooKeeper-era controller, which prove does not encode;
- the models that pin only properties prove does not check (the liveness models, `log_matching`
  in `history/kafka_6361_single_round_truncation`);
- the models pinned deeper than 8 (`findings/last_known_leader_after_unclean_shutdown` 9,
  its `_kafka_19522` 11,
  `findings/make_leader_resets_pending_isr` 15 and its `_elr_off` 15,
  `history/kafka_14139_stale_broker_epoch` 14,
  `mutations/alter_partition_partition_epoch` 15): each depth's question costs about 2.5 times
  the one before, so these take minutes to hours.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import z3

from kafkarep.cli.main import main
from kafkarep.cli.prove import not_encoded
from kafkarep.properties.model_files import load_model
from kafkarep.symbolic import bmc
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.properties import SUPPORTED, clauses_of
from kafkarep.symbolic.prove import Settings, prove_property, timed_out_note
from tests.helpers import ROOT, prove

MODELS = ROOT / "models"
MAX_DEPTH = 8  # the deepest pinned violation asked here
FAST_DEPTH = 5  # pinned at most this deep: the default tier; the others are slow


def _cases() -> tuple[list[tuple[str, str, int]], dict[str, str]]:
    """(model, property, pinned depth) for every bundled model that pins a violation of a
    property prove checks at depth <= MAX_DEPTH and that prove encodes; and the models pinning
    such a violation that are left out, with why."""
    cases: list[tuple[str, str, int]] = []
    skipped: dict[str, str] = {}
    for path in sorted(MODELS.rglob("*.toml")):
        cfg = load_model(path)
        if cfg.expect.result != "violates":
            continue
        pinned = {
            name.split(".")[0]: depth
            for name, depth in cfg.expect.violates
            if name.split(".")[0] in SUPPORTED and depth is not None
        }
        if not pinned:
            continue
        name = path.relative_to(MODELS).with_suffix("").as_posix()
        why = not_encoded(cfg)
        if why is not None:
            skipped[name] = "not encoded"
            continue
        shallow = {p: d for p, d in pinned.items() if d <= MAX_DEPTH}
        if not shallow:
            skipped[name] = f"deeper than {MAX_DEPTH}"
        cases += [(name, p, d) for p, d in sorted(shallow.items())]
    return cases, skipped


CASES, SKIPPED = _cases()


def test_the_selection_is_the_one_named() -> None:
    """The models asked (and those left out) are the ones the module's docstring lists."""
    assert CASES == [
        ("history/v35_last_replica_standing", "leader_candidate_completeness", 5),
        ("history/v35_last_replica_standing", "leader_completeness", 7),
        ("mutations/elr_keeps_unclean_shutdown", "leader_candidate_completeness", 6),
        ("mutations/hwm_below_min_isr", "leader_candidate_completeness", 3),
        ("mutations/hwm_below_min_isr", "min_isr_commit", 3),
        ("mutations/isr_join_fetch_offset_at_hwm", "leader_candidate_completeness", 8),
    ]
    assert SKIPPED == {
        "faults/lagging_controller": "not encoded",
        "findings/last_known_leader_after_unclean_shutdown": "deeper than 8",
        "findings/last_known_leader_after_unclean_shutdown_kafka_19522": "deeper than 8",
        "findings/make_leader_resets_pending_isr": "deeper than 8",
        "findings/make_leader_resets_pending_isr_elr_off": "deeper than 8",
        "history/kafka_13141_diverging_fetch_counted": "not encoded",
        "history/kafka_14139_stale_broker_epoch": "deeper than 8",
        "history/kafka_16540_min_isr_change_keeps_elr": "not encoded",
        "history/kafka_18723_late_send": "not encoded",
        "history/kafka_6880_zombie_replica_fetch": "not encoded",
        "history/kafka_7128_isr_join_below_leso": "not encoded",
        "history/kip101_truncation_to_hwm": "not encoded",
        "mutations/alter_partition_partition_epoch": "deeper than 8",
        "mutations/fetch_broker_epoch_not_stale": "not encoded",
        "zookeeper_unclean": "not encoded",
    }


def _case(model: str, prop: str, depth: int) -> object:
    marks = [pytest.mark.slow] if depth > FAST_DEPTH else []
    return pytest.param(model, prop, depth, id=f"{model}-{prop}-{depth}", marks=marks)


@pytest.mark.parametrize(("model", "prop", "depth"), [_case(*c) for c in CASES])
def test_the_pinned_violation_is_found_at_exactly_its_depth(
    tmp_path: Path, model: str, prop: str, depth: int
) -> None:
    """Searched to MAX_DEPTH, BMC stops at the pinned depth: no shorter violation exists (the
    explorer's shortest) and it does not go past it."""
    code, report = prove(
        tmp_path, "--no-induction", "--property", prop, "--depth", str(MAX_DEPTH),
        "--timeout", "900", str(MODELS / f"{model}.toml"),
    )  # fmt: skip
    assert code == 0 and report["expectations_met"], report
    (result,) = report["results"]
    assert result["status"] == "violated" and result["method"] == "bmc", result
    assert result["depth"] == depth
    assert main(["replay", "--quiet", result["trace_file"]]) == 0


def test_the_outcome_depth_is_the_violation_s() -> None:
    """Deepening to 8 on a violation at 3 stops there: the outcome's depth is 3 and the
    counterexample has 3 steps (no do-nothing steps any more)."""
    cfg = load_model(MODELS / "mutations" / "hwm_below_min_isr.toml")
    outcome = bmc.check(
        lambda c: Encoding(cfg, c), clauses_of("min_isr_commit"), 8, every_initial=False
    )
    (cex,) = outcome.found.values()
    assert outcome.depth == 3 and len(cex.steps) == 3 and not outcome.timed_out


class _Clock:
    """A clock for `bmc` that moves `tick` seconds at every reading, and an hour more once the
    unrolling reaches `at` steps."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int = -1, tick: float = 0.0) -> None:
        self.now = 0.0
        extend = bmc.Unrolling.extend

        def extend_then_jump(unrolling: bmc.Unrolling) -> None:
            extend(unrolling)
            if len(unrolling.acts) == at:
                self.now += 3600.0

        def read() -> float:
            self.now += tick
            return self.now

        monkeypatch.setattr(bmc.Unrolling, "extend", extend_then_jump)
        monkeypatch.setattr(bmc, "time", SimpleNamespace(monotonic=read))


def test_a_timeout_names_the_depth_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget runs out while depth 3 is being built: depths 0 to 2 are cleared, and the
    result says so."""
    _Clock(monkeypatch, at=3)
    cfg = load_model(MODELS / "kip966_small.toml")
    outcome = bmc.check(lambda c: Encoding(cfg, c), clauses_of("leader_completeness"), 12, True, 60)
    assert outcome.timed_out and not outcome.found and outcome.depth == 2
    settings = Settings(depth=12, timeout=60, induction=False)
    result = prove_property(cfg, "leader_completeness", settings, None)
    assert result.status == "unknown" and result.depth == 2
    assert result.note == "bounded model checking timed out at depth 3; no violation within 2 steps"


def test_a_timeout_before_any_depth_is_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clause the initial state does not decide, and the budget spent before depth 0 is
    asked: no depth is cleared. (The bundled properties are decided on an initial state without
    asking: nothing is logged yet.)"""
    _Clock(monkeypatch, tick=1.0)
    cfg = load_model(MODELS / "kip966_small.toml")
    undecided = {"undecided": lambda enc, state: z3.Bool("undecided")}
    outcome = bmc.check(lambda c: Encoding(cfg, c), undecided, 12, True, 0.5)
    assert outcome.timed_out and not outcome.found and outcome.depth == -1
    assert timed_out_note(-1) == "bounded model checking timed out at depth 0; no depth cleared"


def test_a_tiny_budget_names_the_depth_it_cleared(tmp_path: Path) -> None:
    """With one second for the whole search, `prove` stops at some depth short of 12 (where
    depends on the machine) and names it: the note and the summary's depth agree."""
    code, report = prove(
        tmp_path, "--no-induction", "--property", "leader_completeness", "--timeout", "1",
        str(MODELS / "history" / "v35_last_replica_standing.toml"),
    )  # fmt: skip
    assert code == 1  # the model expects the violation at depth 7
    (result,) = report["results"]
    assert result["status"] == "unknown", result
    found = re.fullmatch(
        r"bounded model checking timed out at depth (\d+); "
        r"(no violation within (\d+) steps|no depth cleared)",
        result["note"],
    )
    assert found is not None, result["note"]
    at = int(found[1])
    assert at < 7 and result["depth"] == (at - 1 if at else None)
    if at:
        assert found[3] == str(at - 1)
