"""The symbolic state: the cluster model's state as fixed-shape tuples of terms.

The abstraction (docs/prove.md explains why it is sound):

- Records are identified by (offset, leader epoch), not by value: a leader epoch has one leader,
  which appends each offset once, so two records with the same offset and epoch are the same
  record. A log is its LEO plus the epoch of the record at each offset; the committed log (the
  ghost's True HWM prefix) is the epoch of each committed offset; the positively acknowledged
  writes are, per offset, a set of epochs.
- Who has received a write not yet acknowledged (the ghost's per-value receiver sets) is kept with
  the leader that wrote it, per offset of its unacknowledged range (`recv`): an unacknowledged
  write is always in the range [unacked, LEO) of the leader that wrote it.
- The negatively acknowledged writes are dropped (no rule or property reads them, only whether a
  write was judged, which the unacknowledged range says), and so are the witnesses of the MinISR
  flags (the property reads only whether they are set) and the ELR, last-known ELR, adding and
  removing fields of a replica's copy of the metadata (no rule of a broker reads them).
- The controller's metadata log is indexed by partition epoch (`hist`, position pe - 1): the
  partition epoch moves by one per record, so the concrete log's compaction is a relabelling.
  A broker's position in it is the partition epoch of the record it applied (`applied`).

Everything else is the concrete state field for field, with canonical values for absent parts
(no replica, no response) so that equal projections are equal tuples. Offsets, epochs, broker
epochs and budgets are integers; broker sets are bit-vectors. A log holds at most R records (R
is the model's record budget: every record is written once), so logs are R-tuples.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import z3

from kafkarep.errors import Error
from kafkarep.metadata import LeaderRecoveryState, PartitionRegistration
from kafkarep.model.actions import Family, active
from kafkarep.model.config import ModelConfig
from kafkarep.model.metadata_cache import FENCED, Eligibility
from kafkarep.model.state import (
    AlterPartitionResponse,
    Broker,
    ClusterState,
    FetchResponse,
    Replica,
    Role,
    Status,
)
from kafkarep.rules.alter_partition import AlterPartitionRequest
from kafkarep.symbolic import ops
from kafkarep.symbolic.ops import Sets, Term

ERRORS = tuple(Error)
ERROR = {e: i for i, e in enumerate(ERRORS)}
RUNNING, SHUTTING_DOWN, OFFLINE_CLEAN, OFFLINE_UNCLEAN = (int(s) for s in Status)
NONE, FOLLOWER, LEADER = (int(r) for r in Role)


class Snap(NamedTuple):
    """A partition registration (the controller's, or one in its metadata log)."""

    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    elr: Term
    last_known_elr: Term
    adding: Term
    removing: Term
    recovering: Term
    replicas: tuple[Term, ...]  # N slots in order, packed, 0 for none
    # per broker: its ISR eligibility when this was committed (model/metadata_cache.py)
    eligible: tuple[Term, ...]


class Reg(NamedTuple):
    """A broker's registration (every broker of the model is registered)."""

    fenced: Term
    in_controlled_shutdown: Term
    epoch: Term
    incarnation: Term

    @property
    def registered(self) -> bool:
        return True

    @property
    def active(self) -> Term:
        """Unfenced and not shutting down (Kafka `ClusterControlManager.isActive`)."""
        return ops.and_(ops.not_(self.fenced), ops.not_(self.in_controlled_shutdown))


class ApReq(NamedTuple):
    present: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    member_epochs: tuple[
        Term, ...
    ]  # by broker id - 1: the epoch sent for a member (-1: not checked)
    recovering: Term
    broker_epoch: Term


class View(NamedTuple):
    present: Term
    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    replicas: Term
    recovering: Term


class Follower(NamedTuple):
    leo: Term
    broker_epoch: Term
    fetched_this_epoch: Term
    caught_up: Term


class Rep(NamedTuple):
    present: Term
    leo: Term
    log: tuple[Term, ...]  # epoch of the record at each offset, 0 at and beyond the LEO
    hwm: Term
    role: Term
    view: View
    maximal_isr: Term
    leso: Term
    followers: tuple[Follower, ...]
    pending: Term
    pending_isr: Term
    pending_partition_epoch: Term
    unacked_from: Term
    received: tuple[Term, ...]  # receivers of each unacknowledged write of this leader, by offset
    eligible: tuple[Term, ...]  # leader only: its metadata cache's ISR eligibility, by broker


class Fetch(NamedTuple):
    present: Term
    leader: Term
    leader_epoch: Term
    fetch_offset: Term
    hwm: Term
    end: Term
    entries: tuple[Term, ...]  # epochs at the leader's offsets [offset, end), 0 elsewhere
    diverging: Term
    diverging_epoch: Term
    diverging_end: Term


class ApResp(NamedTuple):
    present: Term
    request_isr: Term
    request_partition_epoch: Term
    error: Term
    leader: Term
    leader_epoch: Term
    partition_epoch: Term
    isr: Term
    recovering: Term


class Brk(NamedTuple):
    status: Term
    epoch: Term
    incarnation: Term
    applied_epoch: Term  # partition epoch of the metadata record it last applied
    initialised: Term
    replica: Rep
    fetch_response: Fetch
    ap_response: ApResp


class Ghost(NamedTuple):
    true_hwm: Term
    committed: tuple[Term, ...]
    pos_acked: tuple[Term, ...]  # per offset: epochs of positively acknowledged records
    ack_below_min_isr: Term
    hwm_below_min_isr: Term
    # per committed offset: the lowest leader epoch of a leader that moved its HWM past it. A
    # history variable of the proofs: no guard and no other field reads it.
    committed_in: tuple[Term, ...]


class Bud(NamedTuple):
    records: Term
    fences: Term
    clean_shutdowns: Term
    unclean_shutdowns: Term
    lossy_unclean_shutdowns: Term
    isr_shrinks: Term
    reassignments: Term
    reassignment_cancels: Term
    preferred_elections: Term
    unclean_elections: Term


class Sym(NamedTuple):
    partition: Snap
    metadata_log: tuple[Snap, ...]  # by partition epoch - 1
    registry: tuple[Reg, ...]
    ap_requests: tuple[ApReq, ...]
    brokers: tuple[Brk, ...]
    ghost: Ghost
    budget: Bud


_FIELDS: dict[type, tuple[str, ...]] = {
    cls: cls._fields for cls in (Snap, Reg, ApReq, View, Follower, Rep, Fetch, ApResp, Brk, Bud)
}

# Field sorts: "b" bool, "i" int, "s" broker set, "E" epoch set, a class, or ("vec", sort, size)
# with size "N" (brokers), "R" (records) or "C" (metadata log capacity).
SORTS: dict[type, tuple[Any, ...]] = {
    Snap: ("i", "i", "i", "s", "s", "s", "s", "s", "b", ("vec", "i", "N"), ("vec", "i", "N")),
    Reg: ("b", "b", "i", "i"),
    ApReq: ("b", "i", "i", "s", ("vec", "i", "N"), "b", "i"),
    View: ("b", "i", "i", "i", "s", "s", "b"),
    Follower: ("i", "i", "b", "b"),
    Rep: (
        "b",
        "i",
        ("vec", "i", "R"),
        "i",
        "i",
        View,
        "s",
        "i",
        ("vec", Follower, "N"),
        "b",
        "s",
        "i",
        "i",
        ("vec", "s", "R"),
        ("vec", "i", "N"),
    ),
    Fetch: ("b", "i", "i", "i", "i", "i", ("vec", "i", "R"), "b", "i", "i"),
    ApResp: ("b", "s", "i", "i", "i", "i", "i", "s", "b"),
    Brk: ("i", "i", "i", "i", "b", Rep, Fetch, ApResp),
    Ghost: ("i", ("vec", "i", "R"), ("vec", "E", "R"), "b", "b", ("vec", "i", "R")),
    Bud: ("i",) * 10,
    Sym: (
        Snap,
        ("vec", Snap, "C"),
        ("vec", Reg, "N"),
        ("vec", ApReq, "N"),
        ("vec", Brk, "N"),
        Ghost,
        Bud,
    ),
}

UNKNOWN_FOLLOWER = Follower(-1, -1, False, False)
NO_VIEW = View(False, 0, 0, 0, 0, 0, False)


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
        if cfg.options.controller != "kraft":
            raise AbstractionError("the symbolic engine encodes the KRaft controller rules only")
        if cfg.truncation != "leader-epoch" or not cfg.current_leader_epoch_in_fetch:
            # The historical data planes (kafkarep/model/logs.py) are explored, not encoded.
            raise AbstractionError(
                "the symbolic engine encodes today's truncation by leader epoch with the leader "
                'epoch in fetches only (truncation = "leader-epoch", '
                "current_leader_epoch_in_fetch = true)"
            )
        unencoded = [
            f"[faults] {fault}"
            for fault in ("partial_fetches", "delayed_fetches")
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
        self.history: Callable[[Encoding, Snap, Sym, int], Term] | None = None
        # Induction may over-approximate the controller's elections: the new leader is any
        # eligible replica, not the first in replica order (`controller.elect_leader`). Every
        # step of the exact relation is a step of this one, so what is inductive here is
        # inductive there; and no step reads the order of the replica list any more, which
        # makes the controller's per-broker families symmetric (`induction.symmetric_families`).
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

    def _fixed(self, names: set[str]) -> dict[tuple[type, str], Any]:
        """Fields no active family can change: constants in symbolic states (smaller formulas).
        A transition that would change one is an error (`bmc.Unrolling.extend` checks)."""
        cfg = self.cfg
        fixed: dict[tuple[type, str], Any] = {}
        if not self.reassigning:
            fixed.update({(Snap, "replicas"): self.replica_slots, (Snap, "adding"): 0})
            fixed[(Snap, "removing")] = 0
        if not self.recovering:
            for cls in (Snap, View, ApReq, ApResp):
                fixed[(cls, "recovering")] = False
        if not cfg.options.elr_enabled:
            fixed.update({(Snap, "elr"): 0, (Snap, "last_known_elr"): 0})
        if "controlled_shutdown" not in names:
            fixed[(Reg, "in_controlled_shutdown")] = False
        if not names & {"controlled_shutdown", "crash", "crash_lossy"}:
            # nobody stops: every broker runs in its first registration for ever
            fixed.update({(Brk, "status"): RUNNING, (Brk, "initialised"): True})
            fixed.update({(Brk, "epoch"): 1, (Brk, "incarnation"): 0})
            fixed.update({(Reg, "epoch"): 1, (Reg, "incarnation"): 0})
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
                fixed[(Bud, budget)] = getattr(cfg.budget, budget)
        unknown = [f"{cls.__name__}.{field}" for cls, field in fixed if field not in _FIELDS[cls]]
        assert not unknown, f"fixed fields that do not exist: {unknown}"
        return fixed

    # --- sizes and schema -------------------------------------------------------------------

    def size(self, key: str) -> int:
        return {"N": self.n, "R": self.r, "C": self.capacity}[key]

    def blank_snap(self) -> Snap:
        return Snap(0, 0, 0, 0, 0, 0, 0, 0, False, self.replica_slots, self.nobody_eligible())

    def nobody_eligible(self) -> tuple[Term, ...]:
        return (FENCED,) * self.n

    def no_replica(self) -> Rep:
        return Rep(
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
        )

    def new_replica(self, log: tuple[Term, ...] | None = None, leo: Term = 0, hwm: Term = 0) -> Rep:
        return self.no_replica()._replace(
            present=True, leo=leo, log=log if log is not None else (0,) * self.r, hwm=hwm
        )

    def no_fetch(self) -> Fetch:
        return Fetch(False, 0, 0, 0, 0, 0, (0,) * self.r, False, 0, 0)

    def no_ap_response(self) -> ApResp:
        return ApResp(False, 0, 0, 0, 0, 0, 0, 0, False)

    def no_request(self) -> ApReq:
        return ApReq(False, 0, 0, 0, (0,) * self.n, False, 0)

    # --- fresh variables, merging, equality, evaluation -------------------------------------

    def fresh(self, name: str, spec: Any = Sym) -> Any:
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

    def merge(self, c: Term, a: Any, b: Any, spec: Any = Sym) -> Any:
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

    def equal(self, a: Any, b: Any, spec: Any = Sym) -> Iterator[Term]:
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

    def leaves(self, value: Any, spec: Any = Sym) -> Iterator[Term]:
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

    def evaluate(self, model: z3.ModelRef, value: Any, spec: Any = Sym) -> Any:
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

    # --- the projection of a concrete state -------------------------------------------------

    def snap(self, p: PartitionRegistration, eligible: Eligibility) -> Snap:
        s = self.sets
        return Snap(
            p.leader,
            p.leader_epoch,
            p.partition_epoch,
            s.of(p.isr),
            s.of(p.elr),
            s.of(p.last_known_elr),
            s.of(p.adding),
            s.of(p.removing),
            p.leader_recovery_state == LeaderRecoveryState.RECOVERING,
            tuple(p.replicas) + (0,) * (self.n - len(p.replicas)),
            eligible,
        )

    def project(
        self,
        state: ClusterState,
        locs: dict[int, tuple[int, int]],
        committed_in: tuple[int, ...] = (),
    ) -> Sym:
        """The symbolic state of a concrete one. `locs` gives each value's (offset, epoch),
        recorded when it was written (the concrete state does not keep a lost record's epoch);
        `committed_in` the history variable `Ghost.committed_in`, recorded along the path."""
        log = state.controller.log
        base = log[0].partition_epoch
        for i, p in enumerate(log):
            if p.partition_epoch != base + i:
                raise AbstractionError("metadata log partition epochs are not consecutive")
        eligible = state.controller.eligible
        hist = (self.blank_snap(),) * (base - 1) + tuple(
            self.snap(p, e) for p, e in zip(log, eligible, strict=True)
        )
        regs = []
        for b in range(1, self.n + 1):
            r = state.controller.brokers.get(b)
            if not r.registered:
                raise AbstractionError(f"broker {b} is not registered")
            regs.append(Reg(r.fenced, r.in_controlled_shutdown, r.epoch, r.incarnation))
        reqs = tuple(
            self._request(b, q) for b, q in enumerate(state.controller.ap_requests, start=1)
        )
        brokers = tuple(
            self._broker(state, b, broker, locs) for b, broker in enumerate(state.brokers, 1)
        )
        g = state.ghost
        committed = [0] * self.r
        for o, v in enumerate(g.committed):
            offset, epoch = locs[v]
            if offset != o:
                raise AbstractionError(f"committed value {v} at offset {o}, written at {offset}")
            committed[o] = epoch
        pos: list[frozenset[int]] = [frozenset()] * self.r
        for v in g.pos_acked:
            offset, epoch = locs[v]
            pos[offset] = pos[offset] | {epoch}
        ghost = Ghost(
            g.true_hwm,
            tuple(committed),
            tuple(pos),
            g.ack_below_min_isr is not None,
            g.hwm_below_min_isr is not None,
            tuple(committed_in[: self.r]) + (0,) * (self.r - len(committed_in)),
        )
        return Sym(
            self.snap(state.partition, eligible[-1]),
            hist,
            tuple(regs),
            reqs,
            brokers,
            ghost,
            Bud(*(getattr(state.budget, f) for f in Bud._fields)),
        )

    def _request(self, b: int, q: AlterPartitionRequest | None) -> ApReq:
        if q is None:
            return self.no_request()
        if q.broker != b or q.version != 3 or q.broker_epoch is None:
            raise AbstractionError("an AlterPartition request the model does not send")
        epochs = [0] * self.n
        for member, epoch in q.new_isr:
            epochs[member - 1] = epoch
        return ApReq(
            True,
            q.leader_epoch,
            q.partition_epoch,
            self.sets.of(q.isr_ids),
            tuple(epochs),
            q.leader_recovery_state == LeaderRecoveryState.RECOVERING,
            q.broker_epoch,
        )

    def _log(self, entries: Any, start: int, locs: dict[int, tuple[int, int]]) -> tuple[int, ...]:
        out = [0] * self.r
        for k, (epoch, value) in enumerate(entries):
            o = start + k
            if locs.get(value) != (o, epoch) or o >= self.r:
                raise AbstractionError(
                    f"record {value} at offset {o} epoch {epoch} was written as {locs.get(value)}"
                )
            out[o] = epoch
        return tuple(out)

    def _broker(
        self, state: ClusterState, b: int, broker: Broker, locs: dict[int, tuple[int, int]]
    ) -> Brk:
        applied = broker.applied_epoch
        return Brk(
            int(broker.status),
            broker.epoch,
            broker.incarnation,
            applied,
            broker.initialised,
            self._replica(state, broker.replica, locs),
            self._fetch(broker.fetch_response, locs),
            self._ap_response(broker.ap_response),
        )

    def _replica(
        self, state: ClusterState, r: Replica | None, locs: dict[int, tuple[int, int]]
    ) -> Rep:
        if r is None:
            return self.no_replica()
        s = self.sets
        view = NO_VIEW
        if r.view is not None:
            v = r.view
            view = View(
                True,
                v.leader,
                v.leader_epoch,
                v.partition_epoch,
                s.of(v.isr),
                s.of(v.replicas),
                v.leader_recovery_state == LeaderRecoveryState.RECOVERING,
            )
        followers = (
            tuple(
                Follower(f.leo, f.broker_epoch, f.fetched_this_epoch, f.caught_up)
                for f in r.followers
            )
            if r.followers
            else (UNKNOWN_FOLLOWER,) * self.n
        )
        recv = [0] * self.r
        if r.unacked_from >= 0:
            if r.role != Role.LEADER:
                raise AbstractionError("unacknowledged writes on a replica that is not leader")
            for o in range(r.unacked_from, r.leo):
                value = r.log[o][1]
                mask = state.ghost.received[value - 1] if value <= len(state.ghost.received) else 0
                recv[o] = mask << 1
        return Rep(
            True,
            r.leo,
            self._log(r.log, 0, locs),
            r.hwm,
            int(r.role),
            view,
            s.of(r.maximal_isr),
            r.leso,
            followers,
            r.pending is not None,
            s.of(r.pending.isr) if r.pending is not None else 0,
            r.pending.partition_epoch if r.pending is not None else 0,
            r.unacked_from,
            tuple(recv),
            r.eligible or self.nobody_eligible(),
        )

    def _fetch(self, f: FetchResponse | None, locs: dict[int, tuple[int, int]]) -> Fetch:
        if f is None:
            return self.no_fetch()
        return Fetch(
            True,
            f.leader,
            f.leader_epoch,
            f.fetch_offset,
            f.hwm,
            f.fetch_offset + len(f.entries),
            self._log(f.entries, f.fetch_offset, locs),
            f.diverging is not None,
            f.diverging[0] if f.diverging is not None else 0,
            f.diverging[1] if f.diverging is not None else 0,
        )

    def _ap_response(self, a: AlterPartitionResponse | None) -> ApResp:
        if a is None:
            return self.no_ap_response()
        s = self.sets
        return ApResp(
            True,
            s.of(a.request.isr),
            a.request.partition_epoch,
            ERROR[a.error],
            a.leader,
            a.leader_epoch,
            a.partition_epoch,
            s.of(a.isr),
            a.leader_recovery_state == LeaderRecoveryState.RECOVERING,
        )


def comparable(sym: Sym) -> Sym:
    """A projection with the metadata records no broker can apply again blanked out (the
    concrete state has compacted them away)."""
    low = min(b.applied_epoch for b in sym.brokers)
    blank = Snap(0, 0, 0, 0, 0, 0, 0, 0, False, (), ())
    return sym._replace(
        metadata_log=tuple(blank if k + 1 < low else h for k, h in enumerate(sym.metadata_log))
    )


# --- initial states (model/initial.py) --------------------------------------------------------


def initial(enc: Encoding, isr: Term, leader: Term, fenced: Term) -> Sym:
    """The established cluster `initial_state` builds, for an ISR, leader and fenced set that
    may be symbolic (all initial states of the model's shape)."""
    s = enc.sets
    eligible = tuple(ops.ite(s.has(fenced, b), FENCED, 1) for b in range(1, enc.n + 1))
    cur = Snap(leader, 1, 1, isr, 0, 0, 0, 0, False, enc.replica_slots, eligible)
    hist = (cur,) + (enc.blank_snap(),) * max(enc.capacity - 1, 0)
    view = View(True, leader, 1, 1, isr, s.of(enc.cfg.replicas), False)
    brokers = []
    for b in range(1, enc.n + 1):
        if b not in enc.cfg.replicas:
            replica = enc.no_replica()
        else:
            lead = enc.new_replica()._replace(
                role=LEADER,
                view=view,
                maximal_isr=isr,
                followers=tuple(
                    enc.merge(
                        ops.and_(s.has(isr, m), m != b),
                        Follower(0, 1, True, True),
                        UNKNOWN_FOLLOWER,
                        Follower,
                    )
                    for m in range(1, enc.n + 1)
                ),
                eligible=eligible,
            )
            follow = enc.new_replica()._replace(
                role=ops.ite(leader > 0, FOLLOWER, NONE), view=view, maximal_isr=isr
            )
            replica = enc.merge(ops.eq(leader, b), lead, follow, Rep)
        brokers.append(Brk(RUNNING, 1, 0, 1, True, replica, enc.no_fetch(), enc.no_ap_response()))
    ghost = Ghost(0, (0,) * enc.r, (ops.EMPTY_EPOCHS,) * enc.r, False, False, (0,) * enc.r)
    return Sym(
        cur,
        hist,
        tuple(Reg(s.has(fenced, b), False, 1, 0) for b in range(1, enc.n + 1)),
        (enc.no_request(),) * enc.n,
        tuple(brokers),
        ghost,
        Bud(*(getattr(enc.cfg.budget, f) for f in Bud._fields)),
    )


def model_initial(enc: Encoding) -> Sym:
    cfg = enc.cfg
    return initial(enc, enc.sets.of(cfg.isr), cfg.leader, enc.sets.of(cfg.fenced))


def shape_constraint(enc: Encoding, isr: Term, leader: Term, fenced: Term) -> Term:
    """What a model file may give as its initial ISR, leader and fenced brokers."""
    s = enc.sets
    replicas = s.of(enc.cfg.replicas)
    everyone = s.of(range(1, enc.n + 1))
    leader_ok = ops.or_(
        ops.eq(leader, -1),
        ops.or_(*(ops.and_(ops.eq(leader, b), s.has(isr, b)) for b in enc.cfg.replicas)),
    )
    return ops.and_(
        s.subset(isr, replicas),
        s.subset(fenced, everyone),
        leader_ok,
        ops.not_(s.has(fenced, leader)),
    )
