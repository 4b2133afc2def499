"""Broker lifecycle: fencing, controlled shutdown, unclean shutdown, restart (protocol
description §1.2.2, §5 and §8; Kafka's `ReplicationControlManager.handleBrokerFenced`,
`handleBrokerUnfenced`, `handleBrokerInControlledShutdown`, `handleBrokerShutdown` and
`ClusterControlManager.registerBroker`).

Faults spend a budget: `fence` (a running broker loses its controller session), a controlled
(`clean`) shutdown, and an unclean shutdown with or without local data loss. Healing does not:
`unfence` (heartbeats resume once the broker has caught up with the metadata), the end of a
controlled shutdown, and `restart` (re-registration with a new incarnation and broker epoch).
An unclean shutdown fences the broker in the same step: the session timeout is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kafkarep.model import controller
from kafkarep.model import footprint as fp
from kafkarep.model.actions.base import CONTROLLER, Action, Family, partition_changed
from kafkarep.model.config import ModelConfig
from kafkarep.model.domain import CONCRETE, Domain, running
from kafkarep.model.footprint import Footprint
from kafkarep.model.shapes import BrokerShape, ClusterShape
from kafkarep.model.state import RUNNING, ClusterState, Status
from kafkarep.rules import (
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
)
from kafkarep.rules.guards import guard
from kafkarep.rules.terms import Term, and_, eq, imin, ite, ne, not_


def _registration_fenced(state: ClusterState, broker_id: int) -> bool:
    return state.controller.brokers.get(broker_id).fenced


# --- fence / unfence ---------------------------------------------------------------------------


def fence_enabled(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """The controller fences a running broker it has not fenced (a missed heartbeat), while
    the model's budget of fences lasts."""
    registration = d.broker_registration(state, broker_id)
    return and_(
        state.budget.fences > 0,
        running(state.brokers[broker_id - 1]),
        not_(registration.fenced),
    )


def fence_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.fences == 0:
        return
    for broker_id in cfg.broker_ids:
        if fence_enabled(CONCRETE, state, broker_id):
            yield Action("fence", CONTROLLER, broker_id)


def fence_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The controller fences the broker, which spends a fence."""
    return d.commit_rule(cfg, d.spend(state, "fences"), "fence_broker", FenceBroker(broker_id))


def fence(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    return fence_step(CONCRETE, cfg, state, action.arg)


@guard("unfence")
def caught_up_with_metadata(state: ClusterShape, broker: BrokerShape) -> Term:
    """A fenced broker's heartbeat unfences it once the broker has caught up with the metadata
    log (`BrokerHeartbeatManager.calculateNextBrokerState`, Kafka 4.1.0: its metadata offset
    reaches its own RegisterBrokerRecord's). The model asks for the latest partition record,
    which a running broker always reaches: stricter, never blocking for good."""
    return controller.caught_up(state, broker)


def unfence_enabled(d: Domain, cfg: ModelConfig, state: ClusterShape, broker_id: int) -> Term:
    """A fenced broker whose process runs (not shutting down) heartbeats its way back."""
    broker = state.brokers[broker_id - 1]
    return and_(
        eq(broker.status, Status.RUNNING),
        d.broker_registration(state, broker_id).fenced,
        caught_up_with_metadata.passes(cfg.options.disabled_guards, state, broker),
    )


def unfence_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if (
            broker.status == Status.RUNNING
            and state.controller.brokers.get(broker_id).fenced
            and unfence_enabled(CONCRETE, cfg, state, broker_id)
        ):
            yield Action("unfence", CONTROLLER, broker_id)


def unfence_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The controller unfences the broker (a heartbeat that asks to be unfenced)."""
    return d.commit_rule(cfg, state, "unfence_broker", UnfenceBroker(broker_id))


def unfence(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    assert isinstance(action.arg, int)
    return unfence_step(CONCRETE, cfg, state, action.arg)


# --- controlled shutdown -----------------------------------------------------------------------


def controlled_shutdown_enabled(d: Domain, state: ClusterShape, broker_id: int) -> Term:
    """A running, active broker starts a controlled shutdown, while the model's budget of
    clean shutdowns lasts."""
    return and_(
        state.budget.clean_shutdowns > 0,
        eq(state.brokers[broker_id - 1].status, Status.RUNNING),
        d.broker_registration(state, broker_id).active,
    )


def controlled_shutdown_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    if state.budget.clean_shutdowns == 0:
        return
    for broker_id in cfg.broker_ids:
        if controlled_shutdown_enabled(CONCRETE, state, broker_id):
            yield Action("controlled_shutdown", broker_id)


def controlled_shutdown_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The broker asks to shut down; the controller moves its leaderships away
    (`ReplicationControlManager.handleBrokerInControlledShutdown`)."""
    state = d.spend(state, "clean_shutdowns")
    state = d.commit_rule(cfg, state, "controlled_shutdown", ControlledShutdown(broker_id))
    broker = state.brokers[broker_id - 1]
    return d.with_broker(state, broker_id, broker._replace(status=d.status(Status.SHUTTING_DOWN)))


def controlled_shutdown(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return controlled_shutdown_step(CONCRETE, cfg, state, action.actor)


def shutdown_complete_enabled(state: ClusterShape, broker_id: int) -> Term:
    """A broker in controlled shutdown stops once the controller has moved its leadership."""
    return and_(
        eq(state.brokers[broker_id - 1].status, Status.SHUTTING_DOWN),
        ne(state.partition.leader, broker_id),
    )


def shutdown_complete_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.status == Status.SHUTTING_DOWN and shutdown_complete_enabled(state, broker_id):
            yield Action("shutdown_complete", broker_id)


def shutdown_complete_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """Once it leads nothing the broker stops, its log flushed; the controller fences it."""
    state = go_offline(d, cfg, state, broker_id, Status.OFFLINE_CLEAN, lose_data=False)
    return d.commit_rule(cfg, state, "fence_broker", FenceBroker(broker_id))


def shutdown_complete(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return shutdown_complete_step(CONCRETE, cfg, state, action.actor)


# --- a clean shutdown without the controller ---------------------------------------------------


def stop(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """The broker shuts down cleanly without the controller moving its leaderships first: with
    `controlled.shutdown.enable=false`, after its controlled shutdown timed out, or fenced (the
    controller tells a fenced broker to shut down at once). Each path of `BrokerServer.shutdown`
    (Kafka 4.1.0) goes on to `LogManager.shutdown`, which flushes every log and writes the
    clean-shutdown marker with the broker epoch (once its logs have loaded, which a running
    broker's have), so the restart presents it (KAFKA-18635). The controller fences it when its
    session expires; the model does so in the same step."""
    return shut_down(CONCRETE, cfg, state, action.actor, "stop")


# --- unclean shutdown and restart --------------------------------------------------------------


def shutdown_enabled(state: ClusterShape, broker_id: int, budget: str) -> Term:
    """A running broker stops without the controller's leave (`stop`, `crash`, `crash_lossy`),
    while the model's budget of that fault lasts."""
    return and_(getattr(state.budget, budget) > 0, running(state.brokers[broker_id - 1]))


def _shutdown_actions(name: str) -> Callable[[ModelConfig, ClusterState], Iterator[Action]]:
    budget = STOPS[name][0]

    def actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
        if getattr(state.budget, budget) == 0:
            return
        for broker_id in cfg.broker_ids:
            if shutdown_enabled(state, broker_id, budget):
                yield Action(name, broker_id)

    return actions


# The stops the controller learns of from the broker's session: their budget, the status they
# leave the broker in, and whether it loses what it had not flushed.
STOPS = {
    "stop": ("uncontrolled_shutdowns", Status.OFFLINE_CLEAN, False),
    "crash": ("unclean_shutdowns", Status.OFFLINE_UNCLEAN, False),
    "crash_lossy": ("lossy_unclean_shutdowns", Status.OFFLINE_UNCLEAN, True),
}


def crash(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    """An unclean shutdown: a process killed (`crash`), or a power or kernel failure that loses
    what was not flushed (`crash_lossy`), all of it, the worst case (`stopped`)."""
    return shut_down(CONCRETE, cfg, state, action.actor, action.name)


def shut_down(d: Domain, cfg: ModelConfig, state: Any, broker_id: int, name: str) -> Any:
    """A shutdown the controller learns of only when the broker's session expires: it spends
    its budget, and the broker is fenced in the same step (unless it already was)."""
    budget, status, lose_data = STOPS[name]
    state = go_offline(d, cfg, d.spend(state, budget), broker_id, status, lose_data)
    fenced = d.broker_registration(state, broker_id).fenced
    if fenced is True:
        return state
    fenced_now = d.commit_rule(cfg, state, "fence_broker", FenceBroker(broker_id))
    return d.pick_state(fenced, state, fenced_now)


def go_offline(
    d: Domain, cfg: ModelConfig, state: Any, broker_id: int, status: Status, lose_data: bool
) -> Any:
    """The process stops: a leader fails its pending writes; the replica keeps what `stopped`
    says; the responses in flight to it are gone."""
    state = d.nack_unacked(state, broker_id)
    broker = state.brokers[broker_id - 1]
    replica = broker.replica
    held = d.present(replica)
    if held is not False:
        flushed = status == Status.OFFLINE_CLEAN and tracks_recovery_point(cfg)
        replica = d.pick_replica(held, stopped(d, replica, lose_data, flushed), d.no_replica())
    broker = broker._replace(
        status=d.status(status),
        initialised=False,
        replica=replica,
        fetch_response=d.no_fetch_response(),
        ap_response=d.no_ap_response(),
    )
    return d.with_broker(state, broker_id, broker)


def tracks_recovery_point(cfg: ModelConfig) -> bool:
    """Only a lossy unclean shutdown reads the recovery point."""
    return cfg.budget.lossy_unclean_shutdowns > 0


def stopped(d: Domain, replica: Any, lose_data: bool, flushed: bool) -> Any:
    """What survives a stop: no role, no view; the log and the checkpointed HWM within it.

    A clean shutdown flushes every log and checkpoints its recovery point (`LogManager.shutdown`,
    read at 3.8.0 and 4.1.0). A lossy unclean shutdown keeps the log up to the recovery point:
    the restart recovers from there and truncates at the first batch that did not reach the disk
    (`LogLoader.recoverLog`). Nothing else flushes in the model: Kafka's defaults flush by
    `flush.messages` and `flush.ms` never, and roll a segment (which flushes the one before) at
    1 GiB or 7 days, which a model's few records never reach. The model loses every unflushed
    record, the worst case: Kafka may keep some that the OS wrote back."""
    kept = d.cut_log(replica, replica.recovery_point) if lose_data else replica
    recovery_point = kept.leo if flushed else kept.recovery_point
    return d.stopped_replica(kept, imin(kept.hwm, kept.leo), recovery_point)


def _can_go_offline(cfg: ModelConfig) -> bool:
    """Every broker starts running (initial.py); only a shutdown takes one down."""
    b = cfg.budget
    stops = b.clean_shutdowns + b.uncontrolled_shutdowns
    return stops + b.unclean_shutdowns + b.lossy_unclean_shutdowns > 0


def restart_enabled(state: ClusterShape, broker_id: int) -> Term:
    """An offline broker starts again."""
    return not_(running(state.brokers[broker_id - 1]))


def restart_actions(cfg: ModelConfig, state: ClusterState) -> Iterator[Action]:
    for broker_id, broker in enumerate(state.brokers, 1):
        if broker.status not in RUNNING and restart_enabled(state, broker_id):
            yield Action("restart", broker_id)


def restart_step(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The broker starts and registers under a new incarnation: a new, fenced registration with a
    new broker epoch (`ClusterControlManager.registerBroker`); after an unclean shutdown the
    controller removes it from the ISR and ELR (`ReplicationControlManager.handleBrokerShutdown`).
    It then acts on its metadata again before anything else. (A fetch the network holds stays
    there: it is in the network, not in the process.)"""
    broker = state.brokers[broker_id - 1]
    previous = ite(eq(broker.status, Status.OFFLINE_CLEAN), broker.epoch, -1)
    request = RegisterBroker(broker_id, broker.incarnation + 1, previous_epoch=previous)
    state = d.commit_rule(cfg, state, "register_broker", request)
    registration = d.broker_registration(state, broker_id)
    broker = broker._replace(
        status=d.status(Status.RUNNING),
        epoch=registration.epoch,
        incarnation=registration.incarnation,
        initialised=False,
        fetch_response=d.no_fetch_response(),
        ap_response=d.no_ap_response(),
    )
    return d.with_broker(state, broker_id, broker)


def restart(cfg: ModelConfig, state: ClusterState, action: Action) -> ClusterState:
    return restart_step(CONCRETE, cfg, state, action.actor)


def fence_footprint(state: ClusterState, action: Action) -> Footprint:
    """A fence or an unfence reads the status and metadata position of the broker it is about
    (kafkarep/model/footprint.py)."""
    assert isinstance(action.arg, int)
    return fp.CONTROLLER | fp.meta(action.arg)


FAMILIES = (
    Family(
        "fence",
        fence_actions,
        fence,
        "fences",
        "the controller fences a running broker",
        describe=partition_changed,
        footprint=fence_footprint,
    ),
    Family(
        "unfence",
        unfence_actions,
        unfence,
        None,
        "a caught-up fenced broker is unfenced",
        describe=partition_changed,
        footprint=fence_footprint,
    ),
    Family(
        "controlled_shutdown",
        controlled_shutdown_actions,
        controlled_shutdown,
        "clean_shutdowns",
        "a broker starts a controlled shutdown",
        describe=partition_changed,
    ),
    Family(
        "shutdown_complete",
        shutdown_complete_actions,
        shutdown_complete,
        None,
        "a broker leading nothing finishes its controlled shutdown",
        lambda cfg: cfg.budget.clean_shutdowns > 0,
        describe=partition_changed,
    ),
    Family(
        "stop",
        _shutdown_actions("stop"),
        stop,
        "uncontrolled_shutdowns",
        "a broker shuts down cleanly without a controlled shutdown",
        describe=partition_changed,
    ),
    Family(
        "crash",
        _shutdown_actions("crash"),
        crash,
        "unclean_shutdowns",
        "an unclean shutdown that keeps the log",
        describe=partition_changed,
    ),
    Family(
        "crash_lossy",
        _shutdown_actions("crash_lossy"),
        crash,
        "lossy_unclean_shutdowns",
        "an unclean shutdown that loses the log",
        describe=partition_changed,
    ),
    Family(
        "restart",
        restart_actions,
        restart,
        None,
        "an offline broker starts and registers",
        _can_go_offline,
        describe=partition_changed,
    ),
)
