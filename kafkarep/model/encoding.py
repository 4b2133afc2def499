"""Canonical encoding and stable 64-bit fingerprints of cluster states.

A value encodes to a flat sequence of 64-bit integers: integers (enums and booleans included) as
themselves, None as a marker, tuples and sets with their length first (sets sorted), strings as
their UTF-8 bytes, NamedTuples field by field. The fingerprint is BLAKE2b over those bytes, so it
is the same in every process, run and machine, whatever PYTHONHASHSEED is (Spark executors and
worker processes agree on it).

A state is fingerprinted component by component (the controller, each broker, the ghost state,
the budgets): each component's 16-byte digest is computed once and cached, since most
components recur across many states; the state's fingerprint digests the component digests.
"""

from __future__ import annotations

from array import array
from hashlib import blake2b
from typing import Any

from kafkarep.model.state import ClusterState

NONE = -(2**62)
_CACHE: dict[Any, bytes] = {}
_CACHE_LIMIT = 1 << 20


def flatten(value: Any, out: list[int]) -> None:
    if value is None:
        out.append(NONE)
    elif isinstance(value, int):  # bool and IntEnum are ints
        out.append(int(value))
    elif isinstance(value, str):
        data = value.encode()
        out.append(len(data))
        out.extend(data)
    elif isinstance(value, frozenset):
        out.append(len(value))
        for item in sorted(value):
            flatten(item, out)
    elif isinstance(value, tuple):
        if not hasattr(value, "_fields"):  # a plain tuple: variable length
            out.append(len(value))
        for item in value:
            flatten(item, out)
    else:
        raise TypeError(f"cannot encode {type(value).__name__} in a state")


def encode(value: Any) -> bytes:
    """The canonical bytes of a value."""
    out: list[int] = []
    flatten(value, out)
    return array("q", out).tobytes()


def digest(component: Any) -> bytes:
    """A component's 16-byte digest, cached."""
    found = _CACHE.get(component)
    if found is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        found = _CACHE[component] = blake2b(encode(component), digest_size=16).digest()
    return found


def fingerprint(state: ClusterState) -> int:
    """The state's stable 64-bit fingerprint."""
    parts = [digest(state.controller)]
    parts.extend(digest(broker) for broker in state.brokers)
    parts.append(digest(state.ghost))
    parts.append(digest(state.budget))
    return int.from_bytes(blake2b(b"".join(parts), digest_size=8).digest(), "little")
