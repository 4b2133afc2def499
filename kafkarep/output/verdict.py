"""A model's verdict on the console: expectations met or not, the search's size and scope, the
clauses violated, reached and never reached, the engine's details and every problem."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from kafkarep.engines.expectations import scope as search_scope
from kafkarep.output.summary import ModelReport


def verdict(report: ModelReport, console: Console) -> None:
    e = report.exploration
    status = (
        "[green]expectations met[/green]"
        if report.expectations_met
        else "[red]EXPECTATIONS NOT MET[/red]"
    )
    scope = search_scope(report.cfg, e) or f"incomplete ({e.stop_reason})"
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
