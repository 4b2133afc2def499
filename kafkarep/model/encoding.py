"""Canonical encoding and stable 64-bit fingerprints of cluster states.

A value encodes to a flat sequence of 64-bit integers: integers (enums and booleans included) as
themselves, None as a marker, tuples and sets with their length first (sets sorted), strings as
their UTF-8 bytes, NamedTuples field by field. The fingerprint is BLAKE2b over those bytes, so it
is the same in every process, run and machine, whatever PYTHONHASHSEED is (Spark executors and
worker processes agree on it).

A state is fingerprinted component by component (the controller, each broker, the ghost state,
the budgets): each component's 16-byte digest is computed once and cached, since most
components recur across many states, and a successor reuses its parent's digests for the
components it shares with it (the same objects); the state's fingerprint digests the component
digests. The negatively acked writes are left out (like a TLA+ VIEW): no property or action
reads them, they only make traces clearer.
"""

from __future__ import annotations

from array import array
from hashlib import blake2b
from typing import Any

from kafkarep.metadata import EMPTY
from kafkarep.model.state import ClusterState, Ghost

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


def components(state: ClusterState) -> tuple[Any, ...]:
    return (state.controller, *state.brokers, state.ghost, state.budget)


_GHOSTS: dict[Ghost, bytes] = {}


def ghost_digest(ghost: Ghost) -> bytes:
    """The ghost state's digest, without the negatively acked writes (see above)."""
    found = _GHOSTS.get(ghost)
    if found is None:
        if len(_GHOSTS) >= _CACHE_LIMIT:
            _GHOSTS.clear()
        found = _GHOSTS[ghost] = digest(ghost._replace(neg_acked=EMPTY))
    return found


def digests(
    state: ClusterState,
    parent: ClusterState | None = None,
    parent_digests: tuple[bytes, ...] | None = None,
) -> tuple[bytes, ...]:
    """Every component's digest; those shared (identical objects) with the parent are reused."""
    if parent is None or parent_digests is None:
        return (
            digest(state.controller),
            *(digest(b) for b in state.brokers),
            ghost_digest(state.ghost),
            digest(state.budget),
        )
    out = list(parent_digests)
    if state.controller is not parent.controller:
        out[0] = digest(state.controller)
    brokers = state.brokers
    if brokers is not parent.brokers:
        old = parent.brokers
        for index, broker in enumerate(brokers):
            if broker is not old[index]:
                out[index + 1] = digest(broker)
    if state.ghost is not parent.ghost:
        out[-2] = ghost_digest(state.ghost)
    if state.budget is not parent.budget:
        out[-1] = digest(state.budget)
    return tuple(out)


def combine(parts: tuple[bytes, ...]) -> int:
    return int.from_bytes(blake2b(b"".join(parts), digest_size=8).digest(), "little")


def fingerprint(state: ClusterState) -> int:
    """The state's stable 64-bit fingerprint."""
    return combine(digests(state))
