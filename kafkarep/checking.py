"""Run a model with an engine, write its traces, judge its expectations, print what a person
needs: progress, the counterexample tables, the replay command, the verdict."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

import properties as registry
from kafkarep.engines.expectations import problems
from kafkarep.engines.explorer import Explorer, default_workers
from kafkarep.engines.results import Discovery, Exploration, Limits, Progress, RunOptions
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import replay_path
from kafkarep.output.itf import write_trace
from kafkarep.output.steps import render
from kafkarep.output.summary import ModelReport, clause_results

Engine = Callable[[ModelConfig, RunOptions, Callable[[Progress], None] | None], Exploration]


def explore(
    cfg: ModelConfig, options: RunOptions, progress: Callable[[Progress], None] | None
) -> Exploration:
    limits = options.limits or Limits(
        cfg.check.max_states, cfg.check.max_depth, cfg.check.max_seconds
    )
    symmetry = cfg.check.symmetry if options.symmetry is None else options.symmetry
    explorer = Explorer(
        cfg,
        registry.select(cfg.check.properties),
        limits,
        stop_when_found=[name for name, _ in cfg.expect.violates],
        progress=progress,
        symmetry=symmetry,
        workers=options.workers or default_workers(),
        spill_after=dict(options.engine_args).get("spill_after"),
    )
    return explorer.run()


def _lazy(module: str, attribute: str = "explore") -> Engine:
    """An engine whose module (and its heavy imports: pyspark, hypothesis) loads on first use."""

    def run(
        cfg: ModelConfig, options: RunOptions, progress: Callable[[Progress], None] | None
    ) -> Exploration:
        import importlib

        engine: Engine = getattr(importlib.import_module(module), attribute)
        return engine(cfg, options, progress)

    return run


ENGINES: dict[str, Engine] = {
    "explorer": explore,
    "spark": _lazy("kafkarep.engines.spark"),
    "hypothesis": _lazy("kafkarep.engines.hypothesis_machine"),
}


# Engines that sample histories instead of exhausting them (expectations.problems judges them so).
SAMPLING = frozenset({"hypothesis"})


def model_slug(cfg: ModelConfig) -> str:
    path = Path(cfg.path)
    parts = [p for p in path.with_suffix("").parts if p not in (".", "models")]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts[-2:])) or cfg.name


def run_model(
    cfg: ModelConfig,
    options: RunOptions,
    console: Console,
    err: Console,
    progress: Callable[[Progress], None] | None = None,
) -> ModelReport:
    """Run, write traces, judge, print the verdict; `progress` replaces the progress lines."""
    engine = ENGINES[options.engine]
    if options.reduction is not None:
        cfg = cfg._replace(check=cfg.check._replace(reduction=options.reduction))

    def show(p: Progress) -> None:
        if options.quiet:
            return
        rate = p.distinct / p.seconds if p.seconds > 0 else 0.0
        state = "done" if p.done else "exploring"
        err.print(
            f"  {cfg.name}: {state} {p.distinct:,} distinct, {p.generated:,} generated, "
            f"depth {p.depth}, queue {p.queue:,}, {rate:,.0f} states/s, {p.seconds:.1f}s",
            highlight=False,
        )

    exploration = engine(cfg, options, progress or show)
    chosen = registry.select(cfg.check.properties)
    trace_files = write_traces(cfg, options, exploration, console)
    results = clause_results(chosen, exploration, trace_files)
    judged = problems(cfg, exploration, sampled=options.engine in SAMPLING)
    report = ModelReport(cfg, options.engine, exploration, results, judged, {})
    verdict(report, console)
    return report


def write_traces(
    cfg: ModelConfig, options: RunOptions, exploration: Exploration, console: Console
) -> dict[str, str]:
    """One ITF file per violated clause; one printed table per distinct path."""
    files: dict[str, str] = {}
    by_path: dict[tuple[int, ...], list[Discovery]] = {}
    for discovery in exploration.violations.values():
        by_path.setdefault(discovery.path, []).append(discovery)
    folder = options.reports / "traces" / model_slug(cfg)
    for path, discoveries in sorted(by_path.items(), key=lambda item: (len(item[0]), item[0])):
        trace = replay_path(cfg, path)
        for d in discoveries:
            file = folder / f"{d.name}.itf.json"
            write_trace(
                file,
                trace,
                {
                    "model": cfg.path,
                    "description": cfg.description,
                    "property": d.name,
                    "witness": d.witness,
                    "engine": options.engine,
                    "depth": d.depth,
                    "distinct_states": exploration.distinct_states,
                },
            )
            files[d.name] = str(file)
        if options.quiet:
            continue
        names = ", ".join(d.name for d in discoveries)
        render(
            trace,
            f"{cfg.name}: {names} violated at depth {len(path)} "
            f"(engine {options.engine}, {exploration.distinct_states:,} states explored)",
            "; ".join(d.witness or "" for d in discoveries),
            console,
        )
        console.print(
            f"replay token: {'/'.join(map(str, path)) or '(initial state)'}", highlight=False
        )
        console.print(
            f"reproduce:    kafkarep replay {files[discoveries[0].name]}", highlight=False
        )
    return files


def verdict(report: ModelReport, console: Console) -> None:
    e = report.exploration
    status = (
        "[green]expectations met[/green]"
        if report.expectations_met
        else "[red]EXPECTATIONS NOT MET[/red]"
    )
    scope = "complete" if e.complete else f"incomplete ({e.stop_reason})"
    console.print(
        f"{report.cfg.name}: {status}: {e.distinct_states:,} distinct / {e.generated_states:,} "
        f"generated states, depth {e.depth}, {e.seconds:.1f}s on {e.cores} core(s), {scope}; "
        f"fingerprint collision probability {e.collision_probability:.1e}"
    )
    for result in report.results:
        if result.status == "violated":
            console.print(
                f"  {result.property}: violated at depth {result.trace_length}", highlight=False
            )
    reached = [r.property for r in report.results if r.status == "reached"]
    missing = [r.property for r in report.results if r.status == "not_reached"]
    if reached:
        console.print(f"  reached: {', '.join(reached)}", highlight=False)
    if missing:
        console.print(f"  never reached: {', '.join(missing)}", highlight=False)
    for name, value in e.details:
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
        console.print(f"  {name}: {value}", highlight=False)
    for problem in report.problems:
        console.print(f"  [red]x[/red] {escape(problem)}", highlight=False)
