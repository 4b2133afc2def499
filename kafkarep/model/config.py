"""Model files (TOML): the cluster shape, rule options, fault budgets and the expected result.

Everything is validated before a run; a problem is a `ModelError` naming the file, the key and
what to write instead. See `models/kip966_small.toml` for a commented example and
docs/models.md for every key.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.common.files import read_text
from kafkarep.kafka.metadata import METADATA_VERSIONS, RuleOptions, TopicConfig, options_for_version
from kafkarep.kafka.releases import NEWEST, line, resolve
from kafkarep.kafka.releases import version as release_version
from kafkarep.model.logs import TRUNCATIONS
from kafkarep.model.state import Budget
from kafkarep.rules.guards import REFUSED

ENGINES = ("explorer", "spark", "hypothesis", "z3")


class ModelError(Exception):
    """A model file is missing or malformed: one line, exit code 2."""


class Table(NamedTuple):
    """A TOML table in an engine section, frozen: its (key, value) pairs, sorted. Hashable, so
    the model stays hashable; its own type, so an engine tells it from a list. (A NamedTuple,
    not a tuple subclass: mypyc compiles this module and cannot subclass builtins.)"""

    pairs: tuple[tuple[str, Any], ...]


class PropertyModule(NamedTuple):
    """A module of the user's own properties (`[check] extra_properties`): its path, resolved
    against the model file's directory, and its source, read with the model. The model carries
    the source so that every process holding it (a forked explorer worker, a Spark executor on
    another machine) builds the same properties from it (`kafkarep/properties/extra.py`)."""

    path: str
    source: str


class CheckConfig(NamedTuple):
    engine: str = "explorer"
    symmetry: bool = False
    reduction: bool = True  # kafkarep/model/reduction.py: sound, so on unless switched off
    # partial-order reduction by sleep sets (the explorer; docs/explorer.md): it skips steps,
    # never states, so it is on unless switched off
    por: bool = True
    max_states: int = 0  # 0: no limit
    max_depth: int = 0
    max_seconds: float = 0.0
    properties: tuple[str, ...] | None = None  # None: every safety property
    liveness: bool = False  # check every liveness property too (properties/liveness.py)
    unfair: tuple[str, ...] = ()  # healing families without fairness (properties/fairness.py)
    # the user's own properties, checked beside the built-in ones (docs/user-properties.md)
    extra_properties: tuple[PropertyModule, ...] = ()


class Expectation(NamedTuple):
    result: str | None = None  # "holds" or "violates"; None: nothing expected
    distinct_states: int | None = None
    violates: tuple[tuple[str, int | None], ...] = ()  # (property or clause, shortest depth)
    reached: tuple[str, ...] = ()  # `sometimes` properties the model must reach
    # the expectations are for paths of at most this many steps (a bounded verdict); the run
    # stops after that level
    within_depth: int | None = None


class ModelConfig(NamedTuple):
    path: str
    name: str
    description: str
    broker_ids: tuple[int, ...]
    replicas: tuple[int, ...]
    isr: frozenset[int]
    leader: int
    fenced: frozenset[int]
    topic: TopicConfig
    options: RuleOptions
    budget: Budget
    targets: tuple[tuple[int, ...], ...]
    check: CheckConfig
    expect: Expectation
    metadata_version: str = "4.0"
    # The producers' acks: "all" (acks=-1) or "1" (the leader's append acknowledges the write).
    acks: str = "all"
    # A leader applying metadata of its own leader epoch, at a partition epoch not below its own,
    # "reset"s a pending ISR change to the committed ISR (`Partition.makeLeader` at 3.3.0 and
    # later, KAFKA-13790); "keep-newer" keeps one newer than the metadata: no release since 3.3
    # does (before, a leader ignored such metadata, which "keep-newer" is the closer reading of).
    pending_isr_on_metadata: str = "reset"
    # The data plane's log reconciliation (kafkarep/model/logs.py): "leader-epoch" (KIP-279,
    # today's), "kip-101" (one epoch look-up, Kafka 0.11 to 1.x) or "high-watermark" (before
    # KIP-101). False: fetches carry no current leader epoch (before KIP-320, Kafka 2.1).
    truncation: str = "leader-epoch"
    current_leader_epoch_in_fetch: bool = True
    # A follower asks where to truncate with a request of its own, `OffsetsForLeaderEpoch`, once
    # per leader epoch it follows, and fetches only after it (Kafka 0.11.0 to 2.7.x); False: the
    # leader names the divergence in its fetch response (KAFKA-10554, 2.8.0). `actions/data.py`.
    offsets_for_leader_epoch: bool = False
    # Which followers outside the Maximal ISR the leader's HWM waits for once they caught up
    # within replica.lag.time.max.ms (`Partition.maybeIncrementLeaderHW`): "eligible" (Kafka
    # 3.6.0+, KAFKA-15021: those it would let join the ISR), "caught-up" (0.10.2.0 to 3.5.x,
    # KAFKA-4485: every one) or "none" (0.10.1 and older: the ISR alone). `model/hwm.py`.
    hwm_waits_for_caught_up_followers: str = "eligible"
    # KIP-966's broker part (Kafka 3.7.0): the leader's HWM does not advance while its ISR is
    # below MinISR (`Partition.maybeIncrementLeaderHW`), with ELR on or off.
    hwm_requires_min_isr: bool = True
    # The ISR the HWM is computed over: "maximal" (KIP-497, Kafka 2.7.0: the committed ISR and
    # the members a pending AlterPartition adds) or "committed" (2.6 and older). `model/hwm.py`.
    hwm_isr: str = "maximal"
    # The leader records the fetch state of a follower whose fetch diverges: Kafka 2.8.0; since
    # KAFKA-13141 (2.8.1, 3.0.0) it records nothing (`ReplicaManager.updateFollowerFetchState`).
    # `model/actions/data.py`.
    leader_counts_diverging_fetch: bool = False
    # How many partition records a new active controller may lag (`[faults] controller_lag`,
    # with controller_failovers; see kafkarep/model/actions/failover.py)
    controller_lag: int = 1
    # The highest MinISR a change of min.insync.replicas may set (`[faults] min_isr_changes`):
    # the fewest replicas the partition may have, so that it stays Kafka's effective MinISR.
    min_isr_limit: int = 1
    # Engine sections ([hypothesis], [prove], [plan], ...) as (section, key, value), sorted;
    # each engine validates and reads its own with `setting`.
    engine_settings: tuple[tuple[str, str, Any], ...] = ()

    def setting(self, section: str, key: str, default: Any = None) -> Any:
        for s, k, value in self.engine_settings:
            if s == section and k == key:
                return value
        return default

    @property
    def records(self) -> int:
        return self.budget.records

    @property
    def min_isr(self) -> int:
        return self.topic.min_isr


SECTIONS = {
    "model": {"name", "description"},
    "cluster": {"brokers", "replicas", "isr", "leader", "min_isr", "fenced", "records", "acks"},
    "rules": {
        "kafka_version",
        "metadata_version",
        "elr",
        "unclean_leader_election",
        "reassignment_completion",
        "use_last_known_leader",
        "last_known_leader_acceptable",
        "unclean_shutdown_detection",
        "disable_guards",
        "refuse_guards",
        "pending_isr_on_metadata",
        "truncation",
        "current_leader_epoch_in_fetch",
        "offsets_for_leader_epoch",
        "hwm_waits_for_caught_up_followers",
        "hwm_requires_min_isr",
        "hwm_isr",
        "leader_counts_diverging_fetch",
        "controller",
        "epochs_ahead_answer",
    },
    "faults": set(Budget._fields) - {"records"} | {"controller_lag"},
    "reassignment": {"targets"},
    "check": {
        "engine",
        "symmetry",
        "reduction",
        "por",
        "max_states",
        "max_depth",
        "max_seconds",
        "properties",
        "liveness",
        "unfair",
        "extra_properties",
    },
    "expect": {"result", "distinct_states", "violates", "reached", "within_depth"},
    # Settings of one engine or extension, read by it (see ModelConfig.setting).
    "hypothesis": {"examples", "steps", "seed", "swarm", "swarm_units", "profile"},
    # slow = true: `kafkarep suite --prove` proves the model only with --slow (or named)
    "prove": {"depth", "timeout", "brokers", "properties", "agreement_depth", "unknown", "slow"},
    "plan": {"target", "parallel_replicas", "parallel_partitions", "leader_movements"},
    "suite": {"slow"},  # `kafkarep suite`: slow = true skips the model unless --slow
}
ENGINE_SECTIONS = ("hypothesis", "prove", "plan", "suite")


def load_model(path: str | Path) -> ModelConfig:
    path = Path(path)
    text = read_text(path, "model", ModelError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ModelError(f"{path}: malformed TOML: {error}") from None
    except ValueError:  # Python reads no integer of more than 4,300 digits
        raise ModelError(f"{path}: malformed TOML: an integer with too many digits") from None
    except RecursionError:
        raise ModelError(f"{path}: malformed TOML: nested too deeply") from None
    try:
        return parse_model(raw, str(path))
    except ModelError as error:
        raise ModelError(f"{path}: {error}") from None


def parse_model(raw: dict[str, Any], path: str = "<model>") -> ModelConfig:
    for section, value in raw.items():
        if section not in SECTIONS:
            raise ModelError(f"unknown section [{section}]; sections: {', '.join(SECTIONS)}")
        if not isinstance(value, dict):
            raise ModelError(f"[{section}] must be a table")
        unknown = set(value) - SECTIONS[section]
        if unknown:
            raise ModelError(
                f"[{section}] has unknown key {sorted(unknown)[0]!r}; "
                f"known: {', '.join(sorted(SECTIONS[section]))}"
            )
    model = raw.get("model", {})
    cluster = raw.get("cluster", {})
    rules = raw.get("rules", {})
    faults = raw.get("faults", {})

    count = _int(cluster, "cluster", "brokers", 3, low=1, high=8)
    broker_ids = tuple(range(1, count + 1))
    replicas = _brokers(cluster, "replicas", list(broker_ids[:3]), broker_ids, ordered=True)
    isr = _brokers(cluster, "isr", list(replicas), broker_ids)
    if not set(isr) <= set(replicas):
        raise ModelError("[cluster] isr must be a subset of replicas")
    first_in_isr = next((r for r in replicas if r in isr), -1)
    leader = _int(cluster, "cluster", "leader", first_in_isr, low=-1, high=count)
    if leader != -1 and leader not in isr:
        raise ModelError(f"[cluster] leader {leader} is not in the isr {sorted(isr)}")
    fenced = _brokers(cluster, "fenced", [], broker_ids)
    if leader in fenced:
        raise ModelError(f"[cluster] leader {leader} cannot start fenced")

    min_isr = _int(cluster, "cluster", "min_isr", 1, low=1, high=count)
    unclean = _bool(rules, "rules", "unclean_leader_election", False)
    topic = TopicConfig(min_isr=min_isr, unclean_leader_election=unclean)

    kafka = str(rules.get("kafka_version", NEWEST))
    try:
        older = line(kafka) == "3.9"
    except ValueError as error:
        raise ModelError(f"[rules] {error}") from None
    # the newest metadata version of the release that runs the model's ELR setting
    version = rules.get("metadata_version", "3.9" if older and not rules.get("elr") else "4.0")
    if version not in METADATA_VERSIONS:
        raise ModelError(
            f"[rules] metadata_version {version!r} is unknown; "
            f"one of {', '.join(METADATA_VERSIONS)}"
        )
    elr = _bool(rules, "rules", "elr", _elr_by_default(kafka, version, rules))
    completion = rules.get("reassignment_completion", "kafka")
    if completion not in ("kafka", "protocol-description"):
        raise ModelError(
            '[rules] reassignment_completion must be "kafka" or "protocol-description"'
        )
    disabled = rules.get("disable_guards", [])
    if not isinstance(disabled, list) or not all(isinstance(g, str) for g in disabled):
        raise ModelError("[rules] disable_guards must be a list of guard names")
    refused = rules.get("refuse_guards", [])
    if not isinstance(refused, list) or not all(isinstance(g, str) for g in refused):
        raise ModelError("[rules] refuse_guards must be a list of guard names")
    # A guard that always refuses, to seed a liveness bug, is kept beside the switched-off ones
    # with a "!" before its name (rules/guards.py).
    disabled = [*disabled, *(REFUSED + name for name in refused)]
    try:
        options: RuleOptions = options_for_version(
            version,
            elr,
            kafka,
            reassignment_completion=completion,
            use_last_known_leader=_bool(rules, "rules", "use_last_known_leader", True),
            **_release_overrides(rules),
            disabled_guards=frozenset(disabled),
            controller=_controller(rules, elr),
        )
    except ValueError as error:
        raise ModelError(f"[rules] {error}") from None

    pending = rules.get("pending_isr_on_metadata", "reset")
    if pending not in ("keep-newer", "reset"):
        raise ModelError('[rules] pending_isr_on_metadata must be "reset" or "keep-newer"')
    truncation = rules.get("truncation", "leader-epoch")
    if truncation not in TRUNCATIONS:
        raise ModelError("[rules] truncation must be " + ", ".join(f'"{t}"' for t in TRUNCATIONS))
    epochs_request = _bool(rules, "rules", "offsets_for_leader_epoch", False)
    if epochs_request and truncation == "high-watermark":
        raise ModelError(
            '[rules] offsets_for_leader_epoch needs truncation "leader-epoch" or "kip-101": '
            "the request came with KIP-101 (Kafka 0.11)"
        )
    budget = Budget(
        records=_int(cluster, "cluster", "records", 1, low=0, high=9),
        **{
            name: _int(faults, "faults", name, 0, low=0, high=9)
            for name in SECTIONS["faults"] - {"controller_lag"}
        },
    )
    controller_lag = _int(faults, "faults", "controller_lag", 1, low=1, high=9)
    if budget.controller_failovers and options.controller == "zookeeper":
        raise ModelError(
            '[faults] controller_failovers needs controller = "kraft" (a ZooKeeper-era '
            "controller reads its state from ZooKeeper when it takes over)"
        )
    if options.controller == "kafka":
        _kafka_can_answer(version, elr, options, budget)
    targets = _targets(raw.get("reassignment", {}), broker_ids)
    if "plan" in raw:
        _check_plan(raw["plan"], broker_ids)
    if budget.reassignments and not targets:
        raise ModelError("[faults] reassignments > 0 needs [reassignment] targets")
    moves = [*(targets if budget.reassignments else ()), *_plan_target(raw)]
    topic = topic._replace(min_isr=_effective_min_isr(min_isr, replicas, moves))
    if budget.min_isr_changes and budget.controller_failovers:
        raise ModelError(
            "[faults] min_isr_changes cannot be combined with controller_failovers: the model's "
            "lagging controller lags partition records only, not configuration records"
        )

    check, expect = _bounded(_check(raw.get("check", {})), _expect(raw.get("expect", {})))
    modules = _property_modules(raw.get("check", {}), path)
    if modules:
        check = check._replace(extra_properties=modules)
    return ModelConfig(
        path=path,
        name=str(model.get("name", Path(path).stem)),
        description=str(model.get("description", "")),
        broker_ids=broker_ids,
        replicas=tuple(replicas),
        isr=frozenset(isr),
        leader=leader,
        fenced=frozenset(fenced),
        topic=topic,
        options=options,
        budget=budget,
        targets=targets,
        check=check,
        expect=expect,
        metadata_version=version,
        acks=_acks(cluster),
        pending_isr_on_metadata=pending,
        truncation=truncation,
        current_leader_epoch_in_fetch=_bool(rules, "rules", "current_leader_epoch_in_fetch", True),
        offsets_for_leader_epoch=epochs_request,
        hwm_waits_for_caught_up_followers=_hwm_waits(rules),
        hwm_requires_min_isr=_bool(rules, "rules", "hwm_requires_min_isr", True),
        hwm_isr=_hwm_isr(rules),
        leader_counts_diverging_fetch=_bool(rules, "rules", "leader_counts_diverging_fetch", False),
        controller_lag=controller_lag,
        min_isr_limit=min([len(replicas), *(len(target) for target in moves)]),
        engine_settings=_engine_settings(raw),
    )


def _hwm_isr(rules: dict[str, Any]) -> str:
    value = rules.get("hwm_isr", "maximal")
    if value not in ("maximal", "committed"):
        raise ModelError('[rules] hwm_isr must be "maximal" or "committed"')
    return str(value)


def with_kafka_controller(cfg: ModelConfig) -> ModelConfig:
    """The model with Kafka's own classes answering its controller steps (`kafkarep check
    --controller kafka`); a ModelError when they cannot."""
    if cfg.options.controller == "zookeeper":
        raise ModelError(f'{cfg.path}: controller = "zookeeper" is not Kafka\'s KRaft controller')
    options = cfg.options._replace(controller="kafka")
    try:
        _kafka_can_answer(cfg.metadata_version, options.elr_enabled, options, cfg.budget)
    except ModelError as error:
        raise ModelError(f"{cfg.path}: {error}") from None
    return cfg._replace(options=options)


def _kafka_can_answer(version: str, elr: bool, options: RuleOptions, budget: Budget) -> None:
    """Refuse what Kafka's classes at the release cannot answer as the model asks: rule options
    other than the release's (a controller guard switched off, an option set against the
    release), and
    steps the oracle harness has no request for."""
    kafka = options_for_version(
        version, elr, options.kafka_version, use_last_known_leader=options.use_last_known_leader
    )
    from kafkarep.model.guard_catalogue import controller_guards  # imports the actions

    differ = [
        field
        for field in RuleOptions._fields
        if field not in ("controller", "disabled_guards")
        and getattr(options, field) != getattr(kafka, field)
    ]
    # a guard switched off, or made to refuse every request (`refuse_guards`)
    switched = {guard.removeprefix(REFUSED) for guard in options.disabled_guards}
    differ += sorted(switched & controller_guards())
    if differ:
        raise ModelError(
            f'[rules] controller = "kafka" runs Kafka {options.kafka_version}\'s own classes, '
            f"which have no option for {', '.join(differ)} (change the classes with "
            "`kafkarep kafka-patch` instead)"
        )
    if budget.min_isr_changes:
        raise ModelError(
            '[rules] controller = "kafka": [faults] min_isr_changes is a configuration change the '
            "oracle harness does not take"
        )


def _release_overrides(rules: dict[str, Any]) -> dict[str, Any]:
    """The rule options a model sets against its release's (`kafkarep.kafka.releases`)."""
    out: dict[str, Any] = {}
    detection = rules.get("unclean_shutdown_detection")
    if detection is not None:
        if detection not in ("incarnation", "previous-epoch"):
            raise ModelError(
                '[rules] unclean_shutdown_detection must be "incarnation" or "previous-epoch"'
            )
        out["unclean_shutdown_detection"] = detection
    answer = rules.get("epochs_ahead_answer")
    if answer is not None:
        if answer not in ("not-controller", "fenced"):
            raise ModelError('[rules] epochs_ahead_answer must be "not-controller" or "fenced"')
        out["epochs_ahead_answer"] = answer
    if "last_known_leader_acceptable" in rules:
        out["last_known_leader_acceptable"] = _bool(
            rules, "rules", "last_known_leader_acceptable", True
        )
    return out


def _elr_by_default(kafka: str, metadata_version: str, rules: dict[str, Any]) -> bool:
    """Kafka's default: a KRaft cluster formatted by 4.1.0 or later at its latest metadata
    version has ELR on (`EligibleLeaderReplicasVersion.ELRV_1`, the latest production level,
    bootstraps from 4.1-IV0; read at 4.1.0); through 4.0 it is off unless enabled. The model's
    newest metadata version, 4.0, stands for the latest; at an older one ELR is off, as it is in
    a cluster that has not finalised a newer one."""
    return (
        release_version(resolve(kafka)) >= (4, 1, 0)
        and metadata_version == "4.0"
        and rules.get("controller", "kraft") != "zookeeper"
    )


def _controller(rules: dict[str, Any], elr: bool) -> str:
    """ "kraft" (the rules), "kafka" (Kafka's own KRaft controller classes answer every step,
    docs/oracle.md) or "zookeeper"."""
    controller = rules.get("controller", "kraft")
    if controller not in ("kraft", "kafka", "zookeeper"):
        raise ModelError('[rules] controller must be "kraft", "kafka" or "zookeeper"')
    if controller == "zookeeper" and elr:
        raise ModelError('[rules] elr = true needs controller = "kraft" (KIP-966 is KRaft\'s)')
    return str(controller)


def _engine_settings(raw: dict[str, Any]) -> tuple[tuple[str, str, Any], ...]:
    def frozen(value: Any) -> Any:
        if isinstance(value, list):
            return tuple(frozen(v) for v in value)
        if isinstance(value, dict):
            return Table(tuple(sorted((k, frozen(v)) for k, v in value.items())))
        return value

    return tuple(
        sorted(
            (section, key, frozen(value))
            for section in ENGINE_SECTIONS
            for key, value in raw.get(section, {}).items()
        )
    )


def _plan_target(raw: dict[str, Any]) -> list[list[int]]:
    """The replicas a [plan] moves to; a plan without a target moves nothing (plan.py)."""
    target = raw.get("plan", {}).get("target")
    return [target] if target else []


def _effective_min_isr(min_isr: int, replicas: list[int], moves: list[Any]) -> int:
    """Kafka's effective MinISR, min(min.insync.replicas, the replicas assigned), since 3.7.0 on
    the broker (`Partition.effectiveMinIsr`, KAFKA-15583) and the controller
    (`ReplicationControlManager.getTopicEffectiveMinIsr`, KAFKA-15581). The model takes it once:
    a min_isr above the replica count is the replica count. A reassignment changes the count as
    it goes (`moves`: the replica lists reassignments lead to), so one that could leave fewer
    replicas than min_isr is refused."""
    sizes = [len(replicas), *(len(target) for target in moves)]
    if min_isr <= min(sizes):
        return min_isr
    if moves:
        raise ModelError(
            f"[cluster] min_isr {min_isr} is above the {min(sizes)} replicas the partition may "
            "have as it is reassigned: Kafka's effective MinISR (min(min.insync.replicas, "
            "replicas), 3.7.0+) would change as it goes, which the model does not follow"
        )
    return len(replicas)


def _check_plan(section: dict[str, Any], broker_ids: tuple[int, ...]) -> None:
    """A model's [plan] section, for the KIP-435 planner (`model/actions/plan.py`)."""
    target = section.get("target")
    if target is not None:
        if not isinstance(target, list) or not target:
            raise ModelError("[plan] target must be a non-empty list of broker ids")
        for broker in target:
            if not isinstance(broker, int) or isinstance(broker, bool) or broker not in broker_ids:
                raise ModelError(
                    f"[plan] target: unknown broker id {broker!r}; brokers are "
                    f"{broker_ids[0]}..{broker_ids[-1]}"
                )
        if len(set(target)) != len(target):
            raise ModelError("[plan] target lists a broker twice")
    for key in ("parallel_replicas", "parallel_partitions", "leader_movements"):
        value = section.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ModelError(f"[plan] {key} must be an integer of at least 1")


def _targets(section: dict[str, Any], broker_ids: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    targets = section.get("targets", [])
    if not isinstance(targets, list):
        raise ModelError("[reassignment] targets must be a list of broker lists")
    result = []
    for target in targets:
        if not isinstance(target, list) or not target:
            raise ModelError("[reassignment] each target is a non-empty list of broker ids")
        result.append(tuple(_ids(target, "reassignment", "targets", broker_ids, ordered=True)))
    return tuple(result)


def _check(section: dict[str, Any]) -> CheckConfig:
    engine = section.get("engine", "explorer")
    if engine not in ENGINES:
        raise ModelError(f"[check] engine must be one of {', '.join(ENGINES)}")
    properties = section.get("properties")
    if properties is not None:
        if not isinstance(properties, list) or not all(isinstance(p, str) for p in properties):
            raise ModelError("[check] properties must be a list of property names")
        properties = tuple(properties)
    seconds = section.get("max_seconds", 0)
    if not isinstance(seconds, int | float) or seconds < 0:
        raise ModelError("[check] max_seconds must be a number >= 0")
    unfair = section.get("unfair", [])
    if not isinstance(unfair, list) or not all(isinstance(f, str) for f in unfair):
        raise ModelError("[check] unfair must be a list of action family names")
    return CheckConfig(
        engine=engine,
        symmetry=_bool(section, "check", "symmetry", False),
        reduction=_bool(section, "check", "reduction", True),
        por=_bool(section, "check", "por", True),
        max_states=_int(section, "check", "max_states", 0, low=0),
        max_depth=_int(section, "check", "max_depth", 0, low=0),
        max_seconds=float(seconds),
        properties=properties,
        liveness=_bool(section, "check", "liveness", False),
        unfair=tuple(unfair),
    )


def _property_modules(section: dict[str, Any], path: str) -> tuple[PropertyModule, ...]:
    """`[check] extra_properties`: each module's path, relative to the model file's directory
    (to the working directory for a model given as parsed TOML), and its source."""
    paths = section.get("extra_properties", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ModelError(
            '[check] extra_properties must be a list of Python files ("../properties/NAME.py")'
        )
    modules: list[PropertyModule] = []
    for given in paths:
        if not given.endswith(".py"):
            raise ModelError(f"[check] extra_properties: {given}: not a Python file (.py)")
        resolved = os.path.normpath(Path(path).parent / given)
        if any(m.path == resolved for m in modules):
            raise ModelError(f"[check] extra_properties names {given} twice")
        try:
            source = read_text(Path(resolved), "Python", ModelError)
        except ModelError as error:
            raise ModelError(
                f"[check] extra_properties: {error} (a path is relative to the model file)"
            ) from None
        modules.append(PropertyModule(resolved, source))
    return tuple(modules)


def _expect(section: dict[str, Any]) -> Expectation:
    result = section.get("result")
    if result not in (None, "holds", "violates"):
        raise ModelError('[expect] result must be "holds" or "violates"')
    violates = section.get("violates", {})
    if not isinstance(violates, dict):
        raise ModelError("[expect] violates is a table: property = shortest depth (or true)")
    pairs: list[tuple[str, int | None]] = []
    for name, depth in violates.items():
        if depth is True:
            depth = None
        elif not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise ModelError(f"[expect] violates.{name} must be a depth (integer) or true")
        pairs.append((name, depth))
    if result == "violates" and not pairs:
        raise ModelError(
            '[expect] result = "violates" needs [expect] violates = {property = depth}'
        )
    if result == "holds" and pairs:
        raise ModelError('[expect] result = "holds" cannot list violations')
    reached = section.get("reached", [])
    if not isinstance(reached, list) or not all(isinstance(r, str) for r in reached):
        raise ModelError("[expect] reached must be a list of `sometimes` property names")
    distinct = section.get("distinct_states")
    if distinct is not None and (not isinstance(distinct, int) or distinct < 1):
        raise ModelError("[expect] distinct_states must be a positive integer")
    within = section.get("within_depth")
    bad = isinstance(within, bool) or not isinstance(within, int) or within < 1
    if within is not None and bad:
        raise ModelError("[expect] within_depth must be a positive integer (a number of steps)")
    return Expectation(result, distinct, tuple(pairs), tuple(reached), within)


def _bounded(check: CheckConfig, expect: Expectation) -> tuple[CheckConfig, Expectation]:
    """A bounded verdict (`[expect] within_depth = D`): the search stops after depth D, as
    `[check] max_depth = D` does, and no expected violation can be deeper than D."""
    bound = expect.within_depth
    if bound is None:
        return check, expect
    if check.max_depth not in (0, bound):
        raise ModelError(
            f"[expect] within_depth = {bound} and [check] max_depth = {check.max_depth} differ: "
            "give one of them"
        )
    for name, depth in expect.violates:
        if depth is not None and depth > bound:
            raise ModelError(
                f"[expect] violates.{name} = {depth} is deeper than within_depth = {bound}"
            )
    return check._replace(max_depth=bound), expect


def _int(
    section: dict[str, Any],
    name: str,
    key: str,
    default: int,
    low: int = 0,
    high: int | None = None,
) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelError(f"[{name}] {key} must be an integer")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ModelError(f"[{name}] {key} = {value} must be {bound}")
    return value


ACKS = {"all": "all", "-1": "all", "1": "1"}  # `[cluster] acks`, as Kafka's producers spell it


def _acks(cluster: dict[str, Any]) -> str:
    value = cluster.get("acks", "all")
    acks = None if isinstance(value, bool) else ACKS.get(str(value))
    if acks is None:
        raise ModelError('[cluster] acks must be "all" (or -1) or 1')
    return acks


HWM_WAITS = ("eligible", "caught-up", "none")  # `hwm_waits_for_caught_up_followers`, newest first


def _hwm_waits(rules: dict[str, Any]) -> str:
    """`hwm_waits_for_caught_up_followers`; true and false, its values before it named the
    releases, are "eligible" and "none"."""
    value = rules.get("hwm_waits_for_caught_up_followers", HWM_WAITS[0])
    if isinstance(value, bool):
        return HWM_WAITS[0] if value else HWM_WAITS[-1]
    if value not in HWM_WAITS:
        raise ModelError(
            "[rules] hwm_waits_for_caught_up_followers must be "
            + ", ".join(f'"{v}"' for v in HWM_WAITS)
        )
    return str(value)


def _bool(section: dict[str, Any], name: str, key: str, default: bool) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ModelError(f"[{name}] {key} must be true or false")
    return value


def _brokers(
    section: dict[str, Any],
    key: str,
    default: list[int],
    broker_ids: tuple[int, ...],
    ordered: bool = False,
) -> list[int]:
    value = section.get(key, default)
    if not isinstance(value, list):
        raise ModelError(f"[cluster] {key} must be a list of broker ids")
    return _ids(value, "cluster", key, broker_ids, ordered)


def _ids(
    value: list[Any], section: str, key: str, broker_ids: tuple[int, ...], ordered: bool
) -> list[int]:
    for broker in value:
        if not isinstance(broker, int) or isinstance(broker, bool) or broker not in broker_ids:
            raise ModelError(
                f"[{section}] {key}: unknown broker id {broker!r}; brokers are "
                f"{broker_ids[0]}..{broker_ids[-1]}"
            )
    if len(set(value)) != len(value):
        raise ModelError(f"[{section}] {key} lists a broker twice")
    return list(value) if ordered else sorted(value)
