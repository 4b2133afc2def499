"""A model's run as per-clause results, and the summary JSON.

`clause_results` turns what an engine found into one result per property clause; a
`ModelReport` holds them with the run and the problems `engines/expectations.py` judged.

Summary JSON, per model: `model`, `engine`, `controller` (who answered the controller steps:
the rules, or Kafka's classes), `distinct_states`, `generated_states`, `depth`,
`seconds`, `complete`, `scope` (`complete`, `complete to depth D` for a bounded verdict stopped
at its bound, or `incomplete`), `expectations_met`, `problems` (why an expectation was not met) and
`results`: one `{property, status, trace_file, trace_length}` per clause, status `holds`,
`violated`, `reached` or `not_reached`; a liveness property has one result (its name), `holds`,
`violated` (with `loop`, the state its lasso returns to) or `unknown` when the search that would
decide it was incomplete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.engines.expectations import scope as search_scope
from kafkarep.engines.results import Exploration
from kafkarep.model.config import ModelConfig
from kafkarep.properties import Property


class ClauseResult(NamedTuple):
    property: str
    status: str
    trace_file: str | None = None
    trace_length: int | None = None
    witness: str | None = None
    loop: int | None = None


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
            "controller": controller_label(self.cfg),
            "distinct_states": e.distinct_states,
            "generated_states": e.generated_states,
            "depth": e.depth,
            "seconds": round(e.seconds, 3),
            "complete": e.complete,
            "scope": search_scope(self.cfg, e) or "incomplete",
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
                    **({"loop": r.loop} if r.loop is not None else {}),
                }
                for r in self.results
            ],
            **self.extra,
        }


def controller_label(cfg: ModelConfig) -> str:
    """Who answered the model's controller steps (`kafkarep check` adds a user's build)."""
    release = cfg.options.kafka_version
    if cfg.options.controller == "kafka":
        return f"Kafka {release}'s classes"
    if cfg.options.controller == "zookeeper":
        return f"the rules of the ZooKeeper-era controller at Kafka {release}"
    return f"the rules at Kafka {release}"


def clause_results(
    properties: tuple[Property, ...], exploration: Exploration, trace_files: dict[str, str]
) -> tuple[ClauseResult, ...]:
    results = []
    checked = dict(exploration.details).get("liveness", {}).get("checked", False)
    for prop in properties:
        if prop.liveness:
            found = exploration.violations.get(prop.name)
            if found is not None:
                results.append(
                    ClauseResult(
                        prop.name,
                        "violated",
                        trace_files.get(prop.name),
                        found.depth,
                        found.witness,
                        found.loop,
                    )
                )
            else:
                why = None if checked else "not decided: the search was incomplete"
                results.append(
                    ClauseResult(prop.name, "holds" if checked else "unknown", witness=why)
                )
            continue
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


def write_summary(path: Path, reports: list[ModelReport]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"models": [r.to_json() for r in reports]}
    path.write_text(json.dumps(document, indent=2) + "\n")
