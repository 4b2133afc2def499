"""One model run, as `kafkarep check` and `kafkarep suite` both do it: the chosen engine with
progress lines on stderr, then its traces written, its expectations judged, its verdict printed."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from kafkarep import properties
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
    chosen = properties.select(cfg.check.properties)
    trace_files = write_traces(cfg, options, exploration, console)
    results = clause_results(chosen, exploration, trace_files)
    judged = problems(cfg, exploration, sampled=options.engine in SAMPLING)
    report = ModelReport(cfg, options.engine, exploration, results, judged, {})
    verdict(report, console)
    return report
