"""The ZooKeeper-era controller in the cluster model: its broker events beside the KRaft rules',
and models/zookeeper_unclean.toml (violates, replays) beside its KRaft counterpart (holds; its
[expect] is checked with every model in tests/test_models.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkarep import properties, rules
from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    BrokerRegistry,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionRegistration,
)
from kafkarep.model.config import ModelError
from kafkarep.properties.model_files import load_model, parse_model
from kafkarep.rules import (
    Changed,
    ControlledShutdown,
    Election,
    ElectLeadersRequest,
    FenceBroker,
    RegisterBroker,
    Rejected,
    Unchanged,
    UnfenceBroker,
)
from kafkarep.zookeeper import events as zk
from tests.helpers import ROOT, brokers, cluster, reg

ZK_MODEL = ROOT / "models" / "zookeeper_unclean.toml"
KRAFT_MODEL = ROOT / "models" / "zookeeper_unclean_kraft.toml"


def zk_cluster(
    partition: PartitionRegistration, registry: BrokerRegistry | None = None, unclean: bool = False
) -> ClusterMetadata:
    return cluster(
        partition, registry or brokers(range(1, 4)), unclean=unclean, controller="zookeeper"
    )


def changed(outcome: object) -> Changed:
    assert isinstance(outcome, Changed), outcome
    return outcome


# --- broker events -----------------------------------------------------------------------------


def test_leader_failure_elects_from_the_live_isr_like_kraft() -> None:
    meta = zk_cluster(reg([1, 2, 3], [1, 2, 3], leader=1, leader_epoch=4, partition_epoch=7))
    z = changed(zk.fence_broker(meta, FenceBroker(1)))
    k = changed(rules.fence_broker(meta, FenceBroker(1)))
    assert (z.registration.leader, z.registration.isr) == (2, {2, 3})
    assert (k.registration.leader, k.registration.isr) == (2, {2, 3})
    assert (z.registration.leader_epoch, z.registration.partition_epoch) == (5, 8)
    assert z.brokers is not None and z.brokers.get(1).fenced


def test_follower_failure_shrinks_the_isr_and_bumps_the_leader_epoch() -> None:
    """OfflineReplica: out of the ISR; every controller leader-and-ISR write of the ZooKeeper era
    bumps the leader epoch (KRaft does so only before 3.6,
    `PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded`)."""
    meta = zk_cluster(reg([1, 2, 3], [1, 2, 3], leader=1, leader_epoch=4, partition_epoch=7))
    z = changed(zk.fence_broker(meta, FenceBroker(3)))
    assert (z.registration.leader, z.registration.isr, z.registration.leader_epoch) == (
        1,
        {1, 2},
        5,
    )
    k = changed(rules.fence_broker(meta, FenceBroker(3)))
    assert k.registration.leader_epoch == 4
    outside = zk.fence_broker(zk_cluster(reg([1, 2, 3], [1, 2], leader=1)), FenceBroker(3))
    assert isinstance(outside, Unchanged) and outside.brokers is not None


def test_last_isr_member_failure_unclean_off_and_on() -> None:
    """Unclean off: no leader, the last member stays in the ISR (as in KRaft's
    `PartitionChangeBuilder.build`). Unclean on: the offline selector takes live replica 2 from
    outside the ISR as leader and sole ISR member; no leader recovery state in that era (KRaft's
    `PartitionChangeBuilder.tryElection` marks it RECOVERING)."""
    p = reg([1, 2, 3], [1], leader=1, leader_epoch=4, partition_epoch=7)
    clean = changed(zk.fence_broker(zk_cluster(p), FenceBroker(1)))
    assert (clean.registration.leader, clean.registration.isr) == (-1, {1})
    dirty = changed(zk.fence_broker(zk_cluster(p, unclean=True), FenceBroker(1)))
    assert (dirty.registration.leader, dirty.registration.isr) == (2, {2})
    assert dirty.registration.leader_recovery_state == LeaderRecoveryState.RECOVERED
    kraft = changed(
        rules.fence_broker(cluster(p, brokers(range(1, 4)), unclean=True), FenceBroker(1))
    )
    assert (kraft.registration.leader, kraft.registration.isr) == (2, {2})
    assert kraft.registration.leader_recovery_state == LeaderRecoveryState.RECOVERING


def test_controlled_shutdown_moves_the_leader_or_drops_a_follower() -> None:
    p = reg([1, 2, 3], [1, 2, 3], leader=1, leader_epoch=4, partition_epoch=7)
    led = changed(zk.controlled_shutdown(zk_cluster(p), ControlledShutdown(1)))
    assert (led.registration.leader, led.registration.isr) == (2, {2, 3})
    assert led.brokers is not None and led.brokers.get(1).in_controlled_shutdown
    follower = changed(zk.controlled_shutdown(zk_cluster(p), ControlledShutdown(2)))
    assert (follower.registration.leader, follower.registration.isr) == (1, {1, 3})
    alone = zk.controlled_shutdown(zk_cluster(reg([1, 2], [1], leader=1)), ControlledShutdown(1))
    assert isinstance(alone, Unchanged)  # no other ISR member: the leader stays, shutdown waits


def test_startup_brings_an_offline_partition_online() -> None:
    p = reg([1, 2, 3], [1], leader=-1, leader_epoch=5, partition_epoch=8)
    registry = brokers(range(1, 4), fenced=(1,))
    back = changed(zk.unfence_broker(zk_cluster(p, registry), UnfenceBroker(1)))
    assert (back.registration.leader, back.registration.isr, back.registration.leader_epoch) == (
        1,
        {1},
        6,
    )
    # A broker outside the ISR starting up elects itself only with unclean election on.
    assert isinstance(zk.unfence_broker(zk_cluster(p, registry), UnfenceBroker(2)), Unchanged)
    registry = brokers(range(1, 4), fenced=(1, 2, 3))
    dirty = changed(zk.unfence_broker(zk_cluster(p, registry, unclean=True), UnfenceBroker(2)))
    assert (dirty.registration.leader, dirty.registration.isr) == (2, {2})


def test_elections_on_request() -> None:
    p = reg([1, 2, 3], [1, 2, 3], leader=2, leader_epoch=4, partition_epoch=7)
    preferred = changed(zk.elect_leaders(zk_cluster(p), ElectLeadersRequest(Election.PREFERRED)))
    assert preferred.registration.leader == 1
    done = zk.elect_leaders(
        zk_cluster(preferred.registration), ElectLeadersRequest(Election.PREFERRED)
    )
    assert isinstance(done, Rejected) and done.error == Error.ELECTION_NOT_NEEDED
    leaderless = reg([1, 2, 3], [1], leader=-1)
    unclean = changed(
        zk.elect_leaders(
            zk_cluster(leaderless, brokers(range(1, 4), fenced=(1,))),
            ElectLeadersRequest(Election.UNCLEAN),
        )
    )
    assert (unclean.registration.leader, unclean.registration.isr) == (2, {2})
    nobody = zk.elect_leaders(
        zk_cluster(leaderless, brokers(range(1, 4), fenced=(1, 2, 3))),
        ElectLeadersRequest(Election.UNCLEAN),
    )
    assert isinstance(nobody, Rejected) and nobody.error == Error.ELIGIBLE_LEADERS_NOT_AVAILABLE


def test_registration_changes_no_partition_and_unknown_brokers_are_refused() -> None:
    """No unclean-shutdown detection in the ZooKeeper era, whatever the metadata version."""
    p = reg([1, 2, 3], [1, 2, 3], leader=1)
    kraft = rules.register_broker(cluster(p, brokers(range(1, 4))), RegisterBroker(2, 1))
    assert isinstance(kraft, Changed) and kraft.registration.isr == {1, 3}
    z = zk.register_broker(zk_cluster(p), RegisterBroker(2, 1))
    assert isinstance(z, Unchanged) and z.brokers is not None and z.brokers.get(2).fenced
    refused = zk.fence_broker(zk_cluster(p), FenceBroker(9))
    assert isinstance(refused, Rejected) and refused.error == Error.BROKER_ID_NOT_REGISTERED


# --- the models --------------------------------------------------------------------------------


def test_zookeeper_unclean_model_loses_a_committed_write_and_replays(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    code = main(
        [
            "check",
            "--quiet",
            "--workers",
            "1",
            "--reports",
            str(tmp_path),
            "--json",
            str(summary),
            str(ZK_MODEL),
        ]
    )
    assert code == 0
    report = json.loads(summary.read_text())["models"][0]
    by_name = {r["property"]: r for r in report["results"]}
    committed = by_name["leader_completeness.committed_log"]
    assert committed["status"] == "violated" and committed["trace_length"] == 5
    trace = Path(committed["trace_file"])
    assert main(["replay", "--quiet", str(trace)]) == 0
    # The last step is the broker failure whose offline selector elects from outside the ISR.
    states = json.loads(trace.read_text())["states"]
    before, after = states[-2]["controller"]["log"][-1], states[-1]["controller"]["log"][-1]
    assert (before["leader"], before["isr"]["#set"]) == (1, [1])
    assert (after["leader"], after["isr"]["#set"]) == (2, [2])


def test_the_difference_is_unclean_election_not_the_controller() -> None:
    """The other two corners of the square: the ZooKeeper-era controller with unclean election
    off explores exactly the KRaft counterpart's states and holds; KRaft with unclean election
    on loses the write at the same depth (the unclean step of
    `PartitionChangeBuilder.electAnyLeader`)."""
    text = ZK_MODEL.read_text()
    import tomllib

    raw = tomllib.loads(text)
    raw["rules"]["unclean_leader_election"] = False
    raw["expect"] = {}
    clean = Explorer(parse_model(raw), properties.ALL, Limits()).run()
    assert clean.complete and not clean.violations
    assert clean.distinct_states == load_model(KRAFT_MODEL).expect.distinct_states
    raw = tomllib.loads(text)
    raw["rules"]["controller"] = "kraft"
    raw["expect"] = {}
    kraft = Explorer(parse_model(raw), properties.ALL, Limits(max_depth=5)).run()
    assert kraft.violations["leader_completeness.committed_log"].depth == 5


def test_controller_option_is_validated() -> None:
    base = {"cluster": {"brokers": 2, "replicas": [1, 2]}}
    with pytest.raises(ModelError, match="controller must be"):
        parse_model({**base, "rules": {"controller": "zk"}})
    with pytest.raises(ModelError, match="elr"):
        parse_model({**base, "rules": {"controller": "zookeeper", "elr": True}})
    assert parse_model(base).options.controller == "kraft"
