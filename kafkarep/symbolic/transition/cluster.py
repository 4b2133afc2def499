"""Reading and replacing the parts of a symbolic state, as the concrete state's methods do
(`ClusterState.with_broker`, `Budget.spend`, `Replica.last_epoch`, ...)."""

from __future__ import annotations

from typing import Any

from kafkarep import rules
from kafkarep.kafka.errors import Error
from kafkarep.model.domain import Domain
from kafkarep.symbolic.domain import AlterPartition, Terms, decided
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, ite, ne
from kafkarep.symbolic.state import (
    ERROR,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    ClusterState,
    PartitionRegistration,
    Replica,
    View,
)
from kafkarep.symbolic.transition.controller import commit, eligibility_now, metadata
from kafkarep.symbolic.transition.hwm import advance_hwm
from kafkarep.symbolic.transition.logs import cut


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
