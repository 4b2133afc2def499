"""Printing and writing a counterexample to induction: a before/after pair of states in the
trace format (step table and ITF), labelled as not shown reachable."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kafkarep.model.actions import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import Step, Trace
from kafkarep.output.itf import write_trace
from kafkarep.output.steps import render
from kafkarep.symbolic.decoding import Concretiser
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.induction import Obligation, Prover

LABEL = "counterexample to induction (not shown reachable)"


def cti_trace(cfg: ModelConfig, prover_enc: Encoding, obligation: Obligation) -> Trace:
    assert obligation.cti is not None
    before, instance, after = obligation.cti
    concretiser = Concretiser(prover_enc)
    b, a = concretiser.state(before), concretiser.state(after)
    if obligation.action == "initial":
        return Trace(cfg, b, ())
    arg = instance.fixed
    action = Action(instance.family, instance.actor, arg)
    return Trace(cfg, b, (Step(-1, action, LABEL, b, a),))


def counterexample_to_induction(
    cfg: ModelConfig, obligation: Obligation, folder: Path, console: Console
) -> Path:
    enc = Encoding(cfg, abstract_history=True)
    trace = cti_trace(cfg, enc, obligation)
    what = f"{obligation.invariant} under {obligation.action}"
    render(trace, f"{LABEL}: {what}", None, console)
    file = folder / f"cti.{obligation.invariant}.{obligation.action}.itf.json"
    write_trace(
        file,
        trace,
        {
            "model": cfg.path,
            "kind": LABEL,
            "property": obligation.invariant,
            "action": obligation.action,
            "engine": "z3-induction",
        },
    )
    console.print(f"    written: {file} ({LABEL})", highlight=False)
    return file


__all__ = ["LABEL", "Prover", "counterexample_to_induction", "cti_trace"]
