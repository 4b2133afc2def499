"""Controller failover (`[faults] controller_failovers`): a new active controller of the KRaft
quorum takes over.

In Kafka it acts only once it has replayed the metadata log to the start of its leader epoch
(`KafkaRaftClient.maybeFireLeaderChange`, Kafka 4.1.0; KIP-595, KIP-631): it has every committed
record, and the requests in flight to the old controller are sent again to it
(`NodeToControllerChannelManager` on NOT_CONTROLLER), which this model's single controller
already covers. So with the guard `controller_failover.replayed_to_epoch_start` on, a failover
changes nothing here and the family offers none.

With the guard off, the new controller lags the metadata log by up to `[faults] controller_lag`
partition records, as a controller that skipped that wait, or a deposed one still answering,
would: it decides every request from the older snapshot (`Controller.decides_from`), and a
record it writes is a change record that brokers replay on top of the log as it is
(`PartitionRegistration.merge`). After its write, or a `controller_catches_up` step (healing,
free), it is current again.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkarep.model.actions.base import CONTROLLER, Action, Family
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.rules.guards import guard


@guard("controller_failover")
def replayed_to_epoch_start(lag: int) -> bool:
    """The new active controller has replayed every committed record before it acts
    (`KafkaRaftClient.maybeFireLeaderChange`, Kafka 4.1.0)."""
    return lag == 0


def failover_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.controller_failovers == 0:
        return
    disabled = cfg.options.disabled_guards
    for lag in range(1, min(cfg.controller_lag, len(state.controller.log) - 1) + 1):
        if replayed_to_epoch_start.passes(disabled, lag):
            yield Action("controller_failover", CONTROLLER, lag)


def failover(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    state = state._replace(budget=state.budget.spend("controller_failovers"))
    return state._replace(controller=state.controller._replace(lag=action.arg))


def catch_up_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.controller.lag > 0:
        yield Action("controller_catches_up", CONTROLLER)


def catch_up(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return state._replace(controller=state.controller._replace(lag=0))


def _can_lag(cfg: ModelConfig) -> bool:
    return cfg.budget.controller_failovers > 0 and not replayed_to_epoch_start.enabled(
        cfg.options.disabled_guards
    )


def describe_decides_from(
    cfg: ModelConfig, before: ClusterState, action: Action, after: ClusterState
) -> str:
    c = after.controller
    return (
        f"decides from pe {c.decides_from.partition_epoch} (log at {c.partition.partition_epoch})"
    )


FAMILIES = (
    Family(
        "controller_failover",
        failover_actions,
        failover,
        "controller_failovers",
        "a new active controller takes over, behind the metadata log",
        _can_lag,
        describe_decides_from,
    ),
    Family(
        "controller_catches_up",
        catch_up_actions,
        catch_up,
        None,
        "the active controller replays the records it missed",
        _can_lag,
        describe_decides_from,
    ),
)
