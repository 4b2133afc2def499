"""Conformance: replay cases recorded from Kafka's own controller tests through the rules.

The case format is `tests/data/conformance/FORMAT.md`. A case file that cannot be read or does not
follow the format raises `CaseFileError` naming the file and the problem; a case whose outcome
differs from Kafka's is a `Mismatch` per field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kafkarep.metadata import (
    BrokerRegistration,
    BrokerRegistry,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionRegistration,
    RuleOptions,
    TopicConfig,
)
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
    Rejected,
    UnfenceBroker,
    alter_partition,
    alter_reassignment,
    controlled_shutdown,
    elect_leaders,
    fence_broker,
    partition_change,
    unclean_shutdown,
    unfence_broker,
)


class CaseFileError(Exception):
    """A case file is missing or malformed."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class Mismatch(NamedTuple):
    field: str
    expected: str
    got: str


class CaseResult(NamedTuple):
    case_id: str
    path: Path
    mismatches: tuple[Mismatch, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches


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
    """Read one case file, checking only what is needed to run it."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CaseFileError(path, "no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
        raise CaseFileError(path, f"cannot read: {error.__class__.__name__}") from None
    try:
        cases = json.loads(text)
    except json.JSONDecodeError as error:
        raise CaseFileError(path, f"malformed JSON at line {error.lineno}: {error.msg}") from None
    if not isinstance(cases, list):
        raise CaseFileError(path, "expected a JSON array of cases")
    for index, case in enumerate(cases):
        where = f"case {index}"
        if not isinstance(case, dict):
            raise CaseFileError(path, f"{where} is not an object")
        for key in ("id", "before", "action", "expect"):
            if key not in case:
                raise CaseFileError(path, f"{where} has no {key!r}")
        where = f"case {case['id']!r}"
        if not isinstance(case["action"], dict) or case["action"].get("type") not in ACTIONS:
            raise CaseFileError(path, f"{where}: action type must be one of {', '.join(ACTIONS)}")
        outcome = case["expect"].get("outcome") if isinstance(case["expect"], dict) else None
        if outcome not in ("changed", "unchanged", "rejected"):
            raise CaseFileError(path, f"{where}: expect.outcome must be changed|unchanged|rejected")
        missing = [f for f in REGISTRATION_FIELDS if f not in case["before"]]
        if missing:
            raise CaseFileError(path, f"{where}: before lacks {', '.join(missing)}")
    return cases


def run_file(path: Path) -> list[CaseResult]:
    cases = load_cases(path)
    results = []
    for case in cases:
        try:
            results.append(CaseResult(case["id"], path, check_case(case)))
        except (KeyError, TypeError, ValueError) as error:
            raise CaseFileError(path, f"case {case['id']!r}: bad field ({error})") from None
    return results


def check_case(case: dict[str, Any]) -> tuple[Mismatch, ...]:
    """Run one case and compare with Kafka's outcome."""
    metadata = case_metadata(case)
    action = case["action"]
    outcome = ACTIONS[action["type"]](metadata, action)
    expect = case["expect"]
    mismatches = []
    got_outcome, got_error = _describe(outcome)
    if got_outcome != expect["outcome"]:
        mismatches.append(Mismatch("outcome", expect["outcome"], got_outcome))
    expected_error = expect.get("error")
    if expected_error != got_error:
        mismatches.append(Mismatch("error", str(expected_error), str(got_error)))
    if isinstance(outcome, Changed):
        after = registration_dict(outcome.registration)
        for field, expected in expect.get("after", {}).items():
            if field not in after:
                raise ValueError(f"unknown field {field!r} in expect.after")
            if _normal(field, expected) != _normal(field, after[field]):
                mismatches.append(
                    Mismatch(field, _show(field, expected), _show(field, after[field]))
                )
    return tuple(mismatches)


def case_metadata(case: dict[str, Any]) -> ClusterMetadata:
    config = case.get("config", {})
    options = RuleOptions(
        elr_enabled=bool(config.get("elr_enabled", False)),
        use_last_known_leader=bool(config.get("use_last_known_leader", True)),
        leader_epoch_bump_on_isr_shrink=bool(config.get("leader_epoch_bump_on_isr_shrink", False)),
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


BROKER_LISTS = (
    "new_isr",
    "target",
    "target_isr",
    "target_replicas",
    "target_adding",
    "target_removing",
    "target_elr",
    "target_last_known_elr",
    "unclean_shutdown_replicas",
)


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
        broker_epoch=None if a.get("broker_epoch") is None else int(a["broker_epoch"]),
        version=int(a.get("version", 3)),
    )
    return alter_partition(m, request)


def _alter_reassignment(m: ClusterMetadata, a: dict[str, Any]) -> Outcome:
    target = a["target"]
    return alter_reassignment(
        m, AlterReassignmentRequest(None if target is None else tuple(target))
    )


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
