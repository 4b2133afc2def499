"""What `kafkarep prove` writes: the ITF file of a violation bounded model checking found, and a
counterexample to induction, a before/after pair of states in the trace format (step table and
ITF), labelled as not shown reachable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from kafkarep.model.actions import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import Step, Trace
from kafkarep.output.itf import write_trace
from kafkarep.output.steps import render
from kafkarep.symbolic.decoding import Concretiser
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.induction import Obligation
from kafkarep.symbolic.prove import Result


def write_violation(cfg: ModelConfig, result: Result, folder: Path) -> Path:
    """The ITF file of a violation bounded model checking found, replayed through the rules."""
    assert result.trace is not None and result.clause is not None
    file = folder / f"{result.clause}.itf.json"
    meta: dict[str, Any] = {
        "model": cfg.path,
        "description": cfg.description,
        "property": result.clause,
        "witness": result.witness,
        "engine": "z3-bmc",
        "depth": len(result.trace.steps),
    }
    if result.initial:
        meta["initial"] = result.initial
    write_trace(file, result.trace, meta)
    return file


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
