"""Shortening a counterexample by re-running the rules on shorter step sequences (users.md: "run
a shrinking pass that reruns the rules on subsequences").

A sampled path, even after Hypothesis has shrunk it, can keep steps the violation does not need:
Hypothesis shrinks the choices that drew the actions, and deleting one step changes what every
later choice means. Here the path is a sequence of actions instead. A candidate is replayed
through the rules and kept if it is shorter and the clause is violated somewhere along it (the
path then ends there). A step the shorter history no longer allows is dropped, or, on a second
try, matched to the same family's nearest enabled action: dropping first keeps a deletion from
turning a later step into another one (an ISR expansion to broker 3 where broker 2 was meant),
which can leave the path stuck in a longer counterexample. Two moves:
delete a run of steps (half the path, a quarter, ... one step), and replace two to four
consecutive steps by one enabled action (three fetch steps that advance the HWM, say, by the
metadata update that does the same). They repeat until neither shortens the path, so no single
step can be deleted from the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from kafkarep.model.actions import Action, enabled, successors
from kafkarep.model.actions import apply as apply_action
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState

Violated = Callable[[ClusterState], bool]
REPLACED = (4, 3, 2)  # the window sizes that one action may replace


class _Path(NamedTuple):
    actions: tuple[Action, ...]
    indices: tuple[int, ...]
    states: tuple[ClusterState, ...]  # states[i] is the state before actions[i]


def actions_along(cfg: ModelConfig, path: Sequence[int]) -> list[Action]:
    state, actions = initial_state(cfg), []
    for index in path:
        action, state = list(successors(cfg, state))[index]
        actions.append(action)
    return actions


def _follow(
    cfg: ModelConfig,
    base: _Path,
    start: int,
    tail: Sequence[Action],
    violated: Violated,
    substitute: bool = True,
) -> _Path | None:
    """From base's state at `start`, the tail's actions up to the first violating state (a step
    not enabled is dropped, or with `substitute` replaced by its counterpart); None if nothing
    along the way violates."""
    actions, indices = list(base.actions[:start]), list(base.indices[:start])
    states = list(base.states[: start + 1])
    state = states[-1]
    for wanted in tail:
        options = list(enabled(cfg, state))
        action = wanted if wanted in options else None
        if action is None and substitute:
            action = _counterpart(wanted, options)
        if action is None:
            continue
        state = apply_action(cfg, state, action)
        actions.append(action)
        indices.append(options.index(action))
        states.append(state)
        if violated(state):
            return _Path(tuple(actions), tuple(indices), tuple(states))
    return None


def _counterpart(wanted: Action, options: list[Action]) -> Action | None:
    """The same family's action by the same actor whose integer argument is nearest (a metadata
    offset shifts when earlier records are gone); else the same family's with the same argument
    by another actor (the produce of whichever broker leads now); else None."""
    same = [a for a in options if a.name == wanted.name]
    if isinstance(wanted.arg, int):
        close = [a for a in same if a.actor == wanted.actor and isinstance(a.arg, int)]
        if close:
            return min(close, key=lambda a: (abs(a.arg - wanted.arg), -a.arg))  # type: ignore[operator]
    return next((a for a in same if a.arg == wanted.arg), None)


def shorten(
    cfg: ModelConfig, path: Sequence[int], violated: Violated, attempts: int = 20_000
) -> tuple[int, ...]:
    """A path no longer than `path` that ends in a violation; at most `attempts` replays."""
    start = initial_state(cfg)
    if violated(start):
        return ()
    best = _follow(cfg, _Path((), (), (start,)), 0, actions_along(cfg, path), violated)
    if best is None:
        raise ValueError("the path to shorten does not end in a violation")
    budget = [attempts]

    def shorter(at: int, tail: Sequence[Action]) -> bool:
        nonlocal best
        assert best is not None
        budget[0] -= 1
        for substitute in (False, True):
            found = _follow(cfg, best, at, tail, violated, substitute)
            if found is not None and len(found.actions) < len(best.actions):
                best = found
                return True
        return False

    improved = True
    while improved and budget[0] > 0:
        improved = False
        size = max(1, len(best.actions) // 2)
        while size >= 1:
            at = 0
            while at < len(best.actions) and budget[0] > 0:
                if shorter(at, best.actions[at + size :]):
                    improved = True
                else:
                    at += size
            size //= 2
        for window in REPLACED:
            at = 0
            while at + window <= len(best.actions) and budget[0] > 0:
                rest = best.actions[at + window :]
                options = enabled(cfg, best.states[at])
                if any(shorter(at, (option, *rest)) for option in options):
                    improved = True
                else:
                    at += 1
    return best.indices
