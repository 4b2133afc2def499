"""The controller side of the cluster model: call the controller rules (never a copy of them) and
commit what they return to the metadata log.

The rules are pure, so their results are cached: the same registration, brokers and request
recur across many cluster states.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from kafkarep import rules
from kafkarep.kafka.metadata import BrokerRegistry, ClusterMetadata
from kafkarep.model.config import ModelConfig
from kafkarep.model.metadata_cache import Eligibility, eligibility
from kafkarep.model.shapes import BrokerShape, ClusterShape
from kafkarep.model.state import ClusterState
from kafkarep.rules import Changed, Outcome, Rejected
from kafkarep.rules.terms import Term, and_, eq
from kafkarep.zookeeper import events as zk


def metadata(state: ClusterState, cfg: ModelConfig) -> ClusterMetadata:
    """What the active controller decides from (behind the log after a lagging failover), under
    the MinISR in force."""
    c = state.controller
    topic = cfg.topic
    if c.min_isr_now != topic.min_isr:
        topic = topic._replace(min_isr=c.min_isr_now)
    return ClusterMetadata(c.decides_from, c.brokers, topic, cfg.options)


# Who else takes part in a controller step, by kind: "kafka" answers every step of a model with
# `[rules] controller = "kafka"` (Kafka's own classes, given the rules' outcome to compare
# with), "audit" sees every distinct step. Both are installed by `kafkarep.oracle`'s
# `kafka_controller`, a layer above the model's; forked workers inherit them.
StepHook = Callable[[str, ClusterMetadata, Any, Outcome], Outcome]
HOOKS: dict[str, StepHook] = {}
# "kafka" again: asks every step `Unanswered` raised for since the last call, in one batch, and
# says how many it asked.
ASKERS: dict[str, Callable[[], int]] = {}


class NoKafkaController(Exception):
    """A `controller = "kafka"` step with no Kafka answerer installed."""


class Unanswered(Exception):
    """Raised by the "kafka" hook while steps are `collected` and the step's answer is not known
    yet: it is kept to be asked in the batch, and the rules' outcome stands in meanwhile."""

    def __init__(self, provisional: Outcome) -> None:
        super().__init__("a controller step to ask in the next batch")
        self.provisional = provisional


class _Collecting:
    def __init__(self) -> None:
        self.on = False
        self.unanswered = 0  # steps met since `collect` began whose answer stood in


_COLLECTING = _Collecting()


def collect(on: bool) -> None:
    """Turn batching on or off in this process (the explorer's workers, docs/oracle.md)."""
    _COLLECTING.on = on
    _COLLECTING.unanswered = 0


def collecting() -> bool:
    return _COLLECTING.on


def unanswered() -> int:
    """How many steps have stood in provisionally since `collect` began: a successor computed
    while this grew is not the model's and is computed again after `ask_unanswered`."""
    return _COLLECTING.unanswered


def ask_unanswered() -> int:
    """Ask the steps met without an answer, in one batch: how many were asked."""
    asker = ASKERS.get("kafka")
    return 0 if asker is None else asker()


def _cached(name: str, rule: Callable[[ClusterMetadata, Any], Outcome]) -> Callable[..., Outcome]:
    """The rule, once per distinct step in a process, answered by Kafka's classes where the
    model says so. A provisional answer (`Unanswered`) is never cached."""

    def answered(metadata: ClusterMetadata, request: Any) -> Outcome:
        outcome = rule(metadata, request)
        audit = HOOKS.get("audit")
        if audit is not None:
            audit(name, metadata, request, outcome)
        if metadata.options.controller != "kafka":
            return outcome
        kafka = HOOKS.get("kafka")
        if kafka is None:
            raise NoKafkaController(
                'controller = "kafka" needs Kafka\'s classes: '
                "import kafkarep.oracle.kafka_controller"
            )
        return kafka(name, metadata, request, outcome)

    cached = lru_cache(maxsize=1 << 16)(answered)
    _CACHES.append(cached)

    def step(metadata: ClusterMetadata, request: Any) -> Outcome:
        try:
            return cached(metadata, request)
        except Unanswered as unknown:
            _COLLECTING.unanswered += 1
            return unknown.provisional

    return step


_CACHES: list[Any] = []  # each rule's cache (`forget`)


def _by_controller(
    kraft: Callable[[ClusterMetadata, Any], Outcome],
    zookeeper: Callable[[ClusterMetadata, Any], Outcome],
) -> Callable[[ClusterMetadata, Any], Outcome]:
    """The KRaft rule, or, when the model says `[rules] controller = "zookeeper"`, that of the
    ZooKeeper-era controller described in Kafka Controller Internals (Apache wiki)."""

    def rule(metadata: ClusterMetadata, request: Any) -> Outcome:
        if metadata.options.controller == "zookeeper":
            return zookeeper(metadata, request)
        return kraft(metadata, request)

    return rule


alter_partition = _cached("alter_partition", rules.alter_partition)
alter_reassignment = _cached("alter_reassignment", rules.alter_reassignment)
elect_leaders = _cached("elect_leaders", _by_controller(rules.elect_leaders, zk.elect_leaders))
fence_broker = _cached("fence_broker", _by_controller(rules.fence_broker, zk.fence_broker))
unfence_broker = _cached("unfence_broker", _by_controller(rules.unfence_broker, zk.unfence_broker))
controlled_shutdown = _cached(
    "controlled_shutdown", _by_controller(rules.controlled_shutdown, zk.controlled_shutdown)
)
register_broker = _cached(
    "register_broker", _by_controller(rules.register_broker, zk.register_broker)
)


def forget() -> None:
    """Drop the cached results (a test that changes a rule in a running process)."""
    for cache in _CACHES:
        cache.cache_clear()


def commit(cfg: ModelConfig, state: ClusterState, outcome: Outcome) -> ClusterState:
    """Append a committed change to the metadata log, with the brokers' eligibility a broker that
    applies it caches, and adopt a changed broker registry."""
    if isinstance(outcome, Rejected):
        return state
    controller = state.controller
    if outcome.brokers is not None:
        controller = controller._replace(brokers=outcome.brokers)
    if isinstance(outcome, Changed):
        registration = outcome.registration
        if controller.lag:
            # decided from an older snapshot: brokers replay the record on top of the log
            registration = controller.partition.apply(outcome.record)
        controller = controller._replace(
            log=controller.log + (registration,),
            eligible=controller.eligible + (eligibility_now(cfg, controller.brokers),),
            min_isr=controller.min_isr + (controller.min_isr_now,),
            lag=0,
        )
    return state._replace(controller=controller)


@lru_cache(maxsize=1 << 12)
def _eligibility(registry: BrokerRegistry, brokers: int, zookeeper: bool) -> Eligibility:
    return eligibility(registry, brokers, zookeeper)


def eligibility_now(cfg: ModelConfig, registry: BrokerRegistry) -> Eligibility:
    """The brokers' ISR eligibility a cache that has applied this registry holds."""
    return _eligibility(registry, len(cfg.broker_ids), cfg.options.controller == "zookeeper")


def compact(state: ClusterState) -> ClusterState:
    """Forget the log prefix every broker has applied: no one reads it again, so histories that
    differ only there are the same state. (A broker that says -1 has no position to keep: it
    jumps to the end when it catches up, see reduction.py.)"""
    controller = state.controller
    log = controller.log
    if len(log) == 1:
        return state
    start = log[0].partition_epoch
    lowest = -1
    for broker in state.brokers:
        applied = broker.applied_epoch
        if applied == start:
            return state  # the usual case: someone still has the first record to read from
        if applied >= 0 and (lowest < 0 or applied < lowest):
            lowest = applied
    keep = controller.position(lowest) if lowest >= 0 else len(log) - 1
    keep = min(keep, len(log) - 1 - controller.lag)  # a lagging controller still reads there
    if keep <= 0:
        return state
    return state._replace(
        controller=controller._replace(
            log=log[keep:], eligible=controller.eligible[keep:], min_isr=controller.min_isr[keep:]
        )
    )


def caught_up(state: ClusterShape, broker: BrokerShape) -> Term:
    """The broker runs on the latest partition record (written over `kafkarep.rules.terms`: the
    prover runs it on its terms, through `lifecycle.caught_up_with_metadata`)."""
    return and_(broker.initialised, eq(broker.applied_epoch, state.partition.partition_epoch))
