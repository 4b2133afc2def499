"""The initial state of a model: an established cluster (the anchor specs' Init).

Every broker is running and registered with broker epoch 1 (epochs are compared only per
broker, so equal starting epochs keep spare brokers interchangeable); the partition has the
model's replicas, ISR and leader at leader epoch 1, partition epoch 1; every replica has an empty
log and has applied the one metadata record; the leader knows its ISR followers; the brokers
listed as `fenced` start fenced (the out-of-sync, stale replica of the shipped KIP-966
configuration).
"""

from __future__ import annotations

from typing import Any

from kafkarep.kafka.metadata import BrokerRegistration, BrokerRegistry, PartitionRegistration
from kafkarep.model.config import ModelConfig
from kafkarep.model.controller import eligibility_now
from kafkarep.model.metadata_cache import Eligibility
from kafkarep.model.state import (
    UNKNOWN,
    Broker,
    ClusterState,
    Controller,
    FollowerView,
    Ghost,
    Replica,
    Role,
    Status,
)


def initial_state(cfg: ModelConfig) -> ClusterState:
    partition = PartitionRegistration(
        replicas=cfg.replicas, isr=cfg.isr, leader=cfg.leader, leader_epoch=1, partition_epoch=1
    )
    registry = BrokerRegistry.of(
        {
            b: BrokerRegistration(fenced=b in cfg.fenced, epoch=1, incarnation=0)
            for b in cfg.broker_ids
        }
    )
    eligible = eligibility_now(cfg, registry)
    controller = Controller(
        log=(partition,),
        eligible=(eligible,),
        brokers=registry,
        ap_requests=(None,) * len(cfg.broker_ids),
        min_isr=(cfg.min_isr,),
        min_isr_now=cfg.min_isr,
    )
    brokers = tuple(
        Broker(
            status=Status.RUNNING,
            epoch=1,
            incarnation=0,
            applied_epoch=partition.partition_epoch,
            initialised=True,
            replica=_replica(cfg, partition, b, eligible),
        )
        for b in cfg.broker_ids
    )
    return ClusterState(controller, brokers, Ghost(), cfg.budget)


def _replica(
    cfg: ModelConfig, partition: PartitionRegistration, broker_id: int, eligible: Eligibility
) -> Replica | None:
    if broker_id not in partition.replicas:
        return None
    if broker_id == partition.leader:
        followers = tuple(
            FollowerView(0, 1, True, True) if b in partition.isr and b != broker_id else UNKNOWN
            for b in cfg.broker_ids
        )
        return Replica(
            role=Role.LEADER,
            view=partition,
            maximal_isr=partition.isr,
            followers=followers,
            eligible=eligible,
            min_isr=cfg.min_isr,
        )
    role = Role.FOLLOWER if partition.leader > 0 else Role.NONE
    return Replica(role=role, view=partition, maximal_isr=partition.isr)


def with_initial(cfg: ModelConfig, initial: dict[str, Any] | None) -> ModelConfig:
    """The model started from another initial ISR, leader and fenced set of its shape, as a
    trace found from that state records it (`initial` in a trace's metadata, written by
    `kafkarep prove`, whose bounded model checking starts from every initial state). One the
    model file could not give (the same rules as `[cluster]`) is a ValueError saying why."""
    if not initial:
        return cfg
    isr = frozenset(int(b) for b in initial["isr"])
    leader = int(initial["leader"])
    fenced = frozenset(int(b) for b in initial["fenced"])
    if not isr <= set(cfg.replicas):
        raise ValueError(f"isr {sorted(isr)} is not a subset of the replicas {list(cfg.replicas)}")
    if not fenced <= set(cfg.broker_ids):
        raise ValueError(f"fenced {sorted(fenced)} names a broker the model does not have")
    if leader != -1 and leader not in isr:
        raise ValueError(f"leader {leader} is not in the isr {sorted(isr)}")
    if leader in fenced:
        raise ValueError(f"leader {leader} cannot start fenced")
    return cfg._replace(isr=isr, leader=leader, fenced=fenced)
