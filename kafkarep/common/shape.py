"""The shape of a user's JSON input, checked at the boundary by small hand-written checks.

Each check takes a value and its place in the file (`At`: the file as the user named it and the
path inside it) and returns the value, or raises one line naming the file, the path and the
problem, as the reader's own error (a `UsageError` kind, exit code 2):

    trace.itf.json: states[3].brokers[0].replica: expected an object, got a list
    cases.json: [12].before.isr: expected a list of broker ids, got a string

A reader checks every value it will read before it reads it, so nothing past the boundary meets
a value of the wrong kind. Hand-written rather than a schema library: the formats are small, the
checks need the readers' own rules (broker ids, enum names, the state types of an ITF trace), and
the messages are the ones above.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")
_PLAIN = re.compile(r"[A-Za-z0-9_#.-]+")
_DIGITS = re.compile(r"[0-9]{1,9}")
Check = Callable[[Any, "At"], T]


@dataclass(frozen=True)
class At:
    """A place in an input file."""

    file: str  # as the user named it
    path: str  # inside it: "states[3].brokers[0]", "" for the whole document
    error: Callable[[str], Exception]  # the reader's error, given the whole line

    def key(self, name: str) -> At:
        if not _PLAIN.fullmatch(name):  # a key with spaces, quotes, newlines: as JSON writes it
            return replace(self, path=f"{self.path}[{json.dumps(name)}]")
        return replace(self, path=f"{self.path}.{name}" if self.path else name)

    def index(self, number: int) -> At:
        return replace(self, path=f"{self.path}[{number}]")

    def fail(self, problem: str) -> NoReturn:
        where = f"{self.file}: {self.path}" if self.path else self.file
        raise self.error(f"{where}: {problem}")


def at(file: object, error: Callable[[str], Exception], path: str = "") -> At:
    """The whole document of `file` (a path or a name)."""
    return At(str(file), path, error)


def kind(value: Any) -> str:
    """A JSON value's kind, as the messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def expected(what: str, value: Any, where: At) -> NoReturn:
    where.fail(f"expected {what}, got {kind(value)}")


def obj(value: Any, where: At) -> dict[str, Any]:
    if not isinstance(value, dict):
        expected("an object", value, where)
    return value


def array(value: Any, where: At) -> list[Any]:
    if not isinstance(value, list):
        expected("a list", value, where)
    return value


def text(value: Any, where: At) -> str:
    if not isinstance(value, str):
        expected("a string", value, where)
    return value


def flag(value: Any, where: At) -> bool:
    if not isinstance(value, bool):
        expected("true or false", value, where)
    return value


def integer(value: Any, where: At) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        expected("an integer", value, where)
    return value


def number(value: Any, where: At) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        expected("a number", value, where)
    return float(value)


def at_least(low: int) -> Check[int]:
    def check(value: Any, where: At) -> int:
        if integer(value, where) < low:
            where.fail(f"expected an integer >= {low}, got {value}")
        return int(value)

    return check


def between(low: int, high: int) -> Check[int]:
    def check(value: Any, where: At) -> int:
        if not low <= integer(value, where) <= high:
            where.fail(f"expected an integer from {low} to {high}, got {value}")
        return int(value)

    return check


def one_of(choices: Collection[str]) -> Check[str]:
    def check(value: Any, where: At) -> str:
        if not isinstance(value, str) or value not in choices:
            shown = repr(value) if isinstance(value, str) else kind(value)
            where.fail(f"expected one of {', '.join(choices)}, got {shown}")
        return value

    return check


def broker(value: Any, where: At) -> int:
    """A broker id: an integer >= 0."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        shown = value if isinstance(value, int) and not isinstance(value, bool) else kind(value)
        where.fail(f"expected a broker id (an integer >= 0), got {shown}")
    return value


def broker_key(key: str, where: At) -> int:
    """A broker id as an object's key: ASCII digits."""
    if not _DIGITS.fullmatch(key):
        where.fail("expected a broker id (digits) as the key")
    return int(key)


def brokers(value: Any, where: At) -> list[int]:
    """A list of broker ids."""
    if not isinstance(value, list):
        expected("a list of broker ids", value, where)
    return [broker(item, where.index(i)) for i, item in enumerate(value)]


def each(check: Check[T]) -> Check[list[T]]:
    """A list whose items pass `check`."""

    def check_all(value: Any, where: At) -> list[T]:
        return [check(item, where.index(i)) for i, item in enumerate(array(value, where))]

    return check_all


def optional(check: Check[T]) -> Check[T | None]:
    """null, or a value that passes `check`."""

    def check_or_null(value: Any, where: At) -> T | None:
        return None if value is None else check(value, where)

    return check_or_null


def anything(value: Any, where: At) -> Any:
    return value


_REQUIRED: Any = object()


def field(
    record: dict[str, Any], key: str, where: At, check: Check[T], default: Any = _REQUIRED
) -> T:
    """`record[key]` checked, or `default` when absent (a missing key fails without one)."""
    if key not in record:
        if default is _REQUIRED:
            where.key(key).fail("missing")
        return default
    return check(record[key], where.key(key))


def known_keys(record: dict[str, Any], where: At, known: Collection[str]) -> None:
    """Fails on a key that is not one of `known` (a misspelt key is not silently ignored)."""
    for key in record:
        if key not in known:
            where.key(key).fail(f"unknown key; known: {', '.join(sorted(known))}")
