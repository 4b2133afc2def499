"""What the guard predicates the prover shares read: protocols that the model's values and the
prover's terms for them (`kafkarep/symbolic/state.py`) both meet.

A guard written over `kafkarep.rules.terms` runs in the explorer on the model's NamedTuples and
in the prover on the prover's own, which have other fields in another order. mypyc compiles an
attribute of a parameter typed as a NamedTuple into a read by position, so such a predicate
compiled would read the wrong field of the prover's tuple. Typed as one of these protocols, it
reads by name in both. (`tests/test_compiled.py` proves a model with the compiled build.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class FollowerShape(Protocol):
    """A leader's view of one follower (`state.FollowerView`)."""

    @property
    def leo(self) -> Any: ...

    @property
    def broker_epoch(self) -> Any: ...

    @property
    def caught_up(self) -> Any: ...


class ReplicaShape(Protocol):
    """A replica (`state.Replica`)."""

    @property
    def leo(self) -> Any: ...

    @property
    def hwm(self) -> Any: ...

    @property
    def leso(self) -> Any: ...

    @property
    def view(self) -> Any: ...

    @property
    def followers(self) -> Sequence[Any]: ...

    @property
    def maximal_isr(self) -> Any: ...

    @property
    def role(self) -> Any: ...

    @property
    def pending(self) -> Any: ...

    @property
    def eligible(self) -> Sequence[Any]: ...


class ResponseShape(Protocol):
    """A fetch response in flight (`state.FetchResponse`)."""

    @property
    def leader_epoch(self) -> Any: ...

    @property
    def fetch_offset(self) -> Any: ...


class BrokerShape(Protocol):
    """A broker (`state.Broker`)."""

    @property
    def status(self) -> Any: ...

    @property
    def epoch(self) -> Any: ...

    @property
    def replica(self) -> Any: ...

    @property
    def fetch_response(self) -> Any: ...

    @property
    def ap_response(self) -> Any: ...

    @property
    def initialised(self) -> Any: ...

    @property
    def applied_epoch(self) -> Any: ...


class ClusterShape(Protocol):
    """The cluster (`state.ClusterState`): the controller's partition, the brokers and the
    budgets left."""

    @property
    def partition(self) -> Any: ...

    @property
    def brokers(self) -> Sequence[Any]: ...

    @property
    def budget(self) -> Any: ...


class LogShape(Protocol):
    """A replica's log as the leader-epoch functions of `logs.py` read it: the model's
    (`logs.Entries`) and the prover's (`symbolic/transition/logs.py: Epochs`). `span` is how
    many offsets to look at, `held(k)` whether offset k is below the LEO among them, and
    `latest_epoch` the latest epoch of the leader-epoch cache."""

    @property
    def leo(self) -> Any: ...

    @property
    def span(self) -> int: ...

    @property
    def latest_epoch(self) -> Any: ...

    def held(self, offset: int) -> Any: ...

    def epoch_at(self, offset: int) -> Any: ...
