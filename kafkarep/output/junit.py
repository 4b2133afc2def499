"""JUnit XML for a suite, so a CI system shows which property failed on which model.

One `<testsuite>` per model (named like a package: `models.mutations.hwm_below_min_isr`), one
`<testcase>` per property clause and one `state_space` case (pinned distinct states, a conclusive
search). A clause whose result the model did not expect has a `<failure>` whose message is the
problem and whose text is the counterexample's step table; a model that could not run has one
`run` case with `<error>` (engine unavailable, internal error) or `<skipped>`. With `--prove`,
one `prove:<property>` case per property prove judged (`suite_proofs.Proved.cases`).
"""

from __future__ import annotations

import re
import socket
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from kafkarep.engines.expectations import scope as search_scope
from kafkarep.output.suite import RUN, STATE_SPACE, UNAVAILABLE, Entry, cases

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("?", value)


def suite_name(entry: Entry) -> str:
    parts = [p for p in entry.path.with_suffix("").parts if p not in (".", "..", "/")]
    return ".".join(parts) or entry.name


def junit_tree(entries: list[Entry], timestamp: float | None = None) -> ET.ElementTree[ET.Element]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(timestamp or time.time()))
    root = ET.Element("testsuites", name="kafkarep suite")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for entry in entries:
        name = suite_name(entry)
        suite = ET.SubElement(root, "testsuite", name=name, timestamp=stamp)
        suite.set("hostname", socket.gethostname())
        props = ET.SubElement(suite, "properties")
        facts: list[tuple[str, object]] = [
            ("model", entry.path),
            ("engine", entry.engine),
            ("outcome", entry.outcome),
        ]
        e = entry.exploration
        if e is not None:
            facts += [
                ("distinct_states", e.distinct_states),
                ("depth", e.depth),
                ("complete", e.complete),
                ("scope", search_scope(entry.cfg, e) or "incomplete"),  # "complete to depth D"
                ("stop_reason", e.stop_reason),
            ]
        if entry.proof is not None:
            facts.append(("prove", entry.proof.outcome))
        for key, value in facts:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            ET.SubElement(props, "property", name=key, value=_text(text))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        proved = entry.proof.cases() if entry.proof is not None else []
        for case in cases(entry) + proved:
            node = ET.SubElement(suite, "testcase", name=case.name, classname=name)
            seconds = case.seconds
            if seconds is None:
                seconds = entry.wall_seconds if case.name in (STATE_SPACE, RUN) else 0.0
            node.set("time", f"{seconds:.3f}")
            counts["tests"] += 1
            if case.outcome == "failed":
                counts["failures"] += 1
                failure = ET.SubElement(
                    node, "failure", message=_text(case.message), type="ExpectationNotMet"
                )
                failure.text = _text(case.details or case.message)
            elif case.outcome == "error":
                counts["errors"] += 1
                unavailable = case.name == RUN and entry.outcome == UNAVAILABLE
                kind = "EngineUnavailable" if unavailable else "InternalError"
                error = ET.SubElement(node, "error", message=_text(case.message), type=kind)
                error.text = _text(case.message)
            elif case.outcome == "skipped":
                counts["skipped"] += 1
                ET.SubElement(node, "skipped", message=_text(case.message))
            elif case.details:
                ET.SubElement(node, "system-out").text = _text(case.details)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        seconds = entry.wall_seconds + (entry.proof.seconds if entry.proof is not None else 0.0)
        suite.set("time", f"{seconds:.3f}")
        total_time += seconds
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(path: Path, entries: list[Entry]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_tree(entries).write(path, encoding="utf-8", xml_declaration=True)
