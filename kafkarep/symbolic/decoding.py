"""From solver models back to the concrete model: BMC counterexamples become action-index paths
replayed through the concrete rules (the standard step table and ITF trace, confirmed by
`kafkarep replay`); counterexamples to induction become a before/after pair of concrete states.

A BMC run may start from an initial state of the model's shape other than the model's own (a
different ISR, leader or fenced set). The trace then records it under `initial` in its metadata,
and replay builds that initial state (`with_initial`).
"""

from __future__ import annotations

from typing import Any

from kafkarep import properties as registry
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    BrokerRegistration,
    BrokerRegistry,
    LeaderRecoveryState,
    PartitionRegistration,
)
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import with_initial
from kafkarep.model.replay import Trace, replay_path
from kafkarep.model.state import (
    AlterPartitionResponse,
    Broker,
    Budget,
    ClusterState,
    Controller,
    FetchResponse,
    FollowerView,
    Ghost,
    PendingAlterPartition,
    Replica,
    Role,
    Status,
)
from kafkarep.rules.alter_partition import AlterPartitionRequest
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.bmc import Counterexample
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.state import ERRORS, LEADER
from kafkarep.symbolic.transition import Relation


class DecodingError(Exception):
    """A symbolic counterexample the concrete rules do not follow: the encoding and the rules
    disagree (the agreement test should have caught it)."""


def initial_of(cfg: ModelConfig, cex: Counterexample) -> dict[str, Any] | None:
    isr, leader, fenced = cex.initial
    if (isr, leader, fenced) == (cfg.isr, cfg.leader, cfg.fenced):
        return None
    return {"isr": sorted(isr), "leader": leader, "fenced": sorted(fenced)}


def concrete_trace(cfg: ModelConfig, enc: Encoding, cex: Counterexample) -> Trace:
    """Replay a counterexample's steps through the concrete rules, as an action-index path."""
    cfg = with_initial(cfg, initial_of(cfg, cex))
    rel = Relation(enc)
    trace = replay_path(cfg, ())
    state = trace.initial
    path: list[int] = []
    for number, step in enumerate(cex.steps, start=1):
        action = rel.action(step.instance, step.arg, state)
        options = [a for a, _ in successors(cfg, state)]
        if action not in options:
            raise DecodingError(
                f"step {number}: {action.describe()} is not enabled in the concrete model"
            )
        index = options.index(action)
        path.append(index)
        state = list(successors(cfg, state))[index][1]
    return replay_path(cfg, tuple(path))


def clause_check(clause: str, cfg: ModelConfig) -> Any:
    prop_name, _, clause_name = clause.partition(".")
    for c in registry.by_name(cfg)[prop_name].clauses:
        if c.name == clause_name:
            return c.check
    raise KeyError(clause)


# --- symbolic states as concrete ones (for counterexamples to induction) ----------------------


class Concretiser:
    """Builds a concrete ClusterState from a symbolic one's values, naming each distinct record
    (offset, epoch) by a value id."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.values: dict[tuple[int, int], int] = {}

    def value(self, offset: int, epoch: int) -> int:
        key = (offset, epoch)
        if key not in self.values:
            self.values[key] = len(self.values) + 1
        return self.values[key]

    def members(self, mask: int) -> frozenset[int]:
        return self.enc.sets.members(mask)

    def registration(self, s: symbolic.PartitionRegistration) -> PartitionRegistration:
        return PartitionRegistration(
            replicas=tuple(r for r in s.replicas if r != 0),
            isr=self.members(s.isr),
            leader=s.leader,
            leader_epoch=s.leader_epoch,
            partition_epoch=s.partition_epoch,
            elr=self.members(s.elr),
            last_known_elr=self.members(s.last_known_elr),
            adding=self.members(s.adding),
            removing=self.members(s.removing),
            leader_recovery_state=_recovery(s.recovering),
        )

    def view(self, v: symbolic.View) -> PartitionRegistration | None:
        if not v.present:
            return None
        return PartitionRegistration(
            replicas=tuple(sorted(self.members(v.replicas))),
            isr=self.members(v.isr),
            leader=v.leader,
            leader_epoch=v.leader_epoch,
            partition_epoch=v.partition_epoch,
            leader_recovery_state=_recovery(v.recovering),
        )

    def log(self, epochs: tuple[int, ...], start: int, end: int) -> tuple[tuple[int, int], ...]:
        end = min(end, len(epochs))  # beyond the record budget: not a state of the model
        return tuple((epochs[o], self.value(o, epochs[o])) for o in range(max(start, 0), end))

    def replica(self, r: symbolic.Replica) -> Replica | None:
        if not r.present:
            return None
        followers: tuple[FollowerView, ...] = ()
        eligible: tuple[int, ...] = ()
        if r.role == LEADER:
            followers = tuple(
                FollowerView(f.leo, f.broker_epoch, f.fetched_this_epoch, f.caught_up)
                for f in r.followers
            )
            eligible = tuple(r.eligible)
        return Replica(
            log=self.log(r.log, 0, r.leo),
            hwm=r.hwm,
            role=Role(r.role),
            view=self.view(r.view),
            maximal_isr=self.members(r.maximal_isr),
            leso=r.leso,
            followers=followers,
            pending=(
                PendingAlterPartition(self.members(r.pending_isr), r.pending_partition_epoch)
                if r.pending
                else None
            ),
            unacked_from=r.unacked_from,
            eligible=eligible,
            recovery_point=r.recovery_point,
            min_isr=self.enc.cfg.min_isr if r.role == LEADER else 0,
        )

    def state(self, sym: symbolic.ClusterState) -> ClusterState:
        enc = self.enc
        # a counterexample to induction may leave a non-replica's position unconstrained
        low = max(1, min(min(b.applied_epoch for b in sym.brokers), sym.partition.partition_epoch))
        log = []
        eligible = []
        for partition_epoch in range(low, sym.partition.partition_epoch + 1):
            if partition_epoch == sym.partition.partition_epoch:
                log.append(self.registration(sym.partition))
                eligible.append(tuple(sym.partition.eligible))
            elif (
                0 <= partition_epoch - 1 < len(sym.metadata_log)
                and sym.metadata_log[partition_epoch - 1].partition_epoch == partition_epoch
            ):
                log.append(self.registration(sym.metadata_log[partition_epoch - 1]))
                eligible.append(tuple(sym.metadata_log[partition_epoch - 1].eligible))
            else:  # not kept by this encoding (induction): shown as the current one
                log.append(
                    self.registration(sym.partition)._replace(partition_epoch=partition_epoch)
                )
                eligible.append(tuple(sym.partition.eligible))
        registry_ = BrokerRegistry.of(
            {
                b: BrokerRegistration(
                    True, r.fenced, r.in_controlled_shutdown, r.epoch, r.incarnation
                )
                for b, r in enumerate(sym.registry, start=1)
            }
        )
        requests = tuple(
            AlterPartitionRequest(
                broker=b,
                leader_epoch=q.leader_epoch,
                partition_epoch=q.partition_epoch,
                new_isr=tuple((m, q.member_epochs[m - 1]) for m in sorted(self.members(q.isr))),
                leader_recovery_state=_recovery(q.recovering),
                broker_epoch=q.broker_epoch,
            )
            if q.present
            else None
            for b, q in enumerate(sym.ap_requests, start=1)
        )
        brokers = []
        received: dict[int, int] = {}
        for _b, k in enumerate(sym.brokers, start=1):
            r = k.replica
            if r.present and r.unacked_from >= 0:
                for o in range(r.unacked_from, min(r.leo, enc.r)):
                    received[self.value(o, r.log[o])] = r.received[o] >> 1
            f = k.fetch_response
            fetch = (
                FetchResponse(
                    f.leader,
                    f.leader_epoch,
                    f.fetch_offset,
                    f.hwm,
                    self.log(f.entries, f.fetch_offset, f.end),
                    (f.diverging_epoch, f.diverging_end) if f.diverging else None,
                )
                if f.present
                else None
            )
            a = k.ap_response
            answer = (
                AlterPartitionResponse(
                    PendingAlterPartition(self.members(a.request_isr), a.request_partition_epoch),
                    ERRORS[a.error]
                    if 0 <= a.error < len(ERRORS)
                    else Error.UNKNOWN_TOPIC_OR_PARTITION,
                    a.leader,
                    a.leader_epoch,
                    a.partition_epoch,
                    self.members(a.isr),
                    _recovery(a.recovering),
                )
                if a.present
                else None
            )
            brokers.append(
                Broker(
                    status=Status(min(max(k.status, 0), 3)),
                    epoch=k.epoch,
                    incarnation=k.incarnation,
                    applied_epoch=log[
                        min(max(k.applied_epoch - low, 0), len(log) - 1)
                    ].partition_epoch,
                    initialised=k.initialised,
                    replica=self.replica(r),
                    fetch_response=fetch,
                    ap_response=answer,
                )
            )
        g = sym.ghost
        committed = tuple(self.value(o, g.committed[o]) for o in range(min(g.true_hwm, enc.r)))
        pos = frozenset(self.value(o, e) for o, es in enumerate(g.pos_acked) for e in es)
        top = max(received, default=0)
        ghost = Ghost(
            committed=committed,
            pos_acked=pos,
            received=tuple(received.get(v, 0) for v in range(1, top + 1)),
            ack_below_min_isr=(0, 0) if g.ack_below_min_isr else None,
            hwm_below_min_isr=(0, 0) if g.hwm_below_min_isr else None,
        )
        min_isr = self.enc.cfg.min_isr  # the prover's MinISR never changes
        controller = Controller(
            tuple(log),
            tuple(eligible),
            registry_,
            requests,
            min_isr=(min_isr,) * len(log),
            min_isr_now=min_isr,
        )
        return ClusterState(controller, tuple(brokers), ghost, Budget(**sym.budget._asdict()))


def _recovery(recovering: bool) -> LeaderRecoveryState:
    return LeaderRecoveryState.RECOVERING if recovering else LeaderRecoveryState.RECOVERED
