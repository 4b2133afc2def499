"""What a reproduction compares: the fields of a state that both the model and a real cluster's
records carry, named alike on both sides (`recorded.py` reads the cluster's).

A step is checked on the fields it changed in the model (`changed`): Kafka may take a finer step
of the model early (a metadata publication carries every record committed so far), so a field the
step leaves alone is not held to the model's value then. Partition and leader epochs are the
model's: the cluster's are shifted by what its set-up took (`setup.Offsets`)."""

from __future__ import annotations

from typing import Any

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState, Role

View = dict[str, Any]


def model_view(cfg: ModelConfig, state: ClusterState) -> View:
    partition = state.partition
    view: View = {
        "controller.leader": partition.leader,
        "controller.isr": sorted(partition.isr),
        "controller.partition_epoch": partition.partition_epoch,
        "controller.leader_epoch": partition.leader_epoch,
        "controller.fenced": sorted(
            b for b in state.controller.brokers.ids() if not state.controller.brokers.is_active(b)
        ),
        "acked": len(state.ghost.pos_acked),
    }
    if cfg.options.elr_enabled:
        view["controller.elr"] = sorted(partition.elr)
    for broker_id in range(1, len(state.brokers) + 1):
        view.update(_broker_view(state, broker_id))
    return view


def _broker_view(state: ClusterState, broker_id: int) -> View:
    broker = state.broker(broker_id)
    replica = broker.replica
    if replica is None or not broker.status.running or replica.view is None:
        return {}
    at = f"b{broker_id}"
    view: View = {f"{at}.log_end": replica.leo, f"{at}.hwm": replica.hwm}
    if replica.role != Role.LEADER:
        view[f"{at}.role"] = "follower"
        return view
    view[f"{at}.role"] = "leader"
    view[f"{at}.isr"] = sorted(replica.view.isr)
    view[f"{at}.partition_epoch"] = replica.view.partition_epoch
    view[f"{at}.pending"] = sorted(replica.pending.isr) if replica.pending else None
    for follower_id, follower in enumerate(replica.followers, 1):
        if follower_id != broker_id and follower.leo >= 0:
            view[f"{at}.follower{follower_id}"] = follower.leo
    return view


def changed(before: View, after: View) -> View:
    """The fields a step changed, with their values after it."""
    return {k: v for k, v in after.items() if before.get(k, _ABSENT) != v}


def differences(expected: View, recorded: View) -> list[str]:
    """Each expected field the cluster's records do not have, as `field: Kafka's, the model's`."""
    return [
        f"{k} is {recorded.get(k, 'unrecorded')}, the model's {v}"
        for k, v in sorted(expected.items())
        if recorded.get(k, _ABSENT) != v
    ]


_ABSENT = object()
