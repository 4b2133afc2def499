"""Kafka's own controller inside the explorer (`[rules] controller = "kafka"`, docs/oracle.md).

Every controller step of such a model (AlterPartition, fence, unfence, registration, controlled
shutdown, the elections, reassignment alter and cancel, and the completion that AlterPartition
brings) is written as a conformance case (`case_of`) and answered by Kafka's classes through the
oracle harness, at the model's release or from a user's build (`use`: a `kafka-metadata` jar,
or classes compiled by `kafkarep kafka-patch`). The rules answer beside it. Where the two differ,
the step is reported once, as a conformance case with Kafka's answer as its expectation, and the
run goes on with Kafka's answer (`outcome_of`).

A step is asked once per run: Kafka's answers are kept by case in a process, and in a folder the
run's processes share (`use(answers=...)`). The explorer's workers ask in batches: while they
collect (`kafkarep.model.controller.collect`), a step with no answer yet waits in `pending` and
the rules' outcome stands in; the worker asks the waiting steps of a chunk of states in one
batch (`ask_pending`) and expands those states again (`kafkarep.engines.controller_batches`).

`record_steps` installs the audit instead (`kafkarep check --audit-controller`): the rules
answer, and every distinct step is kept as a case, which `audit` asks of Kafka's classes after
the search.

The case is a second writing of the step, so it is checked where it is made: the rules, run on
the case (`conformance.answer`), must give the answer they gave the model's step.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.common.exit_codes import UsageError
from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import (
    BrokerRegistration,
    BrokerRegistry,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkarep.model import controller
from kafkarep.model.config import ModelConfig
from kafkarep.oracle import conformance
from kafkarep.oracle.harness import Oracle, OracleError
from kafkarep.oracle.harness import answer as kafka_answer
from kafkarep.rules import (
    AlterPartitionRequest,
    AlterReassignmentRequest,
    Changed,
    ControlledShutdown,
    ElectLeadersRequest,
    FenceBroker,
    Outcome,
    RegisterBroker,
    Rejected,
    Unchanged,
    UnfenceBroker,
)

KAFKA_GUARD = "kafka"  # the guard a refusal of Kafka's, not the rules', is named by


class CaseError(Exception):
    """A model's step that the conformance format does not express as the model has it."""


# --- a step as a conformance case ----------------------------------------------------------


def case_of(name: str, metadata: ClusterMetadata, request: Any) -> dict[str, Any]:
    """The step in the conformance format (tests/data/conformance/FORMAT.md)."""
    options = metadata.options
    case = {
        "config": {
            "min_isr": metadata.topic.min_isr,
            "elr_enabled": options.elr_enabled,
            "unclean_leader_election": metadata.topic.unclean_leader_election,
            "metadata_version": options.metadata_version,
            "use_last_known_leader": options.use_last_known_leader,
        },
        "brokers": {
            str(broker): {
                "registered": r.registered,
                "fenced": r.fenced,
                "shutting_down": r.in_controlled_shutdown,
                "epoch": r.epoch,
                "incarnation": r.incarnation,
            }
            for broker, r in metadata.brokers.entries
        },
        "before": conformance.registration_dict(metadata.partition),
        "action": _action(name, request),
    }
    digest = hashlib.sha256(json.dumps(case, sort_keys=True).encode()).hexdigest()[:16]
    return {"id": f"{name}-{digest}", **case}


def _action(name: str, request: Any) -> dict[str, Any]:
    if isinstance(request, AlterPartitionRequest):
        return {
            "type": "alter_partition",
            "leader": request.broker,
            "leader_epoch": request.leader_epoch,
            "partition_epoch": request.partition_epoch,
            "new_isr": [{"broker": b, "epoch": e} for b, e in request.new_isr],
            "leader_recovery_state": request.leader_recovery_state.name,
            **({} if request.broker_epoch is None else {"broker_epoch": request.broker_epoch}),
            "version": request.version,
        }
    if isinstance(request, AlterReassignmentRequest):
        return {
            "type": "alter_reassignment",
            "target": None if request.target is None else list(request.target),
            "allow_replication_factor_change": request.allow_replication_factor_change,
        }
    if isinstance(request, ElectLeadersRequest):
        return {"type": "elect_leader", "election": request.election.name.lower()}
    if isinstance(request, RegisterBroker):
        return {
            "type": "register_broker",
            "broker": request.broker,
            "incarnation": request.incarnation,
            "previous_broker_epoch": request.previous_epoch,
        }
    events = {FenceBroker: "fence_broker", UnfenceBroker: "unfence_broker"}
    events[ControlledShutdown] = "controlled_shutdown"
    kind = events.get(type(request))
    if kind is None:
        raise CaseError(f"{name}: no conformance action for {type(request).__name__}")
    return {"type": kind, "broker": request.broker}


# --- Kafka's answer as the model's outcome ------------------------------------------------


def outcome_of(kafka: dict[str, Any], metadata: ClusterMetadata) -> Outcome:
    """Kafka's answer (`harness.answer`) as the outcome the model commits."""
    if kafka["outcome"] == "rejected":
        return Rejected(_error(kafka["error"]), KAFKA_GUARD)
    brokers = _registry(metadata.brokers, kafka.get("brokers", {}))
    if kafka["outcome"] == "unchanged":
        return Unchanged(brokers)
    after = _registration(kafka["after"])
    error = None if kafka.get("error") is None else _error(kafka["error"])
    return Changed(after, _record(metadata.partition, after), brokers, error)


def _error(name: str) -> Error:
    try:
        return Error(name)
    except ValueError:
        raise OracleError(f"Kafka answered {name}, an error the model has no code for") from None


def _registry(before: BrokerRegistry, changed: dict[str, dict[str, Any]]) -> BrokerRegistry | None:
    if not changed:
        return None
    entries = dict(before.entries)
    for broker, fields in changed.items():
        old = entries.get(int(broker), BrokerRegistration(registered=False))
        entries[int(broker)] = BrokerRegistration(
            registered=True,
            fenced=fields.get("fenced", old.fenced),
            in_controlled_shutdown=fields.get("shutting_down", old.in_controlled_shutdown),
            epoch=fields.get("epoch", old.epoch),
            incarnation=fields.get("incarnation", old.incarnation),
        )
    return BrokerRegistry.of(entries)


def _registration(after: dict[str, Any]) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=tuple(after["replicas"]),
        isr=frozenset(after["isr"]),
        leader=int(after["leader"]),
        leader_epoch=int(after["leader_epoch"]),
        partition_epoch=int(after["partition_epoch"]),
        elr=frozenset(after["elr"]),
        last_known_elr=frozenset(after["last_known_elr"]),
        adding=frozenset(after["adding"]),
        removing=frozenset(after["removing"]),
        leader_recovery_state=LeaderRecoveryState[after["leader_recovery_state"]],
    )


def _record(before: PartitionRegistration, after: PartitionRegistration) -> PartitionChangeRecord:
    """The change record that takes `before` to `after`: each field that differs."""
    fields = {
        field: getattr(after, field)
        for field in PartitionChangeRecord._fields
        if getattr(after, field) != getattr(before, field)
    }
    if after.leader_epoch != before.leader_epoch:
        fields["leader"] = after.leader  # a record with a leader bumps the epoch (`apply`)
    return PartitionChangeRecord(**fields)


# --- the answerer, once per process ----------------------------------------------------------


class Build(NamedTuple):
    """Where Kafka's classes come from: the release's jars, or a user's build over them."""

    kafka_jar: Path | None = None
    kafka_classes: Path | None = None


class Disagreement(NamedTuple):
    case: dict[str, Any]  # the step, with Kafka's answer as `expect`
    differences: tuple[str, ...]


class KafkaController:
    """Kafka's classes answering one release's steps in this process."""

    def __init__(
        self, release: str, build: Build, report: Path | None, answers: Path | None = None
    ) -> None:
        self.release = release
        self.build = build
        self.report = report  # where disagreements are written, one file per step
        self.answers = answers  # Kafka's answers, one file per step, shared by the processes
        self.oracle: Oracle | None = None
        self.known: dict[str, dict[str, Any] | None] = {}  # Kafka's answers, by case id
        self.pending: dict[str, dict[str, Any]] = {}  # cases waiting for the next batch
        self.asked = 0
        self.batches = 0
        self.seconds = 0.0

    def ask(self, cases: Iterable[dict[str, Any]]) -> list[dict[str, Any] | None]:
        if self.oracle is None:
            self.oracle = Oracle(
                self.release,
                kafka_jar=self.build.kafka_jar,
                kafka_classes=self.build.kafka_classes,
            )
        began = time.perf_counter()
        cases = list(cases)
        replies = [kafka_answer(reply) for reply in self.oracle.ask_many(cases)]
        self.seconds += time.perf_counter() - began
        self.asked += len(cases)
        return replies

    def answer(self, name: str, metadata: ClusterMetadata, request: Any, rules: Outcome) -> Outcome:
        case = case_of(name, metadata, request)
        mine = _checked_answer(case, metadata, rules)
        kafka = self._kafka_answer(case, rules)
        if kafka is None:
            raise OracleError(f"Kafka {self.release} cannot express the step {case['id']}")
        differences = _differences(kafka, mine, metadata.brokers)
        if not differences:
            return rules
        shown = _shown(differences)
        self.disagree(Disagreement({**case, "note": "; ".join(shown), "expect": kafka}, shown))
        return outcome_of(kafka, metadata)

    def _kafka_answer(self, case: dict[str, Any], rules: Outcome) -> dict[str, Any] | None:
        """Kafka's answer to a case: known in this process, or another process's when it asked
        first in this run. While the explorer collects steps, an unknown one waits for the
        batch (`controller.Unanswered`); else it is asked alone."""
        key = case["id"]
        if key not in self.known and not self._shared(key):
            self.pending[key] = case
            if controller.collecting():
                raise controller.Unanswered(rules)
            self.ask_pending()
        return self.known[key]

    def _shared(self, key: str) -> bool:
        """Whether another process of the run has kept the answer (now known here too)."""
        kept = None if self.answers is None else self.answers / f"{key}.json"
        if kept is None or not kept.exists():
            return False
        try:
            self.known[key] = json.loads(kept.read_text())["kafka"]
        except (OSError, ValueError, KeyError):
            return False  # being written: ask
        return True

    def ask_pending(self) -> int:
        """Ask every step waiting for an answer in one batch (less those another process has
        answered meanwhile): how many steps were waiting."""
        waiting = list(self.pending.values())
        self.pending.clear()
        cases = [case for case in waiting if not self._shared(case["id"])]
        if cases:
            self.batches += 1
            batch = f"{os.getpid()}-{self.batches}"  # which batch asked it, for the summary
            for case, kafka in zip(cases, self.ask(cases), strict=True):
                self.known[case["id"]] = kafka
                if self.answers is not None:
                    kept = {"case": case, "kafka": kafka, "batch": batch}
                    _write_once(self.answers, case["id"], kept)
        return len(waiting)

    def disagree(self, found: Disagreement) -> None:
        """Report a step where the rules and Kafka differ, once across the run's processes."""
        if self.report is None or _write_once(self.report, found.case["id"], found.case):
            print(
                f"controller: the rules and Kafka {self.release} differ on {found.case['id']}: "
                + "; ".join(found.differences),
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.oracle is not None:
            self.oracle.close()
            self.oracle = None


def _checked_answer(
    case: dict[str, Any], metadata: ClusterMetadata, rules: Outcome
) -> dict[str, Any]:
    """The rules' answer to the model's step, which the case's inputs must give too (under the
    model's options: the case carries a release's, and an audit compares a model's own options
    with Kafka's classes). A Kafka-answered model's options must be the case's."""
    mine = conformance.outcome_answer(metadata, case["action"], rules)
    written = conformance.case_metadata(case, metadata.options.kafka_version)
    if metadata.options.controller == "kafka":
        expected = metadata.options._replace(controller="kraft", disabled_guards=frozenset())
        if written.options != expected._replace(disabled_guards=written.options.disabled_guards):
            raise CaseError(f"step {case['id']}: the case's options are not the model's")
    action = case["action"]
    again = conformance.ACTIONS[action["type"]](written._replace(options=metadata.options), action)
    theirs = conformance.outcome_answer(written, action, again)
    if conformance.compare(theirs, mine) or conformance.compare(mine, theirs):
        raise CaseError(
            f"step {case['id']} does not write as a conformance case: the rules answer the model "
            f"{mine} and the case {theirs}"
        )
    return mine


def _differences(
    kafka: dict[str, Any], rules: dict[str, Any], before: BrokerRegistry
) -> tuple[conformance.Mismatch, ...]:
    """Every field where Kafka's answer and the rules' differ: `compare` for the outcome, the
    error and the registration after (both full), and each broker's registration after the step
    (an answer names only what its records change; the registries after are compared whole)."""
    found = [m for m in conformance.compare(kafka, rules) if not m.field.startswith("brokers.")]
    if "rejected" in (kafka["outcome"], rules["outcome"]):
        return tuple(found)
    theirs = _registry(before, kafka.get("brokers", {})) or before
    mine = _registry(before, rules.get("brokers", {})) or before
    for broker in sorted(set(theirs.ids()) | set(mine.ids())):
        a, b = theirs.get(broker), mine.get(broker)
        for field in BrokerRegistration._fields:
            if getattr(a, field) != getattr(b, field):
                where = f"brokers.{broker}.{field}"
                found.append(
                    conformance.Mismatch(
                        where, json.dumps(getattr(a, field)), json.dumps(getattr(b, field))
                    )
                )
    return tuple(found)


def _shown(differences: Iterable[conformance.Mismatch]) -> tuple[str, ...]:
    return tuple(f"{m.field}: Kafka {m.expected}, the rules {m.got}" for m in differences)


def _write_once(folder: Path, name: str, content: dict[str, Any]) -> bool:
    """Write `folder/name.json` unless it exists (any process): whether this call wrote it."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with open(folder / f"{name}.json", "x") as out:
            json.dump(content, out, indent=1, sort_keys=True)
    except FileExistsError:
        return False
    return True


_BUILD = [Build()]
_REPORT: list[Path | None] = [None]
_ANSWERS: list[Path | None] = [None]
_CONTROLLERS: dict[tuple[int, str], KafkaController] = {}


def use(build: Build = Build(), report: Path | None = None, answers: Path | None = None) -> None:
    """Kafka's classes for this run's `controller = "kafka"` models, the folder where
    disagreements go (None: printed only), and the folder where Kafka's answers are kept, so
    that the run's processes ask each step once between them (None: once each)."""
    close()
    controller.forget()  # no answer of another model's run, or of other classes, is reused
    _BUILD[0] = build
    _REPORT[0] = report
    _ANSWERS[0] = answers


def answered(answers: Path) -> tuple[int, int]:
    """The distinct steps Kafka's classes answered in a run (`use(answers=...)`), and in how
    many batches."""
    steps = [json.loads(f.read_text()) for f in answers.glob("*.json")]
    return len(steps), len({step.get("batch") for step in steps})


def trace_meta(cfg: ModelConfig) -> dict[str, Any]:
    """What a trace's `#meta.kafkarep` says of a Kafka-answered run, so that `kafkarep replay`
    and `reproduce` answer its steps with the same classes."""
    if cfg.options.controller != "kafka":
        return {"controller": "rules"}
    jar, classes = _BUILD[0]
    return {
        "controller": "kafka",
        **({"kafka_jar": str(jar)} if jar else {}),
        **({"kafka_classes": str(classes)} if classes else {}),
    }


def from_trace_meta(meta: dict[str, Any]) -> Build | None:
    """The build a trace's steps were answered by (None: the rules answered, or the trace does
    not say)."""
    if meta.get("controller") != "kafka":
        return None
    jar, classes = meta.get("kafka_jar"), meta.get("kafka_classes")
    return Build(None if jar is None else Path(jar), None if classes is None else Path(classes))


def current(release: str) -> KafkaController:
    """This process's controller for a release (a forked worker starts its own harness)."""
    key = (os.getpid(), release)
    found = _CONTROLLERS.get(key)
    if found is None:
        found = _CONTROLLERS[key] = KafkaController(release, _BUILD[0], _REPORT[0], _ANSWERS[0])
    return found


def close() -> None:
    for key in [k for k in _CONTROLLERS if k[0] == os.getpid()]:
        _CONTROLLERS.pop(key).close()


def _answer_step(name: str, metadata: ClusterMetadata, request: Any, rules: Outcome) -> Outcome:
    try:
        return current(metadata.options.kafka_version).answer(name, metadata, request, rules)
    except OracleError as error:  # Kafka's classes cannot answer: the user's build or machine
        raise UsageError(f"Kafka's controller classes: {error}") from None


def _ask_unanswered() -> int:
    """This process's waiting steps, each release's in one batch."""
    mine = [c for (pid, _), c in _CONTROLLERS.items() if pid == os.getpid()]
    try:
        return sum(kafka.ask_pending() for kafka in mine)
    except OracleError as error:
        raise UsageError(f"Kafka's controller classes: {error}") from None


controller.HOOKS["kafka"] = _answer_step
controller.ASKERS["kafka"] = _ask_unanswered


# --- the audit -------------------------------------------------------------------------------


def record_steps(folder: Path | None) -> Callable[..., Outcome] | None:
    """Keep every distinct controller step the rules answer, as a case with the rules' answer,
    in `folder` (None: stop)."""
    if folder is None:
        controller.HOOKS.pop("audit", None)
        return None

    def record(name: str, metadata: ClusterMetadata, request: Any, rules: Outcome) -> Outcome:
        case = case_of(name, metadata, request)
        step = {"case": case, "rules": _checked_answer(case, metadata, rules)}
        _write_once(folder, case["id"], step)
        return rules

    controller.HOOKS["audit"] = record
    return record


class Audit(NamedTuple):
    steps: int
    agreed: int
    unsupported: int  # steps the release cannot express (not compared)
    disagreements: tuple[Disagreement, ...]
    seconds: float


def audit(folder: Path, release: str, build: Build = Build()) -> Audit:
    """Ask Kafka's classes every step kept in `folder`; compare with the rules' answers."""
    steps = [json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))]
    if not steps:
        return Audit(0, 0, 0, (), 0.0)
    kafka = KafkaController(release, build, None)
    try:
        answers = kafka.ask(step["case"] for step in steps)
    finally:
        kafka.close()
    disagreements = []
    unsupported = 0
    for step, answer in zip(steps, answers, strict=True):
        if answer is None:
            unsupported += 1
            continue
        before = conformance.case_metadata(step["case"], release).brokers
        differences = _differences(answer, step["rules"], before)
        if differences:
            shown = _shown(differences)
            case = {**step["case"], "note": "; ".join(shown), "expect": answer}
            disagreements.append(Disagreement(case, shown))
    agreed = len(steps) - unsupported - len(disagreements)
    return Audit(len(steps), agreed, unsupported, tuple(disagreements), kafka.seconds)
