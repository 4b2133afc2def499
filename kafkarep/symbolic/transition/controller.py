"""The controller side of a step (`kafkarep/model/controller.py`): call the controller rules on
the symbolic state and commit what they decide to the metadata log."""

from __future__ import annotations

from typing import Any

from kafkarep.model.metadata_cache import entry
from kafkarep.symbolic.domain import Outcome, Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, ite
from kafkarep.symbolic.state import BrokerRegistration, ClusterState, PartitionRegistration


def record_at(
    enc: Encoding, metadata_log: tuple[PartitionRegistration, ...], partition_epoch: Term
) -> PartitionRegistration:
    if isinstance(partition_epoch, int):
        return (
            metadata_log[partition_epoch - 1]
            if 1 <= partition_epoch <= len(metadata_log)
            else enc.blank_registration()
        )
    out = enc.blank_registration()
    for k in range(
        min(len(metadata_log), enc.partition_epoch_limit or len(metadata_log)) - 1, -1, -1
    ):
        out = enc.merge(eq(partition_epoch, k + 1), metadata_log[k], out, PartitionRegistration)
    return out


def append_record(
    enc: Encoding,
    metadata_log: tuple[PartitionRegistration, ...],
    when: Term,
    snapshot: PartitionRegistration,
) -> tuple[PartitionRegistration, ...]:
    """Record a committed snapshot at its partition epoch. Without a capacity (concrete
    evaluation) the log grows; with one, it is a fixed tuple of slots."""
    if enc.abstract_history:
        return metadata_log
    if not enc.capacity:
        assert isinstance(when, bool)
        return metadata_log + (snapshot,) if when else metadata_log
    limit = enc.partition_epoch_limit + 1 if enc.partition_epoch_limit else len(metadata_log)
    return tuple(
        enc.merge(
            and_(when, eq(snapshot.partition_epoch, k + 1)), snapshot, h, PartitionRegistration
        )
        if k < limit
        else h
        for k, h in enumerate(metadata_log)
    )


def metadata(enc: Encoding, sym: ClusterState) -> Any:
    """What the controller rules read of a symbolic state."""
    return Terms(enc).metadata(sym.partition, sym.registry)


def commit(enc: Encoding, sym: ClusterState, outcome: Outcome) -> ClusterState:
    """Adopt what a controller rule decided: append a committed change record to the metadata
    log, and take the broker registry it leaves."""
    registry = sym.registry if outcome.brokers is None else outcome.brokers.registrations
    eligible = tuple(
        ite(outcome.changed, now, before)
        for now, before in zip(eligibility_now(registry), sym.partition.eligible, strict=True)
    )
    partition = outcome.partition._replace(eligible=eligible)
    return sym._replace(
        partition=partition,
        metadata_log=append_record(enc, sym.metadata_log, outcome.changed, partition),
        registry=registry,
    )


def eligibility_now(registry: tuple[BrokerRegistration, ...]) -> tuple[Term, ...]:
    """Each broker's ISR eligibility in a cache that has applied this registry (the model's
    `metadata_cache.entry`; the prover encodes no ZooKeeper-era controller)."""
    return tuple(entry(r, zookeeper=False) for r in registry)
