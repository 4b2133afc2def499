"""The KRaft controller's partition-metadata rules, as pure functions.

Each rule takes the cluster metadata and a request and returns `Changed`, `Unchanged` or
`Rejected` (see `outcome`). One module per protocol area:

- `partition_change`: the change builder every other rule ends in (Kafka PartitionChangeBuilder);
- `alter_partition`: the leader's ISR changes (ReplicationControlManager.alterPartition);
- `reassignment`: start, change and cancel (alterPartitionReassignments);
- `elections`: preferred and unclean elections on request (electLeaders);
- `broker_events`: fence, unfence, controlled shutdown, re-registration.
"""

from kafkarep.rules.alter_partition import AlterPartitionRequest, alter_partition
from kafkarep.rules.broker_events import (
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
    controlled_shutdown,
    fence_broker,
    register_broker,
    unclean_shutdown,
    unfence_broker,
)
from kafkarep.rules.elections import ElectLeadersRequest, elect_leaders
from kafkarep.rules.outcome import Changed, Outcome, Rejected, Unchanged
from kafkarep.rules.partition_change import ChangeTargets, Election, build, partition_change
from kafkarep.rules.reassignment import AlterReassignmentRequest, alter_reassignment

__all__ = [
    "AlterPartitionRequest",
    "AlterReassignmentRequest",
    "ChangeTargets",
    "Changed",
    "ControlledShutdown",
    "ElectLeadersRequest",
    "Election",
    "FenceBroker",
    "Outcome",
    "RegisterBroker",
    "Rejected",
    "Unchanged",
    "UnfenceBroker",
    "alter_partition",
    "alter_reassignment",
    "build",
    "controlled_shutdown",
    "elect_leaders",
    "fence_broker",
    "partition_change",
    "register_broker",
    "unclean_shutdown",
    "unfence_broker",
]
