"""Leader Completeness and Leader Candidate Completeness (protocol description §2.4, §2.4.1)."""

from __future__ import annotations

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import RUNNING, ClusterState, Replica
from kafkarep.properties.base import always


def _values(replica: Replica, upto: int) -> tuple[int, ...]:
    return tuple(value for _, value in replica.log[:upto])


def _missing_committed(who: str, replica: Replica, state: ClusterState) -> str | None:
    """None if the replica holds the committed log; else what it lacks."""
    ghost = state.ghost
    if replica.leo < ghost.true_hwm:
        return f"{who} has LEO {replica.leo} < true HWM {ghost.true_hwm}"
    held = _values(replica, ghost.true_hwm)
    if held != ghost.committed:
        offset = next(
            i for i, (a, b) in enumerate(zip(held, ghost.committed, strict=True)) if a != b
        )
        return (
            f"{who} has value {held[offset]} at offset {offset}, "
            f"where the committed value is {ghost.committed[offset]}"
        )
    return None


def _leader(state: ClusterState) -> tuple[int, Replica] | None:
    """The controller's leader, if its broker is running with a replica. A leader that is no
    broker of the model (none, or an id out of range) has no running broker: exempt, as an
    offline one is."""
    leader = state.partition.leader
    if leader <= 0 or leader > len(state.brokers):
        return None
    broker = state.broker(leader)
    if broker.status not in RUNNING or broker.replica is None:
        return None
    return leader, broker.replica


def leader_holds_committed_log(cfg: ModelConfig, state: ClusterState) -> str | None:
    if not state.ghost.committed:
        return None
    found = _leader(state)
    if found is None:
        return None
    leader, replica = found
    return _missing_committed(f"leader {leader}", replica, state)


def leader_holds_acked_writes(cfg: ModelConfig, state: ClusterState) -> str | None:
    if not state.ghost.pos_acked:
        return None
    found = _leader(state)
    if found is None:
        return None
    leader, replica = found
    held = {value for _, value in replica.log}
    missing = sorted(state.ghost.pos_acked - held)
    if missing:
        return f"leader {leader} lacks positively acked write {missing[0]}"
    return None


LEADER_COMPLETENESS = always(
    "leader_completeness",
    """The leader chosen by the controller, while its broker runs, holds the complete committed
    log (every offset below the True HWM, with the committed values) and every positively
    acknowledged write. A leader that lacks them has lost data that consumers may have read.""",
    "protocol description §2.4; kafka-tlaplus LeaderCompletenessProperty",
    committed_log=leader_holds_committed_log,
    acked_writes=leader_holds_acked_writes,
)


def isr_members_complete(cfg: ModelConfig, state: ClusterState) -> str | None:
    return _candidates_complete(state, state.partition.isr, "ISR")


def elr_members_complete(cfg: ModelConfig, state: ClusterState) -> str | None:
    if not cfg.options.elr_enabled:
        return None
    return _candidates_complete(state, state.partition.elr, "ELR")


def _candidates_complete(state: ClusterState, members: frozenset[int], name: str) -> str | None:
    if not state.ghost.committed:
        return None
    for member in sorted(members):
        if member <= 0 or member > len(state.brokers):
            continue
        broker = state.broker(member)
        if broker.status in RUNNING and broker.replica is not None:
            problem = _missing_committed(f"replica {member} in {name}", broker.replica, state)
            if problem is not None:
                return problem
    return None


LEADER_CANDIDATE_COMPLETENESS = always(
    "leader_candidate_completeness",
    """Every running member of the controller's ISR, and of the ELR when it is on, holds the
    complete committed log, so whichever the controller elects keeps Leader Completeness.
    Offline members are exempt until they run again.""",
    "protocol description §2.4.1; KIP-966; kafka-tlaplus LeaderCandidateCompletenessProperty",
    isr=isr_members_complete,
    elr=elr_members_complete,
)
