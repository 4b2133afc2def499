"""A path replayed through the rules: the steps from the initial state, each with its outcome.

A path is the action indices an engine found, each into `successors(cfg, state)` of the state
before it; replaying it rebuilds every state (`Trace`). A step's outcome says what happened in the
protocol's words: for controller rules the Kafka answer and, on a refusal, the guard; for data
plane steps what the broker did with what it received. Engines replay their paths (the Hypothesis
machine its final state); the step table, the ITF file and the pictures are drawn from a `Trace`.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.model import controller
from kafkarep.model.actions import Action, successors
from kafkarep.model.actions.data import in_fetcher, response_guards
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState, Role
from kafkarep.rules import Changed, Rejected, Unchanged


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
    """What happened, in the protocol's words."""
    name = action.name
    if name == "handle_alter_partition":
        assert isinstance(action.arg, int)
        request = before.controller.ap_requests[action.arg - 1]
        assert request is not None
        result = controller.alter_partition(controller.metadata(before, cfg), request)
        return _rule_outcome(result)
    if name in (
        "fence",
        "unfence",
        "controlled_shutdown",
        "restart",
        "reassign",
        "cancel_reassignment",
        "elect_preferred",
        "elect_unclean",
        "crash",
        "crash_lossy",
        "shutdown_complete",
    ):
        changed = before.partition != after.partition
        return "partition changed" if changed else "partition unchanged"
    if name == "fetch_response":
        response = before.broker(action.actor).fetch_response
        replica = before.broker(action.actor).replica
        assert response is not None
        if not in_fetcher(replica, response):
            return "dropped: no longer in that leader's fetcher"
        for guard in response_guards(cfg):
            if not guard.check(replica, response):
                enabled = guard.enabled(cfg.options.disabled_guards)
                return f"{'dropped' if enabled else 'APPLIED (guard off)'}: {guard.name} fails"
        if response.diverging is not None:
            after_replica = after.broker(action.actor).replica
            to = f" to {after_replica.leo}" if after_replica is not None else ""
            if cfg.truncation == "leader-epoch":
                return f"truncate{to} (diverging epoch {response.diverging[0]})"
            return f"truncate{to}"
        return f"append {len(response.entries)}"
    if name == "delayed_fetch_arrives":
        held = before.broker(action.actor).delayed_fetch
        assert held is not None
        leader = held.leader
        if before.broker(leader).replica == after.broker(leader).replica:
            return "refused or ignored by the leader"
        handled = f"leader {leader} records offset {held.fetch_offset}"
        if before.controller.ap_requests[leader - 1] is None and (
            after.controller.ap_requests[leader - 1] is not None
        ):
            return handled + " and proposes it for the ISR"
        return handled
    if name in ("controller_failover", "controller_catches_up"):
        c = after.controller
        behind = c.decides_from.partition_epoch
        return f"decides from pe {behind} (log at {c.partition.partition_epoch})"
    if name in ("fetch", "fetch_partial"):
        response = after.broker(action.actor).fetch_response
        assert response is not None
        if response.diverging is not None:
            epoch, end = response.diverging
            if cfg.truncation == "high-watermark":
                return f"offset out of range: leader's LEO {end}"
            if cfg.truncation == "kip-101":
                told = "undefined" if end < 0 else str(end)
                return f"end offset of epoch {epoch}: {told}"
            return f"diverging epoch {epoch} end {end}"
        served = f"{len(response.entries)} record(s), HWM {response.hwm}"
        leader = response.leader
        if before.controller.ap_requests[leader - 1] is None and (
            after.controller.ap_requests[leader - 1] is not None
        ):
            return served + f"; leader {leader} proposes it for the ISR"
        return served
    if name == "alter_partition_response":
        answer = before.broker(action.actor).ap_response
        replica = before.broker(action.actor).replica
        assert answer is not None
        if replica is None or replica.role != Role.LEADER or replica.pending != answer.request:
            return "ignored (stale)"
        return "committed" if answer.error == Error.NONE else f"rolled back: {answer.error.value}"
    return "ok"


def _rule_outcome(result: Changed | Unchanged | Rejected) -> str:
    if isinstance(result, Rejected):
        return f"rejected {result.error.value} ({result.guard})"
    if isinstance(result, Changed):
        fields = ",".join(result.record.changed_fields())
        if result.error is not None:
            return f"committed {fields}; answered {result.error.value}"
        return f"committed {fields}"
    return "accepted, no change"
