"""Prove a model's properties: induction first, then bounded model checking.

Per property: `proved` when every obligation of its invariants (the property's clauses and the
auxiliary invariants it needs) is discharged; otherwise bounded model checking looks for a
violation up to the depth and, when it finds one, decodes it into a concrete trace that the
rules replay (`violated`); otherwise `unknown`, naming the obligation that failed or timed out.
Bounded model checking deepens from depth 0 and stops at the first depth with a violation (a
shortest one); on a timeout it names the depth it had cleared (`bmc.check`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.engines.shorten import shorten
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import with_initial
from kafkarep.model.replay import Trace, replay_path
from kafkarep.symbolic import bmc, invariants
from kafkarep.symbolic.decoding import clause_check, concrete_trace, initial_of
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.induction import Obligation, Prover
from kafkarep.symbolic.properties import clauses_of


class Settings(NamedTuple):
    depth: int = 12
    timeout: float = 60.0  # per obligation, and for the whole BMC search (every depth)
    induction: bool = True
    bmc: bool = True
    every_initial: bool = False  # BMC from every initial state of the shape
    stop_at_failure: bool = True  # stop a property's induction at its first failed obligation
    workers: int = 1  # processes discharging induction obligations
    reports: Path = Path("reports")


class Result(NamedTuple):
    property: str
    status: str  # proved, violated, unknown, disagrees (the encoding is not the rules: nothing ran)
    method: str  # induction, bmc, induction+bmc
    depth: int | None
    seconds: float
    obligations: tuple[Obligation, ...] = ()
    failed: tuple[Obligation, ...] = ()  # obligations not discharged
    trace: Trace | None = None
    trace_file: str | None = None
    clause: str | None = None
    witness: str | None = None
    initial: dict[str, Any] | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "property": self.property,
            "status": self.status,
            "method": self.method,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "obligations": len(self.obligations),
            "obligations_proved": sum(o.status == "proved" for o in self.obligations),
        }
        if self.failed:
            out["not_discharged"] = [
                {"invariant": o.invariant, "action": o.action, "status": o.status}
                for o in self.failed
            ]
        if self.clause:
            out.update(trace_file=self.trace_file, clause=self.clause, witness=self.witness)
        if self.initial:
            out["initial"] = self.initial
        if self.note:
            out["note"] = self.note
        return out


Progress = Callable[[str], None]


def prove_property(
    cfg: ModelConfig,
    prop: str,
    settings: Settings,
    prover: Prover | None,
    progress: Progress | None = None,
) -> Result:
    started = time.monotonic()
    obligations: tuple[Obligation, ...] = ()
    failed: tuple[Obligation, ...] = ()
    if settings.induction and prover is not None:
        prover = prover.with_facts(invariants.facts_for(prop))
        names = list(invariants.needed(prop, cfg))
        obligations = tuple(prover.prove(names, settings.stop_at_failure, settings.workers))
        failed = tuple(o for o in obligations if o.status != "proved")
        if not failed:
            return Result(
                prop, "proved", "induction", None, time.monotonic() - started, obligations
            )
        if progress:
            first = failed[0]
            progress(
                f"{prop}: induction: {len(failed)} of {len(obligations)} obligations not "
                f"discharged (first: {first.invariant} under {first.action}, {first.status})"
            )
    method = "induction+bmc" if obligations else "bmc"
    if not settings.bmc:
        return Result(
            prop, "unknown", "induction", None, time.monotonic() - started, obligations, failed
        )
    left = settings.timeout
    outcome = bmc.check(
        lambda capacity: Encoding(cfg, capacity),
        clauses_of(prop, cfg),
        settings.depth,
        settings.every_initial,
        left,
    )
    if not outcome.found:
        note = (
            timed_out_note(outcome.depth)
            if outcome.timed_out
            else f"no violation within {settings.depth} steps"
        )
        return Result(
            prop,
            "unknown",
            method,
            outcome.depth if outcome.depth >= 0 else None,
            time.monotonic() - started,
            obligations,
            failed,
            note=note,
        )
    clause, cex = next(iter(outcome.found.items()))
    trace = concrete_trace(cfg, Encoding(cfg), cex)
    check = clause_check(clause, cfg)
    run_cfg = trace.cfg
    if check(run_cfg, trace.final) is None:
        raise bmc_error(clause)
    # The solver's path may take detours; shorten it by replaying subsequences (the rules decide).
    path = shorten(run_cfg, trace.path, lambda state: check(run_cfg, state) is not None)
    trace = replay_path(run_cfg, path)
    witness = check(run_cfg, trace.final)
    initial = initial_of(cfg, cex)
    return Result(
        prop,
        "violated",
        method,
        len(trace.steps),
        time.monotonic() - started,
        obligations,
        failed,
        trace,
        None,  # the command writes the trace file
        clause,
        witness,
        initial,
    )


def timed_out_note(cleared: int) -> str:
    """What a BMC search that ran out of time had settled: every depth up to `cleared` (-1:
    none) has no violation, and the next one was being asked."""
    cleared_part = f"no violation within {cleared} steps" if cleared >= 0 else "no depth cleared"
    return f"bounded model checking timed out at depth {cleared + 1}; {cleared_part}"


def bmc_error(clause: str) -> Exception:
    return AssertionError(
        f"the symbolic counterexample for {clause} does not violate it concretely: "
        "the encoding and the rules disagree"
    )


def prover_for(cfg: ModelConfig, timeout: float) -> Prover:
    invariants_of = invariants.invariants_for(cfg)
    return Prover(cfg, invariants_of, invariants.FACTS, timeout, invariants.pair)


__all__ = ["Result", "Settings", "prove_property", "prover_for", "with_initial"]
