"""The suite as one self-contained HTML page: no script, no network, nothing to install.

`index.html` holds the summary table (the terminal's), then per model its verdict, its
problems, its prove verdict (`--prove`), one row per test case (the JUnit cases, prove's included)
and per counterexample the trace picture
(`output/svg.py`, inline SVG), the witness, the replay command and the text step table in a
`<details>` element. Each picture is also written beside the page as `svg/<model>/<n>.svg`.
"""

from __future__ import annotations

import os
import re
import time
from html import escape
from pathlib import Path
from typing import Any

from kafkarep.common.exit_codes import BAD_INPUT, EXPECTATION_NOT_MET, INTERNAL_ERROR, OK
from kafkarep.engines.expectations import scope as search_scope
from kafkarep.output.suite import (
    MET,
    NOT_MET,
    SKIPPED,
    Entry,
    Row,
    cases,
    seconds_change,
    signed,
    states_change,
    summary_row,
)
from kafkarep.output.summary import controller_label
from kafkarep.output.svg import trace_svg

EXIT_MEANING = {
    OK: "every expectation met",
    EXPECTATION_NOT_MET: "an expectation not met",
    BAD_INPUT: "a model could not run (engine unavailable) or bad input",
    INTERNAL_ERROR: "an internal error",
}

CSS = """
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; margin: 24px; color: #212529;
  background: #ffffff; }
h1 { font-size: 24px; margin: 0 0 4px 0; }
h2 { font-size: 19px; margin: 0 0 6px 0; }
h3 { font-size: 15px; margin: 18px 0 4px 0; }
code, pre, .mono { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f8f9fa; border: 1px solid #dee2e6; padding: 8px; overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 14px 0; }
th, td { border: 1px solid #dee2e6; padding: 3px 8px; text-align: left; vertical-align: top;
  font-size: 13px; }
th { background: #f1f3f5; }
td.num { text-align: right; font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; }
.badge { display: inline-block; border-radius: 10px; padding: 1px 9px; font-size: 12px;
  font-weight: bold; color: #ffffff; }
.met, .passed { background: #2f9e44; }
.not-met, .failed { background: #e03131; }
.skipped, .not-encoded { background: #868e96; }
.unavailable, .error { background: #f08c00; }
section.model { border: 1px solid #dee2e6; border-radius: 8px; padding: 14px 16px;
  margin: 18px 0; }
section.model.bad { border-color: #e03131; border-width: 2px; }
.problems li { color: #c92a2a; }
.dim { color: #868e96; }
.picture { overflow-x: auto; border: 1px solid #e9ecef; border-radius: 6px; }
figure { margin: 6px 0 10px 0; }
figcaption { font-size: 13px; margin: 4px 0; }
"""


def _slug(entry: Entry) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", entry.path.with_suffix("").as_posix()).strip("-")


def _badge(outcome: str) -> str:
    label = {MET: "expectations met", NOT_MET: "EXPECTATIONS NOT MET"}.get(outcome, outcome)
    return f'<span class="badge {outcome.replace(" ", "-")}">{escape(label)}</span>'


def _cell(value: Any, numeric: bool = False) -> str:
    text = "-" if value is None else value
    return (
        f'<td class="num">{escape(str(text))}</td>' if numeric else f"<td>{escape(str(text))}</td>"
    )


def _summary(rows: list[Row], slugs: list[str], with_trend: bool) -> str:
    head = ["model", "engine", "verdict", "distinct states", "depth", "seconds", "vs pinned"]
    with_prove = any(row.prove_outcome is not None for row in rows)
    if with_trend:
        head += ["states vs baseline", "seconds vs baseline"]
    if with_prove:
        head.append("prove")
    head.append("note")
    out = ["<table class=summary><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for row, slug in zip(rows, slugs, strict=True):
        cells = [
            f'<td><a href="#{slug}">{escape(row.model)}</a></td>',
            _cell(row.engine),
            f"<td>{_badge(row.outcome)}</td>",
            _cell(f"{row.distinct:,}" if row.distinct is not None else None, True),
            _cell(row.depth, True),
            _cell(f"{row.seconds:.1f}" if row.seconds is not None else None, True),
            _cell(signed(row.pinned_change), True),
        ]
        if with_trend:
            ran = row.distinct is not None
            cells.append(_cell(states_change(row.trend) if ran else None, True))
            cells.append(_cell(seconds_change(row.trend) if ran else None, True))
        if with_prove:
            cells.append(_prove_cell(row))
        cells.append(_cell(row.note))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _prove_cell(row: Row) -> str:
    if row.prove_outcome is None:
        return _cell(None)
    counts = row.prove.partition(": ")[2]
    return f"<td>{_badge(row.prove_outcome)} {escape(counts)}</td>"


def _model(entry: Entry, slug: str, folder: Path, svg_dir: Path) -> str:
    proof = entry.proof
    bad = entry.outcome not in (MET, SKIPPED) or (proof is not None and proof.outcome == NOT_MET)
    out = [f'<section class="model{" bad" if bad else ""}" id="{slug}">']
    out.append(f"<h2>{escape(entry.name)} {_badge(entry.outcome)}</h2>")
    facts = [f"<code>{escape(str(entry.path))}</code>", f"engine {escape(entry.engine)}"]
    if entry.cfg is not None:
        facts.append(f"controller: {escape(controller_label(entry.cfg))}")
    e = entry.exploration
    if e is not None:
        scope = search_scope(entry.cfg, e) or f"stopped: {e.stop_reason}"
        facts.append(
            f"{e.distinct_states:,} distinct / {e.generated_states:,} generated states, "
            f"depth {e.depth}, {e.seconds:.1f}s, {escape(scope)}"
        )
    out.append("<p>" + " · ".join(facts) + "</p>")
    if entry.cfg is not None and entry.cfg.description:
        out.append(f'<p class="dim">{escape(entry.cfg.description)}</p>')
    if entry.note:
        out.append(f"<p>{escape(entry.note)}</p>")
    if entry.report is not None and entry.report.problems:
        out.append("<ul class=problems>")
        out += [f"<li>{escape(p)}</li>" for p in entry.report.problems]
        out.append("</ul>")
    if proof is not None:
        out.append(f"<p>prove {_badge(proof.outcome)} {escape(proof.counts())}")
        out.append(f"· {proof.seconds:.1f}s</p>")
        if proof.problems:
            out.append("<ul class=problems>")
            out += [f"<li>prove: {escape(p)}</li>" for p in proof.problems]
            out.append("</ul>")
    out.append("<table class=cases><tr><th>case</th><th>result</th><th>what happened</th></tr>")
    for case in cases(entry) + (proof.cases() if proof is not None else []):
        out.append(
            f"<tr><td class=mono>{escape(case.name)}</td><td>{_badge(case.outcome)}</td>"
            f"<td>{escape(case.message)}</td></tr>"
        )
    out.append("</table>")
    for number, cx in enumerate(entry.counterexamples, 1):
        kind = "expected" if cx.expected else "UNEXPECTED"
        out.append(
            f"<h3>{escape(', '.join(cx.clauses))} violated at depth {cx.depth} "
            f'<span class="badge {"passed" if cx.expected else "failed"}">{kind}</span></h3>'
        )
        svg = trace_svg(cx.trace, cx.clauses, cx.witness, f"{slug}-{number}", cx.loop)
        file = svg_dir / slug / f"{number}.svg"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + svg + "\n")
        out.append(f'<figure><div class="picture">{svg}</div><figcaption>')
        out.append(f"violated: {escape(cx.witness)}<br>")
        links = [f"<a href='{escape(_relative(file, folder))}'>picture (SVG)</a>"]
        for trace_file in cx.files:
            links.append(f"<a href='{escape(_relative(Path(trace_file), folder))}'>ITF trace</a>")
        if cx.files:
            links.append(f"reproduce: <code>kafkarep replay {escape(cx.files[0])}</code>")
        token = "/".join(map(str, cx.trace.path)) or "(initial state)"
        links.append(f"replay token <code>{escape(token)}</code>")
        out.append(" · ".join(links) + "</figcaption></figure>")
        out.append(
            f"<details><summary>step table (text)</summary><pre>{escape(cx.text())}</pre></details>"
        )
    out.append("</section>")
    return "\n".join(out)


def _relative(target: Path, folder: Path) -> str:
    return Path(os.path.relpath(target.resolve(), folder.resolve())).as_posix()


def render_html(
    entries: list[Entry],
    folder: Path,
    exit_code: int,
    baseline: dict[str, dict[str, Any]] | None = None,
    seconds: float = 0.0,
) -> str:
    slugs = [_slug(e) for e in entries]
    rows = [summary_row(e, baseline) for e in entries]
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.outcome] = counts.get(entry.outcome, 0) + 1
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    tally = ", ".join(f"{n} {outcome}" for outcome, n in counts.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        "<title>kafkarep suite report</title>",
        f"<style>{CSS}</style></head><body>",
        "<header><h1>kafkarep suite</h1>",
        f"<p>{len(entries)} model(s): {escape(tally)} · {seconds:.1f}s · {escape(stamp)}</p>",
        f"<p>exit code <b>{exit_code}</b>: {escape(EXIT_MEANING.get(exit_code, '?'))}</p>",
        "</header>",
        _summary(rows, slugs, baseline is not None),
    ]
    svg_dir = folder / "svg"
    for entry, slug in zip(entries, slugs, strict=True):
        parts.append(_model(entry, slug, folder, svg_dir))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_html(
    folder: Path,
    entries: list[Entry],
    exit_code: int,
    baseline: dict[str, dict[str, Any]] | None = None,
    seconds: float = 0.0,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "index.html"
    page.write_text(render_html(entries, folder, exit_code, baseline, seconds))
    return page
