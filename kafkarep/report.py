"""Judging a run against the model's declared expectations, and the summary JSON.

Summary JSON, per model: `model`, `engine`, `distinct_states`, `generated_states`, `depth`,
`seconds`, `complete`, `expectations_met`, `problems` (why an expectation was not met) and
`results`: one `{property, status, trace_file, trace_length}` per clause, status `holds`,
`violated`, `reached` or `not_reached`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.engines.results import Exploration
from kafkarep.model.config import ModelConfig
from properties import Property


class ClauseResult(NamedTuple):
    property: str
    status: str
    trace_file: str | None = None
    trace_length: int | None = None
    witness: str | None = None


class ModelReport(NamedTuple):
    cfg: ModelConfig
    engine: str
    exploration: Exploration
    results: tuple[ClauseResult, ...]
    problems: tuple[str, ...]
    extra: dict[str, Any]

    @property
    def expectations_met(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        e = self.exploration
        return {
            "model": self.cfg.path,
            "name": self.cfg.name,
            "engine": self.engine,
            "distinct_states": e.distinct_states,
            "generated_states": e.generated_states,
            "depth": e.depth,
            "seconds": round(e.seconds, 3),
            "complete": e.complete,
            "stop_reason": e.stop_reason,
            "cores": e.cores,
            "fingerprint_collision_probability": e.collision_probability,
            "seen_set_bytes": e.seen_bytes,
            "parent_link_bytes_on_disk": e.links_bytes,
            "expectations_met": self.expectations_met,
            "problems": list(self.problems),
            **({"details": dict(e.details)} if e.details else {}),
            "results": [
                {
                    "property": r.property,
                    "status": r.status,
                    "trace_file": r.trace_file,
                    "trace_length": r.trace_length,
                    **({"witness": r.witness} if r.witness else {}),
                }
                for r in self.results
            ],
            **self.extra,
        }


def matches(expected: str, clause: str) -> bool:
    """An expectation names a property (any of its clauses) or one clause."""
    return clause == expected or clause.startswith(expected + ".")


def clause_results(
    properties: tuple[Property, ...], exploration: Exploration, trace_files: dict[str, str]
) -> tuple[ClauseResult, ...]:
    results = []
    for prop in properties:
        if prop.kind == "sometimes":
            found = exploration.reached.get(prop.name)
            status = "reached" if found else "not_reached"
            results.append(ClauseResult(prop.name, status, None, found.depth if found else None))
            continue
        for clause in prop.clauses:
            name = prop.qualified(clause)
            violation = exploration.violations.get(name)
            if violation is None:
                results.append(ClauseResult(name, "holds"))
            else:
                results.append(
                    ClauseResult(
                        name, "violated", trace_files.get(name), violation.depth, violation.witness
                    )
                )
    return tuple(results)


def problems(
    cfg: ModelConfig, exploration: Exploration, pin_states: bool = True, sampled: bool = False
) -> tuple[str, ...]:
    """Every way the run differs from what the model file expects (empty: all met).

    A `sampled` run (the Hypothesis engine) never completes: spending its budget without a
    violation meets `holds`, its state count is not compared with the pin, and a trace it found
    may be longer than the pinned shortest depth, up to twice that, never shorter."""
    expect = cfg.expect
    found = exploration.violations
    out: list[str] = []
    expected_names = [name for name, _ in expect.violates]
    for name, depth in expect.violates:
        hits = [d for clause, d in found.items() if matches(name, clause)]
        if not hits:
            why = "" if exploration.complete else f" (search incomplete: {exploration.stop_reason})"
            out.append(f"expected a violation of {name}; none found{why}")
            continue
        shortest = min(d.depth for d in hits)
        if sampled and depth is not None and not depth <= shortest <= 2 * depth:
            out.append(
                f"{name} violated by a trace of {shortest} steps; the shortest is {depth}, "
                f"so a sampled trace should have {depth} to {2 * depth}"
            )
        elif not sampled and depth is not None and shortest != depth:
            out.append(
                f"{name} violated at depth {shortest}, expected depth {depth} "
                "(update [expect] violates on purpose if the model changed)"
            )
    for clause, discovery in sorted(found.items()):
        if not any(matches(name, clause) for name in expected_names):
            out.append(
                f"unexpected violation of {clause} at depth {discovery.depth}: {discovery.witness}"
            )
    if expect.result in ("holds", None) and not exploration.complete and not found and not sampled:
        out.append(f"search incomplete ({exploration.stop_reason}): cannot say the model holds")
    settled = exploration.complete or exploration.stop_reason == "expected violations found"
    pinned = expect.distinct_states
    pin_states = pin_states and not sampled
    if pin_states and pinned is not None and settled and exploration.distinct_states != pinned:
        out.append(
            f"distinct states {exploration.distinct_states:,} != pinned {pinned:,} "
            "(update [expect] distinct_states on purpose)"
        )
    for name in expect.reached:
        if name not in exploration.reached:
            out.append(f"sometimes-property {name} never reached")
    return tuple(out)


def write_summary(path: Path, reports: list[ModelReport]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"models": [r.to_json() for r in reports]}
    path.write_text(json.dumps(document, indent=2) + "\n")
