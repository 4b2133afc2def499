"""`kafkarep prove MODEL... [--property P] [--depth K] [--json FILE]`: prove the properties by
induction with Z3, or find a violation by bounded model checking.

First, the symbolic relation is compared with the concrete rules on every state of a bounded
exploration of the model (`--agreement-depth`); if they disagree anywhere, every property is
`disagrees` and nothing is proved or searched. Then, per property: `proved` (method induction),
`violated` (a trace the concrete rules replay: `kafkarep replay` confirms it), or `unknown` (an
obligation failed or timed out, named; BMC found nothing within the depth). Exit 0 when every
model meets its [expect] (holds: every property proved; violates: each named property violated)
and its [prove] unknown notes (a property expected unknown, the obligation not discharged named:
symbolic/verdict.py), 1 when one does not (a disagreement included), 2 for bad input or a model
prove does not encode, 3 for an internal error.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, NamedTuple

from rich.console import Console
from rich.markup import escape

from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.output.proofs import counterexample_to_induction, write_violation
from kafkarep.output.steps import render
from kafkarep.output.suite import is_slow
from kafkarep.output.traces import model_slug
from kafkarep.properties.model_files import load_model
from kafkarep.symbolic import agreement
from kafkarep.symbolic.agreement import step
from kafkarep.symbolic.agreement.rules import Agreement
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from kafkarep.symbolic.properties import SUPPORTED, supported
from kafkarep.symbolic.prove import Result, Settings, prove_property, prover_for
from kafkarep.symbolic.transition import Relation
from kafkarep.symbolic.verdict import Proof, judge, unknown_notes


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "prove",
        help="prove properties by induction (Z3), or find violations by bounded model checking",
        description=__doc__,
    )
    parser.add_argument("models", nargs="+", type=Path, metavar="MODEL", help="model files (TOML)")
    parser.add_argument(
        "--property",
        action="append",
        default=None,
        metavar="P",
        help="a property to prove (repeatable; default: the model's; one of "
        + ", ".join(SUPPORTED)
        + ", or a model's own that declares its predicates)",
    )
    parser.add_argument(
        "--depth", type=int, default=None, metavar="K", help="BMC depth (default [prove] depth, 12)"
    )
    parser.add_argument(
        "--brokers",
        type=int,
        default=None,
        metavar="N",
        help="the model's shape with N brokers (default [prove] brokers, else the model's)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds per induction obligation, and for the BMC search over every depth "
        "(default [prove] timeout, 120)",
    )
    parser.add_argument(
        "--every-initial",
        action="store_true",
        help="bounded model checking from every initial state of the model's shape "
        "(default: from the model's initial state)",
    )
    parser.add_argument(
        "--agreement-depth",
        type=int,
        default=None,
        metavar="K",
        help="compare the encoding with the rules on every state to depth K first (default "
        "[prove] agreement_depth, else until 1,000 states and no new action family)",
    )
    parser.add_argument("--no-induction", action="store_true", help="bounded model checking only")
    parser.add_argument(
        "--all-obligations",
        action="store_true",
        help="check every obligation of a property (default: stop at the first not discharged)",
    )
    parser.add_argument("--no-bmc", action="store_true", help="induction only")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="W",
        help="processes discharging induction obligations (default 1)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="summary JSON (default reports/prove.json)",
    )
    parser.add_argument(
        "--reports", type=Path, default=Path("reports"), metavar="DIR", help="where traces go"
    )
    parser.add_argument("--quiet", action="store_true", help="no trace tables")
    parser.set_defaults(run=run)


def with_brokers(cfg: ModelConfig, n: int) -> ModelConfig:
    """The model's shape with n brokers: if every broker was a replica, every broker still is."""
    if n < 1 or n > 8:
        raise UsageError("--brokers must be between 1 and 8")
    if any(b > n for b in (*cfg.replicas, *cfg.isr, *cfg.fenced, cfg.leader)):
        raise UsageError(f"{cfg.path}: --brokers {n} leaves out a broker the model names")
    replicas = cfg.replicas
    if set(replicas) == set(cfg.broker_ids):
        replicas = replicas + tuple(range(len(cfg.broker_ids) + 1, n + 1))
    return cfg._replace(broker_ids=tuple(range(1, n + 1)), replicas=replicas)


def check_settings(cfg: ModelConfig) -> None:
    """The model's [prove] section, each key of the kind its flag takes."""
    for key, low, high in (("depth", 1, None), ("brokers", 1, 8), ("agreement_depth", 0, None)):
        value = cfg.setting("prove", key)
        if value is not None and (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < low
            or (high is not None and value > high)
        ):
            bound = f"from {low} to {high}" if high is not None else f">= {low}"
            raise UsageError(f"{cfg.path}: [prove] {key} must be an integer {bound}")
    timeout = cfg.setting("prove", "timeout")
    number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if timeout is not None and not (number and 0 < timeout < math.inf):
        raise UsageError(f"{cfg.path}: [prove] timeout must be a positive number of seconds")
    try:
        is_slow(cfg, "prove")  # read by `kafkarep suite --prove` only
    except ModelError as error:
        raise UsageError(str(error)) from None
    properties = cfg.setting("prove", "properties")
    if properties is not None and (
        not isinstance(properties, tuple) or not all(isinstance(p, str) for p in properties)
    ):
        raise UsageError(f"{cfg.path}: [prove] properties must be a list of property names")
    notes = unknown_notes(cfg)
    proved = selected(cfg, None) if notes else []
    for prop in notes:
        if prop not in proved:
            raise UsageError(
                f"{cfg.path}: [prove] unknown.{prop}: the model does not prove {prop} "
                f"(it proves {', '.join(proved)}): remove the note"
            )


def _setting(cfg: ModelConfig, key: str, given: Any, default: Any) -> Any:
    return given if given is not None else cfg.setting("prove", key, default)


def selected(cfg: ModelConfig, given: list[str] | None) -> list[str]:
    provable = supported(cfg)
    names = given or cfg.setting("prove", "properties") or cfg.check.properties or provable
    out: list[str] = []
    for name in names:
        prop = str(name).split(".")[0]
        if prop not in provable:
            raise UsageError(
                f"{cfg.path}: prove supports the properties {', '.join(provable)}, not {name!r}"
            )
        if prop not in out:
            out.append(prop)
    return out


class Options(NamedTuple):
    """How to prove each model: the command line's flags (None: the model's `[prove]` setting,
    else the default). `kafkarep suite --prove` proves with the defaults."""

    properties: list[str] | None = None
    depth: int | None = None
    brokers: int | None = None
    timeout: float | None = None
    agreement_depth: int | None = None
    every_initial: bool = False
    induction: bool = True
    bmc: bool = True
    all_obligations: bool = False
    workers: int = 1
    reports: Path = Path("reports")
    quiet: bool = False


def configure(cfg: ModelConfig, options: Options) -> tuple[ModelConfig, Settings]:
    """The model (with its [prove] brokers) and the settings to prove it with; a bad [prove]
    key or flag raises `UsageError`. The properties: `selected`, once prove encodes the model
    (`not_encoded`)."""
    check_settings(cfg)
    brokers = _setting(cfg, "brokers", options.brokers, None)
    if brokers is not None:
        cfg = with_brokers(cfg, int(brokers))
    settings = Settings(
        depth=int(_setting(cfg, "depth", options.depth, 12)),
        timeout=float(_setting(cfg, "timeout", options.timeout, 120.0)),
        induction=options.induction,
        bmc=options.bmc,
        every_initial=options.every_initial,
        stop_at_failure=not options.all_obligations,
        workers=options.workers,
        reports=options.reports,
    )
    return cfg, settings


def not_encoded(cfg: ModelConfig) -> str | None:
    """Why prove does not encode the model (None: it does)."""
    try:
        Relation(Encoding(cfg))
    except AbstractionError as error:
        return str(error)
    return None


def prove_model(
    cfg: ModelConfig, props: list[str], settings: Settings, options: Options, console: Console
) -> Proof:
    """Prove one model (encoded: see `not_encoded`), printing as it goes, and judge it."""
    folder = options.reports / "traces" / (model_slug(cfg) + ".prove")
    console.print(f"[bold]{cfg.path}[/bold] ({len(cfg.broker_ids)} brokers)", highlight=False)
    agreed = agree(cfg, options.agreement_depth, settings.induction, console)
    prover = None
    if settings.induction and not agreed.disagreements:
        prover = prover_for(cfg, settings.timeout)
    results = []
    for prop in props:
        if agreed.disagreements:
            results.append(disagrees(prop, agreed))
            continue
        result = prove_property(
            cfg,
            prop,
            settings,
            prover,
            lambda m: console.print("  " + m, highlight=False),
        )
        if result.status == "violated":
            result = result._replace(trace_file=str(write_violation(cfg, result, folder)))
        results.append(result)
        show(console, cfg, result, folder, options.quiet)
    proof = Proof(cfg, agreed, results, judge(cfg, results))
    verdict = "[green]expectations met[/green]" if proof.met else "[red]EXPECTATIONS NOT MET[/red]"
    console.print(f"{cfg.name}: {verdict}")
    for problem in proof.problems:
        console.print(f"  [red]x[/red] {escape(problem)}", highlight=False)
    return proof


def run(args: argparse.Namespace) -> int:
    console = Console(width=160)
    for value, flag in (
        (args.depth, "--depth"),
        (args.timeout, "--timeout"),
        (args.workers, "--workers"),
    ):
        if value is not None and not (0 < value < math.inf):
            raise UsageError(f"{flag} must be positive")
    if args.agreement_depth is not None and args.agreement_depth < 0:
        raise UsageError("--agreement-depth must be 0 or more")
    if args.no_induction and args.no_bmc:
        raise UsageError("--no-induction and --no-bmc leave nothing to do")
    try:
        configs = [load_model(path) for path in args.models]
    except ModelError as error:
        raise UsageError(str(error)) from None
    options = Options(
        properties=args.property,
        depth=args.depth,
        brokers=args.brokers,
        timeout=args.timeout,
        agreement_depth=args.agreement_depth,
        every_initial=args.every_initial,
        induction=not args.no_induction,
        bmc=not args.no_bmc,
        all_obligations=args.all_obligations,
        workers=args.workers,
        reports=args.reports,
        quiet=args.quiet,
    )
    summary: list[dict[str, Any]] = []
    out = args.json or args.reports / "prove.json"
    met_all = True
    for cfg in configs:
        cfg, settings = configure(cfg, options)
        why = not_encoded(cfg)
        if why is not None:
            raise UsageError(f"{cfg.path}: prove does not encode this model: {why}")
        props = selected(cfg, options.properties)
        proof = prove_model(cfg, props, settings, options, console)
        met_all &= proof.met
        summary.append(proof.to_json())
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"models": summary}, indent=1) + "\n")
    console.print(f"summary: {out}", highlight=False)
    return OK if met_all else EXPECTATION_NOT_MET


def agree(cfg: ModelConfig, depth: Any, elections: bool, console: Console) -> Agreement:
    """The agreement check before any verdict (`symbolic.agreement.check`), reported in one
    line; on a disagreement, what differs, where to fix it and how the state was reached."""
    given = _setting(cfg, "agreement_depth", depth, None)
    result = agreement.check(cfg, None if given is None else int(given), elections=elections)
    counts = (
        f"depth {result.depth}, {result.states:,} states, {result.pairs:,} pairs, "
        f"{result.enabled:,} steps"
    )
    if elections:
        counts += f", {result.elections:,} elections"
    if not result.disagreements:
        console.print(
            f"  agreement with the rules: [green]agrees[/green] ({counts}, {result.seconds:.1f}s)",
            highlight=False,
        )
        if result.unvisited:
            console.print(
                f"    not compared (no state within depth {result.depth} takes them): "
                + ", ".join(result.unvisited),
                highlight=False,
            )
        return result
    console.print(
        f"  agreement with the rules: [red]DISAGREES[/red] ({counts}, {result.seconds:.1f}s)\n"
        "    the encoding is not the rules here: nothing is proved or searched",
        highlight=False,
    )
    for d in result.disagreements[:5]:
        console.print(f"    {agreement.step(d.action)}: {d.problem}", highlight=False)
        if d.action is not None:
            console.print(f"      rules: {agreement.concrete_source(d.action)}", highlight=False)
        if d.where:
            console.print(f"      encoding to update: {d.where}", highlight=False)
    if len(result.disagreements) > 5:
        console.print(f"    ... and {len(result.disagreements) - 5} more", highlight=False)
    trail = ", ".join(agreement.step(a) for a in result.trail) or "(the initial state)"
    console.print(f"    the state was reached by: {trail}", highlight=False)
    return result


def disagrees(prop: str, agreed: Agreement) -> Result:
    first = agreed.disagreements[0]
    note = f"the encoding disagrees with the rules: {step(first.action)}: {first.problem}"
    return Result(prop, "disagrees", "agreement", agreed.depth, agreed.seconds, note=note)


def show(console: Console, cfg: ModelConfig, result: Result, folder: Path, quiet: bool) -> None:
    r = result
    done = sum(o.status == "proved" for o in r.obligations)
    if r.status == "proved":
        console.print(
            f"  {r.property}: [green]proved[/green] by induction: {done} obligations, "
            f"{r.seconds:.1f}s",
            highlight=False,
        )
        return
    if r.status == "disagrees":
        console.print(
            f"  {r.property}: [red]disagrees[/red]: not proved, not searched ({r.note})",
            highlight=False,
        )
        return
    if r.status == "violated":
        start = f" from initial state {r.initial}" if r.initial else ""
        console.print(
            f"  {r.property}: [red]violated[/red] ({r.clause}) at depth {r.depth}{start}, "
            f"found by bounded model checking, {r.seconds:.1f}s: {r.witness}",
            highlight=False,
        )
        if not quiet and r.trace is not None:
            render(r.trace, f"{r.clause} on {cfg.path}", r.witness, console)
        console.print(f"    reproduce: kafkarep replay {r.trace_file}", highlight=False)
    else:
        console.print(
            f"  {r.property}: [yellow]unknown[/yellow] ({r.method}, {r.seconds:.1f}s): {r.note}",
            highlight=False,
        )
    for o in r.failed:
        console.print(
            f"    not discharged: {o.invariant} under {o.action}: {o.status} ({o.seconds:.2f}s)",
            highlight=False,
        )
    first = next((o for o in r.failed if o.cti is not None), None)
    if first is not None and not quiet:
        counterexample_to_induction(cfg, first, folder, console)
