"""One model run, as `kafkarep check` and `kafkarep suite` both do it: the chosen engine with
progress lines on stderr, then its traces written, its expectations judged, its verdict printed."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from kafkarep import properties
from kafkarep.common.exit_codes import UsageError
from kafkarep.engines.expectations import problems
from kafkarep.engines.registry import ENGINES, SAMPLING
from kafkarep.engines.results import Progress, RunOptions
from kafkarep.model.config import ModelConfig
from kafkarep.output.summary import ModelReport, clause_results
from kafkarep.output.traces import write_traces
from kafkarep.output.verdict import verdict


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
    if options.por is not None:
        cfg = cfg._replace(check=cfg.check._replace(por=options.por))
    if options.liveness:
        cfg = cfg._replace(check=cfg.check._replace(liveness=True))
    left_out = options.engine != "explorer" and _without_liveness(cfg, options)
    if left_out:
        cfg = cfg._replace(check=cfg.check._replace(liveness=False))

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
    if left_out and not options.quiet:  # after the engine: bad input stays one line
        err.print(
            f"note: {cfg.name}: liveness is checked by the explorer only; the "
            f"{options.engine} engine checked the safety properties",
            highlight=False,
        )
    chosen = properties.of_model(cfg)
    trace_files = write_traces(cfg, options, exploration, console)
    results = clause_results(chosen, exploration, trace_files)
    judged = problems(cfg, exploration, sampled=options.engine in SAMPLING)
    report = ModelReport(cfg, options.engine, exploration, results, judged, {})
    verdict(report, console)
    return report


def _without_liveness(cfg: ModelConfig, options: RunOptions) -> bool:
    """Only the explorer checks liveness (docs/liveness.md). Asked for on the command line or by
    name, another engine refuses; a model file's `[check] liveness = true` is left out (True),
    with a note, so the model's safety properties can still be sampled or distributed."""
    named = [n for n in cfg.check.properties or () if n in properties.BY_NAME]
    asked = [n for n in named if properties.BY_NAME[n].liveness]
    if options.liveness or asked:
        names = ", ".join(asked) or "--liveness"
        raise UsageError(
            f"{cfg.path}: the {options.engine} engine does not check liveness ({names}); "
            "the explorer does (docs/liveness.md)"
        )
    return cfg.check.liveness
