"""Traces as JSON in the Informal Trace Format (ITF), the format Apalache and Quint use.

https://apalache-mc.org/docs/adr/015adr-trace.html: a trace is `{"#meta", "vars", "states"}`;
sets are `{"#set": [...]}`, tuples `{"#tup": [...]}`, integers beyond 2^53 `{"#bigint": "..."}`,
records are objects. A state here has the variables `controller`, `brokers`, `ghost`, `budget`
and `action` (the step that led to it; `init` for the first). kafkarep's own `#meta` holds the
model file, the property clause, the witness and the action-index path, so `kafkarep replay`
can re-run it through the rules.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

from kafkarep.common.files import read_json
from kafkarep.model.actions import Action
from kafkarep.model.replay import Trace

FORMAT = "ITF"
VARS = ["controller", "brokers", "ghost", "budget", "action"]


class TraceFileError(Exception):
    """A trace file is missing or malformed."""


def to_itf(value: Any) -> Any:
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}
    if isinstance(value, bool):
        return value
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"#bigint": str(value)}
    if isinstance(value, str):
        return value
    if isinstance(value, frozenset):
        return {"#set": [to_itf(v) for v in sorted(value)]}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_itf(v) for name, v in zip(value._fields, value, strict=True)}
    if isinstance(value, tuple):
        return [to_itf(v) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} to ITF")


def from_itf(value: Any) -> Any:
    """Plain Python values back from ITF (sets to frozensets, arrays to tuples)."""
    if isinstance(value, dict):
        if "#set" in value:
            return frozenset(from_itf(v) for v in value["#set"])
        if "#tup" in value:
            return tuple(from_itf(v) for v in value["#tup"])
        if "#bigint" in value:
            return int(value["#bigint"])
        if value.get("tag") == "None":
            return None
        return {k: from_itf(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(from_itf(v) for v in value)
    return value


def action_itf(action: Action | None) -> dict[str, Any]:
    if action is None:
        return {"name": "init", "actor": 0, "arg": to_itf(None)}
    return {"name": action.name, "actor": action.actor, "arg": to_itf(action.arg)}


def action_from_itf(value: dict[str, Any]) -> Action:
    return Action(str(value["name"]), int(value["actor"]), from_itf(value["arg"]))


def trace_document(trace: Trace, meta: dict[str, Any]) -> dict[str, Any]:
    states = [_state(0, trace.initial, None)]
    for number, step in enumerate(trace.steps, 1):
        states.append(_state(number, step.after, step.action))
    return {
        "#meta": {
            "format": FORMAT,
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": meta.get("model", ""),
            "description": meta.get("description", ""),
            "kafkarep": {**meta, "path": list(trace.path)},
        },
        "vars": VARS,
        "states": states,
    }


def _state(index: int, state: Any, action: Action | None) -> dict[str, Any]:
    return {
        "#meta": {"index": index},
        "controller": to_itf(state.controller),
        "brokers": to_itf(state.brokers),
        "ghost": to_itf(state.ghost),
        "budget": to_itf(state.budget),
        "action": action_itf(action),
    }


def write_trace(path: Path, trace: Trace, meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trace_document(trace, meta), indent=1) + "\n")


def read_trace(path: Path) -> dict[str, Any]:
    document = read_json(path, "trace", TraceFileError)
    if not isinstance(document, dict) or not isinstance(document.get("states"), list):
        raise TraceFileError(f'{path}: not an ITF trace (no "states" list)')
    meta = document.get("#meta", {}).get("kafkarep")
    if not isinstance(meta, dict) or "model" not in meta or "property" not in meta:
        raise TraceFileError(f"{path}: not a kafkarep trace (no #meta.kafkarep model/property)")
    for index, state in enumerate(document["states"]):
        if not isinstance(state, dict) or not isinstance(state.get("action"), dict):
            raise TraceFileError(f"{path}: state {index} has no action")
    return document
