"""The ZooKeeper-era Kafka controller described in Kafka Controller Internals (Apache wiki), as
pure functions.

- `partition_states`: NonExistentPartition, NewPartition, OnlinePartition, OfflinePartition and
  their valid transitions;
- `replica_states`: NewReplica, OnlineReplica, OfflineReplica, NonExistentReplica and theirs;
- `leader_selectors`: the four leader selectors (offline, reassigned, preferred, controlled
  shutdown);
- `events`: the controller's reaction to broker events built from the three, over the same
  metadata values as the KRaft rules, so the cluster model can run this controller instead
  (`[rules] controller = "zookeeper"`).

An invalid transition is never an exception: it is an `InvalidTransition` naming the machine and
both states.
"""
