"""The Kafka releases the rules follow, and what changed between them.

Each release the oracle checks (`kafkarep differential`, `oracle/`) is listed with the behaviour
of its controller where it differs from another supported release. A model names one with
`[rules] kafka_version`; the newest is the default. Every difference cites the Kafka code at the
release that changed it and the JIRA or KIP:

- KAFKA-18635 (4.0.0): a broker that re-registers presenting its last broker epoch shut down
  cleanly (`ClusterControlManager.registerBroker`, `cleanShutdownDetectionEnabled` for
  BrokerRegistration v3); in 3.9 every new incarnation is an unclean shutdown.
- KAFKA-18106 (4.0.0): a new incarnation whose shutdown is not handled as unclean (ELR off, or a
  clean shutdown) leaves every ISR as a fenced broker does
  (`ReplicationControlManager.handleBrokerShutdown`); 3.9 does nothing then.
- KIP-896 (4.0.0): AlterPartition versions 0 and 1 are gone.
- KAFKA-18991 (3.9.1, 4.0.1, 4.1.0): a follower's fetcher handles a response only in the
  leader epoch it fetched in (`AbstractFetcherThread.processFetchRequest`); 4.0.0 compares the
  fetch offset alone. A broker-side change: the model's data plane reads it.
- KAFKA-18723 (3.9.1, 4.0.1, 4.1.0): a follower appends a response's batches only up to the
  first whose partition leader epoch is above its fetch's (`UnifiedLog.append`,
  `hasHigherPartitionLeaderEpoch`); 4.0.0 appends them all. Also the data plane's.
- KAFKA-16540 (4.0.0): with ELR on, a change of `min.insync.replicas` clears the ELR and last
  known ELR of every partition it concerns (`ConfigurationControlManager
  .createClearElrRecordsAsNeeded`, `ReplicationControlManager.replay(ClearElrRecord)`); 3.9
  keeps them.
- KAFKA-19522 (4.1.0): the last known leader is elected only if acceptable
  (`PartitionChangeBuilder.canElectLastKnownLeader`).
- KIP-860 (4.1.0): a reassignment may forbid a change of the replication factor
  (`allowReplicationFactorChange`, `validatePartitionReplicationFactorUnchanged`).
- apache/kafka#20629 (4.1.1): the last known leader is remembered when a change leaves the
  partition leaderless and none is remembered, and forgotten when a change names a leader
  (`PartitionChangeBuilder.maybeUpdateLastKnownLeader`); before, it was remembered when the ISR
  emptied and forgotten once the partition would have a leader.
- KAFKA-19975 (4.3.0): a reassignment completes once every *adding* replica is in the ISR,
  unless it shrinks the replication factor (`PartitionReassignmentReplicas
  .maybeCompleteReassignment`); before, every target replica had to be.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

# The releases the oracle builds and checks: the newest patch of each line, and 4.1.0 (a patch
# release changed the rules: apache/kafka#20629 in 4.1.1).
RELEASES = ("3.9.2", "4.0.2", "4.1.0", "4.1.2", "4.2.2", "4.3.1", "4.4.0")
# Every release a model may name (the oracle builds these too).
KNOWN = ("3.9.1", "3.9.2", "4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.1.1", "4.1.2", "4.2.0",
         "4.2.1", "4.2.2", "4.3.0", "4.3.1", "4.4.0")  # fmt: skip
NEWEST = RELEASES[-1]

Version = tuple[int, int, int]


def resolve(name: str) -> str:
    """A release by its full version ("4.1.1") or by its line ("4.1": the newest patch the oracle
    checks). Raises ValueError for an unknown one."""
    name = name.strip()
    if name in KNOWN:
        return name
    for release in reversed(RELEASES):
        if release.startswith(name + "."):
            return release
    lines = sorted({r.rsplit(".", 1)[0] for r in KNOWN})
    raise ValueError(
        f"unknown kafka_version {name!r}; one of {', '.join(lines)} or a release "
        f"({', '.join(KNOWN)})"
    )


def version(release: str) -> Version:
    major, minor, patch = (int(part) for part in release.split("."))
    return major, minor, patch


class Behaviour(NamedTuple):
    """What a release's controller does where supported releases differ."""

    unclean_shutdown_detection: str  # "incarnation" (3.9) or "previous-epoch" (KAFKA-18635)
    new_incarnation_leaves_isr: bool  # KAFKA-18106
    last_known_leader_acceptable: bool  # KAFKA-19522
    last_known_leader_on_leaderless: bool  # apache/kafka#20629
    completion_when_adding_in_isr: bool  # KAFKA-19975
    replication_factor_change_check: bool  # KIP-860
    lowest_alter_partition_version: int  # KIP-896
    clears_elr_on_min_isr_change: bool  # KAFKA-16540
    follower_checks_response_epoch: bool  # KAFKA-18991
    follower_skips_newer_batches: bool  # KAFKA-18723
    lowest_metadata_version: str  # the oldest metadata.version the release runs


@functools.cache
def behaviour(release: str) -> Behaviour:
    v = version(resolve(release))
    # KAFKA-18991 and KAFKA-18723 shipped together: 3.9.1, 4.0.1, 4.1.0
    fetcher_fixes = v >= (4, 0, 1) or (3, 9, 1) <= v < (4, 0, 0)
    return Behaviour(
        unclean_shutdown_detection="previous-epoch" if v >= (4, 0, 0) else "incarnation",
        new_incarnation_leaves_isr=v >= (4, 0, 0),
        last_known_leader_acceptable=v >= (4, 1, 0),
        last_known_leader_on_leaderless=v >= (4, 1, 1),
        completion_when_adding_in_isr=v >= (4, 3, 0),
        replication_factor_change_check=v >= (4, 1, 0),
        lowest_alter_partition_version=2 if v >= (4, 0, 0) else 0,
        clears_elr_on_min_isr_change=v >= (4, 0, 0),
        follower_checks_response_epoch=fetcher_fixes,
        follower_skips_newer_batches=fetcher_fixes,
        lowest_metadata_version="3.3" if v >= (4, 0, 0) else "3.0",
    )


def line(release: str) -> str:
    """ "4.1" for "4.1.2"."""
    return resolve(release).rsplit(".", 1)[0]
