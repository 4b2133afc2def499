"""The driver's side of the kafkarep agent's gate (docs/trace-validation.md, "The agent as a
gate"): rule files that hold a broker's threads at a gate point, and the markers of the threads
held.

In the gate's directory (`Cluster(gate_dir=...)`, one for every broker):

- `hold-NODE-POINT`, `hold-NODE-POINT-TOPIC-PARTITION` and, for `fetch` only,
  `hold-NODE-fetch-TOPIC-PARTITION-from-FOLLOWER` are rules (`hold`): a thread of broker NODE
  that reaches POINT (about that partition, for that follower) waits while a rule it matches
  exists. Removing the rule (`release`) lets it go.
- `pass-...-SEQ` (`let_go`), the name of a marker with `pass` for `held`: that one thread goes on,
  and the rule stays for the next (the agent deletes the file).
- `held-...-SEQ` is a thread held (`held`, `wait_held`): its content is one JSON object, the
  fields of its `gate_held` event (`node`, `topic`, `partition`, `point`, `follower`, `rule`,
  `hold` (SEQ), `marker`, the point's own fields, `thread`). It is deleted after the thread's
  `gate_released` event is written (`wait_released`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

POINTS = (
    "metadata",
    "fetch_response",
    "fetch",
    "alter_partition_request",
    "alter_partition_answer",
)


def rule_name(
    node: int,
    point: str,
    topic: str | None = None,
    partition: int | None = None,
    follower: int | None = None,
) -> str:
    """The name of the rule that holds broker `node`'s threads at `point` (about
    `topic`-`partition`; for `fetch`, from `follower`)."""
    if point not in POINTS:
        raise ValueError(f"no gate point {point!r}: one of {', '.join(POINTS)}")
    name = f"hold-{node}-{point}"
    if topic is None:
        if partition is not None or follower is not None:
            raise ValueError("a partition or a follower needs a topic")
        return name
    if partition is None:
        raise ValueError("a topic needs a partition")
    name += f"-{topic}-{partition}"
    if follower is not None:
        if point != "fetch":
            raise ValueError("only the fetch point has a follower")
        name += f"-from-{follower}"
    return name


def hold(
    gate_dir: Path,
    node: int,
    point: str,
    topic: str | None = None,
    partition: int | None = None,
    follower: int | None = None,
) -> Path:
    """Write the rule; return its path (`release` removes it)."""
    gate_dir.mkdir(parents=True, exist_ok=True)
    rule = gate_dir / rule_name(node, point, topic, partition, follower)
    rule.touch()
    return rule


def release(rule: Path) -> None:
    """Remove a rule: the threads it held go on within a few milliseconds (unless another rule
    holds them)."""
    rule.unlink(missing_ok=True)


def let_go(gate_dir: Path, fields: dict[str, Any], *, timeout: float = 30.0) -> None:
    """Let one held thread (`fields`, from `wait_held`) go on, and wait until it has: its rule
    stays, so the next thread to reach the point is held."""
    (gate_dir / ("pass-" + fields["marker"].removeprefix("held-"))).touch()
    wait_released(gate_dir, fields, timeout=timeout)


def held(gate_dir: Path) -> list[dict[str, Any]]:
    """The threads held now: each marker's fields, in the order of their holds."""
    found = []
    for marker in gate_dir.glob("held-*"):
        try:
            found.append(json.loads(marker.read_text()))
        except FileNotFoundError:
            continue  # released meanwhile
    return sorted(found, key=lambda fields: fields["hold"])


def _matches(
    fields: dict[str, Any],
    node: int,
    point: str,
    topic: str | None,
    partition: int | None,
    follower: int | None,
) -> bool:
    return (
        fields["node"] == node
        and fields["point"] == point
        and (topic is None or (fields["topic"], fields["partition"]) == (topic, partition))
        and (follower is None or fields["follower"] == follower)
    )


def wait_held(
    gate_dir: Path,
    node: int,
    point: str,
    topic: str | None = None,
    partition: int | None = None,
    follower: int | None = None,
    *,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Wait until a thread of broker `node` is held at `point` (about that partition, from that
    follower); return its marker's fields."""
    deadline = time.monotonic() + timeout
    while True:
        for fields in held(gate_dir):
            if _matches(fields, node, point, topic, partition, follower):
                return fields
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"no thread of broker {node} held at {point} after {timeout}s: {held(gate_dir)}"
            )
        time.sleep(0.05)


def wait_released(gate_dir: Path, fields: dict[str, Any], *, timeout: float = 30.0) -> None:
    """Wait until the hold `fields` (from `wait_held`) ended: its marker is gone."""
    marker = gate_dir / fields["marker"]
    deadline = time.monotonic() + timeout
    while marker.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{marker.name} still held after {timeout}s")
        time.sleep(0.05)
