"""Leader elections on request: preferred and unclean (kafka-rules.md §4).

Kafka's `ReplicationControlManager.electLeader`, which also serves automatic leader balancing
(PREFERRED on imbalanced partitions) and the periodic unclean election of leaderless partitions
(seed 004 §2.8 covers the elections the controller makes on its own; those are broker events).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkarep.errors import Error
from kafkarep.guards import first_failure, guard
from kafkarep.metadata import ClusterMetadata, PartitionChangeRecord
from kafkarep.rules.outcome import Changed, Outcome, Rejected
from kafkarep.rules.partition_change import ChangeTargets, Election, build


class ElectLeadersRequest(NamedTuple):
    election: Election  # PREFERRED or UNCLEAN


@guard("elections", Error.ELECTION_NOT_NEEDED)
def election_needed(m: ClusterMetadata, r: ElectLeadersRequest) -> bool:
    """R4.1: nothing to do when the preferred replica already leads, or, for an unclean
    election, when there is any leader."""
    p = m.partition
    if r.election == Election.PREFERRED:
        return not (p.replicas and p.leader == p.replicas[0])
    return not p.has_leader


@guard("elections", Error.INVALID_REQUEST)
def election_type_supported(m: ClusterMetadata, r: ElectLeadersRequest) -> bool:
    """An ElectLeaders request is PREFERRED or UNCLEAN."""
    return r.election in (Election.PREFERRED, Election.UNCLEAN)


@guard("elections", Error.PREFERRED_LEADER_NOT_AVAILABLE)
def preferred_leader_available(record: PartitionChangeRecord | None) -> bool:
    """R4.2: a preferred election that changes nothing found no valid leader."""
    return record is not None


@guard("elections", Error.ELIGIBLE_LEADERS_NOT_AVAILABLE)
def eligible_leader_available(record: PartitionChangeRecord | None) -> bool:
    """R4.2: an unclean election that changes nothing found no live replica."""
    return record is not None


GUARDS = (election_type_supported, election_needed)


def elect_leaders(metadata: ClusterMetadata, request: ElectLeadersRequest) -> Outcome:
    """R4.2: any record counts as success; no record means no leader could be chosen."""
    refused = first_failure(GUARDS, metadata.options.disabled_guards, metadata, request)
    if refused is not None:
        assert refused.error is not None
        return Rejected(refused.error, refused.qualified)
    record = build(metadata, ChangeTargets(election=request.election), metadata.brokers.is_active)
    found = (
        preferred_leader_available
        if request.election == Election.PREFERRED
        else eligible_leader_available
    )
    if record is None:
        assert found.error is not None
        return Rejected(found.error, found.qualified)
    return Changed(metadata.partition.apply(record), record)
