"""The shape of a model's symbolic states (`state`): its sizes, the fields no action of the
model can change (constants), and the operations every sort has: fresh variables, ite, equality,
leaves and evaluation in a solver's model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import z3

from kafkarep.model.actions import Family, active
from kafkarep.model.actions.lifecycle import tracks_recovery_point
from kafkarep.model.config import ModelConfig
from kafkarep.model.metadata_cache import FENCED
from kafkarep.properties import extra_of
from kafkarep.properties.base import provable
from kafkarep.rules.guards import Guard
from kafkarep.symbolic import ops
from kafkarep.symbolic.ops import Sets, Term
from kafkarep.symbolic.state import (
    FIELDS,
    NO_VIEW,
    NONE,
    RUNNING,
    SORTS,
    UNKNOWN_FOLLOWER,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    BrokerRegistration,
    Budget,
    ClusterState,
    FetchResponse,
    Ghost,
    PartitionRegistration,
    Replica,
    View,
)


class AbstractionError(Exception):
    """A concrete state the abstraction cannot represent faithfully (for example two records
    with the same offset and epoch): the symbolic engine does not apply to this model."""


class Encoding:
    """The shape of a model's symbolic states: N brokers, R records, metadata log capacity C."""

    def __init__(
        self,
        cfg: ModelConfig,
        capacity: int = 0,
        abstract_history: bool = False,
        free_elections: bool = False,
    ) -> None:
        # a user's own safety properties: proved when they declare their predicates
        unproved = [p.name for p in extra_of(cfg) if p.kind == "always" and not provable(p)]
        if unproved:
            raise AbstractionError(
                f"the model's own properties {', '.join(unproved)} declare no predicate over a "
                "domain (docs/user-properties.md); check them with the explorer, Spark or "
                "Hypothesis"
            )
        if cfg.options.controller == "kafka":
            raise AbstractionError(
                'Kafka\'s own classes (controller = "kafka") answer steps one by one: prove the '
                "rules with the matching options, and audit them (kafkarep check "
                "--audit-controller)"
            )
        if cfg.options.controller != "kraft":
            raise AbstractionError("the symbolic engine encodes the KRaft controller rules only")
        if cfg.acks != "all":
            raise AbstractionError(
                'the symbolic engine encodes acks=all producers only (acks = "all")'
            )
        if cfg.truncation != "leader-epoch" or not cfg.current_leader_epoch_in_fetch:
            # The historical data planes (kafkarep/model/logs.py) are explored, not encoded.
            raise AbstractionError(
                "the symbolic engine encodes today's truncation by leader epoch with the leader "
                'epoch in fetches only (truncation = "leader-epoch", '
                "current_leader_epoch_in_fetch = true)"
            )
        if cfg.leader_counts_diverging_fetch:
            raise AbstractionError(
                "the symbolic engine encodes a leader that skips a diverging fetch only "
                "(leader_counts_diverging_fetch = false)"
            )
        if cfg.offsets_for_leader_epoch:
            raise AbstractionError(
                "the symbolic engine encodes the divergence named in the fetch response only "
                "(offsets_for_leader_epoch = false)"
            )
        if cfg.hwm_isr != "maximal":
            raise AbstractionError(
                "the symbolic engine encodes the HWM over the Maximal ISR only "
                '(hwm_isr = "maximal")'
            )
        unencoded = [
            f"[faults] {fault}"
            for fault in (
                "partial_fetches",
                "delayed_fetches",
                "uncontrolled_shutdowns",
                "min_isr_changes",
                "late_sends",
            )
            if getattr(cfg.budget, fault)
        ]
        if "controller_failover" in {f.name for f in active(cfg)}:
            unencoded.append("[faults] controller_failovers with a lagging controller")
        if unencoded:
            # Explored (kafkarep/model/actions/data.py, failover.py), not encoded.
            raise AbstractionError(
                "the symbolic engine does not encode "
                + ", ".join(unencoded)
                + "; check the model with the explorer or Hypothesis"
            )
        self.cfg = cfg
        self.n = len(cfg.broker_ids)
        self.r = max(cfg.records, 1)
        self.capacity = capacity
        # The highest partition epoch the states being stepped can have, when known (BMC: the
        # initial epoch plus the step number), so that reads and writes of the metadata log
        # only consider the slots in use.
        self.partition_epoch_limit: int | None = None
        # Induction keeps no metadata log: a broker applies any record that `history` (facts
        # proved of every record the controller commits) allows.
        self.abstract_history = abstract_history
        # A faster, smaller relation for finding violations: a broker applying metadata always
        # jumps to the latest record (fewer behaviours, so what it finds is real; not a proof).
        self.latest_metadata = False
        # what a record a broker applies satisfies: (enc, record, state, broker) -> term
        self.history: (
            Callable[[Encoding, PartitionRegistration, ClusterState, int], Term] | None
        ) = None
        # Induction may over-approximate the controller's elections: the new leader is any
        # eligible replica, not the first in replica order (`controller.elect_leader`). Every
        # step of the exact relation is a step of this one, so what is inductive here is
        # inductive there; and no step reads the order of the replica list any more, which
        # makes the controller's per-broker families symmetric (`symmetry.symmetric_families`).
        self.free_elections = free_elections
        self.choices = itertools.count()
        self.sets = Sets(self.n)
        self.families: tuple[Family, ...] = active(cfg)
        names = {f.name for f in self.families}
        # Without reassignment the replica list never changes: keep it a constant.
        self.reassigning = bool(names & {"reassign", "cancel_reassignment"})
        # Only an unclean election makes a leader RECOVERING (the last-known-leader election of
        # KIP-966 is one).
        o = cfg.options
        self.recovering = o.leader_recovery_supported and (
            cfg.topic.unclean_leader_election
            or "elect_unclean" in names
            or (o.elr_enabled and o.use_last_known_leader)
        )
        self.replica_slots = tuple(cfg.replicas) + (0,) * (self.n - len(cfg.replicas))
        self.fixed = self._fixed(names)

    def guard_on(self, guard: Guard) -> bool:
        """False when the model file switched the guard off."""
        return guard.enabled(self.cfg.options.disabled_guards)

    def _fixed(self, names: set[str]) -> dict[tuple[type, str], Any]:
        """Fields no active family can change: constants in symbolic states (smaller formulas).
        A transition that would change one is an error (`bmc.Unrolling.extend` checks)."""
        cfg = self.cfg
        fixed: dict[tuple[type, str], Any] = {}
        if not self.reassigning:
            fixed.update(
                {
                    (PartitionRegistration, "replicas"): self.replica_slots,
                    (PartitionRegistration, "adding"): 0,
                }
            )
            fixed[(PartitionRegistration, "removing")] = 0
            fixed[(Ghost, "led_since")] = (0,) * self.n
        if not self.recovering:
            for cls in (PartitionRegistration, View, AlterPartitionRequest, AlterPartitionResponse):
                fixed[(cls, "recovering")] = False
        if not tracks_recovery_point(cfg):
            fixed[(Replica, "recovery_point")] = 0
        if not cfg.options.elr_enabled:
            fixed.update(
                {(PartitionRegistration, "elr"): 0, (PartitionRegistration, "last_known_elr"): 0}
            )
        if "controlled_shutdown" not in names:
            fixed[(BrokerRegistration, "in_controlled_shutdown")] = False
        if not names & {"controlled_shutdown", "crash", "crash_lossy"}:
            # nobody stops: every broker runs in its first registration for ever
            fixed.update({(Broker, "status"): RUNNING, (Broker, "initialised"): True})
            fixed.update({(Broker, "epoch"): 1, (Broker, "incarnation"): 0})
            fixed.update({(BrokerRegistration, "epoch"): 1, (BrokerRegistration, "incarnation"): 0})
        for budget, family in (
            ("records", "produce"),
            ("fences", "fence"),
            ("clean_shutdowns", "controlled_shutdown"),
            ("unclean_shutdowns", "crash"),
            ("lossy_unclean_shutdowns", "crash_lossy"),
            ("isr_shrinks", "shrink_isr"),
            ("reassignments", "reassign"),
            ("reassignment_cancels", "cancel_reassignment"),
            ("preferred_elections", "elect_preferred"),
            ("unclean_elections", "elect_unclean"),
        ):
            if family not in names:
                fixed[(Budget, budget)] = getattr(cfg.budget, budget)
        unknown = [f"{cls.__name__}.{field}" for cls, field in fixed if field not in FIELDS[cls]]
        assert not unknown, f"fixed fields that do not exist: {unknown}"
        return fixed

    # --- sizes and schema -------------------------------------------------------------------

    def size(self, key: str) -> int:
        return {"N": self.n, "R": self.r, "C": self.capacity}[key]

    def blank_registration(self) -> PartitionRegistration:
        return PartitionRegistration(
            0, 0, 0, 0, 0, 0, 0, 0, False, self.replica_slots, self.nobody_eligible()
        )

    def nobody_eligible(self) -> tuple[Term, ...]:
        return (FENCED,) * self.n

    def no_replica(self) -> Replica:
        return Replica(
            False,
            0,
            (0,) * self.r,
            0,
            NONE,
            NO_VIEW,
            0,
            0,
            (UNKNOWN_FOLLOWER,) * self.n,
            False,
            0,
            0,
            -1,
            (0,) * self.r,
            self.nobody_eligible(),
            0,
        )

    def new_replica(
        self,
        log: tuple[Term, ...] | None = None,
        leo: Term = 0,
        hwm: Term = 0,
        recovery_point: Term = 0,
    ) -> Replica:
        return self.no_replica()._replace(
            present=True,
            leo=leo,
            log=log if log is not None else (0,) * self.r,
            hwm=hwm,
            recovery_point=recovery_point,
        )

    def no_fetch_response(self) -> FetchResponse:
        return FetchResponse(False, 0, 0, 0, 0, 0, (0,) * self.r, False, 0, 0)

    def no_ap_response(self) -> AlterPartitionResponse:
        return AlterPartitionResponse(False, 0, 0, 0, 0, 0, 0, 0, False)

    def no_ap_request(self) -> AlterPartitionRequest:
        return AlterPartitionRequest(False, 0, 0, 0, (0,) * self.n, False, 0)

    # --- fresh variables, merging, equality, evaluation -------------------------------------

    def fresh(self, name: str, spec: Any = ClusterState) -> Any:
        if spec == "b":
            return z3.Bool(name)
        if spec == "i":
            return ops.int_var(name)
        if spec == "s":
            return self.sets.var(name)
        if spec == "E":
            return tuple(ops.int_var(f"{name}.{k}") for k in range(self.r))
        if isinstance(spec, tuple):
            _, item, size = spec
            return tuple(self.fresh(f"{name}.{k}", item) for k in range(self.size(size)))
        fields = []
        for field, sort in zip(spec._fields, SORTS[spec], strict=True):
            value = self.fixed.get((spec, field))
            fields.append(self.fresh(f"{name}.{field}", sort) if value is None else value)
        return spec(*fields)

    def merge(self, c: Term, a: Any, b: Any, spec: Any = ClusterState) -> Any:
        """ite(c, a, b) on values of a sort."""
        if isinstance(c, bool):
            return a if c else b
        if a is b:
            return a
        if spec == "b" or spec == "i":
            return ops.ite(c, a, b)
        if spec == "s":
            return self.sets.ite(c, a, b)
        if spec == "E":
            return ops.epochs_ite(c, a, b, self.r)
        if isinstance(spec, tuple):
            item = spec[1]
            return tuple(self.merge(c, x, y, item) for x, y in zip(a, b, strict=True))
        return spec(*(self.merge(c, x, y, s) for x, y, s in zip(a, b, SORTS[spec], strict=True)))

    def equal(self, a: Any, b: Any, spec: Any = ClusterState) -> Iterator[Term]:
        """The conditions under which two values are equal, field by field."""
        if a is b:
            return
        if spec in ("b", "i"):
            yield ops.eq(a, b)
        elif spec == "s":
            yield self.sets.eq(a, b)
        elif spec == "E":
            if isinstance(a, frozenset) and isinstance(b, frozenset):
                yield a == b
            else:
                for x, y in zip(
                    ops.epoch_slots(a, self.r), ops.epoch_slots(b, self.r), strict=True
                ):
                    yield ops.eq(x, y)
        elif isinstance(spec, tuple):
            if len(a) != len(b):
                yield False
                return
            for x, y in zip(a, b, strict=True):
                yield from self.equal(x, y, spec[1])
        else:
            for x, y, s in zip(a, b, SORTS[spec], strict=True):
                yield from self.equal(x, y, s)

    def leaves(self, value: Any, spec: Any = ClusterState) -> Iterator[Term]:
        """The scalar parts of a value (booleans and integers), in a fixed order: a broker set
        by its bits, an epoch set by its slots. Two values of a sort have aligned leaves."""
        if spec in ("b", "i"):
            yield value
        elif spec == "s":
            yield from self.sets.bits(value)
        elif spec == "E":
            yield from ops.epoch_slots(value, self.r)
        elif isinstance(spec, tuple):
            for x in value:
                yield from self.leaves(x, spec[1])
        else:
            for x, s in zip(value, SORTS[spec], strict=True):
                yield from self.leaves(x, s)

    def evaluate(self, model: z3.ModelRef, value: Any, spec: Any = ClusterState) -> Any:
        """A model's values for a symbolic value: Python values."""
        if spec == "b":
            return value if isinstance(value, bool) else z3.is_true(model.eval(value, True))
        if spec == "i":
            return value if isinstance(value, int) else ops.int_value(model.eval(value, True))
        if spec == "s":
            return self.sets.value(model, value)
        if spec == "E":
            if isinstance(value, frozenset):
                return value
            slots = (self.evaluate(model, x, "i") for x in value)
            return frozenset(e for e in slots if e != 0)
        if isinstance(spec, tuple):
            return tuple(self.evaluate(model, x, spec[1]) for x in value)
        return spec(*(self.evaluate(model, x, s) for x, s in zip(value, SORTS[spec], strict=True)))
