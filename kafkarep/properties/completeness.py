"""Leader Completeness and Leader Candidate Completeness (protocol description §2.4, §2.4.1).

Each clause's verdict is a predicate written over a domain (`kafkarep/model/domain.py`), which
`kafkarep prove` proves on its terms; the clause itself says what is wrong where it fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE, Domain, running
from kafkarep.model.state import RUNNING, ClusterState, Replica
from kafkarep.properties.base import always, predicate
from kafkarep.rules.terms import Term, and_, eq, implies


def _serving(d: Domain, state: Any, leader: Any, members: Any, holds: Callable[..., Term]) -> Term:
    """Every running broker with a replica that is the leader (if `members` is None), or a
    member of `members`, holds what `holds` asks."""
    checks = []
    for broker_id, broker in enumerate(state.brokers, 1):
        picked = eq(leader, broker_id) if members is None else d.has(members, broker_id)
        if picked is False:
            continue
        up = running(broker)
        if up is False:
            continue
        present = d.present(broker.replica)
        if present is not False:
            checks.append(implies(and_(picked, up, present), holds(state, broker.replica)))
    return and_(*checks)


def committed_log_holds(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    """The controller's leader, while its broker runs with a replica, holds the committed log:
    every offset below the True HWM, with the committed records."""
    committed = d.committed_any(state)
    if committed is False:
        return True
    leader = state.partition.leader
    return implies(committed, _serving(d, state, leader, None, d.holds_committed))


def acked_writes_hold(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    """The controller's leader, while its broker runs with a replica, holds every positively
    acknowledged write."""
    leader = state.partition.leader
    return _serving(d, state, leader, None, d.holds_acked)


def members_hold(d: Domain, state: Any, members: Any) -> Term:
    """Every running member of the set holds the committed log."""
    committed = d.committed_any(state)
    if committed is False:
        return True
    return implies(committed, _serving(d, state, None, members, d.holds_committed))


def isr_holds(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    return members_hold(d, state, state.partition.isr)


def elr_holds(d: Domain, cfg: ModelConfig, state: Any) -> Term:
    if not cfg.options.elr_enabled:
        return True
    return members_hold(d, state, state.partition.elr)


# --- the clauses: the predicates' verdicts on the model's values, and what is wrong ------------


def _values(replica: Replica, upto: int) -> tuple[int, ...]:
    return tuple(value for _, value in replica.log[:upto])


def _missing_committed(who: str, replica: Replica, state: ClusterState) -> str:
    """What a replica that does not hold the committed log lacks."""
    ghost = state.ghost
    if replica.leo < ghost.true_hwm:
        return f"{who} has LEO {replica.leo} < true HWM {ghost.true_hwm}"
    held = _values(replica, ghost.true_hwm)
    offset = next(i for i, (a, b) in enumerate(zip(held, ghost.committed, strict=True)) if a != b)
    return (
        f"{who} has value {held[offset]} at offset {offset}, "
        f"where the committed value is {ghost.committed[offset]}"
    )


def _leader(state: ClusterState) -> tuple[int, Replica]:
    """The controller's leader, running with a replica (a clause that fails has one)."""
    leader = state.partition.leader
    replica = state.broker(leader).replica
    assert replica is not None
    return leader, replica


@predicate(committed_log_holds)
def leader_holds_committed_log(cfg: ModelConfig, state: ClusterState) -> str | None:
    if committed_log_holds(CONCRETE, cfg, state):
        return None
    leader, replica = _leader(state)
    return _missing_committed(f"leader {leader}", replica, state)


@predicate(acked_writes_hold)
def leader_holds_acked_writes(cfg: ModelConfig, state: ClusterState) -> str | None:
    if not state.ghost.pos_acked or acked_writes_hold(CONCRETE, cfg, state):
        return None
    leader, replica = _leader(state)
    held = {value for _, value in replica.log}
    return f"leader {leader} lacks positively acked write {min(state.ghost.pos_acked - held)}"


LEADER_COMPLETENESS = always(
    "leader_completeness",
    """The leader chosen by the controller, while its broker runs, holds the complete committed
    log (every offset below the True HWM, with the committed values) and every positively
    acknowledged write. A leader that lacks them has lost data that consumers may have read.""",
    "protocol description §2.4; kafka-tlaplus LeaderCompletenessProperty",
    committed_log=leader_holds_committed_log,
    acked_writes=leader_holds_acked_writes,
)


@predicate(isr_holds)
def isr_members_complete(cfg: ModelConfig, state: ClusterState) -> str | None:
    if isr_holds(CONCRETE, cfg, state):
        return None
    return _first_incomplete(state, state.partition.isr, "ISR")


@predicate(elr_holds)
def elr_members_complete(cfg: ModelConfig, state: ClusterState) -> str | None:
    if elr_holds(CONCRETE, cfg, state):
        return None
    return _first_incomplete(state, state.partition.elr, "ELR")


def _first_incomplete(state: ClusterState, members: frozenset[int], name: str) -> str:
    """What the first running member that lacks the committed log lacks."""
    for member in sorted(members):
        if member <= 0 or member > len(state.brokers):
            continue
        broker = state.broker(member)
        replica = broker.replica
        if replica is None or broker.status not in RUNNING:
            continue
        if not CONCRETE.holds_committed(state, replica):
            return _missing_committed(f"replica {member} in {name}", replica, state)
    raise AssertionError("no member lacks the committed log")


LEADER_CANDIDATE_COMPLETENESS = always(
    "leader_candidate_completeness",
    """Every running member of the controller's ISR, and of the ELR when it is on, holds the
    complete committed log, so whichever the controller elects keeps Leader Completeness.
    Offline members are exempt until they run again.""",
    "protocol description §2.4.1; KIP-966; kafka-tlaplus LeaderCandidateCompletenessProperty",
    isr=isr_members_complete,
    elr=elr_members_complete,
)
