"""Sound state reductions: parts of a state that no rule and no property will read again are put
in one canonical form, so histories that differ only there are explored once.

Each reduction maps a state to one that behaves the same: the same enabled actions, in the same
order, with the same names and actors; successors that reduce to the same states; the same
verdict from every property. That is a bisimulation, so every verdict and every shortest
counterexample depth is kept, and a path of action indices found on reduced states replays
through the plain rules (`kafkarep replay` and every printed trace do exactly that, so traces
show the real states). tests/test_reduction.py checks the bisimulation on every reachable state
of the small models, mutations included, and that verdicts and depths are unchanged.

- **Refused AlterPartition requests.** A request in flight from a leader epoch older than the
  partition's will be refused with an error the leader waits out, whatever it proposes: only
  its sender and broker epoch are kept. Not applied when `leader_epoch_current` is switched off.
- **Idle metadata positions.** A broker that has not acted on metadata since it (re)started
  jumps to the end of the controller's log (metadata.py), so how far its previous incarnation
  had applied is dead: it no longer holds back the compaction of the log.
- **Stale fetch responses.** A fetch response from a leader epoch older than the last metadata
  the follower applied will be dropped on arrival (`leader_epoch_matches`), and leader epochs
  never go back: only its arrival matters, not its content. Not applied when that guard is
  switched off, the follower does not compare epochs (`data.checks_response_epoch`: Kafka
  4.0.0, or fetches without a leader epoch), or a late send may still rewrite its records.
- **Idle AlterPartition responses.** A response whose handling can only clear it, now and later:
  an error the leader waits out (any but NONE, the roll-back errors and the errors it retries),
  or an answer to a proposal from a partition epoch older than the last metadata the leader
  applied (applying it dropped the proposal, and any new one carries a newer epoch).
- **Dead recovery points.** Only a lossy unclean shutdown reads a recovery point: once the
  budget has none left, every recovery point is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState, PartitionRegistration
from kafkarep.model.actions.alter_partition import RETRY, ROLL_BACK
from kafkarep.model.actions.data import checks_response_epoch, leader_epoch_matches
from kafkarep.model.actions.failover import replayed_to_epoch_start
from kafkarep.model.actions.lifecycle import tracks_recovery_point
from kafkarep.model.config import ModelConfig
from kafkarep.model.controller import compact
from kafkarep.model.state import (
    AlterPartitionResponse,
    Broker,
    ClusterState,
    FetchResponse,
    PendingAlterPartition,
)
from kafkarep.rules.alter_partition import leader_epoch_current

# What a stale response is replaced by: handling either only clears it, as for the original.
STALE_FETCH = FetchResponse(leader=0, leader_epoch=-1, fetch_offset=-1, hwm=0)
IDLE_ALTER_PARTITION = AlterPartitionResponse(
    PendingAlterPartition(frozenset(), -1), Error.FENCED_LEADER_EPOCH
)
# The errors whose handling only clears the response: not an acceptance, a roll-back or a retry
# (a lagging controller's NOT_CONTROLLER is answered by sending the proposal again).
_WAITED_OUT = frozenset(Error) - ROLL_BACK - RETRY - {Error.NONE}


def reduce(
    cfg: ModelConfig, state: ClusterState, parent: ClusterState | None = None
) -> ClusterState:
    """The reduced form of a successor of `parent` (itself reduced): only the brokers that
    differ from the parent's are looked at. The state itself when the model (or
    `--no-reduction`) switches the reductions off."""
    return reducer(cfg)(state, parent)


Reduce = Callable[[ClusterState, "ClusterState | None"], ClusterState]


@cache
def reducer(cfg: ModelConfig) -> Reduce:
    """`reduce` for one model, its switches read once (the explorer calls it per successor)."""
    if not cfg.check.reduction:
        return _unchanged
    # A late send (data.late_send) rewrites a response's records, stale ones included.
    fetch_guard = (
        checks_response_epoch(cfg)
        and leader_epoch_matches.enabled(cfg.options.disabled_guards)
        and not cfg.budget.late_sends
    )
    # A lagging controller (failover.py) may accept a request older than the log's leader epoch.
    requests_guard = leader_epoch_current.enabled(cfg.options.disabled_guards) and not (
        cfg.budget.controller_failovers
        and not replayed_to_epoch_start.enabled(cfg.options.disabled_guards)
    )

    recovery_points = tracks_recovery_point(cfg)

    def reduce_one(state: ClusterState, parent: ClusterState | None = None) -> ClusterState:
        if recovery_points and state.budget.lossy_unclean_shutdowns == 0:
            state = _forget_recovery_points(state)
        brokers = state.brokers
        old = parent.brokers if parent is not None else None
        if old is brokers and parent is not None and state.controller is parent.controller:
            return state
        # An idle broker's position is released once; after that only a longer log may let
        # the compaction go further.
        log_moved = parent is None or state.controller.log[-1] is not parent.controller.log[-1]
        idle = False
        changed = None
        for index, broker in enumerate(brokers):
            if old is not None and broker is old[index]:
                idle = idle or (log_moved and not broker.initialised)
            elif not broker.initialised:
                idle = True
            elif broker.fetch_response is not None or broker.ap_response is not None:
                applied = state.controller.log[state.controller.position(broker.applied_epoch)]
                quiet = _quiet_responses(broker, applied, fetch_guard)
                if quiet is not broker:
                    changed = changed or list(brokers)
                    changed[index] = quiet
        if changed is not None:
            state = state._replace(brokers=tuple(changed))
        # The parent's requests are already quiet for its leader epoch: look again only if the
        # requests or the partition moved (a compaction moves neither).
        if requests_guard and (
            parent is None
            or log_moved
            or state.controller.ap_requests is not parent.controller.ap_requests
        ):
            state = _quiet_requests(state)
        return _release_idle_positions(state) if idle else state

    return reduce_one


def _unchanged(state: ClusterState, parent: ClusterState | None = None) -> ClusterState:
    return state


def _forget_recovery_points(state: ClusterState) -> ClusterState:
    brokers = state.brokers
    changed = None
    for index, broker in enumerate(brokers):
        replica = broker.replica
        if replica is not None and replica.recovery_point:
            changed = changed or list(brokers)
            changed[index] = broker._replace(replica=replica._replace(recovery_point=0))
    return state if changed is None else state._replace(brokers=tuple(changed))


def _quiet_requests(state: ClusterState) -> ClusterState:
    """An AlterPartition request from an older leader epoch than the partition's is refused,
    whatever else it says, with an error the leader waits out (`requester_epoch_current` or
    `leader_epoch_current`, in Kafka's order), and leader epochs never go back: only who sent it
    and from which broker epoch still matter (whether the answer reaches the sender)."""
    requests = state.controller.ap_requests
    current = state.controller.log[-1].leader_epoch
    changed = None
    for index, request in enumerate(requests):
        if request is not None and 0 <= request.leader_epoch < current:
            changed = changed or list(requests)
            changed[index] = request._replace(
                leader_epoch=-1,
                partition_epoch=-1,
                new_isr=(),
                leader_recovery_state=LeaderRecoveryState.RECOVERED,
            )
    if changed is None:
        return state
    return state._replace(controller=state.controller._replace(ap_requests=tuple(changed)))


def _quiet_responses(broker: Broker, applied: PartitionRegistration, fetch_guard: bool) -> Broker:
    """Each test reads only the response and the last snapshot the broker applied, which only
    moves forward: once true it stays true, so equal histories reduce alike. (The replica's
    view is never older than that snapshot, and any later view is newer still.)"""
    fetch = broker.fetch_response
    stale = fetch is not None and fetch.leader_epoch < applied.leader_epoch
    if fetch_guard and stale and fetch != STALE_FETCH:
        broker = broker._replace(fetch_response=STALE_FETCH)
    answer = broker.ap_response
    if (
        answer is not None
        and answer != IDLE_ALTER_PARTITION
        and (
            answer.error in _WAITED_OUT
            # Applying a newer snapshot dropped the proposal, and new ones carry the newer epoch.
            or answer.request.partition_epoch < applied.partition_epoch
        )
    ):
        broker = broker._replace(ap_response=IDLE_ALTER_PARTITION)
    return broker


def _release_idle_positions(state: ClusterState) -> ClusterState:
    """Brokers still to catch up say -1, which `compact` passes over."""
    if any(not b.initialised and b.applied_epoch != -1 for b in state.brokers):
        brokers = tuple(b if b.initialised else b._replace(applied_epoch=-1) for b in state.brokers)
        state = state._replace(brokers=brokers)
    return compact(state)
