"""A model's `kafkarep prove` verdict: its results judged against what the model file expects.

`[expect]` says what the properties do (holds: every property proved; violates: each named
property violated). `[prove] unknown` says which properties are expected to stay `unknown`, and
why: the obligation induction does not discharge, written as prove reports it,

    [prove]
    unknown = { leader_completeness = "leader_completeness.committed_log under restart" }

An `unknown` result meets such a note only while that obligation is among those not discharged,
and a property noted that is proved or violated is a problem ("remove the note"): a note cannot
go stale silently.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from kafkarep.common.exit_codes import UsageError
from kafkarep.model.config import ModelConfig, Table
from kafkarep.symbolic.agreement.rules import Agreement
from kafkarep.symbolic.properties import supported
from kafkarep.symbolic.prove import Result

# "INVARIANT under FAMILY": an invariant, clause or history fact, and an action family or
# "initial", as `kafkarep prove` prints an obligation not discharged
OBLIGATION = re.compile(r"(?P<invariant>[A-Za-z_][\w.]*) under (?P<action>[A-Za-z_]\w*)")


class Note(NamedTuple):
    """`[prove] unknown`: the property is expected `unknown`, this obligation not discharged."""

    prop: str
    invariant: str
    action: str

    @property
    def obligation(self) -> str:
        return f"{self.invariant} under {self.action}"


def unknown_notes(cfg: ModelConfig) -> dict[str, Note]:
    """The model's `[prove] unknown` notes by property (a bad one: one line, exit code 2)."""
    raw: Any = cfg.setting("prove", "unknown")
    if raw is None:
        return {}
    form = 'property = "INVARIANT under FAMILY"'
    if not isinstance(raw, Table):
        raise UsageError(f"{cfg.path}: [prove] unknown must be a table: {{ {form} }}")
    notes: dict[str, Note] = {}
    for prop, value in raw.pairs:
        if prop not in supported(cfg):
            raise UsageError(
                f"{cfg.path}: [prove] unknown.{prop}: prove supports the properties "
                f"{', '.join(supported(cfg))}, not {prop!r}"
            )
        found = OBLIGATION.fullmatch(value.strip()) if isinstance(value, str) else None
        if found is None:
            raise UsageError(
                f'{cfg.path}: [prove] unknown.{prop} must be "INVARIANT under FAMILY" (an '
                f"obligation prove reports not discharged), not {value!r}"
            )
        notes[prop] = Note(prop, found["invariant"], found["action"])
    return notes


def judge(cfg: ModelConfig, results: list[Result]) -> list[str]:
    """Why the results do not meet the model's expectations (empty when they do)."""
    notes = unknown_notes(cfg)
    by_property = {r.property: r for r in results}
    problems: list[str] = []
    noted: set[str] = set()  # properties a note judges (met or not)
    for r in results:
        note = notes.get(r.property)
        if note is None or r.status == "disagrees":
            continue
        noted.add(r.property)
        if r.status != "unknown":
            problems.append(
                f"{r.property} is expected unknown ([prove] unknown: {note.obligation}) but "
                f"{r.status}: remove the note"
            )
        elif not any((o.invariant, o.action) == note[1:] for o in r.failed):
            left = ", ".join(f"{o.invariant} under {o.action}" for o in r.failed)
            problems.append(
                f"{r.property} is unknown, but not for the reason noted ([prove] unknown: "
                f"{note.obligation} not discharged): "
                + (f"not discharged: {left}" if left else "induction did not run")
                + "; update the note"
            )
    # The violations the model expects of properties prove checks; the others (liveness, log
    # matching, the metadata) are not prove's to confirm.
    violations = [
        (name, name.split(".")[0])
        for name, _ in cfg.expect.violates
        if name.split(".")[0] in supported(cfg)
    ]
    if cfg.expect.result == "holds" or (cfg.expect.result == "violates" and not violations):
        # holds; or every violation expected is of a property prove does not check, and the
        # properties it does check are expected to hold (as `check` expects of every property
        # [expect] does not name)
        why = "" if cfg.expect.result == "holds" else " (the model expects no violation of it)"
        for r in results:
            if r.status != "proved" and r.property not in noted:
                problems.append(f"{r.property} is expected to hold{why} but is {r.status}")
    elif cfg.expect.result == "violates":
        for name, prop in violations:
            found = by_property.get(prop)
            if found is None:
                continue  # not among the properties asked for
            if found.status != "violated" and prop not in noted:
                problems.append(f"{name} is expected to be violated but is {found.status}")
    return problems


class Proof(NamedTuple):
    """One model's `kafkarep prove`: the agreement check, a result per property, the problems
    (empty: the expectations are met)."""

    cfg: ModelConfig
    agreement: Agreement
    results: list[Result]
    problems: list[str]

    @property
    def met(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.cfg.path,
            "brokers": len(self.cfg.broker_ids),
            "expectations_met": self.met,
            "problems": self.problems,
        }
        notes = unknown_notes(self.cfg)
        if notes:
            out["expected_unknown"] = {p: n.obligation for p, n in notes.items()}
        out["agreement"] = self.agreement.to_json()
        out["results"] = [r.to_json() for r in self.results]
        return out
