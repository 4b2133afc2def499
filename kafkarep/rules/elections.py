"""Leader elections on request: preferred and unclean.

Kafka's `ReplicationControlManager.electLeader`, which also serves automatic leader balancing
(PREFERRED on imbalanced partitions) and the periodic unclean election of leaderless partitions
(protocol description §2.8 covers the elections the controller makes on its own; those are
broker events). Written once for every domain (`kafkarep.rules.domain`).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import NO_LEADER
from kafkarep.rules.domain import Metadata, domain_of
from kafkarep.rules.guards import guard, refusal
from kafkarep.rules.outcome import Outcome
from kafkarep.rules.partition_change import ChangeTargets, Election, build_record, committed
from kafkarep.rules.record import Record
from kafkarep.rules.terms import Term, and_, eq, ite, ne, not_, or_


class ElectLeadersRequest(NamedTuple):
    election: Election  # PREFERRED or UNCLEAN


@guard("elections", Error.INVALID_REQUEST)
def election_type_supported(m: Metadata, r: ElectLeadersRequest) -> Term:
    """An ElectLeaders request is PREFERRED or UNCLEAN."""
    return r.election in (Election.PREFERRED, Election.UNCLEAN)


@guard("elections", Error.ELECTION_NOT_NEEDED)
def election_needed(m: Metadata, r: ElectLeadersRequest) -> Term:
    """Nothing to do when the preferred replica already leads, or, for an unclean election,
    when there is any leader (`ReplicationControlManager.electLeader`)."""
    p = m.partition
    if r.election == Election.PREFERRED:
        preferred = domain_of(m).first(p.replicas)
        return not_(and_(ne(preferred, NO_LEADER), eq(p.leader, preferred)))
    return eq(p.leader, NO_LEADER)


@guard("elections", Error.PREFERRED_LEADER_NOT_AVAILABLE)
def preferred_leader_available(record: Record) -> Term:
    """`electLeader`: a preferred election that changes nothing found no valid leader."""
    return not_(record.noop())


@guard("elections", Error.ELIGIBLE_LEADERS_NOT_AVAILABLE)
def eligible_leader_available(record: Record) -> Term:
    """`electLeader`: an unclean election that changes nothing found no live replica."""
    return not_(record.noop())


GUARDS = (election_type_supported, election_needed)


def elect_leaders(m: Metadata, request: ElectLeadersRequest) -> Outcome:
    """Any record counts as success; no record means no leader could be chosen
    (`ReplicationControlManager.electLeader`)."""
    d, disabled = domain_of(m), m.options.disabled_guards
    refused = refusal(GUARDS, disabled, d.code, m, request)
    if refused.refused is True:
        nothing = Record(d, m.partition)
        return committed(m, nothing, refused=True, error=refused.error, guard=refused.guard)
    record = build_record(m, ChangeTargets(election=request.election), m.brokers.is_active)
    preferred = request.election == Election.PREFERRED
    found = preferred_leader_available if preferred else eligible_leader_available
    none_found = refusal((found,), disabled, d.code, record)
    return committed(
        m,
        record,
        refused=or_(refused.refused, none_found.refused),
        error=ite(refused.refused, refused.error, none_found.error),
        guard=none_found.guard,
    )
