"""What the ZooKeeper-era state machines return: the requests a transition sends, and the
rejections (an invalid transition, a selector that finds no leader)."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class RequestKind(StrEnum):
    LEADER_AND_ISR = "LeaderAndIsr"
    UPDATE_METADATA = "UpdateMetadata"
    STOP_REPLICA = "StopReplica"


class Request(NamedTuple):
    """A controller request to some brokers. `delete` is StopReplica's flag."""

    kind: RequestKind
    brokers: tuple[int, ...]
    delete: bool = False


class InvalidTransition(NamedTuple):
    """A transition the state machine does not allow, named by its states."""

    machine: str  # "partition" or "replica"
    current: str
    target: str
    valid_from: tuple[str, ...]

    @property
    def message(self) -> str:
        return (
            f"invalid {self.machine} state transition {self.current} -> {self.target}; "
            f"{self.target} is reached only from {', '.join(self.valid_from)}"
        )


class NoLeader(NamedTuple):
    """A leader selector found no replica to lead (Kafka's NoReplicaOnlineException or
    StateChangeFailedException)."""

    selector: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.selector}: {self.reason}"
