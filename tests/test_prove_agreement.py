"""`kafkarep prove` checks that its encoding is the rules before any verdict: a rule changed on
one side only gives `disagrees` and exit 1, never `proved` (nor a bounded "no violation"); the
unchanged rules are proved."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.model import controller
from kafkarep.model.actions import lifecycle
from kafkarep.model.domain import Domain
from kafkarep.model.state import ClusterState
from kafkarep.rules.alter_partition import NO_EPOCH_CHECK
from kafkarep.rules.guards import guard
from tests.helpers import ROOT

MODEL = str(ROOT / "models" / "kip966_small.toml")


def prove(tmp_path: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    summary = tmp_path / "prove.json"
    argv = ["prove", MODEL, "--property", "min_isr_commit", "--quiet", "--json", str(summary)]
    code = main([*argv, "--reports", str(tmp_path), *flags])
    return code, json.loads(summary.read_text())["models"][0]


def commits_nothing(
    self: Domain, cfg: Any, state: ClusterState, broker_id: int, when: Any, hwm: Any
) -> ClusterState:
    """Data plane, in the explorer's domain only: the HWM moves but the ghost records no commit
    (where the HWM moves is written once; what an advance records in a state is not)."""
    return real_advance(self, cfg, state, broker_id, when, hwm)._replace(ghost=state.ghost)


real_advance = Domain.advance_hwm


def no_epochs_sent(
    self: Domain, broker_id: int, broker_epoch: Any, view: Any, isr: Any, epochs: Any, rec: Any
) -> Any:
    """AlterPartition, in the explorer's domain only: the request carries no member's broker
    epoch (what the leader proposes is written once; how the domain holds a request is not)."""
    unknown = tuple(NO_EPOCH_CHECK for _ in epochs)
    return real_request(self, broker_id, broker_epoch, view, isr, unknown, rec)


real_request = Domain.ap_request_for


@guard("unfence")
def any_broker(state: Any, broker: Any) -> bool:
    return True


CHANGES = {
    "data plane": (Domain, "advance_hwm", commits_nothing, "fetch"),
    "alter partition": (Domain, "ap_request_for", no_epochs_sent, "fetch"),
}


@pytest.mark.parametrize("area", sorted(CHANGES))
def test_a_rule_changed_on_one_side_disagrees(
    area: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module, name, wrong, family = CHANGES[area]
    monkeypatch.setattr(module, name, wrong)
    code, summary = prove(tmp_path)
    out = capsys.readouterr().out
    assert code == 1
    assert [r["status"] for r in summary["results"]] == ["disagrees"]
    assert ": proved" not in out and "no violation" not in out
    found = summary["agreement"]["disagreements"]
    assert found, summary["agreement"]
    # the message names the step, the field and both values, and the encoding to update
    first = found[0]
    assert family in first["action"] and "symbolic" in first["problem"]
    assert "concrete" in first["problem"] and first["where"].startswith("kafkarep/symbolic/")
    assert "encoding to update: kafkarep/symbolic/" in out


# Changes in what is written once: the unfence step's guard predicate, through
# `controller.caught_up` that it reads; and its enabled condition, which no longer asks that
# guard (`lifecycle.unfence_enabled`, which both sides call).
ONE_WRITING = {
    "guard predicate": (controller, "caught_up", lambda state, broker: broker.initialised),
    "enabled condition": (lifecycle, "caught_up_with_metadata", any_broker),
}


@pytest.mark.parametrize("change", sorted(ONE_WRITING))
def test_a_data_plane_condition_is_one_writing_that_prove_follows(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A guard predicate and an action's enabled condition are written once: changed, the model
    takes other steps and the prover takes the same ones, so they still agree."""
    code, before = prove(tmp_path / "before")
    assert code == 0
    module, name, changed = ONE_WRITING[change]
    monkeypatch.setattr(module, name, changed)
    code, after = prove(tmp_path / "after")
    assert after["agreement"]["disagreements"] == []
    assert after["agreement"]["steps"] != before["agreement"]["steps"]


def test_the_unchanged_rules_agree_and_are_proved(tmp_path: Path) -> None:
    code, summary = prove(tmp_path)
    assert code == 0
    assert [r["status"] for r in summary["results"]] == ["proved"]
    agreed = summary["agreement"]
    assert agreed["disagreements"] == [] and agreed["states"] >= 1000
    assert agreed["election_steps"] > 0
    assert set(agreed["families"]) >= {
        "fetch",
        "handle_alter_partition",
        "fence",
        "unfence",
        "apply_registrations",
        "replica_lag",
    }


def test_a_disagreement_also_stops_bounded_model_checking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Domain, "advance_hwm", commits_nothing)
    code, summary = prove(tmp_path, "--no-induction", "--agreement-depth", "8")
    assert code == 1 and summary["results"][0]["status"] == "disagrees"
    assert summary["agreement"]["depth"] <= 8
    assert "no violation within" not in capsys.readouterr().out


@pytest.mark.parametrize("model", ["zookeeper_unclean.toml", "kip435_plan.toml"])
def test_a_model_prove_does_not_encode_is_one_line_exit_2(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["prove", str(ROOT / "models" / model), "--property", "min_isr_commit"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and model in err[0] and "does not encode" in err[0]


@pytest.mark.parametrize(
    "option",
    [
        'truncation = "kip-101"',
        'truncation = "high-watermark"',
        "current_leader_epoch_in_fetch = false",
    ],
)
def test_a_historical_data_plane_is_refused_in_one_line(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The encoding has today's data plane only (docs/history.md)."""
    text = (ROOT / "models" / "kip966_small.toml").read_text()
    model = tmp_path / "historical.toml"
    model.write_text(text.replace("[rules]\n", f"[rules]\n{option}\n", 1))
    assert main(["prove", str(model), "--property", "min_isr_commit"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not encode" in err[0] and "truncation by leader epoch" in err[0]


# The correct model at the bounds of the elr_keeps_unclean_shutdown mutation.
LOSSY_CRASH = """
[cluster]
brokers = 3
replicas = [1, 2, 3]
isr = [1, 2]
leader = 1
min_isr = 2
fenced = [3]
records = 1
[rules]
metadata_version = "4.0"
elr = true
[faults]
lossy_unclean_shutdowns = 1
[expect]
result = "holds"
"""


@pytest.mark.slow
def test_a_controller_rule_is_one_writing_that_prove_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller rules are written once: changed, the prover proves the changed rule (the
    agreement check agrees, and BMC finds the data loss it causes); unchanged, nothing is found."""
    model = tmp_path / "lossy_crash.toml"
    model.write_text(LOSSY_CRASH)

    def bmc() -> tuple[int, dict[str, Any]]:
        summary = tmp_path / "prove.json"
        argv = ["prove", str(model), "--property", "leader_candidate_completeness", "--quiet"]
        argv += ["--no-induction", "--depth", "6", "--json", str(summary)]
        code = main([*argv, "--reports", str(tmp_path)])
        return code, json.loads(summary.read_text())["models"][0]

    code, summary = bmc()
    assert code == 1 and summary["results"][0]["status"] == "unknown"  # nothing within 6 steps

    # a replica that may have lost its log in an unclean shutdown stays in the ELR
    partition_change = importlib.import_module("kafkarep.rules.partition_change")
    keeps = partition_change.unclean_shutdown_leaves_elr._replace(check=lambda m, r, u: True)
    monkeypatch.setattr(partition_change, "unclean_shutdown_leaves_elr", keeps)
    controller.forget()  # the model caches what the rules answered
    code, summary = bmc()
    result = summary["results"][0]
    assert summary["agreement"]["disagreements"] == []
    assert result["status"] == "violated" and result["depth"] == 6
    assert main(["replay", result["trace_file"]]) == 0  # the concrete rules, changed alike
    monkeypatch.undo()
    controller.forget()
