"""Reading and replacing the parts of a symbolic state, as the concrete state's methods do
(`ClusterState.with_broker`, `Budget.spend`, `Replica.last_epoch`, ...)."""

from __future__ import annotations

from typing import Any

from kafkarep import rules
from kafkarep.kafka.errors import Error
from kafkarep.model.actions.data import fetch_offset_matches
from kafkarep.model.actions.lifecycle import tracks_recovery_point
from kafkarep.model.domain import Domain
from kafkarep.symbolic import ops
from kafkarep.symbolic.domain import AlterPartition, Terms, decided
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, imin, implies, ite, ne
from kafkarep.symbolic.state import (
    ERROR,
    LEADER,
    UNKNOWN_FOLLOWER,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    ClusterState,
    FetchResponse,
    FollowerView,
    PartitionRegistration,
    Replica,
    View,
)
from kafkarep.symbolic.transition.controller import commit, eligibility_now, metadata
from kafkarep.symbolic.transition.ghost import advance_hwm, receive
from kafkarep.symbolic.transition.logs import cut, epochs


class Cluster(Terms, Domain):
    """The prover's domain for the model's own conditions (`kafkarep/model/domain.py`): broker
    sets as `Terms` has them, an absent part its `present` flag, a log its LEO and the epoch at
    each offset."""

    def present(self, part: Any) -> Term:
        return part.present

    def broker_registration(self, state: Any, broker: int) -> Any:
        return state.registry[broker - 1]

    def ap_request(self, state: Any, broker: int) -> Any:
        return state.ap_requests[broker - 1]

    def pending(self, replica: Any) -> Term:
        return replica.pending

    def min_isr(self, replica: Any) -> Term:
        # the prover encodes no change of min.insync.replicas (`Encoding` refuses one)
        return self.enc.cfg.min_isr

    def same_log(self, a: Any, b: Any) -> Term:
        return and_(eq(a.leo, b.leo), *(eq(x, y) for x, y in zip(a.log, b.log, strict=True)))

    def knows(self, leader: Any, follower: int, leo: Any, broker_epoch: Any) -> Term:
        known = leader.followers[follower - 1]
        return and_(
            eq(known.leo, leo),
            eq(known.broker_epoch, broker_epoch),
            eq(known.fetched_this_epoch, True),
            eq(known.caught_up, True),
        )

    def eligibility_now(self, cfg: Any, state: Any) -> Any:
        return eligibility_now(state.registry)

    def same_eligibility(self, a: Any, b: Any) -> Term:
        return and_(*(eq(x, y) for x, y in zip(a, b, strict=True)))

    def decide(self, cfg: Any, state: Any, rule: str, request: Any) -> Any:
        return decided(getattr(rules, rule)(metadata(self.enc, state), request))

    def commit_rule(self, cfg: Any, state: Any, rule: str, request: Any) -> Any:
        return commit(self.enc, state, self.decide(cfg, state, rule, request))

    def spend(self, state: Any, budget: str) -> Any:
        return spend(state, budget)

    def with_broker(self, state: Any, broker_id: int, broker: Any) -> Any:
        return with_broker(state, broker_id, broker)

    def pick_state(self, c: Term, a: Any, b: Any) -> Any:
        return self.enc.merge(c, a, b, ClusterState)

    def pick_replica(self, c: Term, a: Any, b: Any) -> Any:
        return self.enc.merge(c, a, b, Replica)

    def no_replica(self) -> Any:
        return self.enc.no_replica()

    def no_fetch_response(self) -> Any:
        return self.enc.no_fetch_response()

    def no_ap_response(self) -> Any:
        return self.enc.no_ap_response()

    def nack_unacked(self, state: Any, broker_id: int) -> Any:
        replica = state.brokers[broker_id - 1].replica
        return with_replica(state, broker_id, nack_unacked(self.enc, replica))

    def cut_log(self, replica: Any, offset: Any) -> Any:
        return replica._replace(log=cut(replica.log, offset), leo=offset)

    def stopped_replica(self, replica: Any, hwm: Any, recovery_point: Any) -> Any:
        return self.enc.new_replica(replica.log, replica.leo, hwm, recovery_point)

    def with_replica(self, state: Any, broker_id: int, replica: Any) -> Any:
        return with_replica(state, broker_id, replica)

    def recovery(self, view: Any) -> Any:
        return view.recovering

    def ap_request_for(
        self,
        broker_id: int,
        broker_epoch: Any,
        view: Any,
        isr: Any,
        epochs: tuple[Any, ...],
        recovering: Any,
    ) -> Any:
        sets = self.enc.sets
        member_epochs = tuple(
            ite(sets.has(isr, member), epoch, 0) for member, epoch in enumerate(epochs, start=1)
        )
        return AlterPartitionRequest(
            True,
            view.leader_epoch,
            view.partition_epoch,
            isr,
            member_epochs,
            recovering,
            broker_epoch,
        )

    def pending_proposal(self, replica: Any, isr: Any, partition_epoch: Any) -> Any:
        return replica._replace(
            pending=True, pending_isr=isr, pending_partition_epoch=partition_epoch
        )

    def with_ap_request(self, state: Any, broker_id: int, request: Any) -> Any:
        return with_ap_request(state, broker_id, request)

    def no_ap_request(self) -> Any:
        return self.enc.no_ap_request()

    def alter_partition(self, cfg: Any, state: Any, broker_id: int, request: Any) -> Any:
        asked = AlterPartition(broker_id, request, self.enc.sets)
        outcome = decided(rules.alter_partition(metadata(self.enc, state), asked))
        return commit(self.enc, state, outcome), outcome.error

    def ap_response_for(self, request: Any, error: Any, partition: Any) -> Any:
        failed = ne(error, ERROR[Error.NONE])
        p = partition
        return AlterPartitionResponse(
            True,
            request.isr,
            request.partition_epoch,
            error,
            ite(failed, -1, p.leader),
            ite(failed, -1, p.leader_epoch),
            ite(failed, -1, p.partition_epoch),
            self.enc.sets.ite(failed, 0, p.isr),
            ite(failed, False, p.recovering),
        )

    def pick_ap_response(self, c: Term, a: Any, b: Any) -> Any:
        return self.enc.merge(c, a, b, AlterPartitionResponse)

    def status(self, status: Any) -> Any:
        return int(status)

    def commits(self, cfg: Any, state: Any, rule: str, request: Any) -> Term:
        return self.decide(cfg, state, rule, request).changed

    def entries(self, replica: Any) -> Any:
        return epochs(replica)

    def write(self, cfg: Any, state: Any, replica: Any) -> Any:
        o = replica.leo
        log = tuple(ite(eq(k, o), replica.view.leader_epoch, e) for k, e in enumerate(replica.log))
        return replica._replace(leo=o + 1, log=log)

    def received_by_writer(self, state: Any, broker_id: int, offset: Any) -> Any:
        r = state.brokers[broker_id - 1].replica
        s = self.enc.sets
        received = tuple(
            s.ite(eq(k, offset), s.bit(broker_id), x) for k, x in enumerate(r.received)
        )
        return with_replica(state, broker_id, r._replace(received=received))

    def receive(self, state: Any, broker_id: int, when: Term, before: Any, after: Any) -> Any:
        return receive(self.enc, state, broker_id, when, before.leo, after.leo, after.log)

    def diverging(self, response: Any) -> Term:
        return response.diverging

    def divergence(self, response: Any) -> Any:
        return response.diverging_epoch, response.diverging_end

    def truncated(self, replica: Any, offset: Any) -> Any:
        tracked = tracks_recovery_point(self.enc.cfg)
        return replica._replace(
            log=cut(replica.log, offset),
            leo=offset,
            hwm=imin(replica.hwm, offset),
            recovery_point=(
                imin(replica.recovery_point, offset) if tracked else replica.recovery_point
            ),
        )

    def append_entries(self, replica: Any, response: Any) -> Any:
        r, a = replica, response
        leo = r.leo + (a.end - a.fetch_offset)
        if self.enc.guard_on(fetch_offset_matches):
            log = tuple(
                ite(k < r.leo, e, x) for k, (e, x) in enumerate(zip(r.log, a.entries, strict=True))
            )
        else:  # the guard off: the entries land at the follower's LEO, wherever it fetched from
            log = tuple(
                ite(
                    k < r.leo,
                    e,
                    ite(k < leo, ops.select(a.entries, k - r.leo + a.fetch_offset, 0), 0),
                )
                for k, e in enumerate(r.log)
            )
        return r._replace(log=log, leo=leo)

    def committed_any(self, state: Any) -> Term:
        return state.ghost.true_hwm > 0

    def holds_committed(self, state: Any, replica: Any) -> Term:
        g = state.ghost
        return and_(
            replica.leo >= g.true_hwm,
            *(implies(o < g.true_hwm, eq(replica.log[o], c)) for o, c in enumerate(g.committed)),
        )

    def holds_acked(self, state: Any, replica: Any) -> Term:
        r = replica
        pos = state.ghost.pos_acked
        return and_(*(ops.epochs_within(p, r.log[o], o < r.leo) for o, p in enumerate(pos)))

    def flagged(self, witness: Any) -> Term:
        return witness

    def replicas_of(self, registration: Any) -> Any:
        return self.members(registration.replicas)

    def view(self, registration: Any) -> Any:
        return view_of(self.enc, registration)

    def led_view(self, registration: Any) -> Any:
        return view_of(self.enc, registration)._replace(recovering=False)

    def role(self, role: Any) -> Any:
        return int(role)

    def replica_or_new(self, replica: Any) -> Any:
        return self.enc.merge(replica.present, replica, self.enc.new_replica(), Replica)

    def with_cache(self, replica: Any, eligible: Any, min_isr: Any) -> Any:
        # min.insync.replicas is the model's (`Encoding` refuses a change of it)
        return replica._replace(eligible=eligible)

    def unknown_follower(self, caught_up: Term) -> Any:
        return UNKNOWN_FOLLOWER._replace(caught_up=caught_up)

    def no_pending(self, replica: Any) -> Any:
        return replica._replace(pending=False, pending_isr=0, pending_partition_epoch=0)

    def pending_if(self, replica: Any, keep: Term) -> Any:
        r = replica
        return r._replace(
            pending=keep,
            pending_isr=self.enc.sets.ite(keep, r.pending_isr, 0),
            pending_partition_epoch=ite(keep, r.pending_partition_epoch, 0),
        )

    def pending_epoch(self, replica: Any) -> Any:
        return replica.pending_partition_epoch

    def pending_isr(self, replica: Any) -> Any:
        return replica.pending_isr

    def unacked_dropped(self, replica: Any) -> Any:
        return nack_unacked(self.enc, replica)

    def not_leading(self, replica: Any) -> Any:
        return self.no_pending(nack_unacked(self.enc, replica))._replace(
            followers=(UNKNOWN_FOLLOWER,) * self.enc.n, eligible=self.enc.nobody_eligible()
        )

    def leads_since(self, before: Any, after: Any, broker_id: int, registration: Any) -> Any:
        """`Ghost.led_since`: a broker that becomes leader leads since the registration's
        epoch; a leader the registration keeps leading (a new epoch with the same leader) since
        when it did. Kept only where a reassignment's completion can keep a leader."""
        if not self.enc.reassigning:
            return after
        role = before.brokers[broker_id - 1].replica.role
        g = after.ghost
        since = list(g.led_since)
        began = registration.leader_epoch
        since[broker_id - 1] = ite(eq(role, LEADER), since[broker_id - 1], began)
        return after._replace(ghost=g._replace(led_since=tuple(since)))

    def pick_set(self, c: Term, a: Any, b: Any) -> Any:
        return self.enc.sets.ite(c, a, b)

    def retriable_answers(self) -> bool:
        return False

    def error(self, error: Any) -> Any:
        return ERROR[error]

    def answers_pending(self, replica: Any, answer: Any) -> tuple[Term, ...]:
        return (
            replica.pending,
            self.enc.sets.eq(replica.pending_isr, answer.request_isr),
            eq(replica.pending_partition_epoch, answer.request_partition_epoch),
        )

    def rolled_back(self, replica: Any) -> Any:
        return replica._replace(
            pending=False, pending_isr=0, pending_partition_epoch=0, maximal_isr=replica.view.isr
        )

    def adopted(self, replica: Any, answer: Any) -> Any:
        a = answer
        view = replica.view._replace(
            isr=a.isr, partition_epoch=a.partition_epoch, recovering=a.recovering
        )
        return replica._replace(
            pending=False, pending_isr=0, pending_partition_epoch=0, view=view, maximal_isr=a.isr
        )

    def follower_view(self, leo: Any, broker_epoch: Any, this_epoch: Any, caught_up: Any) -> Any:
        return FollowerView(leo, broker_epoch, this_epoch, caught_up)

    def fetch_answer(self, leader_id: int, epoch: Any, fetch_offset: Any, leader: Any) -> Any:
        entries = tuple(
            ite(and_(fetch_offset <= k, k < leader.leo), e, 0) for k, e in enumerate(leader.log)
        )
        return FetchResponse(
            True, leader_id, epoch, fetch_offset, leader.hwm, leader.leo, entries, False, 0, 0
        )

    def refusal(
        self, leader_id: int, epoch: Any, fetch_offset: Any, hwm: Any, at_epoch: Any, end: Any
    ) -> Any:
        none = (0,) * self.enc.r
        return FetchResponse(
            True, leader_id, epoch, fetch_offset, hwm, fetch_offset, none, True, at_epoch, end
        )

    def pick_response(self, c: Term, a: Any, b: Any) -> Any:
        return self.enc.merge(c, a, b, FetchResponse)

    def advance_hwm(self, cfg: Any, state: Any, broker_id: int, when: Term, hwm: Term) -> Any:
        return advance_hwm(self.enc, state, broker_id, when, hwm)


def nack_unacked(enc: Encoding, r: Replica) -> Replica:
    """nack_unacked: the leader's unacknowledged writes fail; nobody tracks their receivers."""
    return r._replace(unacked_from=-1, received=(0,) * enc.r)


def with_broker(sym: ClusterState, broker: int, b: Broker) -> ClusterState:
    brokers = list(sym.brokers)
    brokers[broker - 1] = b
    return sym._replace(brokers=tuple(brokers))


def with_replica(sym: ClusterState, broker: int, r: Replica) -> ClusterState:
    return with_broker(sym, broker, sym.brokers[broker - 1]._replace(replica=r))


def with_ap_request(sym: ClusterState, broker: int, request: AlterPartitionRequest) -> ClusterState:
    requests = list(sym.ap_requests)
    requests[broker - 1] = request
    return sym._replace(ap_requests=tuple(requests))


def spend(sym: ClusterState, budget: str) -> ClusterState:
    return sym._replace(budget=sym.budget._replace(**{budget: getattr(sym.budget, budget) - 1}))


def view_of(enc: Encoding, snapshot: PartitionRegistration) -> View:
    return View(
        True,
        snapshot.leader,
        snapshot.leader_epoch,
        snapshot.partition_epoch,
        snapshot.isr,
        Terms(enc).members(snapshot.replicas),
        snapshot.recovering,
    )
