"""A path replayed through the rules: the steps from the initial state, each with its outcome.

A path is the action indices an engine found, each into `successors(cfg, state)` of the state
before it; replaying it rebuilds every state (`Trace`). A step's outcome says what happened in the
protocol's words: for controller rules the Kafka answer and, on a refusal, the guard; for data
plane steps what the broker did with what it received. Engines replay their paths (the Hypothesis
machine its final state); the step table, the ITF file and the pictures are drawn from a `Trace`.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.model.actions import BY_NAME, Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState


class Step(NamedTuple):
    choice: int  # the action's index among the enabled actions of the state before
    action: Action
    outcome: str
    before: ClusterState
    after: ClusterState


class Trace(NamedTuple):
    cfg: ModelConfig
    initial: ClusterState
    steps: tuple[Step, ...]

    @property
    def final(self) -> ClusterState:
        return self.steps[-1].after if self.steps else self.initial

    @property
    def path(self) -> tuple[int, ...]:
        return tuple(step.choice for step in self.steps)


class ReplayError(Exception):
    """A path does not replay: the model changed, or it is not deterministic."""


def replay_path(cfg: ModelConfig, path: tuple[int, ...]) -> Trace:
    state = initial_state(cfg)
    first = state
    steps = []
    for depth, index in enumerate(path, 1):
        options = list(successors(cfg, state))
        if index >= len(options):
            raise ReplayError(
                f"step {depth}: action index {index} but only {len(options)} actions are enabled; "
                "the model or its rules changed since the trace was made, or iteration order is "
                "not deterministic (unsorted sets, wall-clock time, randomness, string hashing)"
            )
        action, after = options[index]
        steps.append(Step(index, action, outcome(cfg, state, action, after), state, after))
        state = after
    return Trace(cfg, first, tuple(steps))


def outcome(cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState) -> str:
    """What happened, in the protocol's words, as the action's family describes it."""
    describe = BY_NAME[action.name].describe
    return describe(cfg, before, action, after) if describe is not None else "ok"
