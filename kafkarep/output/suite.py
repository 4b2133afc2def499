"""A suite: many models run in one process, each judged against its own [expect].

This module holds what the command, the JUnit writer and the HTML report share: which model files
a suite takes, one `Entry` per model (met, not met, skipped, unavailable, error), its
counterexamples replayed once, its test cases (one per property clause, plus the model-level
`state_space` case), the summary JSON and the trend against a previous run's summary. With
`--prove`, an entry also holds the model's prove (`suite_proofs.py`: its column, cases, JSON).
"""

from __future__ import annotations

import fnmatch
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.console import Console

from kafkarep.common import shape
from kafkarep.common.files import read_json
from kafkarep.engines.expectations import matches, settled
from kafkarep.engines.expectations import scope as search_scope
from kafkarep.engines.results import Exploration
from kafkarep.model.config import ModelConfig, ModelError
from kafkarep.model.replay import Trace, replay_path
from kafkarep.output.steps import render
from kafkarep.output.summary import ModelReport

if TYPE_CHECKING:
    from kafkarep.output.suite_proofs import Proved

MET, NOT_MET, SKIPPED, UNAVAILABLE, ERROR = "met", "not met", "skipped", "unavailable", "error"
STATE_SPACE = "state_space"  # the model-level case: pinned distinct states, a conclusive search
RUN = "run"  # the only case of a model that did not run


class Selected(NamedTuple):
    path: Path
    named: bool  # named on the command line (not found in a directory): never skipped as slow
    excluded_by: str | None  # the --exclude pattern that matched


class Counterexample(NamedTuple):
    clauses: tuple[str, ...]  # every clause violated at the end of this path
    witness: str
    trace: Trace
    expected: bool  # the model expects each of these violations
    files: tuple[str, ...]  # the ITF traces
    loop: int | None = None  # a lasso's: the state its last step returns to

    @property
    def depth(self) -> int:
        return len(self.trace.steps)

    def text(self, width: int = 150) -> str:
        """The step table `kafkarep check` prints, as plain text."""
        out = io.StringIO()
        console = Console(file=out, width=width, color_system=None, force_terminal=False)
        title = f"{', '.join(self.clauses)} violated at depth {self.depth}"
        render(self.trace, title, self.witness, console, self.loop)
        if self.files:
            console.print(f"reproduce: kafkarep replay {self.files[0]}", highlight=False)
        return out.getvalue()


class Entry(NamedTuple):
    """One model of a suite and what became of it."""

    path: Path
    cfg: ModelConfig | None
    engine: str
    outcome: str  # MET, NOT_MET, SKIPPED, UNAVAILABLE or ERROR
    note: str = ""  # why it was skipped, or the error
    report: ModelReport | None = None
    counterexamples: tuple[Counterexample, ...] = ()
    wall_seconds: float = 0.0
    proof: Proved | None = None  # `--prove`: the model's prove (output/suite_proofs.py)

    @property
    def name(self) -> str:
        return self.cfg.name if self.cfg else self.path.stem

    @property
    def exploration(self) -> Exploration | None:
        return self.report.exploration if self.report else None


class Case(NamedTuple):
    """A JUnit test case: one property clause (or the model as a whole) of one model."""

    name: str
    outcome: str  # "passed", "failed", "skipped" or "error"
    message: str  # one line
    details: str = ""  # the problems, the counterexample table, the replay command
    seconds: float | None = None  # None: the model's (its `state_space` and `run` cases)


class Trend(NamedTuple):
    states_before: int
    states_after: int
    seconds_before: float
    seconds_after: float


# --- which models ---------------------------------------------------------------------------


def select(targets: Iterable[Path], exclude: Iterable[str] = ()) -> list[Selected]:
    """Model files under each directory (recursively, sorted) and each named file, once each."""
    patterns = tuple(exclude)
    out: list[Selected] = []
    seen: set[Path] = set()
    for target in targets:
        if target.is_dir():
            found = [(p, False) for p in sorted(target.rglob("*.toml"))]
            if not found:
                raise ModelError(f"{target}: no model files (*.toml) in this directory")
        elif target.is_file():
            found = [(target, True)]
        else:
            raise ModelError(f"{target}: no such model file or directory")
        for path, named in found:
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            out.append(Selected(path, named, _excluded_by(path, patterns)))
    return out


def _excluded_by(path: Path, patterns: tuple[str, ...]) -> str | None:
    """A pattern matches the file name, or any tail of its path (`mutations/*`, `*shipped*`)."""
    parts = path.as_posix().split("/")
    tails = ["/".join(parts[i:]) for i in range(len(parts))] + [path.stem]
    for pattern in patterns:
        if any(fnmatch.fnmatchcase(tail, pattern) for tail in tails):
            return pattern
    return None


def is_slow(cfg: ModelConfig, section: str = "suite") -> bool:
    """`[suite] slow = true`: the suite runs the model only with --slow or when it is named;
    `[prove] slow = true`: the same for the model's proof under `--prove`."""
    slow = cfg.setting(section, "slow", False)
    if not isinstance(slow, bool):
        raise ModelError(f"{cfg.path}: [{section}] slow must be true or false")
    return slow


# --- counterexamples ------------------------------------------------------------------------


def counterexamples(report: ModelReport) -> tuple[Counterexample, ...]:
    """Each distinct violating path, replayed once through the rules (shortest first)."""
    cfg = report.cfg
    files = {r.property: r.trace_file for r in report.results if r.trace_file}
    by_path: dict[tuple[tuple[int, ...], int | None], list[str]] = {}
    witnesses: dict[str, str] = {}
    for clause, discovery in report.exploration.violations.items():
        by_path.setdefault((discovery.path, discovery.loop), []).append(clause)
        witnesses[clause] = discovery.witness or ""
    expected = [name for name, _ in cfg.expect.violates]
    out = []
    ordered = sorted(
        by_path.items(), key=lambda item: (len(item[0][0]), item[0][0], item[0][1] or 0)
    )
    for (path, loop), clauses in ordered:
        clauses = sorted(clauses)
        out.append(
            Counterexample(
                tuple(clauses),
                "; ".join(witnesses[c] for c in clauses if witnesses[c]),
                replay_path(cfg, path),
                all(any(matches(name, c) for name in expected) for c in clauses),
                tuple(files[c] for c in clauses if c in files),
                loop,
            )
        )
    return tuple(out)


# --- test cases -------------------------------------------------------------------------------


def cases(entry: Entry) -> list[Case]:
    """The model's test cases: one per clause (and per property its [expect] names), and
    `state_space`; every problem of the run fails exactly one of them."""
    report = entry.report
    if report is None:
        outcome = "skipped" if entry.outcome == SKIPPED else "error"
        return [Case(RUN, outcome, entry.note or entry.outcome)]
    cfg = report.cfg
    names = [r.property for r in report.results]
    names += [name for name, _ in cfg.expect.violates if name not in names]
    assigned = assign_problems(report.problems, names)
    by_clause = {c: cx for cx in entry.counterexamples for c in cx.clauses}
    results = {r.property: r for r in report.results}
    expected_depth = dict(cfg.expect.violates)
    out = []
    for name in names:
        problems = assigned.get(name, [])
        result = results.get(name)
        trace = by_clause.get(name)
        if result is None:  # a whole property the model expects to be violated
            hits = [
                r for r in report.results if r.status == "violated" and matches(name, r.property)
            ]
            trace = by_clause.get(hits[0].property) if hits else None
            summary = (
                f"violated at depth {min(r.trace_length or 0 for r in hits)}, as expected"
                if hits
                else "not violated"
            )
        elif result.status == "violated":
            expected = any(matches(e, name) for e in expected_depth)
            summary = f"violated at depth {result.trace_length}" + (
                ", as expected" if expected else ""
            )
        elif result.status == "reached":
            summary = f"reached at depth {result.trace_length}"
        elif result.status == "not_reached":
            summary = "never reached" + ("" if name in cfg.expect.reached else " (not required)")
        elif result.status == "unknown":  # a liveness property an incomplete search cannot decide
            summary = result.witness or "not decided"
        else:
            summary = "holds"
        details = "\n".join(problems)
        if trace is not None:
            details = (details + "\n\n" if details else "") + trace.text()
        if problems:
            out.append(Case(name, "failed", problems[0], details))
        elif result is not None and result.status == "unknown":
            out.append(Case(name, "skipped", summary, details))
        else:
            out.append(Case(name, "passed", summary, details))
    e = report.exploration
    pinned = cfg.expect.distinct_states
    summary = f"{e.distinct_states:,} distinct states, depth {e.depth}, " + (
        search_scope(cfg, e) or f"stopped: {e.stop_reason}"
    )
    if pinned is not None:
        summary += f"; pinned {pinned:,}"
    problems = assigned.get(STATE_SPACE, [])
    out.append(
        Case(STATE_SPACE, "failed", problems[0], "\n".join(problems))
        if problems
        else Case(STATE_SPACE, "passed", summary)
    )
    return out


def assign_problems(problems: Iterable[str], names: list[str]) -> dict[str, list[str]]:
    """Give each problem to the clause or property it is about: the name it mentions first
    (the longest at the same place); a problem that names none is about the state space."""
    patterns = [(name, re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)(?!\.\w)")) for name in names]
    out: dict[str, list[str]] = {}
    for problem in problems:
        best: tuple[int, int, str] | None = None
        for name, pattern in patterns:
            found = pattern.search(problem)
            if found and (best is None or (found.start(), -len(name)) < best[:2]):
                best = (found.start(), -len(name), name)
        out.setdefault(best[2] if best else STATE_SPACE, []).append(problem)
    return out


# --- numbers --------------------------------------------------------------------------------


def pinned_change(entry: Entry) -> int | None:
    e = entry.exploration
    if entry.cfg is None or e is None or entry.cfg.expect.distinct_states is None:
        return None
    if not settled(entry.cfg, e):
        return None
    return e.distinct_states - entry.cfg.expect.distinct_states


def suite_document(entries: list[Entry], exit_code: int, seconds: float) -> dict[str, Any]:
    """The summary JSON: `models` as `kafkarep check` writes them (so either can be a
    baseline), plus the models that did not run."""
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.outcome] = counts.get(entry.outcome, 0) + 1
    return {
        "suite": {"exit_code": exit_code, "seconds": round(seconds, 3), "outcomes": counts},
        "models": [
            {
                **e.report.to_json(),
                "outcome": e.outcome,
                "wall_seconds": round(e.wall_seconds, 3),
                **_prove_json(e),
            }
            for e in entries
            if e.report is not None
        ],
        "not_run": [
            {
                "model": str(e.path),
                "engine": e.engine,
                "outcome": e.outcome,
                "reason": e.note,
                **_prove_json(e),
            }
            for e in entries
            if e.report is None
        ],
    }


def _prove_json(entry: Entry) -> dict[str, Any]:
    return {"prove": entry.proof.to_json()} if entry.proof is not None else {}


def write_document(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")


def read_baseline(path: Path) -> dict[str, dict[str, Any]]:
    """A previous summary JSON (`kafkarep check` or `kafkarep suite`): its models by file, each
    checked for what the trend reads (the model's file, its distinct states and seconds)."""
    document = read_json(path, "baseline", ModelError)
    top = shape.at(path, ModelError)
    models = shape.field(shape.obj(document, top), "models", top, shape.array)
    out: dict[str, dict[str, Any]] = {}
    for index, model in enumerate(models):
        where = top.key("models").index(index)
        shape.obj(model, where)
        name = shape.field(model, "model", where, shape.text)
        shape.field(model, "distinct_states", where, shape.at_least(0))
        shape.field(model, "seconds", where, shape.number)
        out[_key(name)] = model
    return out


def _key(path: str) -> str:
    return Path(path).as_posix().removeprefix("./")


def trend(entry: Entry, baseline: dict[str, dict[str, Any]]) -> Trend | None:
    e = entry.exploration
    before = baseline.get(_key(str(entry.path)))
    if e is None or before is None:
        return None
    return Trend(before["distinct_states"], e.distinct_states, before["seconds"], e.seconds)


# --- the summary table ----------------------------------------------------------------------


class Row(NamedTuple):
    """One line of the summary (terminal and HTML)."""

    model: str
    engine: str
    outcome: str
    distinct: int | None
    depth: int | None
    seconds: float | None
    pinned_change: int | None  # distinct states minus the model's pinned count
    trend: Trend | None
    note: str
    prove_outcome: str | None = None  # `--prove`: met, not met, not encoded or error
    prove: str = "-"  # `--prove`: the outcome and the verdicts, `met: 3 proved`


def summary_row(entry: Entry, baseline: dict[str, dict[str, Any]] | None = None) -> Row:
    e = entry.exploration
    if entry.report is not None and entry.report.problems:
        problems = entry.report.problems
        note = problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
    elif entry.report is not None and entry.counterexamples:
        found = sorted({c for cx in entry.counterexamples for c in cx.clauses})
        note = "violates as expected: " + ", ".join(found)
    else:
        note = entry.note
    proof = entry.proof
    if proof is not None and proof.problems and not (entry.report and entry.report.problems):
        more = len(proof.problems) - 1
        note = f"prove: {proof.problems[0]}" + (f" (+{more} more)" if more else "")
    return Row(
        str(entry.path),
        entry.engine,
        entry.outcome,
        e.distinct_states if e else None,
        e.depth if e else None,
        e.seconds if e else None,
        pinned_change(entry),
        trend(entry, baseline) if baseline is not None else None,
        note,
        proof.outcome if proof is not None else None,
        proof.cell() if proof is not None else "-",
    )


def signed(value: int | None) -> str:
    if value is None:
        return "-"
    return f"{value:+,}" if value else "0"


def states_change(t: Trend | None) -> str:
    if t is None:
        return "new"
    change = t.states_after - t.states_before
    if not change:
        return "0"
    percent = f" ({change / t.states_before:+.1%})" if t.states_before else ""
    return f"{change:+,}{percent}"


def seconds_change(t: Trend | None) -> str:
    if t is None:
        return "new"
    change = t.seconds_after - t.seconds_before
    percent = f" ({change / t.seconds_before:+.0%})" if t.seconds_before >= 0.05 else ""
    return f"{change:+.1f}s{percent}"
