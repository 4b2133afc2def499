"""A fetch response sent after the leader's log changed under it (`[faults] late_sends`,
KAFKA-18723). The leader reads a slice of its segment file when it handles a fetch and the
network thread sends the bytes later; a leader that lost leadership in between, truncated and
fetched the new leader's records sends those. Kafka 4.0.0's follower appends them after its own
records, so its log differs from the new leader's below the HWM; since 3.9.1, 4.0.1 and 4.1.0 it
skips every batch of a leader epoch above its fetch's (`fetch_response.batch_epoch_within_fetch`;
models/history/kafka_18723_late_send.toml)."""

from __future__ import annotations

import pytest

from kafkarep.kafka.releases import behaviour
from kafkarep.model.actions import active
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.completeness import isr_members_complete
from tests.helpers import step
from tests.helpers import three_brokers as model


def late_send(cfg: ModelConfig) -> ClusterState:
    """Leader 1 writes record 1; broker 3 fetches it, then fetches from offset 1 and the answer,
    a slice holding record 2, is in flight. Broker 1 is fenced: broker 2, which has nothing,
    leads in leader epoch 2 and writes records 3 and 4; broker 1 follows it, truncates its log
    to nothing and fetches records 3 and 4. Only then is broker 3's answer sent: the slice now
    holds record 4, of leader epoch 2."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    state = step(cfg, step(cfg, state, "fetch", 3), "fetch_response", 3)
    state = step(cfg, step(cfg, state, "produce", 1), "fetch", 3)
    state = step(cfg, state, "fence", 0, 1)
    state = step(cfg, state, "apply_metadata", 2, 1)
    state = step(cfg, step(cfg, state, "produce", 2), "produce", 2)
    state = step(cfg, state, "apply_metadata", 1, 1)
    for _ in range(2):  # the divergence, then the new leader's records
        state = step(cfg, step(cfg, state, "fetch", 1), "fetch_response", 1)
    old_leader = state.broker(1).replica
    assert old_leader is not None and old_leader.log == ((2, 3), (2, 4))
    response = state.broker(3).fetch_response
    assert response is not None and response.entries == ((1, 2),)
    state = step(cfg, state, "late_send", 3)
    response = state.broker(3).fetch_response
    assert response is not None and response.entries == ((2, 4),)
    assert state.budget.late_sends == 0
    return step(cfg, state, "fetch_response", 3)


def caught_up(cfg: ModelConfig, state: ClusterState) -> ClusterState:
    """Broker 3 follows leader 2 and fetches until nothing changes."""
    state = step(cfg, state, "apply_metadata", 3, 1)
    for _ in range(3):
        state = step(cfg, step(cfg, state, "fetch", 3), "fetch_response", 3)
    return state


def test_4_0_0_appends_the_new_leaders_record_after_its_own() -> None:
    cfg = model({"fences": 1, "late_sends": 1}, records=4, kafka_version="4.0.0")
    state = late_send(cfg)
    follower = state.broker(3).replica
    assert follower is not None and follower.log == ((1, 1), (2, 4))
    # Its last epoch is leader 2's and its log as long as leader 2's: no divergence is found,
    # and leader 2 commits both records with broker 3 in the ISR holding record 1 at offset 0.
    state = caught_up(cfg, state)
    follower = state.broker(3).replica
    assert follower is not None and follower.log == ((1, 1), (2, 4))
    assert state.ghost.committed == (3, 4) and 3 in state.partition.isr
    assert isr_members_complete(cfg, state) is not None


@pytest.mark.parametrize("release", ["3.9.1", "4.0.1", "4.1.0", "4.4.0"])
def test_since_the_fix_the_follower_skips_it_and_truncates(release: str) -> None:
    cfg = model({"fences": 1, "late_sends": 1}, records=4, kafka_version=release)
    state = late_send(cfg)
    follower = state.broker(3).replica
    assert follower is not None and follower.log == ((1, 1),)
    state = caught_up(cfg, state)
    follower = state.broker(3).replica
    assert follower is not None and follower.log == ((2, 3), (2, 4))
    assert isr_members_complete(cfg, state) is None


def test_the_guard_switched_off_is_4_0_0s_follower() -> None:
    cfg = model(
        {"fences": 1, "late_sends": 1},
        records=4,
        kafka_version="4.1.0",
        disable_guards=["fetch_response.batch_epoch_within_fetch"],
    )
    follower = late_send(cfg).broker(3).replica
    assert follower is not None and follower.log == ((1, 1), (2, 4))


def test_the_fix_by_release() -> None:
    fixed = {
        r
        for r in ("3.9.1", "3.9.2", "4.0.0", "4.0.1", "4.1.0")
        if behaviour(r).follower_skips_newer_batches
    }
    assert fixed == {"3.9.1", "3.9.2", "4.0.1", "4.1.0"}


def test_a_send_needs_a_changed_log_the_slice_still_fits_and_the_budget() -> None:
    cfg = model({"late_sends": 1}, records=2)
    state = step(cfg, step(cfg, initial_state(cfg), "produce", 1), "fetch", 3)
    names = {a.name for a in active(cfg)}
    assert "late_send" in names
    # the leader's log only grew: the slice holds what was read
    state = step(cfg, state, "produce", 1)
    with pytest.raises(AssertionError, match="late_send by 3 is not enabled"):
        step(cfg, state, "late_send", 3)
    assert "late_send" not in {f.name for f in active(model({}, records=2))}
