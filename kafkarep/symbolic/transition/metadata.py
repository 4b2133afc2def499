"""A broker acting on the metadata (`kafkarep/model/actions/metadata.py`): applying a partition
record, and its metadata cache taking the brokers' registrations."""

from __future__ import annotations

from kafkarep.model.actions.metadata import (
    act_on as act,
)
from kafkarep.model.actions.metadata import (
    apply_enabled,
    apply_registrations_enabled,
    apply_registrations_step,
)
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, implies
from kafkarep.symbolic.state import (
    ClusterState,
    PartitionRegistration,
)
from kafkarep.symbolic.transition.cluster import (
    Cluster,
    with_broker,
)
from kafkarep.symbolic.transition.controller import record_at
from kafkarep.symbolic.transition.instance import Build, Instance, per_broker


def apply_metadata(enc: Encoding, broker: int) -> list[Instance]:
    """The argument is the partition epoch of the record applied; with an abstract history
    (induction) it is the record itself, any record the history facts allow."""

    def guard(sym: ClusterState, partition_epoch: Term) -> Term:
        return apply_enabled(sym, broker, partition_epoch)

    def update(sym: ClusterState, partition_epoch: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        snapshot = record_at(enc, sym.metadata_log, partition_epoch)
        sym = with_broker(sym, broker, b._replace(applied_epoch=partition_epoch, initialised=True))
        return act_on(enc, sym, broker, snapshot)

    def guard_record(sym: ClusterState, snapshot: PartitionRegistration) -> Term:
        same = and_(*enc.equal(snapshot, sym.partition, PartitionRegistration))
        facts = enc.history(enc, snapshot, sym, broker) if enc.history is not None else True
        return and_(
            guard(sym, snapshot.partition_epoch),
            implies(eq(snapshot.partition_epoch, sym.partition.partition_epoch), same),
            facts,
        )

    def update_record(sym: ClusterState, snapshot: PartitionRegistration) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=snapshot.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, snapshot)

    def guard_latest(sym: ClusterState, _: Term) -> Term:
        return guard(sym, sym.partition.partition_epoch)

    def update_latest(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=sym.partition.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, sym.partition)

    if enc.abstract_history:
        return [Instance("apply_metadata", broker, None, "h", guard_record, update_record)]
    if enc.latest_metadata:
        return [Instance("apply_metadata", broker, "latest", None, guard_latest, update_latest)]
    return [Instance("apply_metadata", broker, None, "i", guard, update)]


def apply_registrations(enc: Encoding, broker: int) -> list[Instance]:
    d = Cluster(enc)

    def guard(sym: ClusterState, _: Term) -> Term:
        return apply_registrations_enabled(d, enc.cfg, sym, broker)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return apply_registrations_step(d, enc.cfg, sym, broker)

    return [Instance("apply_registrations", broker, None, None, guard, update)]


def act_on(
    enc: Encoding, sym: ClusterState, broker: int, snapshot: PartitionRegistration
) -> ClusterState:
    """The model's `act_on` on the prover's domain: the broker has applied the snapshot, whose
    registration carries the ISR eligibility its cache takes."""
    return act(Cluster(enc), enc.cfg, sym, broker, snapshot, snapshot.eligible, None)


FAMILIES: dict[str, Build] = {
    "apply_metadata": per_broker(apply_metadata),
    "apply_registrations": per_broker(apply_registrations),
}
