"""What the cluster model's conditions, steps and property predicates compute with, in any
domain.

The controller rules are written once over `kafkarep.rules.terms` and a domain of broker sets
(`kafkarep.rules.domain`). The model's own conditions (when a family's action is enabled), its
steps (what an action does: `fetch_step`, `act_on`, ...) and the predicates of the clauses
`prove` proves (`kafkarep/properties/`) are written once the same way, over a `Domain`: the
rules' set operations, and how a domain holds the parts of a cluster state (absent parts, a log,
a response, a pending proposal, the ghost). `CONCRETE` is the explorer's domain: the model's
NamedTuples, None for an absent part. The prover's (`kafkarep/symbolic/transition/cluster.py`,
a subclass of `Domain`) reads its fixed-shape states (`kafkarep/symbolic/state.py`), where an
absent part is a `present` flag over canonical values and a log is an epoch per offset.

The explorer lists a family's actions by asking its condition of each candidate, after skipping,
on the model's own types, the candidates that fail a cheap conjunct of it (a broker not running,
no response in flight): the condition is what decides. `tests/test_enabled_conditions.py` asks
every candidate of every family on every state of small explorations, of models `prove` does not
encode too, and finds a skip that drops an enabled one; the agreement check
(`tests/test_symbolic_agreement.py`) compares what the explorer lists and does with what the
prover runs, which is where the two domains' operations could part.

A condition or step reads a part only once it knows the part is there: it returns as soon as
what it has checked is the constant False, which on Python values ends the check before an
absent part is read, and on terms never happens (a term is never the constant False). On terms
a step computes every branch and merges them (`pick_state`, `pick_replica`, ...); on Python
values only the branch taken. A conjunction is built flat (one `and_`), as the prover's formulas
were written: a nested `And` changes no verdict but makes other terms for the solver.

Conditions type a state's parts by the protocols of `shapes.py` (or `Any`): compiled, a
parameter typed as one of the model's NamedTuples would be read by position, and the prover's
tuples have other fields in another order. The domain itself is typed `Domain`: compiled, a call
through it is a native method call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mypy_extensions import mypyc_attr

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.model import controller
from kafkarep.model.controller import eligibility_now
from kafkarep.model.hwm import advance_to, nack_unacked
from kafkarep.model.logs import Entries, truncated
from kafkarep.model.state import (
    UNKNOWN,
    AlterPartitionResponse,
    FetchResponse,
    FollowerView,
    PendingAlterPartition,
    Replica,
    Role,
    Status,
)
from kafkarep.rules import AlterPartitionRequest, Changed, Rejected
from kafkarep.rules.terms import Term, and_, eq

CAUGHT_UP = UNKNOWN._replace(caught_up=True)


@mypyc_attr(allow_interpreted_subclasses=True)
class Domain:
    """The explorer's domain, the model's own values (`kafkarep/model/state.py`): broker sets
    are frozensets (as `kafkarep.rules.domain.Values` has them), an absent part is None. The
    prover's subclasses it, overriding every operation. (Every result is typed `Term`: compiled,
    a call through this class takes whatever the prover's operation returns.)"""

    # --- broker sets (`kafkarep.rules.domain`) ---------------------------------------------------

    def has(self, s: Any, broker: Any) -> Term:
        return broker in s

    def size(self, s: Any) -> Term:
        return len(s)

    def subset(self, a: Any, b: Any) -> Term:
        return a <= b

    def minus(self, a: Any, b: Any) -> Term:
        return a - b

    def single(self, broker: Any) -> Term:
        return frozenset((broker,))

    def is_empty(self, s: Any) -> Term:
        return not s

    def union(self, *sets: Any) -> Term:
        return frozenset().union(*sets)

    def for_id(self, broker: Any, test: Callable[[int], Term]) -> Term:
        """test(broker), for a broker id that is a term in the prover's domain."""
        return test(broker)

    # --- the parts of a cluster state ------------------------------------------------------------

    def present(self, part: Any) -> Term:
        """The part (a replica, its view, a response in flight) is there."""
        return part is not None

    def broker_registration(self, state: Any, broker: int) -> Any:
        """The controller's registration of a broker (`BrokerRegistration`)."""
        return state.controller.brokers.get(broker)

    def ap_request(self, state: Any, broker: int) -> Any:
        """The broker's AlterPartition request in flight to the controller, if any."""
        return state.controller.ap_requests[broker - 1]

    def pending(self, replica: Any) -> Term:
        """The leader has an AlterPartition proposal of its own pending."""
        return replica.pending is not None

    def min_isr(self, replica: Any) -> Term:
        """The topic's min.insync.replicas as a leader knows it."""
        return replica.min_isr

    def same_log(self, a: Any, b: Any) -> Term:
        """Two replicas hold the same records."""
        return a.log == b.log

    def knows(self, leader: Any, follower: int, leo: Any, broker_epoch: Any) -> Term:
        """The leader's view of a follower is of its fetch from this LEO, in this broker epoch,
        in this leader epoch, and caught up."""
        return leader.followers[follower - 1] == FollowerView(leo, broker_epoch, True, True)

    def eligibility_now(self, cfg: Any, state: Any) -> Any:
        """Each broker's ISR eligibility in a metadata cache that has applied the registry."""
        return eligibility_now(cfg, state.controller.brokers)

    def same_eligibility(self, a: Any, b: Any) -> Term:
        """Two caches hold the same ISR eligibility of every broker."""
        return a == b

    def decide(self, cfg: Any, state: Any, rule: str, request: Any) -> Any:
        """What the controller rule (its name in `kafkarep.rules`) decides for the request."""
        return getattr(controller, rule)(controller.metadata(state, cfg), request)

    def commit_rule(self, cfg: Any, state: Any, rule: str, request: Any) -> Any:
        """The state after the controller commits what the rule decides for the request."""
        return controller.commit(cfg, state, self.decide(cfg, state, rule, request))

    def spend(self, state: Any, budget: str) -> Any:
        """The state with one fault of the model's budget spent."""
        return state._replace(budget=state.budget.spend(budget))

    def with_broker(self, state: Any, broker_id: int, broker: Any) -> Any:
        """The state with the broker replaced."""
        return state.with_broker(broker_id, broker)

    def pick_state(self, c: Term, a: Any, b: Any) -> Any:
        """The state `a` where c holds, else `b`."""
        return a if c else b

    def pick_replica(self, c: Term, a: Any, b: Any) -> Any:
        """The replica `a` where c holds, else `b`."""
        return a if c else b

    def no_replica(self) -> Any:
        return None

    def no_fetch_response(self) -> Any:
        return None

    def no_ap_response(self) -> Any:
        return None

    def nack_unacked(self, state: Any, broker_id: int) -> Any:
        """A leader that loses leadership (or crashes) fails its pending writes (`hwm.py`)."""
        return nack_unacked(state, broker_id)

    def cut_log(self, replica: Any, offset: Any) -> Any:
        """The replica with its log cut at the offset (nothing else changed)."""
        return replica._replace(log=replica.log[:offset])

    def stopped_replica(self, replica: Any, hwm: Any, recovery_point: Any) -> Any:
        """A replica with the log of this one, the HWM and recovery point given, and nothing
        else: no role, no view, nothing a leader keeps."""
        return Replica(log=replica.log, hwm=hwm, recovery_point=recovery_point)

    def with_replica(self, state: Any, broker_id: int, replica: Any) -> Any:
        """The state with the broker's replica replaced."""
        return state.with_broker(broker_id, state.brokers[broker_id - 1]._replace(replica=replica))

    def recovery(self, view: Any) -> Any:
        """The leader recovery state of a replica's view of the partition."""
        return view.leader_recovery_state

    def ap_request_for(
        self,
        broker_id: int,
        broker_epoch: Any,
        view: Any,
        isr: Any,
        epochs: tuple[Any, ...],
        recovering: Any,
    ) -> Any:
        """The AlterPartition request a leader sends from its view: the ISR, with the broker epoch
        it knows for each member (`epochs`, by broker id - 1), and the recovery state."""
        return AlterPartitionRequest(
            broker=broker_id,
            leader_epoch=view.leader_epoch,
            partition_epoch=view.partition_epoch,
            new_isr=tuple((member, epochs[member - 1]) for member in sorted(isr)),
            leader_recovery_state=recovering,
            broker_epoch=broker_epoch,
        )

    def pending_proposal(self, replica: Any, isr: Any, partition_epoch: Any) -> Any:
        """The replica with the ISR it proposed, from that partition epoch, pending."""
        return replica._replace(pending=PendingAlterPartition(isr, partition_epoch))

    def with_ap_request(self, state: Any, broker_id: int, request: Any) -> Any:
        """The state with the broker's AlterPartition request in flight to the controller."""
        requests = list(state.controller.ap_requests)
        requests[broker_id - 1] = request
        return state._replace(controller=state.controller._replace(ap_requests=tuple(requests)))

    def no_ap_request(self) -> Any:
        return None

    def alter_partition(self, cfg: Any, state: Any, broker_id: int, request: Any) -> Any:
        """(the state after the controller commits what its AlterPartition rule decides for the
        request, the error its answer carries: NONE when the leader may adopt the result)."""
        outcome = controller.alter_partition(controller.metadata(state, cfg), request)
        state = controller.commit(cfg, state, outcome)
        if isinstance(outcome, Rejected):
            return state, outcome.error
        if isinstance(outcome, Changed) and outcome.error is not None:
            # NEW_LEADER_ELECTED: committed, but the requester learns the result from the metadata
            return state, outcome.error
        return state, Error.NONE

    def ap_response_for(self, request: Any, error: Any, partition: Any) -> Any:
        """The controller's answer to the request: the error alone, or with the partition as it
        now is."""
        sent = PendingAlterPartition(frozenset(request.isr_ids), request.partition_epoch)
        if error != Error.NONE:
            return AlterPartitionResponse(sent, error)
        p = partition
        return AlterPartitionResponse(
            sent,
            Error.NONE,
            p.leader,
            p.leader_epoch,
            p.partition_epoch,
            p.isr,
            p.leader_recovery_state,
        )

    def pick_ap_response(self, c: Term, a: Any, b: Any) -> Any:
        """The answer `a` where c holds, else `b`."""
        return a if c else b

    def status(self, status: Status) -> Any:
        """A broker status as the domain holds one."""
        return status

    def commits(self, cfg: Any, state: Any, rule: str, request: Any) -> Term:
        """The controller rule commits a change record for the request."""
        return isinstance(self.decide(cfg, state, rule, request), Changed)

    # --- logs and the ghost of who holds a write (the data plane's steps) -------------------------

    def entries(self, replica: Any) -> Any:
        """The replica's log as the leader-epoch functions read one (`logs.Entries`)."""
        return Entries(replica.log)

    def write(self, cfg: Any, state: Any, replica: Any) -> Any:
        """The leader's replica with the producer's next write appended in its leader epoch."""
        value = cfg.records - state.budget.records + 1
        return replica._replace(log=replica.log + ((replica.view.leader_epoch, value),))

    def received_by_writer(self, state: Any, broker_id: int, offset: Any) -> Any:
        """The leader is the first receiver of the write it appended at the offset."""
        replica = state.brokers[broker_id - 1].replica
        written = replica.log[offset : offset + 1]
        return state._replace(ghost=state.ghost.receive(broker_id, written))

    def receive(self, state: Any, broker_id: int, when: Term, before: Any, after: Any) -> Any:
        """Where `when` holds, the broker received the records its replica appended, from
        `before` to `after`: each write not yet judged gains it as a receiver."""
        if not when:
            return state
        appended = after.log[len(before.log) :]
        return state._replace(ghost=state.ghost.receive(broker_id, appended))

    def diverging(self, response: Any) -> Term:
        """The fetch response says where the logs diverge (it carries no records)."""
        return response.diverging is not None

    def divergence(self, response: Any) -> Any:
        """(the diverging epoch, its end offset) a diverging response carries."""
        return response.diverging

    def truncated(self, replica: Any, offset: Any) -> Any:
        """The replica truncated at the offset (`logs.truncated`)."""
        return truncated(replica, offset)

    def append_entries(self, replica: Any, response: Any) -> Any:
        """The replica with the response's records appended to its log."""
        return replica._replace(log=replica.log + response.entries)

    # --- what the properties read (`kafkarep/properties/`) ---------------------------------------

    def committed_any(self, state: Any) -> Term:
        """Some record is committed (the ghost's True HWM is above 0)."""
        return bool(state.ghost.committed)

    def holds_committed(self, state: Any, replica: Any) -> Term:
        """The replica holds the committed log: every offset below the True HWM, with the
        committed records."""
        ghost = state.ghost
        upto = ghost.true_hwm
        if replica.leo < upto:
            return False
        return tuple(value for _, value in replica.log[:upto]) == ghost.committed

    def holds_acked(self, state: Any, replica: Any) -> Term:
        """The replica holds every positively acknowledged write."""
        acked = state.ghost.pos_acked
        return not acked or acked <= {value for _, value in replica.log}

    def flagged(self, witness: Any) -> Term:
        """The ghost recorded a violation (its first witness)."""
        return witness is not None

    # --- a replica acting on the metadata ---------------------------------------------------------

    def replicas_of(self, registration: Any) -> Any:
        """A partition registration's replicas, as a broker set."""
        return registration.replicas

    def view(self, registration: Any) -> Any:
        """A replica's view of the partition, from a registration it applied."""
        return registration

    def led_view(self, registration: Any) -> Any:
        """The registration as its leader holds it. A leader counts itself RECOVERED whatever
        the record says: after an unclean election it may add followers at once, and its next
        AlterPartition carries RECOVERED (`Partition.makeLeader` since KIP-704 in 3.2.0, read at
        3.2.0, whose log line says leader log recovery is not implemented, 3.8.0 and 4.3.1)."""
        return registration._replace(leader_recovery_state=LeaderRecoveryState.RECOVERED)

    def role(self, role: Role) -> Any:
        """A replica role as the domain holds one."""
        return role

    def replica_or_new(self, replica: Any) -> Any:
        """The replica, or a new empty one where the broker has none."""
        return Replica() if replica is None else replica

    def with_cache(self, replica: Any, eligible: Any, min_isr: Any) -> Any:
        """A leader's replica with its metadata cache's ISR eligibility and MinISR."""
        return replica._replace(eligible=eligible, min_isr=min_isr)

    def unknown_follower(self, caught_up: Term) -> Any:
        """A new leader's view of a follower: no fetch known, caught up or not."""
        return CAUGHT_UP if caught_up else UNKNOWN

    def no_pending(self, replica: Any) -> Any:
        """The replica with no AlterPartition proposal pending."""
        return replica._replace(pending=None)

    def pending_if(self, replica: Any, keep: Term) -> Any:
        """The replica keeping its pending proposal where `keep` holds, else none."""
        return replica if keep else replica._replace(pending=None)

    def pending_epoch(self, replica: Any) -> Any:
        """The partition epoch the pending proposal was made from."""
        return replica.pending.partition_epoch

    def pending_isr(self, replica: Any) -> Any:
        """The ISR the pending proposal asks for."""
        return replica.pending.isr

    def unacked_dropped(self, replica: Any) -> Any:
        """The replica tracking no unacknowledged writes (a follower has none to fail)."""
        return replica._replace(unacked_from=-1)

    def not_leading(self, replica: Any) -> Any:
        """The replica with nothing a leader keeps: no views of followers, no proposal, no
        unacknowledged writes, no metadata cache of its own."""
        return replica._replace(followers=(), pending=None, unacked_from=-1, eligible=(), min_isr=0)

    def leads_since(self, before: Any, after: Any, broker_id: int, registration: Any) -> Any:
        """`after`, with what the ghost records of when the broker's leadership began (the
        explorer's records nothing: only the prover's history invariants read it)."""
        return after

    def pick_set(self, c: Term, a: Any, b: Any) -> Any:
        """The broker set `a` where c holds, else `b`."""
        return a if c else b

    # --- the AlterPartition answer ----------------------------------------------------------------

    def retriable_answers(self) -> bool:
        """False where the controller never sends a leader an error it retries (the prover's:
        STALE_BROKER_EPOCH reaches no live connection, `handle_step`, and it encodes no lagging
        controller's NOT_CONTROLLER). (A method: compiled, a class attribute the prover's
        subclass overrode would still be read as this class's.)"""
        return True

    def error(self, error: Error) -> Any:
        """An error code as the domain holds one."""
        return error

    def answers_pending(self, replica: Any, answer: Any) -> tuple[Term, ...]:
        """The conditions under which the answer is to the proposal the leader still has
        pending."""
        return (replica.pending == answer.request,)

    def rolled_back(self, replica: Any) -> Any:
        """The leader's proposal dropped: its Maximal ISR is its committed ISR again."""
        return replica._replace(maximal_isr=replica.view.isr, pending=None)

    def adopted(self, replica: Any, answer: Any) -> Any:
        """The leader adopts the partition the controller answered with: its ISR, partition
        epoch and recovery state; nothing pending."""
        view = replica.view._replace(
            isr=answer.isr,
            partition_epoch=answer.partition_epoch,
            leader_recovery_state=answer.leader_recovery_state,
        )
        return replica._replace(view=view, maximal_isr=answer.isr, pending=None)

    # --- the data plane's steps ----------------------------------------------------------------

    def follower_view(self, leo: Any, broker_epoch: Any, this_epoch: Any, caught_up: Any) -> Any:
        """A leader's view of a follower (`FollowerView`)."""
        return FollowerView(leo, broker_epoch, this_epoch, caught_up)

    def fetch_answer(self, leader_id: int, epoch: Any, fetch_offset: Any, leader: Any) -> Any:
        """The leader's answer to a fetch: its HWM and the records after the fetch offset."""
        return FetchResponse(leader_id, epoch, fetch_offset, leader.hwm, leader.log[fetch_offset:])

    def refusal(
        self, leader_id: int, epoch: Any, fetch_offset: Any, hwm: Any, at_epoch: Any, end: Any
    ) -> Any:
        """The leader's answer where the logs diverge: the diverging epoch and its end offset."""
        return FetchResponse(leader_id, epoch, fetch_offset, hwm, (), (at_epoch, end))

    def pick_response(self, c: Term, a: Any, b: Any) -> Any:
        """The fetch response `a` where c holds, else `b`."""
        return a if c else b

    def advance_hwm(self, cfg: Any, state: Any, broker_id: int, when: Term, hwm: Term) -> Any:
        """Where `when` holds, the leader's HWM moves to `hwm`: its writes below it are
        acknowledged and the ghost records the commit (`hwm.advance_to`)."""
        return advance_to(cfg, state, broker_id, hwm)


CONCRETE = Domain()


_UP = int(Status.SHUTTING_DOWN)  # the highest status of a running process
_LEADER = int(Role.LEADER)
_FOLLOWER = int(Role.FOLLOWER)


def running(broker: Any) -> Term:
    """The broker process is up (`Status.running`)."""
    return broker.status <= _UP


def has_replica(d: Domain, broker: Any) -> Term:
    """The broker is up with a replica of the partition."""
    up = running(broker)
    return up if up is False else and_(up, d.present(broker.replica))


def leads(d: Domain, broker: Any) -> Term:
    """The broker is up and its replica leads (`ClusterState.running_leader`)."""
    up = has_replica(d, broker)
    return up if up is False else and_(up, eq(broker.replica.role, _LEADER))


def follows(d: Domain, broker: Any) -> Term:
    """The broker is up and its replica follows."""
    up = has_replica(d, broker)
    return up if up is False else and_(up, eq(broker.replica.role, _FOLLOWER))
