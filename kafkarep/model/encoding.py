"""Canonical encoding and stable 64-bit fingerprints of cluster states.

A value encodes to a flat sequence of 64-bit integers: integers (enums and booleans included) as
themselves, None as a marker, tuples and sets with their length first (sets sorted), strings as
their UTF-8 bytes, NamedTuples field by field. The fingerprint is BLAKE2b over those bytes, so it
is the same in every process, run and machine, whatever PYTHONHASHSEED is (Spark executors and
worker processes agree on it).

A state is fingerprinted component by component (the controller, each broker, the ghost state,
the budgets): each component's 64-bit digest is computed once and cached, since most
components recur across many states, and a successor reuses its parent's digests for the
components it shares with it (the same objects). The state's fingerprint is the sum of the
component digests, each times a fixed odd weight for its position, modulo 2^64: two states that
differ in any component differ in it unless the digests collide (probability 2^-64 a pair, as
for any 64-bit fingerprint), and a successor's fingerprint is its parent's, updated for the
components that changed. The negatively acked writes are left out (like a TLA+ VIEW): no
property or action reads them, they only make traces clearer.
"""

from __future__ import annotations

from array import array
from hashlib import blake2b
from typing import Any

from kafkarep.kafka.metadata import EMPTY
from kafkarep.model.state import ClusterState, Ghost

NONE = -(2**62)
_CACHE: dict[Any, int] = {}
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


def digest(component: Any) -> int:
    """A component's 64-bit digest, cached."""
    found = _CACHE.get(component)
    if found is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        data = blake2b(encode(component), digest_size=8).digest()
        found = _CACHE[component] = int.from_bytes(data, "little")
    return found


def components(state: ClusterState) -> tuple[Any, ...]:
    return (state.controller, *state.brokers, state.ghost, state.budget)


_GHOSTS: dict[Ghost, int] = {}


def ghost_digest(ghost: Ghost) -> int:
    """The ghost state's digest, without the negatively acked writes (see above)."""
    found = _GHOSTS.get(ghost)
    if found is None:
        if len(_GHOSTS) >= _CACHE_LIMIT:
            _GHOSTS.clear()
        found = _GHOSTS[ghost] = digest(ghost._replace(neg_acked=EMPTY))
    return found


MASK = (1 << 64) - 1


def _weight(position: int) -> int:
    """An odd 64-bit constant per component position: the state's fingerprint is the sum of
    its component digests times their weights, modulo 2^64."""
    data = blake2b(b"kafkarep component %d" % position, digest_size=8).digest()
    return int.from_bytes(data, "little") | 1


WEIGHTS = tuple(_weight(position) for position in range(64))

# A state's digests: one per component (controller, each broker, ghost, budget), then the
# state's fingerprint.
Digests = tuple[int, ...]


def digests(
    state: ClusterState,
    parent: ClusterState | None = None,
    parent_digests: Digests | None = None,
) -> Digests:
    """Every component's digest and the fingerprint. Components shared (identical objects) with
    the parent keep its digests, and the fingerprint is updated for the others only."""
    if parent is None or parent_digests is None:
        parts = (
            digest(state.controller),
            *(digest(b) for b in state.brokers),
            ghost_digest(state.ghost),
            digest(state.budget),
        )
        return (*parts, sum(d * w for d, w in zip(parts, WEIGHTS, strict=False)) & MASK)
    out = list(parent_digests)
    fp = out[-1]
    if state.controller is not parent.controller:
        new = digest(state.controller)
        fp += (new - out[0]) * WEIGHTS[0]
        out[0] = new
    brokers = state.brokers
    if brokers is not parent.brokers:
        old = parent.brokers
        for index, broker in enumerate(brokers, 1):
            if broker is not old[index - 1]:
                new = digest(broker)
                fp += (new - out[index]) * WEIGHTS[index]
                out[index] = new
    last = len(out) - 2  # the budget's position; the ghost's is just before
    if state.ghost is not parent.ghost:
        new = ghost_digest(state.ghost)
        fp += (new - out[last - 1]) * WEIGHTS[last - 1]
        out[last - 1] = new
    if state.budget is not parent.budget:
        new = digest(state.budget)
        fp += (new - out[last]) * WEIGHTS[last]
        out[last] = new
    out[-1] = fp & MASK
    return tuple(out)


def combine(parts: Digests) -> int:
    """The fingerprint within a state's digests."""
    return parts[-1]


def fingerprint(state: ClusterState) -> int:
    """The state's stable 64-bit fingerprint."""
    return digests(state)[-1]
