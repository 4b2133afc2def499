"""The recovery point: a lossy unclean shutdown loses what was not flushed, from the recovery
point on, and keeps what a clean shutdown flushed (`LogLoader.recoverLog`, `LogManager.shutdown`;
docs/models.md, "Broker shutdowns"), driven by hand through the model's steps. The prover's
copy of these steps is compared with them by `kafkarep prove`'s agreement check."""

from __future__ import annotations

from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.logs import truncated
from kafkarep.model.reduction import reduce
from kafkarep.model.state import ClusterState, Replica
from tests.helpers import step, three_brokers

RECORD = (1, 1)  # (leader epoch, value) of the one write


def replica(state: ClusterState, broker: int) -> Replica:
    r = state.broker(broker).replica
    assert r is not None
    return r


def replicated(cfg: ModelConfig) -> ClusterState:
    """The leader appends the write; brokers 2 and 3 fetch it."""
    state = step(cfg, initial_state(cfg), "produce", 1)
    for follower in (2, 3):
        state = step(cfg, step(cfg, state, "fetch", follower), "fetch_response", follower)
        assert replica(state, follower).log == (RECORD,)
    return state


def test_a_broker_that_never_shut_down_cleanly_loses_its_whole_log() -> None:
    cfg = three_brokers({"lossy_unclean_shutdowns": 1})
    state = step(cfg, replicated(cfg), "crash_lossy", 3)
    assert replica(state, 3).log == ()
    assert replica(state, 3).recovery_point == 0


def test_a_clean_shutdown_flushes_and_a_later_lossy_crash_keeps_it() -> None:
    cfg = three_brokers({"clean_shutdowns": 1, "lossy_unclean_shutdowns": 1})
    state = step(cfg, replicated(cfg), "controlled_shutdown", 2)
    state = step(cfg, state, "shutdown_complete", 2)
    assert replica(state, 2).recovery_point == 1
    state = step(cfg, state, "restart", 2)
    state = step(cfg, state, "crash_lossy", 2)
    assert replica(state, 2).log == (RECORD,)


def test_a_log_kept_by_a_crash_keeps_its_recovery_point() -> None:
    cfg = three_brokers(
        {"clean_shutdowns": 1, "unclean_shutdowns": 1, "lossy_unclean_shutdowns": 1}
    )
    state = step(cfg, replicated(cfg), "controlled_shutdown", 2)
    state = step(cfg, step(cfg, state, "shutdown_complete", 2), "restart", 2)
    state = step(cfg, step(cfg, state, "crash", 2), "restart", 2)
    assert replica(state, 2).recovery_point == 1
    assert replica(step(cfg, state, "crash_lossy", 2), 2).log == (RECORD,)


def test_a_truncation_lowers_the_recovery_point() -> None:
    r = Replica(log=(RECORD, (2, 2)), hwm=2, recovery_point=2)
    cut = truncated(r, 1)
    assert (cut.log, cut.hwm, cut.recovery_point) == ((RECORD,), 1, 1)
    assert truncated(r._replace(recovery_point=0), 1).recovery_point == 0


def test_only_a_model_with_lossy_shutdowns_tracks_it() -> None:
    """A clean shutdown sets no recovery point where nothing reads one, so those models keep
    their state counts; once the lossy budget is spent the reduction forgets them."""
    cfg = three_brokers({"clean_shutdowns": 1})
    state = step(cfg, replicated(cfg), "controlled_shutdown", 2)
    assert replica(step(cfg, state, "shutdown_complete", 2), 2).recovery_point == 0
    cfg = three_brokers({"clean_shutdowns": 1, "lossy_unclean_shutdowns": 1})
    state = step(cfg, replicated(cfg), "controlled_shutdown", 2)
    state = step(cfg, state, "shutdown_complete", 2)
    spent = step(cfg, state, "crash_lossy", 3)
    assert replica(spent, 2).recovery_point == 1
    assert replica(reduce(cfg, spent), 2).recovery_point == 0
