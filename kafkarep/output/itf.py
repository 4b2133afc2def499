"""Traces as JSON in the Informal Trace Format (ITF), the format Apalache and Quint use.

https://apalache-mc.org/docs/adr/015adr-trace.html: a trace is `{"#meta", "vars", "states"}`;
sets are `{"#set": [...]}`, tuples `{"#tup": [...]}`, integers beyond 2^53 `{"#bigint": "..."}`,
records are objects. A state here has the variables `controller`, `brokers`, `ghost`, `budget`
and `action` (the step that led to it; `init` for the first). kafkarep's own `#meta` holds the
model file, the property clause, the witness and the action-index path, so `kafkarep replay`
can re-run it through the rules.

A liveness counterexample is a lasso: `#meta.kafkarep.loop` is the index of the state its last
state equals (the last step closes the cycle; the last state itself when the behaviour stutters
there). The top-level `loop` is ITF's: the index of the state that follows the last one.
"""

from __future__ import annotations

import json
import types
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from kafkarep.common import compiled, shape
from kafkarep.common.files import read_json
from kafkarep.common.shape import At
from kafkarep.model.actions import Action
from kafkarep.model.replay import Trace
from kafkarep.model.state import ClusterState

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


NONE = to_itf(None)


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
    document = {
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
    loop = meta.get("loop")
    if loop is not None:
        document["loop"] = loop if loop == len(trace.steps) else loop + 1
    return document


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
    """A kafkarep trace, its shape checked before anything reads it: `#meta.kafkarep` (the model,
    the property clause, the action-index path, the initial state when not the model's) and one
    state per step plus the initial one, each variable as `to_itf` writes a value of its type in
    `ClusterState`. A problem is a `TraceFileError` naming the file and the path inside it."""
    document = read_json(path, "trace", TraceFileError)
    top = shape.at(path, TraceFileError)
    shape.obj(document, top)
    trace_meta = shape.field(document, "#meta", top, shape.obj)
    meta = shape.field(trace_meta, "kafkarep", top.key("#meta"), shape.obj)
    where = top.key("#meta").key("kafkarep")
    shape.field(meta, "model", where, shape.text)
    shape.field(meta, "property", where, shape.text)
    steps = shape.field(meta, "path", where, shape.each(shape.at_least(0)))
    shape.field(meta, "initial", where, shape.optional(_initial), None)
    shape.field(meta, "loop", where, shape.optional(shape.at_least(0)), None)
    states = shape.field(document, "states", top, shape.array)
    if len(states) != len(steps) + 1:
        top.key("states").fail(
            f"expected {len(steps) + 1} states (the initial one and one per step of "
            f"#meta.kafkarep.path), got {len(states)}"
        )
    for index, state in enumerate(states):
        _state_shape(state, top.key("states").index(index))
    return document


def _initial(value: Any, where: At) -> dict[str, Any]:
    initial = shape.obj(value, where)
    shape.field(initial, "isr", where, shape.brokers)
    shape.field(initial, "leader", where, shape.at_least(-1))
    shape.field(initial, "fenced", where, shape.brokers)
    return initial


def _state_shape(value: Any, where: At) -> None:
    state = shape.obj(value, where)
    shape.known_keys(state, where, [*VARS, "#meta"])
    for name, hint in _hints(ClusterState).items():
        _typed(shape.field(state, name, where, shape.anything), hint, where.key(name))
    action = shape.field(state, "action", where, shape.obj)
    shape.field(action, "name", where.key("action"), shape.text)
    shape.field(action, "actor", where.key("action"), shape.integer)
    shape.field(action, "arg", where.key("action"), shape.anything)


@cache
def _hints(record: type) -> dict[str, Any]:
    return compiled.type_hints(record)


def _typed(value: Any, hint: Any, where: At) -> None:
    """`value` is what `to_itf` writes for a value of type `hint` (a field's annotation)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is bool:
        shape.flag(value, where)
    elif isinstance(hint, type) and issubclass(hint, Enum):
        shape.one_of([member.name for member in hint])(value, where)
    elif hint is int:
        if isinstance(value, dict) and set(value) == {"#bigint"}:
            digits = shape.text(value["#bigint"], where.key("#bigint"))
            if not digits.removeprefix("-").isdigit():
                where.key("#bigint").fail(f"expected the digits of an integer, got {digits!r}")
        else:
            shape.integer(value, where)
    elif hint is str:
        shape.text(value, where)
    elif origin in (Union, types.UnionType):
        if value == NONE and type(None) in args:
            return
        (inner,) = [arg for arg in args if arg is not type(None)]
        _typed(value, inner, where)
    elif origin is frozenset:
        members = shape.field(shape.obj(value, where), "#set", where, shape.array)
        for index, member in enumerate(members):
            _typed(member, args[0], where.key("#set").index(index))
    elif origin is tuple:
        items = shape.array(value, where)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(items)
        elif len(items) != len(args):
            where.fail(f"expected a list of {len(args)} items, got {len(items)}")
        for index, (item, arg) in enumerate(zip(items, args, strict=True)):
            _typed(item, arg, where.index(index))
    elif isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):
        record = shape.obj(value, where)
        shape.known_keys(record, where, hint._fields)
        for name, inner in _hints(hint).items():
            _typed(shape.field(record, name, where, shape.anything), inner, where.key(name))
    else:
        raise TypeError(f"no ITF check for {hint!r}")
