"""`kafkarep replay TRACE`: re-run a counterexample through the rules and confirm it.

The trace's action-index path is replayed from the model's initial state; every replayed state
must equal the recorded one, and the recorded property clause must be violated at the end. A
liveness counterexample (a lasso, `#meta.kafkarep.loop`) must close its cycle (the last state is
the one it loops to, up to the model's sound reductions), be weakly fair (every fair unit that is
enabled in every state of the cycle is taken on it; a stutter only where no fair step is
enabled), and keep the goal false for one subject from a state where the premise holds on.
Exit 0 when confirmed, 1 when the trace no longer reproduces (the first differing step is named),
2 for a missing or malformed trace or model file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NamedTuple

from rich.console import Console

from kafkarep import properties as registry
from kafkarep.common.exit_codes import EXPECTATION_NOT_MET, OK, UsageError
from kafkarep.model.config import ModelConfig, ModelError, with_kafka_controller
from kafkarep.model.initial import with_initial
from kafkarep.model.replay import ReplayError, Trace, replay_path
from kafkarep.model.state import ClusterState
from kafkarep.oracle import kafka_controller
from kafkarep.oracle.harness import OracleError, missing
from kafkarep.output.itf import TraceFileError, read_trace, to_itf
from kafkarep.output.steps import render
from kafkarep.properties import Property
from kafkarep.properties.fairness import lasso_problem
from kafkarep.properties.model_files import load_model


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "replay",
        help="re-run an ITF counterexample through the rules and confirm the violation",
        description=__doc__,
    )
    parser.add_argument(
        "trace", type=Path, metavar="TRACE", help="an ITF trace written by kafkarep"
    )
    parser.add_argument(
        "--model", type=Path, default=None, help="the model file (default: the trace's)"
    )
    parser.add_argument("--quiet", action="store_true", help="do not print the step table")
    parser.set_defaults(run=run)


class Loaded(NamedTuple):
    """A counterexample file read, with its model, and replayed through the rules."""

    cfg: ModelConfig
    clause: str
    prop: Property | None
    check: Any  # the clause's check, or the liveness property's goal
    trace: Trace
    loop: int | None  # a lasso's loop state


class NotReproduced(Exception):
    """The trace does not replay through the rules as it was written."""


def load_counterexample(path: Path, model: Path | None) -> Loaded:
    """Read an ITF trace and its model, replay it, and check that every state is the recorded
    one. A bad file or clause is a `UsageError`; a trace the rules no longer take,
    `NotReproduced`."""
    try:
        document = read_trace(path)
    except TraceFileError as error:
        raise UsageError(str(error)) from None
    meta = document["#meta"]["kafkarep"]
    model_path = model or Path(meta["model"])
    try:
        cfg = load_model(model_path)
    except ModelError as error:
        raise UsageError(f"{error} (give the model with --model)") from None
    try:
        cfg = with_initial(cfg, meta.get("initial"))  # a trace from another initial state
    except ValueError as error:
        raise UsageError(f"{path}: #meta.kafkarep.initial: {error} in {cfg.path}") from None
    build = kafka_controller.from_trace_meta(meta)
    if build is not None:  # Kafka's classes answered the trace's controller steps
        try:
            cfg = with_kafka_controller(cfg)
            reason = missing()
            if reason is not None:
                raise OracleError(reason)
            for given in (build.kafka_jar, build.kafka_classes):
                if given is not None and not given.exists():
                    raise OracleError(f"{given} does not exist")
        except (ModelError, OracleError) as error:
            raise UsageError(f"{path}: #meta.kafkarep.controller: {error}") from None
        kafka_controller.use(build)
    elif meta.get("controller") == "rules" and cfg.options.controller == "kafka":
        cfg = cfg._replace(options=cfg.options._replace(controller="kraft"))  # `--controller rules`
    clause = meta["property"]
    known = registry.by_name(cfg)  # the built-in properties and the model's own
    check = _clause(clause, known)
    prop = known.get(clause)
    if meta.get("loop") is not None and (prop is None or not prop.liveness):
        raise UsageError(
            f"{path}: #meta.kafkarep.loop given for {clause!r}, not a liveness property"
        )
    if meta.get("loop") is None and prop is not None and prop.liveness:
        raise UsageError(f"{path}: #meta.kafkarep.loop missing for liveness property {clause!r}")
    if prop is not None and prop.liveness:
        check = prop.goal()
    if check is None:
        raise UsageError(f"{path}: #meta.kafkarep.property: unknown clause {clause!r}")
    try:
        trace = replay_path(cfg, tuple(meta["path"]))
    except ReplayError as error:
        raise NotReproduced(str(error)) from None
    recorded = document["states"]
    replayed = [trace.initial] + [step.after for step in trace.steps]
    for index, (mine, theirs) in enumerate(zip(replayed, recorded, strict=True)):
        for var in ("controller", "brokers", "ghost", "budget"):
            if to_itf(getattr(mine, var)) != theirs[var]:
                raise NotReproduced(
                    f"state {index} differs in {var!r} from the recorded trace "
                    "(the rules or the model changed since it was written)"
                )
    loop = meta.get("loop")
    return Loaded(cfg, clause, prop, check, trace, None if loop is None else int(loop))


def run(args: argparse.Namespace) -> int:
    console = Console(width=160)
    try:
        loaded = load_counterexample(args.trace, args.model)
    except NotReproduced as error:
        console.print(f"not reproduced: {error}", highlight=False)
        return EXPECTATION_NOT_MET
    cfg, clause, prop, check, trace = loaded[:5]
    if prop is not None and prop.liveness:
        assert loaded.loop is not None
        return _lasso(cfg, prop, trace, loaded.loop, args, console)
    witness = check(cfg, trace.final)
    if not args.quiet:
        render(trace, f"replay of {args.trace}: {clause} on {cfg.path}", witness, console)
    if witness is None:
        console.print(f"not reproduced: {clause} holds at the end of the trace", highlight=False)
        return EXPECTATION_NOT_MET
    console.print(
        f"confirmed: {clause} violated after {len(trace.steps)} steps: {witness}", highlight=False
    )
    return OK


def _lasso(
    cfg: ModelConfig,
    prop: Property,
    trace: Trace,
    loop: int,
    args: argparse.Namespace,
    console: Console,
) -> int:
    """Confirm a liveness counterexample: the cycle closes, is fair, and never meets the goal."""
    states = [trace.initial] + [step.after for step in trace.steps]
    if loop > len(trace.steps):
        raise UsageError(f"{args.trace}: #meta.kafkarep.loop {loop} is past the last state")
    problem = lasso_problem(cfg, states, [step.action for step in trace.steps], loop)
    subject = None if problem else _subject(cfg, prop, states, loop)
    if not args.quiet:
        render(trace, f"replay of {args.trace}: {prop.name} on {cfg.path}", None, console, loop)
    if problem is None and subject is None:
        problem = f"no subject of {prop.name} stays short of its goal on the lasso"
    if problem is not None:
        console.print(f"not reproduced: {problem}", highlight=False)
        return EXPECTATION_NOT_MET
    cycle = len(trace.steps) - loop
    shape = (
        f"a cycle of {cycle} steps back to state {loop}" if cycle else f"stuttering at state {loop}"
    )
    console.print(
        f"confirmed: {prop.name} violated for {subject}: a fair lasso of {len(trace.steps)} steps "
        f"ending in {shape}, the goal never met",
        highlight=False,
    )
    return OK


def _subject(cfg: ModelConfig, prop: Property, states: list[ClusterState], loop: int) -> str | None:
    """A subject whose goal is false from a state where its premise holds to the end (the cycle
    included), or None."""
    names = prop.subject_names(cfg)
    goal, premise = prop.goal(), prop.premise()
    goals = [goal(cfg, s) for s in states]
    premises = [premise(cfg, s) if premise else 0 for s in states]
    for bit, name in enumerate(names):
        free = [not (g >> bit) & 1 for g in goals]
        starts = [0] if premise is None else [i for i, p in enumerate(premises) if (p >> bit) & 1]
        for start in starts:
            if all(free[min(start, loop) :]):
                return name
    return None


def _clause(name: str, known: dict[str, Property]) -> Any:
    prop_name, _, clause_name = name.partition(".")
    prop = known.get(prop_name)
    if prop is None or prop.kind != "always":
        return None
    for clause in prop.clauses:
        if clause.name == clause_name:
            return clause.check
    return None
