"""A change of the topic's `min.insync.replicas`, as the controller commits it.

The configuration record itself is not a partition change (the model keeps the MinISR in force
beside the metadata log, `state.Controller`). Since Kafka 4.0.0 (KAFKA-16540), with ELR on, the
controller appends a ClearElrRecord to the same atomic batch
(`ConfigurationControlManager.createClearElrRecordsAsNeeded`), which every node replays as a
partition change emptying the ELR and the last known ELR of each partition that has either
(`ReplicationControlManager.removeTopicElrs`, `TopicDelta.replay(ClearElrRecord)`, both read at
4.0.0 and 4.1.0): an ELR member was chosen for the old MinISR, and under a lower one the HWM
may advance without it. 3.9 has no ClearElrRecord. Written once for every domain.
"""

from __future__ import annotations

from kafkarep.kafka.releases import behaviour
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard
from kafkarep.rules.outcome import Outcome
from kafkarep.rules.partition_change import committed
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, not_, or_


@guard("min_isr_change")
def clears_elr(m: Metadata) -> Term:
    """KAFKA-16540 (4.0.0): with ELR on, a MinISR change clears the ELR and the last known ELR.
    (A step, not a predicate: switching it off keeps them, as 3.9 does.)"""
    return m.options.elr_enabled and behaviour(m.options.kafka_version).clears_elr_on_min_isr_change


def change_min_isr(m: Metadata) -> Outcome:
    """The partition change a MinISR change commits with it: none, or the ELR cleared. `m` is
    the metadata under the new MinISR."""
    d, p = domain_of(m), m.partition
    record = Record(d, p)
    if not clears_elr.enabled(m.options.disabled_guards):
        return committed(m, record)
    held = or_(not_(d.is_empty(p.elr)), not_(d.is_empty(p.last_known_elr)))
    held = and_(clears_elr.check(m), held)
    record.set("elr", held, d.empty)
    record.set("last_known_elr", held, d.empty)
    return committed(m, record)
