"""Conformance: replay cases through the rules and compare with Kafka's outcome.

The case format is `tests/data/conformance/FORMAT.md`. A case runs under the rules of one Kafka
release (`kafkarep.kafka.releases`): its expectation is `expect`, or the entry of
`expect_by_release` for that release's line ("unsupported": the release cannot express the case).
Kafka's own controller answers the same cases through the oracle (`kafkarep.oracle.harness`), in
the same vocabulary as `answer` here: `{"outcome", "error", "after", "brokers"}`.

A case file that cannot be read or does not follow the format raises `CaseFileError` naming the
file, the path inside it and the problem (`cases.json: [12].before.isr: expected a list of broker
ids, got a string`); a case whose outcome differs from Kafka's is a `Mismatch` per field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.common import shape
from kafkarep.common.files import read_json
from kafkarep.common.shape import At
from kafkarep.kafka.metadata import (
    METADATA_VERSIONS,
    BrokerRegistration,
    BrokerRegistry,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionRegistration,
    TopicConfig,
    options_for_version,
)
from kafkarep.kafka.releases import KNOWN, NEWEST, RELEASES, line, resolve
from kafkarep.rules import (
    AlterPartitionRequest,
    AlterReassignmentRequest,
    Changed,
    ChangeTargets,
    ControlledShutdown,
    Election,
    ElectLeadersRequest,
    FenceBroker,
    Outcome,
    RegisterBroker,
    Rejected,
    Unchanged,
    UnfenceBroker,
    alter_partition,
    alter_reassignment,
    controlled_shutdown,
    elect_leaders,
    fence_broker,
    partition_change,
    register_broker,
    unclean_shutdown,
    unfence_broker,
)


class CaseFileError(Exception):
    """A case file is missing or malformed: one line naming the file and the problem."""


class Mismatch(NamedTuple):
    field: str
    expected: str
    got: str


class CaseResult(NamedTuple):
    case_id: str
    path: Path
    mismatches: tuple[Mismatch, ...]
    applicable: bool = True  # False: the release cannot express the case (not run)

    @property
    def passed(self) -> bool:
        return not self.mismatches


UNSUPPORTED = "unsupported"


REGISTRATION_LISTS = ("isr", "elr", "last_known_elr", "adding", "removing")
REGISTRATION_FIELDS = (
    "replicas",
    *REGISTRATION_LISTS,
    "leader",
    "leader_epoch",
    "partition_epoch",
    "leader_recovery_state",
)
ELECTIONS = {
    "online": Election.ONLINE,
    "preferred": Election.PREFERRED,
    "unclean": Election.UNCLEAN,
}


def load_cases(path: Path) -> list[dict[str, Any]]:
    """Read one case file, every field checked against the format (FORMAT.md) before a case
    runs: a missing shape.field, a value of the wrong kind, an unknown key or action type."""
    cases = read_json(path, "case", CaseFileError)
    top = shape.at(path, CaseFileError)
    if not isinstance(cases, list):
        top.fail("expected a JSON array of cases")
    for index, case in enumerate(cases):
        _case(case, top.index(index))
    return cases


CASE_KEYS = ("id", "source", "note", "config", "brokers", "before", "action", "expect")
CONFIG: dict[str, Callable[[Any, At], Any]] = {
    "min_isr": shape.integer,
    "elr_enabled": shape.flag,
    "unclean_leader_election": shape.flag,
    "use_last_known_leader": shape.flag,
    "leader_epoch_bump_on_isr_shrink": shape.flag,
    "metadata_version": shape.one_of(METADATA_VERSIONS),
}
BROKER: dict[str, Callable[[Any, At], Any]] = {
    "registered": shape.flag,
    "fenced": shape.flag,
    "shutting_down": shape.flag,
    "epoch": shape.integer,
    "incarnation": shape.integer,
}
EXPECTED_BROKER = {key: BROKER[key] for key in ("fenced", "shutting_down", "epoch", "incarnation")}
RECOVERY = shape.one_of([state.name for state in LeaderRecoveryState])
REGISTRATION: dict[str, Callable[[Any, At], Any]] = {
    "replicas": shape.brokers,
    **{key: shape.brokers for key in ("isr", "elr", "last_known_elr", "adding", "removing")},
    "leader": shape.integer,
    "leader_epoch": shape.integer,
    "partition_epoch": shape.integer,
    "leader_recovery_state": RECOVERY,
}


def _new_isr(value: Any, where: At) -> list[Any]:
    """A list of broker ids, or of {"broker": id, "epoch": n}."""
    for index, member in enumerate(shape.array(value, where)):
        inside = where.index(index)
        if isinstance(member, dict):
            _fields(member, inside, {"broker": shape.broker, "epoch": shape.integer})
            shape.field(member, "broker", inside, shape.broker)
        else:
            shape.broker(member, inside)
    return list(value)


# A partition_change action's broker lists.
PARTITION_CHANGE_TARGETS = (
    "target_isr",
    "target_replicas",
    "target_adding",
    "target_removing",
    "target_elr",
    "target_last_known_elr",
    "unclean_shutdown_replicas",
)

# Each action type's fields: (check, required).
ACTION_FIELDS: dict[str, dict[str, tuple[Callable[[Any, At], Any], bool]]] = {
    "partition_change": {
        **{key: (shape.optional(shape.brokers), False) for key in PARTITION_CHANGE_TARGETS},
        "target_leader_recovery_state": (shape.optional(RECOVERY), False),
        "election": (shape.one_of(list(ELECTIONS)), False),
    },
    "alter_partition": {
        "leader": (shape.broker, True),
        "leader_epoch": (shape.integer, True),
        "partition_epoch": (shape.integer, True),
        "new_isr": (_new_isr, True),
        "leader_recovery_state": (RECOVERY, False),
        "broker_epoch": (shape.integer, False),
        "version": (shape.between(0, 3), False),
    },
    "alter_reassignment": {
        "target": (shape.optional(shape.brokers), True),
        "allow_replication_factor_change": (shape.flag, False),
    },
    **{
        kind: {"broker": (shape.broker, True)}
        for kind in ("fence_broker", "unfence_broker", "controlled_shutdown", "unclean_shutdown")
    },
    "register_broker": {
        "broker": (shape.broker, True),
        "incarnation": (shape.integer, False),
        "previous_broker_epoch": (shape.integer, False),
    },
    "elect_leader": {"election": (shape.one_of(list(ELECTIONS)), True)},
}


def _case(value: Any, where: At) -> None:
    case = shape.obj(value, where)
    shape.known_keys(case, where, (*CASE_KEYS, "expect_by_release"))
    shape.field(case, "id", where, shape.text)
    shape.field(case, "source", where, shape.text, "")
    shape.field(case, "note", where, shape.text, "")
    config = shape.field(case, "config", where, shape.obj, {})
    _fields(config, where.key("config"), CONFIG)
    table = shape.field(case, "brokers", where, shape.obj, {})
    for key, entry in table.items():
        inside = where.key("brokers").key(key)
        shape.broker_key(key, inside)
        _fields(shape.obj(entry, inside), inside, BROKER)
    before = shape.field(case, "before", where, shape.obj)
    _fields(before, where.key("before"), REGISTRATION, required=True)
    _action(shape.field(case, "action", where, shape.obj), where.key("action"))
    _expect(shape.field(case, "expect", where, shape.anything), where.key("expect"))
    by_release = shape.field(case, "expect_by_release", where, shape.obj, {})
    releases = {*KNOWN, *(line(release) for release in KNOWN)}
    for release, expect in by_release.items():
        inside = where.key("expect_by_release").key(release)
        if release not in releases:
            inside.fail(f"unknown release; one of {', '.join(sorted(releases))}")
        if expect != UNSUPPORTED:
            _expect(expect, inside)


def _fields(
    record: dict[str, Any],
    where: At,
    checks: dict[str, Callable[[Any, At], Any]],
    required: bool = False,
) -> None:
    shape.known_keys(record, where, checks)
    for key, check in checks.items():
        if required or key in record:
            shape.field(record, key, where, check)


def _action(action: dict[str, Any], where: At) -> None:
    kind = shape.field(action, "type", where, shape.one_of(list(ACTIONS)))
    fields = ACTION_FIELDS[kind]
    shape.known_keys(action, where, ("type", *fields))
    for key, (check, required) in fields.items():
        if required or key in action:
            shape.field(action, key, where, check)


def _expect(value: Any, where: At) -> None:
    expect = shape.obj(value, where)
    shape.known_keys(expect, where, ("outcome", "error", "after", "brokers"))
    shape.field(expect, "outcome", where, shape.one_of(("changed", "unchanged", "rejected")))
    shape.field(expect, "error", where, shape.optional(shape.text), None)
    _fields(shape.field(expect, "after", where, shape.obj, {}), where.key("after"), REGISTRATION)
    for key, entry in shape.field(expect, "brokers", where, shape.obj, {}).items():
        inside = where.key("brokers").key(key)
        shape.broker_key(key, inside)
        _fields(shape.obj(entry, inside), inside, EXPECTED_BROKER)


def run_file(path: Path, release: str = NEWEST) -> list[CaseResult]:
    cases = load_cases(path)
    results = []
    for case in cases:
        try:
            expect = expectation(case, release)
            if expect is None:
                results.append(CaseResult(case["id"], path, (), applicable=False))
                continue
            results.append(CaseResult(case["id"], path, compare(expect, answer(case, release))))
        except (KeyError, TypeError, ValueError) as error:
            raise CaseFileError(f"{path}: case {case['id']!r}: bad field ({error})") from None
    return results


def rederive(
    case: dict[str, Any], answers: dict[str, dict[str, Any] | None]
) -> tuple[dict[str, Any], list[str]]:
    """A case whose expectations are Kafka's: `answers` is Kafka's answer per release line, in
    release order (None: not expressible there). `expect` becomes the newest expressible
    release's answer, kept as written where Kafka agrees with it; `expect_by_release` holds
    every other line whose answer differs. Returns the case and the lines whose stored
    expectation was not Kafka's."""
    wrong = [
        release
        for release, kafka in answers.items()
        if (expectation(case, release) is None) != (kafka is None)
        or (kafka is not None and compare(expectation(case, release) or {}, kafka))
    ]
    expressible = [release for release, kafka in answers.items() if kafka is not None]
    out = {k: v for k, v in case.items() if k != "expect_by_release"}
    if not expressible:
        return case, wrong
    newest = answers[expressible[-1]]
    assert newest is not None
    if compare(case["expect"], newest):
        out["expect"] = newest
    by_release: dict[str, Any] = {}
    for release, kafka in answers.items():
        if kafka is None:
            by_release[release_key(release)] = UNSUPPORTED
        elif compare(out["expect"], kafka):
            by_release[release_key(release)] = kafka
    if by_release:
        out["expect_by_release"] = by_release
    return out, wrong


def release_key(release: str) -> str:
    """How `expect_by_release` names a release: its line ("4.1") for the newest patch the oracle
    checks of that line, else the release itself ("4.1.0")."""
    release = resolve(release)
    newest = [r for r in RELEASES if line(r) == line(release)][-1:]
    return line(release) if newest == [release] else release


def expectation(case: dict[str, Any], release: str = NEWEST) -> dict[str, Any] | None:
    """Kafka's outcome of a case at a release (None: the release cannot express it): the entry of
    `expect_by_release` for the release, else for its line, else `expect`."""
    by_release = case.get("expect_by_release", {})
    release = resolve(release)
    expect = by_release.get(release, by_release.get(line(release), case["expect"]))
    return None if expect == UNSUPPORTED else dict(expect)


def check_case(case: dict[str, Any], release: str = NEWEST) -> tuple[Mismatch, ...]:
    """Run one case under a release's rules and compare with Kafka's outcome."""
    expect = expectation(case, release)
    return () if expect is None else compare(expect, answer(case, release))


def answer(case: dict[str, Any], release: str = NEWEST) -> dict[str, Any]:
    """The rules' outcome of a case, in the vocabulary of `expect` and of the oracle: outcome,
    error, the registration `after` a change, and the `brokers` whose registration changed."""
    metadata = case_metadata(case, release)
    action = case["action"]
    return outcome_answer(metadata, action, ACTIONS[action["type"]](metadata, action))


def outcome_answer(
    metadata: ClusterMetadata, action: dict[str, Any], outcome: Outcome
) -> dict[str, Any]:
    """A rule's outcome of a case's action in the vocabulary of `expect` (see `answer`)."""
    got_outcome, got_error = _describe(outcome)
    out: dict[str, Any] = {"outcome": got_outcome, "error": got_error}
    if isinstance(outcome, Changed):
        out["after"] = registration_dict(outcome.registration)
    if isinstance(outcome, Changed | Unchanged) and outcome.brokers is not None:
        named = action.get("broker")
        out["brokers"] = registrations(metadata.brokers, outcome.brokers, named)
    return out


def compare(expect: dict[str, Any], got: dict[str, Any]) -> tuple[Mismatch, ...]:
    """The fields of an expectation that an answer does not meet (the fields `expect.after` and
    `expect.brokers` name; every field, when both are full answers)."""
    mismatches = []
    if got["outcome"] != expect["outcome"]:
        mismatches.append(Mismatch("outcome", expect["outcome"], got["outcome"]))
    expected_error = expect.get("error")
    if expected_error != got.get("error"):
        mismatches.append(Mismatch("error", str(expected_error), str(got.get("error"))))
    after = got.get("after", {})
    if got["outcome"] == "changed" and expect["outcome"] == "changed":
        for field, expected in expect.get("after", {}).items():
            if field not in REGISTRATION_FIELDS:
                raise ValueError(f"unknown field {field!r} in expect.after")
            if _normal(field, expected) != _normal(field, after.get(field)):
                mismatches.append(
                    Mismatch(field, _show(field, expected), _show(field, after.get(field)))
                )
    if "brokers" in expect and got["outcome"] != "rejected":
        brokers = got.get("brokers", {})
        for broker, fields in sorted(expect["brokers"].items()):
            for field, value in sorted(fields.items()):
                have = brokers.get(broker, {}).get(field)
                if have != value:
                    where = f"brokers.{broker}.{field}"
                    mismatches.append(Mismatch(where, json.dumps(value), json.dumps(have)))
    return tuple(mismatches)


def registrations(
    before: BrokerRegistry, after: BrokerRegistry, named: int | None = None
) -> dict[str, Any]:
    """The registration after an event of every broker it changed, and of the broker it names
    (Kafka writes that one's record even when nothing changes)."""
    out = {}
    for broker in sorted(set(before.ids()) | set(after.ids())):
        old, new = before.get(broker), after.get(broker)
        if old != new or broker == named:
            out[str(broker)] = {
                "fenced": new.fenced,
                "shutting_down": new.in_controlled_shutdown,
                "epoch": new.epoch,
                "incarnation": new.incarnation,
            }
    return out


def case_metadata(case: dict[str, Any], release: str = NEWEST) -> ClusterMetadata:
    """The metadata a case describes, with the rule options of a release: its own metadata
    version (`config.metadata_version`; 3.5 for `leader_epoch_bump_on_isr_shrink`; else 4.0,
    3.9 for Kafka 3.9 without ELR)."""
    config = case.get("config", {})
    elr = bool(config.get("elr_enabled", False))
    version = config.get("metadata_version")
    if version is None:
        bump = bool(config.get("leader_epoch_bump_on_isr_shrink", False))
        version = "3.5" if bump else "3.9" if line(release) == "3.9" and not elr else "4.0"
    options = options_for_version(
        str(version),
        elr,
        resolve(release),
        use_last_known_leader=bool(config.get("use_last_known_leader", True)),
    )
    topic = TopicConfig(
        min_isr=int(config.get("min_isr", 1)),
        unclean_leader_election=bool(config.get("unclean_leader_election", False)),
    )
    before = case["before"]
    partition = PartitionRegistration(
        replicas=tuple(before["replicas"]),
        isr=frozenset(before["isr"]),
        leader=int(before["leader"]),
        leader_epoch=int(before["leader_epoch"]),
        partition_epoch=int(before["partition_epoch"]),
        elr=frozenset(before["elr"]),
        last_known_elr=frozenset(before["last_known_elr"]),
        adding=frozenset(before["adding"]),
        removing=frozenset(before["removing"]),
        leader_recovery_state=LeaderRecoveryState[before["leader_recovery_state"]],
    )
    return ClusterMetadata(partition, _brokers(case), topic, options)


def _brokers(case: dict[str, Any]) -> BrokerRegistry:
    """The broker table; a broker not listed is registered, unfenced, not shutting down."""
    registrations = {
        int(broker): BrokerRegistration(
            registered=bool(entry.get("registered", True)),
            fenced=bool(entry.get("fenced", False)),
            in_controlled_shutdown=bool(entry.get("shutting_down", False)),
            epoch=int(entry.get("epoch", 0)),
            incarnation=int(entry.get("incarnation", 0)),
        )
        for broker, entry in case.get("brokers", {}).items()
    }
    for broker in _mentioned_brokers(case):
        registrations.setdefault(broker, BrokerRegistration())
    return BrokerRegistry.of(registrations)


def _mentioned_brokers(case: dict[str, Any]) -> set[int]:
    before, action = case["before"], case["action"]
    ids = set(before["replicas"]) | {before["leader"]}
    for field in REGISTRATION_LISTS:
        ids |= set(before[field])
    for key, value in action.items():
        if key in ("leader", "broker"):
            ids.add(value)
        elif key in BROKER_LISTS and isinstance(value, list):
            ids |= {v["broker"] if isinstance(v, dict) else v for v in value}
    return {i for i in ids if isinstance(i, int) and i >= 0}


BROKER_LISTS = ("new_isr", "target", *PARTITION_CHANGE_TARGETS)


def _partition_change(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    def ids(key: str) -> frozenset[int] | None:
        return None if a.get(key) is None else frozenset(a[key])

    state = a.get("target_leader_recovery_state")
    targets = ChangeTargets(
        isr=ids("target_isr"),
        replicas=None if a.get("target_replicas") is None else tuple(a["target_replicas"]),
        adding=ids("target_adding"),
        removing=ids("target_removing"),
        elr=ids("target_elr"),
        last_known_elr=ids("target_last_known_elr"),
        leader_recovery_state=None if state is None else LeaderRecoveryState[state],
        election=ELECTIONS[a.get("election", "online")],
        unclean_shutdown_replicas=frozenset(a.get("unclean_shutdown_replicas") or ()),
    )
    return partition_change(m, targets)


def _alter_partition(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    new_isr = tuple(
        (int(v["broker"]), int(v.get("epoch", -1))) if isinstance(v, dict) else (int(v), -1)
        for v in a["new_isr"]
    )
    request = AlterPartitionRequest(
        broker=int(a["leader"]),
        leader_epoch=int(a["leader_epoch"]),
        partition_epoch=int(a["partition_epoch"]),
        new_isr=new_isr,
        leader_recovery_state=LeaderRecoveryState[a.get("leader_recovery_state", "RECOVERED")],
        broker_epoch=int(a["broker_epoch"]) if "broker_epoch" in a else _registered_epoch(m, a),
        version=int(a.get("version", 3)),
    )
    return alter_partition(m, request)


def _registered_epoch(m: ClusterMetadata, a: dict[str, Any]) -> int:
    """The requester's registered epoch, which its request carries (-1 when it has none)."""
    registration = m.brokers.get(int(a["leader"]))
    return registration.epoch if registration.registered else -1


def _alter_reassignment(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    target = a["target"]
    allow = bool(a.get("allow_replication_factor_change", True))
    return alter_reassignment(
        m, AlterReassignmentRequest(None if target is None else tuple(target), allow)
    )


def _register_broker(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    broker = int(a["broker"])
    previous = m.brokers.get(broker)
    default = previous.incarnation + 1 if previous.registered else 0
    incarnation = int(a.get("incarnation", default))
    event = RegisterBroker(broker, incarnation, int(a.get("previous_broker_epoch", -1)))
    return register_broker(m, event)


def _elect_leader(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    return elect_leaders(m, ElectLeadersRequest(ELECTIONS[a["election"]]))


ACTIONS: dict[str, Callable[[ClusterMetadata, dict[str, Any]], Outcome]] = {
    "partition_change": _partition_change,
    "alter_partition": _alter_partition,
    "alter_reassignment": _alter_reassignment,
    "fence_broker": lambda m, a: fence_broker(m, FenceBroker(int(a["broker"]))),
    "unfence_broker": lambda m, a: unfence_broker(m, UnfenceBroker(int(a["broker"]))),
    "controlled_shutdown": lambda m, a: controlled_shutdown(
        m, ControlledShutdown(int(a["broker"]))
    ),
    "unclean_shutdown": lambda m, a: unclean_shutdown(m, int(a["broker"])),
    "register_broker": _register_broker,
    "elect_leader": _elect_leader,
}


def registration_dict(p: PartitionRegistration) -> dict[str, Any]:
    return {
        "replicas": list(p.replicas),
        **{field: sorted(getattr(p, field)) for field in REGISTRATION_LISTS},
        "leader": p.leader,
        "leader_epoch": p.leader_epoch,
        "partition_epoch": p.partition_epoch,
        "leader_recovery_state": p.leader_recovery_state.name,
    }


def _describe(outcome: Outcome) -> tuple[str, str | None]:
    if isinstance(outcome, Rejected):
        return "rejected", outcome.error.value
    if isinstance(outcome, Changed):
        return "changed", None if outcome.error is None else outcome.error.value
    return "unchanged", None


def _normal(field: str, value: Any) -> Any:
    if field in REGISTRATION_LISTS:
        return sorted(value)
    if field == "replicas":
        return list(value)
    return value


def _show(field: str, value: Any) -> str:
    return json.dumps(_normal(field, value))
