"""Differential testing: random valid inputs through Kafka's own controller and through the rules.

Hypothesis draws cases in the conformance format (`tests/data/conformance/FORMAT.md`): a broker
registry (registered or not, fenced, shutting down, epochs, incarnations), one partition's
registration (1 to 5 replicas, any ISR, ELR, last-known ELR, adding and removing, epochs,
recovery state), MinISR, ELR and unclean election on or off, and a request of one area. Each case
runs through the oracle (`kafkarep.oracle.harness`) and through the rules under the same release
(`conformance.answer`); every field of the outcome is compared. A disagreement is shrunk by
Hypothesis to a minimal case, which is printed in the conformance format with Kafka's answer as
its expectation, ready for the test data.

What the inputs leave out, and why (`docs/oracle.md`): lists are in ascending order (Kafka
keeps the ISR and ELR as ordered lists, and a reordering alone is a change to Kafka but not to
the model, whose sets have no order); broker events are the ones Kafka's broker lifecycle sends
(a fence of an unfenced broker, an unfence of a fenced one, a controlled shutdown of an active
one); the request versions are the ones the release serves.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kafkarep.kafka.releases import behaviour, line
from kafkarep.oracle import conformance
from kafkarep.oracle.harness import Oracle
from kafkarep.oracle.harness import answer as kafka_answer

AREAS = ("partition_change", "alter_partition", "broker_events", "elections", "reassignment")
POOL = tuple(range(6))  # broker ids


class Disagreement(Exception):
    """The rules and Kafka answered a case differently."""


class AreaResult(NamedTuple):
    area: str
    agreed: int
    unsupported: int  # cases the release cannot express (not compared)
    seconds: float
    disagreement: dict[str, Any] | None  # the shrunk case, with Kafka's answer as expect
    differences: tuple[str, ...] = ()  # what differs in the shrunk case


# --- the inputs --------------------------------------------------------------------------------


@functools.cache
def _ints(low: int, high: int) -> st.SearchStrategy[int]:
    # strategies built once: Hypothesis' own cache costs more than the draw of a small integer
    return st.integers(low, high)


@functools.cache
def _pick(*items: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(items)


@functools.cache
def _orders(items: tuple[int, ...]) -> st.SearchStrategy[list[int]]:
    return st.permutations(items)


def _subset(draw: Any, items: list[int] | tuple[int, ...]) -> list[int]:
    """A subset of the items, in ascending order (one draw: a bit per item)."""
    if not items:
        return []
    bits = draw(_ints(0, (1 << len(items)) - 1))
    return sorted(x for k, x in enumerate(items) if bits >> k & 1)


# A broker's registration from 6 bits (one draw for all brokers, so that generating is cheap):
# bits 0-2 its state, bits 3-4 its epoch's offset, bit 5 its incarnation. 0 is the simplest
# (registered, active), which is where Hypothesis shrinks to.
STATES = ("active", "active", "active", "fenced", "shutting_down", "fenced", "active", "absent")


def _broker(broker: int, bits: int) -> dict[str, Any]:
    state = STATES[bits & 7]
    if state == "absent":
        return {"registered": False}
    return {
        "fenced": state == "fenced",
        "shutting_down": state == "shutting_down",
        "epoch": 100 + 10 * broker + (bits >> 3 & 3),
        "incarnation": bits >> 5 & 1,
    }


@st.composite
def clusters(draw: Any, release: str) -> dict[str, Any]:
    """A broker registry, a topic config and one partition's registration."""
    b = behaviour(release)
    elr = bool(draw(_ints(0, 1)))
    if elr:
        metadata_version = "4.0"
    elif line(release) == "3.9":
        metadata_version = draw(_pick("3.9", "3.5", "4.0"))
    else:
        metadata_version = draw(_pick("4.0", "4.0", "3.5"))
    assert metadata_version >= b.lowest_metadata_version
    bits = draw(_ints(0, (1 << (6 * len(POOL))) - 1))
    brokers = {str(x): _broker(x, bits >> (6 * x) & 63) for x in POOL}
    count = draw(_ints(1, 5))
    replicas = list(draw(_orders(POOL))[:count])
    isr = _subset(draw, replicas)
    leader = draw(_pick(*isr, -1)) if isr else -1
    elr_members = _subset(draw, [r for r in replicas if r not in isr]) if elr else []
    last_known = draw(st.sampled_from([[], [], *[[r] for r in replicas]])) if elr else []
    adding: list[int] = []
    removing: list[int] = []
    if len(replicas) > 1 and draw(_ints(0, 3)) == 0:
        adding = _subset(draw, replicas[:-1])
        removing = _subset(draw, [r for r in replicas if r not in adding][1:])
    recovering = leader != -1 and isr == [leader] and draw(_ints(0, 3)) == 0
    config = {
        "min_isr": draw(_ints(1, 4)),
        "elr_enabled": elr,
        "unclean_leader_election": draw(_ints(0, 3)) == 0,
        "metadata_version": metadata_version,
    }
    return {
        "config": config,
        "brokers": brokers,
        "before": {
            "replicas": replicas,
            "isr": isr,
            "elr": elr_members,
            "last_known_elr": last_known,
            "leader": leader,
            "leader_epoch": draw(_ints(0, 5)),
            "partition_epoch": draw(_ints(0, 8)),
            "adding": adding,
            "removing": removing,
            "leader_recovery_state": "RECOVERING" if recovering else "RECOVERED",
        },
    }


def _registered(case: dict[str, Any]) -> list[int]:
    return [int(b) for b, e in case["brokers"].items() if e.get("registered", True)]


def _epoch(case: dict[str, Any], broker: int) -> int:
    return int(case["brokers"][str(broker)].get("epoch", -1))


@st.composite
def partition_changes(draw: Any, release: str) -> dict[str, Any]:
    case = draw(clusters(release))
    before = case["before"]
    action: dict[str, Any] = {"type": "partition_change"}
    replicas = before["replicas"]
    if draw(_ints(0, 1)):
        action["target_isr"] = _subset(draw, replicas)
    if draw(_ints(0, 3)) == 0:
        action["target_replicas"] = draw(_orders(tuple(replicas)))
    if draw(_ints(0, 4)) == 0:
        action["target_adding"] = _subset(draw, replicas)
    if draw(_ints(0, 4)) == 0:
        action["target_removing"] = _subset(draw, replicas)
    if draw(_ints(0, 4)) == 0:
        action["target_leader_recovery_state"] = draw(_pick("RECOVERED", "RECOVERING"))
    action["election"] = draw(_pick("online", "online", "preferred", "unclean"))
    if case["config"]["elr_enabled"] and draw(_ints(0, 3)) == 0:
        action["unclean_shutdown_replicas"] = _subset(draw, replicas)
    case["config"]["use_last_known_leader"] = draw(_ints(0, 3)) > 0
    case["action"] = action
    return case


@st.composite
def alter_partitions(draw: Any, release: str) -> dict[str, Any]:
    case = draw(clusters(release))
    before = case["before"]
    leader = before["leader"]
    requester = leader if leader >= 0 and draw(_ints(0, 4)) > 0 else draw(_pick(*POOL))
    members = _subset(draw, before["replicas"])
    if draw(_ints(0, 9)) == 0:
        members = sorted({*members, draw(_pick(*POOL))})
    new_isr = []
    for member in members:
        kind = draw(_pick("epoch", "epoch", "epoch", "unchecked", "stale"))
        epoch = {"epoch": _epoch(case, member), "unchecked": -1, "stale": 7}[kind]
        new_isr.append({"broker": member, "epoch": epoch})
    action: dict[str, Any] = {
        "type": "alter_partition",
        "leader": requester,
        "leader_epoch": before["leader_epoch"] + draw(_pick(0, 0, 0, -1, 1)),
        "partition_epoch": before["partition_epoch"] + draw(_pick(0, 0, 0, -1, 1)),
        "new_isr": new_isr,
        "leader_recovery_state": draw(_pick("RECOVERED", "RECOVERED", "RECOVERING")),
        "version": draw(_ints(behaviour(release).lowest_alter_partition_version, 3)),
    }
    kind = draw(_pick("registered", "registered", "registered", "none", "stale"))
    if kind == "registered" and str(requester) in case["brokers"]:
        action["broker_epoch"] = _epoch(case, requester)
    elif kind == "stale":
        action["broker_epoch"] = 7
    case["action"] = action
    return case


@st.composite
def broker_events(draw: Any, release: str) -> dict[str, Any]:
    case = draw(clusters(release))
    registered = _registered(case)
    kind = draw(_pick("fence", "unfence", "shutdown", "register", "register"))
    entry = {b: case["brokers"][str(b)] for b in registered}
    if kind == "fence":
        eligible = [b for b in registered if not entry[b]["fenced"]]
    elif kind == "unfence":
        eligible = [b for b in registered if entry[b]["fenced"]]
    elif kind == "shutdown":
        eligible = [b for b in registered if not entry[b]["fenced"]]
    else:
        eligible = list(POOL)
    if not eligible:
        kind, eligible = "register", list(POOL)
    broker = draw(_pick(*eligible))
    if kind == "register":
        current = case["brokers"][str(broker)]
        incarnation = int(current.get("incarnation", 0))
        action: dict[str, Any] = {
            "type": "register_broker",
            "broker": broker,
            "incarnation": incarnation + draw(_pick(1, 1, 1, 0)),
            "previous_broker_epoch": draw(
                _pick(-1, int(current.get("epoch", -1)), int(current.get("epoch", -1)))
            ),
        }
    else:
        names = {"fence": "fence_broker", "unfence": "unfence_broker"}
        action = {"type": names.get(kind, "controlled_shutdown"), "broker": broker}
    case["action"] = action
    return case


@st.composite
def elections(draw: Any, release: str) -> dict[str, Any]:
    case = draw(clusters(release))
    case["action"] = {
        "type": "elect_leader",
        "election": draw(_pick("preferred", "unclean")),
    }
    return case


@st.composite
def reassignments(draw: Any, release: str) -> dict[str, Any]:
    case = draw(clusters(release))
    action: dict[str, Any] = {"type": "alter_reassignment"}
    if draw(_ints(0, 3)) == 0:
        action["target"] = None
    else:
        action["target"] = draw(st.lists(_pick(*POOL), min_size=1, max_size=5, unique=True))
        if draw(_ints(0, 19)) == 0:
            action["target"] = draw(st.lists(_pick(*POOL), max_size=4))  # malformed
        if behaviour(release).replication_factor_change_check and draw(_ints(0, 4)) == 0:
            action["allow_replication_factor_change"] = False
    case["action"] = action
    return case


STRATEGIES = {
    "partition_change": partition_changes,
    "alter_partition": alter_partitions,
    "broker_events": broker_events,
    "elections": elections,
    "reassignment": reassignments,
}


# --- the comparison ----------------------------------------------------------------------------


def differences(
    case: dict[str, Any], kafka: dict[str, Any], ours: dict[str, Any]
) -> tuple[str, ...]:
    """Every field where the rules' answer differs from Kafka's, and every broker the rules
    changed that Kafka left as it was."""
    found = [
        f"{m.field}: Kafka {m.expected}, rules {m.got}" for m in conformance.compare(kafka, ours)
    ]
    if ours["outcome"] != "rejected" and kafka["outcome"] != "rejected":
        before = conformance.case_metadata(case).brokers
        for broker in sorted(set(ours.get("brokers", {})) - set(kafka.get("brokers", {}))):
            old, new = before.get(int(broker)), ours["brokers"][broker]
            if (old.fenced, old.in_controlled_shutdown, old.epoch) != (
                new["fenced"],
                new["shutting_down"],
                new["epoch"],
            ):
                found.append(f"brokers.{broker}: Kafka left it as it was, the rules changed it")
    return tuple(found)


def as_case(case: dict[str, Any], kafka: dict[str, Any], release: str) -> dict[str, Any]:
    """A case in the conformance format, with Kafka's answer as its expectation."""
    return {
        **case,
        "id": f"differential-{case['action']['type']}",
        "source": f"Apache Kafka {release}",
        "note": "found by kafkarep differential (shrunk); expect is Kafka's answer (oracle)",
        "expect": kafka,
    }


BATCH = 10  # cases per Hypothesis example (25 is 10% faster, but shrinking a batch that large
# takes Hypothesis minutes)


def run_area(
    oracle: Oracle,
    area: str,
    cases: int,
    random_seed: int,
    tick: Callable[[], None] | None = None,
) -> AreaResult:
    """Compare `cases` cases of one area. Each Hypothesis example is a batch of cases, sent to
    the oracle together; at the first disagreement Hypothesis stops and shrinks the batch, and
    the case that disagrees is reported."""
    release = oracle.release
    batch = min(BATCH, cases)
    agreed = unsupported = 0
    last: list[tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = []
    started = time.monotonic()

    @seed(random_seed)
    @settings(
        max_examples=-(-cases // batch),
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(st.lists(STRATEGIES[area](release), min_size=batch, max_size=batch))
    def compare_batch(drawn: list[dict[str, Any]]) -> None:
        nonlocal agreed, unsupported
        if not last:  # the last batch takes only what is left of `cases`
            drawn = drawn[: cases - agreed - unsupported]
        named = [{"id": f"case-{k}", **case} for k, case in enumerate(drawn)]
        replies = list(oracle.ask_many(named))  # all of them: the pipe holds no stale reply
        for case, reply in zip(named, replies, strict=True):
            kafka = kafka_answer(reply)
            if tick is not None:
                tick()
            counting = not last  # shrinking replays cases: count each case once
            if kafka is None:
                unsupported += counting
                continue
            found = differences(case, kafka, conformance.answer(case, release))
            if found:
                last.append((case, kafka, found))
                raise Disagreement("; ".join(found))
            agreed += counting

    try:
        compare_batch()
    except Disagreement:
        case, kafka, found = last[-1]
        seconds = time.monotonic() - started
        return AreaResult(area, agreed, unsupported, seconds, as_case(case, kafka, release), found)
    return AreaResult(area, agreed, unsupported, time.monotonic() - started, None)
