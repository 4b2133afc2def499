"""The concrete states the agreement checks visit: a breadth-first exploration from the model's
initial state, each state with what its projection needs that the concrete state does not keep
(`Path`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState, Role
from kafkarep.symbolic import projection
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.encoding import Encoding


class Path(NamedTuple):
    """What a projection needs that the concrete state does not keep, recorded along the path
    that reached it: each value's (offset, epoch) when written, `Ghost.committed_in` and
    `Ghost.led_since` (by broker; read only where the model reassigns)."""

    locs: dict[int, tuple[int, int]]
    committed_in: tuple[int, ...] = ()
    led_since: tuple[int, ...] = ()

    def key(self) -> tuple[object, ...]:
        return tuple(sorted(self.locs.items())), self.committed_in, self.led_since


def start(state: ClusterState, reassigning: bool) -> Path:
    """The path of the initial state: nothing written; its leader leads since epoch 1 (kept
    only where the model reassigns: elsewhere `Ghost.led_since` is not read)."""
    if not reassigning:
        return Path({})
    brokers = range(1, len(state.brokers) + 1)
    return Path({}, (), tuple(_led_since(None, state, b, 0) for b in brokers))


def project_along(enc: Encoding, state: ClusterState, path: Path) -> symbolic.ClusterState:
    """The projection of a state reached along a path."""
    return projection.project(enc, state, path.locs, path.committed_in, path.led_since)


def _led_since(before: ClusterState | None, after: ClusterState, b: int, since: int) -> int:
    """A broker that has become leader leads since its epoch; one that was leader already,
    since when it was (`Ghost.led_since`)."""
    r = after.broker(b).replica
    old = before.broker(b).replica if before is not None else None
    if r is None or r.role != Role.LEADER or r.view is None:
        return since
    if old is not None and old.role == Role.LEADER:
        return since
    return r.view.leader_epoch


def written(
    before: ClusterState, after: ClusterState, action: Action, path: Path, reassigning: bool
) -> Path:
    """The path extended by a step: where a produce put its record, (offset, epoch) by value;
    which broker has become leader, and since when it leads; and, for each offset a leader's
    HWM moved past, the lower of the epoch it commits in and the one recorded (any epoch
    recorded at or above the True HWM is replaced). A leader commits in its own leader epoch,
    or, where the model reassigns, in the first epoch of its leadership (`Ghost.led_since`)."""
    locs = path.locs
    if action.name == "produce":
        replica = after.broker(action.actor).replica
        assert replica is not None
        epoch, value = replica.log[-1]
        locs = {**locs, value: (replica.leo - 1, epoch)}
    led_since = tuple(
        _led_since(before, after, b, since) for b, since in enumerate(path.led_since, start=1)
    )
    committed_in = list(path.committed_in)
    for b, broker in enumerate(after.brokers, start=1):
        r, old = broker.replica, before.broker(b).replica
        if r is None or old is None or r.role != Role.LEADER or r.view is None:
            continue
        leader_epoch = led_since[b - 1] if reassigning else r.view.leader_epoch
        for o in range(old.hwm, r.hwm):
            committed_in += [0] * (o + 1 - len(committed_in))
            if o >= before.ghost.true_hwm or leader_epoch < committed_in[o]:
                committed_in[o] = leader_epoch
    return Path(locs, tuple(committed_in), led_since)


class Reached(NamedTuple):
    """A concrete state of the exploration, the path's records (`Path`), and the actions that
    reached it from the initial state."""

    state: ClusterState
    path: Path
    trail: tuple[Action, ...]


def levels(cfg: ModelConfig) -> Iterator[list[Reached]]:
    """The concrete states reachable from the model's initial state, breadth first, one list
    per depth (a state reached along two paths that recorded different things is kept twice:
    the projections differ)."""
    first = initial_state(cfg)
    reassigning = Encoding(cfg).reassigning
    path = start(first, reassigning)
    seen: set[tuple[ClusterState, tuple[object, ...]]] = {(first, path.key())}
    level = [Reached(first, path, ())]
    while level:
        yield level
        following = []
        for state, path, trail in level:
            for action, after in successors(cfg, state):
                after_path = written(state, after, action, path, reassigning)
                key = (after, after_path.key())
                if key not in seen:
                    seen.add(key)
                    following.append(Reached(after, after_path, (*trail, action)))
        level = following


def explore(cfg: ModelConfig, depth: int) -> Iterator[tuple[ClusterState, Path]]:
    """Concrete states to `depth`, each with what was recorded on the way (`Path`)."""
    for d, level in enumerate(levels(cfg)):
        for reached in level:
            yield reached.state, reached.path
        if d == depth:
            return


def pad(enc: Encoding, sym: symbolic.ClusterState) -> symbolic.ClusterState:
    return sym._replace(
        metadata_log=sym.metadata_log
        + (enc.blank_registration(),) * (enc.capacity - len(sym.metadata_log))
    )
