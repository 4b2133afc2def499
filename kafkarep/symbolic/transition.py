"""The transition relation: every action of the cluster model over symbolic states.

One `Instance` per (family, actor[, fixed argument]) of `kafkarep.model.actions`, with a guard
(when the concrete family would list the action) and an update (the successor the concrete
`apply` computes), both written with `ops` so that they run on concrete projections (the
agreement test) and on Z3 terms (BMC and induction). Two families take a symbolic argument: the
followers a leader drops from its ISR (a broker set) and the metadata record a broker applies
(its partition epoch).

The relation of one step is: some instance's guard holds and the next state is its update.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from itertools import combinations
from typing import Any, NamedTuple

from kafkarep import rules
from kafkarep.errors import Error
from kafkarep.model import state as concrete
from kafkarep.model.actions import Action
from kafkarep.model.actions.alter_partition import ROLL_BACK
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.metadata_cache import FENCED
from kafkarep.rules import (
    AlterReassignmentRequest,
    ControlledShutdown,
    Election,
    ElectLeadersRequest,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
)
from kafkarep.symbolic import ops
from kafkarep.symbolic.domain import AlterPartition, Outcome, Terms, decided
from kafkarep.symbolic.encoding import AbstractionError, Encoding
from kafkarep.symbolic.ops import Term, and_, eq, imax, imin, implies, ite, ne, not_, or_
from kafkarep.symbolic.state import (
    ERROR,
    FOLLOWER,
    LEADER,
    NONE,
    OFFLINE_CLEAN,
    OFFLINE_UNCLEAN,
    RUNNING,
    SHUTTING_DOWN,
    UNKNOWN_FOLLOWER,
    AlterPartitionRequest,
    AlterPartitionResponse,
    Broker,
    BrokerRegistration,
    ClusterState,
    FetchResponse,
    FollowerView,
    Ghost,
    PartitionRegistration,
    Replica,
    View,
    running,
)

Guard = Callable[[ClusterState, Term], Term]
Update = Callable[[ClusterState, Term], ClusterState]


class Instance(NamedTuple):
    family: str
    actor: int  # as in the concrete Action (0: the controller)
    fixed: Hashable  # the fixed part of the argument (a broker, a target), or None
    arg: str | None  # sort of the symbolic argument: "i", "s" or None
    guard: Guard
    update: Update

    @property
    def broker(self) -> int | None:
        """The broker the step is about: its actor, or the broker a controller event names."""
        if self.actor > 0:
            return self.actor
        return self.fixed if isinstance(self.fixed, int) else None

    @property
    def label(self) -> str:
        parts = [self.family, str(self.actor)]
        if self.fixed is not None:
            parts.append(str(self.fixed))
        return ":".join(parts)


class Relation:
    """The instances of a model's active families, in the concrete families' order."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        instances: list[Instance] = []
        for family in enc.families:
            build = _BUILDERS.get(family.name)
            if build is None:
                if family.name.startswith("plan_") and enc.cfg.setting("plan", "target") is None:
                    continue  # a KIP-435 plan's steps: only a model with a [plan] has any
                raise AbstractionError(f"the symbolic engine has no encoding of {family.name!r}")
            instances.extend(build(enc))
        # Drop the instances no state of this model enables (their guard folds to false on a
        # symbolic state: a fault without budget, a status nobody reaches).
        probe = enc.fresh("probe")
        self.instances = tuple(i for i in instances if _possible(enc, i, probe))

    # --- for the agreement test and for decoding ---------------------------------------------

    def domain(self, instance: Instance, sym: ClusterState) -> Iterable[Term]:
        """The concrete arguments worth trying in a concrete projection (enabled or not)."""
        if instance.arg is None:
            return (None,)
        if instance.arg == "s":
            ids = range(1, self.enc.n + 1)
            return tuple(
                self.enc.sets.of(c) for k in range(1, self.enc.n + 1) for c in combinations(ids, k)
            )
        return range(1, sym.partition.partition_epoch + 2)

    def action(self, instance: Instance, arg: Term, before: concrete.ClusterState) -> Action:
        """The concrete action an instance with an argument stands for in a concrete state."""
        fam, actor = instance.family, instance.actor
        if fam == "shrink_isr":
            return Action(fam, actor, self.enc.sets.members(arg))
        if fam == "apply_metadata":
            if instance.fixed == "latest":
                return Action(fam, actor, len(before.controller.log) - 1)
            return Action(fam, actor, arg - before.controller.log[0].partition_epoch)
        if fam == "fetch":
            return Action(fam, actor)
        return Action(fam, actor, instance.fixed)


def _possible(enc: Encoding, instance: Instance, probe: ClusterState) -> bool:

    arg: Term = None
    if instance.arg == "i":
        arg = ops.int_var("probe.arg")
    elif instance.arg == "s":
        arg = enc.sets.var("probe.arg")
    elif instance.arg == "h":
        arg = enc.fresh("probe.arg", PartitionRegistration)
    guard = instance.guard(probe, arg)
    return not (isinstance(guard, bool) and not guard)


# --- state helpers ---------------------------------------------------------------------------


def with_broker(sym: ClusterState, broker: int, b: Broker) -> ClusterState:
    brokers = list(sym.brokers)
    brokers[broker - 1] = b
    return sym._replace(brokers=tuple(brokers))


def with_replica(sym: ClusterState, broker: int, r: Replica) -> ClusterState:
    return with_broker(sym, broker, sym.brokers[broker - 1]._replace(replica=r))


def with_reg(sym: ClusterState, broker: int, reg: BrokerRegistration) -> ClusterState:
    regs = list(sym.registry)
    regs[broker - 1] = reg
    return sym._replace(registry=tuple(regs))


def with_req(sym: ClusterState, broker: int, req: AlterPartitionRequest) -> ClusterState:
    reqs = list(sym.ap_requests)
    reqs[broker - 1] = req
    return sym._replace(ap_requests=tuple(reqs))


def spend(sym: ClusterState, budget: str) -> ClusterState:
    return sym._replace(budget=sym.budget._replace(**{budget: getattr(sym.budget, budget) - 1}))


def hist_get(
    enc: Encoding, hist: tuple[PartitionRegistration, ...], pe: Term
) -> PartitionRegistration:
    if isinstance(pe, int):
        return hist[pe - 1] if 1 <= pe <= len(hist) else enc.blank_registration()
    out = enc.blank_registration()
    for k in range(min(len(hist), enc.partition_epoch_limit or len(hist)) - 1, -1, -1):
        out = enc.merge(eq(pe, k + 1), hist[k], out, PartitionRegistration)
    return out


def hist_append(
    enc: Encoding, hist: tuple[PartitionRegistration, ...], when: Term, snap: PartitionRegistration
) -> tuple[PartitionRegistration, ...]:
    """Record a committed snapshot at its partition epoch. Without a capacity (concrete
    evaluation) the log grows; with one, it is a fixed tuple of slots."""
    if enc.abstract_history:
        return hist
    if not enc.capacity:
        assert isinstance(when, bool)
        return hist + (snap,) if when else hist
    limit = enc.partition_epoch_limit + 1 if enc.partition_epoch_limit else len(hist)
    return tuple(
        enc.merge(and_(when, eq(snap.partition_epoch, k + 1)), snap, h, PartitionRegistration)
        if k < limit
        else h
        for k, h in enumerate(hist)
    )


def metadata(enc: Encoding, sym: ClusterState) -> Any:
    """What the controller rules read of a symbolic state."""
    return Terms(enc).metadata(sym.partition, sym.registry)


def commit(enc: Encoding, sym: ClusterState, outcome: Outcome) -> ClusterState:
    """Adopt what a controller rule decided: append a committed change record to the metadata
    log, and take the broker registry it leaves."""
    regs = sym.registry if outcome.brokers is None else outcome.brokers.registrations
    eligible = tuple(
        ite(outcome.changed, now, before)
        for now, before in zip(eligible_now(regs), sym.partition.eligible, strict=True)
    )
    cur = outcome.partition._replace(eligible=eligible)
    return sym._replace(
        partition=cur,
        metadata_log=hist_append(enc, sym.metadata_log, outcome.changed, cur),
        registry=regs,
    )


def eligible_now(regs: tuple[BrokerRegistration, ...]) -> tuple[Term, ...]:
    """Each broker's ISR eligibility in a cache that has applied this registry
    (model/metadata_cache.py: `eligibility`)."""
    return tuple(
        ite(r.fenced, FENCED, ite(r.in_controlled_shutdown, -2 - r.epoch, r.epoch)) for r in regs
    )


def isr_eligible(enc: Encoding, r: Replica, m: int) -> Term:
    """model/metadata_cache.py: `isr_eligible` (KRaft)."""
    f = r.followers[m - 1]
    entry = r.eligible[m - 1]
    cached = alive_epoch(entry)
    return and_(
        or_(entry >= 0, not enc.cfg.guard_on("isr_join.alive_in_leader_metadata")),
        or_(
            and_(cached >= 0, eq(cached, f.broker_epoch)),
            not enc.cfg.guard_on("isr_join.broker_epoch_in_leader_metadata"),
        ),
    )


def alive_epoch(entry: Term) -> Term:
    """model/metadata_cache.py: `alive_epoch`."""
    return ite(entry >= 0, entry, ite(entry <= -2, -2 - entry, -1))


def view_of(enc: Encoding, snap: PartitionRegistration) -> View:
    return View(
        True,
        snap.leader,
        snap.leader_epoch,
        snap.partition_epoch,
        snap.isr,
        Terms(enc).members(snap.replicas),
        snap.recovering,
    )


def last_epoch(enc: Encoding, r: Replica) -> Term:
    return ops.select(r.log, r.leo - 1, 0)


# --- logs (model/logs.py) --------------------------------------------------------------------


def end_offset_for_epoch(
    enc: Encoding, log: tuple[Term, ...], leo: Term, epoch: Term, leader_epoch: Term = None
) -> tuple[Term, Term]:
    """(largest epoch <= `epoch` in the log, end offset of that epoch)."""
    last = ops.select(log, leo - 1, 0)
    trivial = or_(eq(leo, 0), eq(last, epoch))
    if leader_epoch is not None:
        trivial = or_(trivial, eq(leader_epoch, epoch))
    end: Term = leo
    for k in range(enc.r - 1, -1, -1):
        end = ite(and_(k < leo, log[k] > epoch), k, end)
    found: Term = False
    floor: Term = -1
    for k in range(enc.r):
        below = and_(k < leo, log[k] <= epoch)
        found = or_(found, below)
        floor = ite(below, imax(floor, log[k]), floor)
    floor = ite(found, floor, epoch)
    return ite(trivial, epoch, floor), ite(trivial, leo, end)


def diverges(
    enc: Encoding, log: tuple[Term, ...], leo: Term, leader_epoch: Term, offset: Term, last: Term
) -> tuple[Term, Term, Term]:
    epoch, end = end_offset_for_epoch(enc, log, leo, last, leader_epoch)
    return or_(epoch < last, end < offset), epoch, end


def truncation_point(
    enc: Encoding, log: tuple[Term, ...], leo: Term, epoch: Term, end: Term
) -> Term:
    local_epoch, local_end = end_offset_for_epoch(enc, log, leo, epoch)
    return ite(ne(local_epoch, epoch), local_end, imin(local_end, end))


def cut(log: tuple[Term, ...], at: Term) -> tuple[Term, ...]:
    return tuple(ite(k < at, e, 0) for k, e in enumerate(log))


# --- the HWM and acknowledgements (model/hwm.py) ---------------------------------------------


def maybe_advance_hwm(enc: Encoding, sym: ClusterState, broker: int) -> ClusterState:
    cfg = enc.cfg
    s = enc.sets
    b = sym.brokers[broker - 1]
    r = b.replica
    offset: Term = r.leo
    for m in range(1, enc.n + 1):
        if m != broker:
            offset = ite(
                s.has(r.maximal_isr, m), imin(offset, imax(r.followers[m - 1].leo, 0)), offset
            )
    if cfg.hwm_waits_for_caught_up_followers and cfg.guard_on("hwm.waits_for_caught_up_follower"):
        for m in range(1, enc.n + 1):
            f = r.followers[m - 1]
            waits = and_(
                m != broker,
                s.has(r.view.replicas, m),
                not_(s.has(r.maximal_isr, m)),
                f.caught_up,
                isr_eligible(enc, r, m),
                f.leo < offset,
            )
            offset = ite(waits, f.leo, offset)
    at_min = s.size(r.view.isr) >= cfg.min_isr
    required = cfg.options.elr_enabled or cfg.hwm_requires_min_isr
    passes = or_(not required, at_min, not cfg.guard_on("hwm.isr_at_min_isr"))
    advance = and_(offset > r.hwm, passes)
    g = sym.ghost
    hwm_below = g.hwm_below_min_isr
    if cfg.options.elr_enabled:
        hwm_below = or_(hwm_below, and_(advance, not_(at_min)))
    start = r.unacked_from
    acking = and_(advance, start >= 0, start < offset)
    positive = s.size(r.maximal_isr) >= cfg.min_isr
    ack_below = g.ack_below_min_isr
    pos = list(g.pos_acked)
    recv = list(r.received)
    for o in range(enc.r):
        judged = and_(acking, start <= o, o < offset)
        ack_below = or_(ack_below, and_(judged, positive, s.size(recv[o]) < cfg.min_isr))
        pos[o] = ops.epochs_add(pos[o], r.log[o], and_(judged, positive), enc.r)
        recv[o] = s.ite(judged, 0, recv[o])
    unacked = ite(acking, ite(offset < r.leo, offset, -1), start)
    extend = and_(advance, offset > g.true_hwm)
    committed = tuple(
        ite(and_(extend, g.true_hwm <= o, o < offset), r.log[o], c)
        for o, c in enumerate(g.committed)
    )
    le = r.view.leader_epoch
    committed_in = tuple(
        ite(and_(advance, r.hwm <= o, o < offset, or_(g.true_hwm <= o, le < c)), le, c)
        for o, c in enumerate(g.committed_in)
    )
    ghost = Ghost(
        ite(extend, offset, g.true_hwm), committed, tuple(pos), ack_below, hwm_below, committed_in
    )
    r = r._replace(hwm=ite(advance, offset, r.hwm), unacked_from=unacked, received=tuple(recv))
    return with_replica(sym, broker, r)._replace(ghost=ghost)


def forget_unacked(enc: Encoding, r: Replica) -> Replica:
    """nack_unacked: the leader's unacknowledged writes fail; nobody tracks their receivers."""
    return r._replace(unacked_from=-1, received=(0,) * enc.r)


# --- data plane (model/actions/data.py) --------------------------------------------------------


def leader_replica(b: Broker) -> Term:
    r = b.replica
    return and_(running(b), r.present, eq(r.role, LEADER))


def produce(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        b = sym.brokers[broker - 1]
        r = b.replica
        return and_(
            sym.budget.records > 0,
            leader_replica(b),
            r.view.present,
            enc.sets.size(r.view.isr) >= enc.cfg.min_isr,
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        r = sym.brokers[broker - 1].replica
        o = r.leo
        r = r._replace(
            leo=o + 1,
            log=tuple(ite(eq(k, o), r.view.leader_epoch, e) for k, e in enumerate(r.log)),
            unacked_from=ite(r.unacked_from >= 0, r.unacked_from, o),
            received=tuple(
                enc.sets.ite(eq(k, o), enc.sets.bit(broker), x) for k, x in enumerate(r.received)
            ),
        )
        sym = spend(with_replica(sym, broker, r), "records")
        return maybe_advance_hwm(enc, sym, broker)

    return [Instance("produce", broker, None, None, guard, update)]


def fetch(enc: Encoding, follower: int, leader: int) -> Instance:
    s = enc.sets

    def guard(sym: ClusterState, _: Term) -> Term:
        fb = sym.brokers[follower - 1]
        f = fb.replica
        lb = sym.brokers[leader - 1]
        lr = lb.replica
        converged = and_(
            eq(f.leo, lr.leo),
            *(eq(x, y) for x, y in zip(f.log, lr.log, strict=True)),
            eq(f.hwm, lr.hwm),
            eq(lr.followers[follower - 1].leo, f.leo),
            eq(lr.followers[follower - 1].broker_epoch, fb.epoch),
            eq(lr.followers[follower - 1].fetched_this_epoch, True),
            eq(lr.followers[follower - 1].caught_up, True),
            or_(
                s.has(lr.view.isr, follower),
                not_(joins(enc, sym, leader, follower)),
            ),
        )
        return and_(
            running(fb),
            f.present,
            eq(f.role, FOLLOWER),
            not_(fb.fetch_response.present),
            f.view.present,
            eq(f.view.leader, leader),
            leader_replica(lb),
            lr.view.present,
            eq(lr.view.leader_epoch, f.view.leader_epoch),
            s.has(lr.view.replicas, follower),
            not_(converged),
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        fb = sym.brokers[follower - 1]
        f = fb.replica
        lr = sym.brokers[leader - 1].replica
        epoch = lr.view.leader_epoch
        diverging, d_epoch, d_end = diverges(enc, lr.log, lr.leo, epoch, f.leo, last_epoch(enc, f))
        followers = list(lr.followers)
        caught_up = or_(f.leo >= lr.leo, followers[follower - 1].caught_up)
        moved = ne(followers[follower - 1].leo, f.leo)
        followers[follower - 1] = FollowerView(f.leo, fb.epoch, True, caught_up)
        fetched = with_replica(sym, leader, lr._replace(followers=tuple(followers)))
        fetched = maybe_expand(enc, fetched, leader, follower)
        fetched = enc.merge(moved, maybe_advance_hwm(enc, fetched, leader), fetched)
        lr1 = fetched.brokers[leader - 1].replica
        answer = FetchResponse(
            True,
            leader,
            epoch,
            f.leo,
            lr1.hwm,
            lr1.leo,
            tuple(ite(and_(f.leo <= k, k < lr1.leo), e, 0) for k, e in enumerate(lr1.log)),
            False,
            0,
            0,
        )
        refusal = FetchResponse(
            True, leader, epoch, f.leo, lr.hwm, f.leo, (0,) * enc.r, True, d_epoch, d_end
        )
        sym = enc.merge(diverging, sym, fetched)
        response = enc.merge(diverging, refusal, answer, FetchResponse)
        return with_broker(
            sym, follower, sym.brokers[follower - 1]._replace(fetch_response=response)
        )

    return Instance("fetch", follower, leader, None, guard, update)


def fetches(enc: Encoding, follower: int) -> list[Instance]:
    return [fetch(enc, follower, leader) for leader in range(1, enc.n + 1) if leader != follower]


def fetch_response(enc: Encoding, broker: int) -> list[Instance]:
    options = enc.cfg.options

    def guard(sym: ClusterState, _: Term) -> Term:
        b = sym.brokers[broker - 1]
        return and_(running(b), b.fetch_response.present)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        a = b.fetch_response
        r = b.replica
        sym = with_broker(sym, broker, b._replace(fetch_response=enc.no_fetch_response()))
        in_fetcher = and_(
            r.present, eq(r.role, FOLLOWER), r.view.present, eq(r.view.leader, a.leader)
        )
        epoch_ok = and_(r.present, r.view.present, eq(r.view.leader_epoch, a.leader_epoch))
        offset_ok = and_(r.present, eq(r.leo, a.fetch_offset))
        applies = and_(
            in_fetcher,
            or_(epoch_ok, not options.guard_on("fetch_response.leader_epoch_matches")),
            or_(offset_ok, not options.guard_on("fetch_response.fetch_offset_matches")),
        )
        # truncate at the divergence point
        at = truncation_point(enc, r.log, r.leo, a.diverging_epoch, a.diverging_end)
        truncated = r._replace(log=cut(r.log, at), leo=at, hwm=imin(r.hwm, at))
        # append the entries after the log (at the fetch offset, unless that guard is off)
        count = a.end - a.fetch_offset
        leo = r.leo + count
        if options.guard_on("fetch_response.fetch_offset_matches"):
            log = tuple(
                ite(k < r.leo, e, x) for k, (e, x) in enumerate(zip(r.log, a.entries, strict=True))
            )
        else:
            log = tuple(
                ite(
                    k < r.leo,
                    e,
                    ite(k < leo, ops.select(a.entries, k - r.leo + a.fetch_offset, 0), 0),
                )
                for k, e in enumerate(r.log)
            )
        appended = r._replace(log=log, leo=leo, hwm=imin(a.hwm, leo))
        new = enc.merge(a.diverging, truncated, appended, Replica)
        sym = with_replica(sym, broker, enc.merge(applies, new, r, Replica))
        receiving = and_(applies, not_(a.diverging))
        return receive(enc, sym, broker, receiving, r.leo, leo, log)

    return [Instance("fetch_response", broker, None, None, guard, update)]


def receive(
    enc: Encoding,
    sym: ClusterState,
    broker: int,
    when: Term,
    start: Term,
    end: Term,
    log: tuple[Term, ...],
) -> ClusterState:
    """Ghost.receive: the broker appended the records at [start, end) of `log`; each one that a
    leader has written and not yet acknowledged gains it as a receiver."""
    if isinstance(when, bool) and not when:
        return sym
    s = enc.sets
    for p in range(1, enc.n + 1):
        r = sym.brokers[p - 1].replica
        recv = tuple(
            s.ite(
                and_(
                    when,
                    start <= k,
                    k < end,
                    r.unacked_from >= 0,
                    r.unacked_from <= k,
                    k < r.leo,
                    eq(r.log[k], log[k]),
                ),
                s.union(x, s.bit(broker)),
                x,
            )
            for k, x in enumerate(r.received)
        )
        sym = with_replica(sym, p, r._replace(received=recv))
    return sym


# --- AlterPartition (model/actions/alter_partition.py) ----------------------------------------


def idle_leader(sym: ClusterState, broker: int) -> Term:
    b = sym.brokers[broker - 1]
    r = b.replica
    return and_(
        leader_replica(b),
        not_(r.pending),
        not_(b.ap_response.present),
        not_(sym.ap_requests[broker - 1].present),
    )


def send(
    enc: Encoding, sym: ClusterState, broker: int, isr: Term, recovering: Term
) -> ClusterState:
    s = enc.sets
    b = sym.brokers[broker - 1]
    r = b.replica
    view = r.view

    def known(m: int) -> Term:
        if m == broker:
            return b.epoch
        e = r.followers[m - 1].broker_epoch
        return ite(e >= 0, e, -1)

    epochs = tuple(ite(s.has(isr, m), known(m), 0) for m in range(1, enc.n + 1))
    request = AlterPartitionRequest(
        True, view.leader_epoch, view.partition_epoch, isr, epochs, recovering, b.epoch
    )
    r = r._replace(
        maximal_isr=s.union(view.isr, isr),
        pending=True,
        pending_isr=isr,
        pending_partition_epoch=view.partition_epoch,
    )
    return with_req(with_replica(sym, broker, r), broker, request)


def joins(enc: Encoding, sym: ClusterState, broker: int, follower: int) -> Term:
    """model/actions/alter_partition.py: `joins`."""
    s = enc.sets
    r = sym.brokers[broker - 1].replica
    f = r.followers[follower - 1]
    checks = [
        ("isr_join.fetch_offset_at_hwm", f.leo >= r.hwm),
        ("isr_join.fetch_offset_at_leso", f.leo >= r.leso),
    ]
    return and_(
        idle_leader(sym, broker),
        r.view.present,
        not_(r.view.recovering),
        s.has(r.view.replicas, follower),
        not_(s.has(r.view.isr, follower)),
        isr_eligible(enc, r, follower),
        *(ok for name, ok in checks if enc.cfg.guard_on(name)),
    )


def maybe_expand(enc: Encoding, sym: ClusterState, broker: int, follower: int) -> ClusterState:
    """model/actions/alter_partition.py: `maybe_expand`."""
    s = enc.sets
    view = sym.brokers[broker - 1].replica.view
    expanded = send(enc, sym, broker, s.union(view.isr, s.bit(follower)), view.recovering)
    return enc.merge(joins(enc, sym, broker, follower), expanded, sym)


def shrink_isr(enc: Encoding, broker: int) -> list[Instance]:
    s = enc.sets

    def guard(sym: ClusterState, dropped: Term) -> Term:
        r = sym.brokers[broker - 1].replica
        out_of_sync = enc.cfg.guard_on("shrink_isr.follower_out_of_sync")
        return and_(
            sym.budget.isr_shrinks > 0,
            idle_leader(sym, broker),
            r.view.present,
            not_(s.empty(dropped)),
            s.subset(dropped, s.minus(r.view.isr, s.bit(broker))),
            *(
                implies(s.has(dropped, m), r.followers[m - 1].leo < r.leo)
                for m in range(1, enc.n + 1)
                if out_of_sync and m != broker
            ),
        )

    def update(sym: ClusterState, dropped: Term) -> ClusterState:
        r = sym.brokers[broker - 1].replica
        view = r.view
        followers = tuple(
            f._replace(caught_up=and_(f.caught_up, not_(s.has(dropped, m))))
            for m, f in enumerate(r.followers, start=1)
        )
        sym = with_replica(sym, broker, r._replace(followers=followers))
        sym = spend(sym, "isr_shrinks")
        return send(enc, sym, broker, s.minus(view.isr, dropped), view.recovering)

    return [Instance("shrink_isr", broker, None, "s", guard, update)]


def replica_lag(enc: Encoding, broker: int) -> list[Instance]:
    s = enc.sets
    out = []
    for follower in range(1, enc.n + 1):
        if follower == broker:
            continue

        def guard(sym: ClusterState, _: Term, follower: int = follower) -> Term:
            b = sym.brokers[broker - 1]
            r = b.replica
            f = r.followers[follower - 1]
            return and_(
                leader_replica(b),
                r.view.present,
                s.has(r.view.replicas, follower),
                f.caught_up,
                not_(s.has(r.maximal_isr, follower)),
                f.leo < r.leo,
                isr_eligible(enc, r, follower),
            )

        def update(sym: ClusterState, _: Term, follower: int = follower) -> ClusterState:
            r = sym.brokers[broker - 1].replica
            followers = list(r.followers)
            followers[follower - 1] = followers[follower - 1]._replace(caught_up=False)
            return with_replica(sym, broker, r._replace(followers=tuple(followers)))

        out.append(Instance("replica_lag", broker, follower, None, guard, update))
    return out


def recover_leader(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        r = sym.brokers[broker - 1].replica
        return and_(idle_leader(sym, broker), r.view.present, r.view.recovering)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        view = sym.brokers[broker - 1].replica.view
        return send(enc, sym, broker, view.isr, False)

    return [Instance("recover_leader", broker, None, None, guard, update)]


def handle_alter_partition(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return sym.ap_requests[broker - 1].present

    def update(sym: ClusterState, _: Term) -> ClusterState:
        q = sym.ap_requests[broker - 1]
        request = AlterPartition(broker, q, enc.sets)
        outcome = decided(rules.alter_partition(metadata(enc, sym), request))
        sym = with_req(commit(enc, sym, outcome), broker, enc.no_ap_request())
        p = sym.partition
        failed = ne(outcome.error, ERROR[Error.NONE])
        response = AlterPartitionResponse(
            True,
            q.isr,
            q.partition_epoch,
            outcome.error,
            ite(failed, -1, p.leader),
            ite(failed, -1, p.leader_epoch),
            ite(failed, -1, p.partition_epoch),
            enc.sets.ite(failed, 0, p.isr),
            ite(failed, False, p.recovering),
        )
        b = sym.brokers[broker - 1]
        delivered = and_(running(b), eq(b.epoch, q.broker_epoch))
        return with_broker(
            sym,
            broker,
            b._replace(
                ap_response=enc.merge(delivered, response, b.ap_response, AlterPartitionResponse)
            ),
        )

    return [Instance("handle_alter_partition", CONTROLLER, broker, None, guard, update)]


def alter_partition_response(enc: Encoding, broker: int) -> list[Instance]:
    s = enc.sets
    roll_back = [ERROR[e] for e in sorted(ROLL_BACK)]

    def guard(sym: ClusterState, _: Term) -> Term:
        b = sym.brokers[broker - 1]
        return and_(running(b), b.ap_response.present)

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        a = b.ap_response
        r = b.replica
        sym = with_broker(sym, broker, b._replace(ap_response=enc.no_ap_response()))
        mine = and_(
            r.present,
            eq(r.role, LEADER),
            r.pending,
            s.eq(r.pending_isr, a.request_isr),
            eq(r.pending_partition_epoch, a.request_partition_epoch),
        )
        rolls_back = and_(mine, or_(*(eq(a.error, e) for e in roll_back)))
        accepted = and_(
            mine,
            eq(a.error, ERROR[Error.NONE]),
            eq(a.leader_epoch, r.view.leader_epoch),
            a.partition_epoch >= r.view.partition_epoch,
        )
        cleared = r._replace(pending=False, pending_isr=0, pending_partition_epoch=0)
        rolled = cleared._replace(maximal_isr=r.view.isr)
        view = r.view._replace(
            isr=a.isr, partition_epoch=a.partition_epoch, recovering=a.recovering
        )
        adopted = maybe_advance_hwm(
            enc, with_replica(sym, broker, cleared._replace(view=view, maximal_isr=a.isr)), broker
        )
        after_roll_back = with_replica(sym, broker, rolled)
        return enc.merge(accepted, adopted, enc.merge(rolls_back, after_roll_back, sym))

    return [Instance("alter_partition_response", broker, None, None, guard, update)]


# --- metadata (model/actions/metadata.py) -------------------------------------------------------


def apply_metadata(enc: Encoding, broker: int) -> list[Instance]:
    """The argument is the partition epoch of the record applied; with an abstract history
    (induction) it is the record itself, any record the history facts allow."""

    def guard(sym: ClusterState, pe: Term) -> Term:
        b = sym.brokers[broker - 1]
        first = ite(b.initialised, b.applied_epoch + 1, sym.partition.partition_epoch)
        return and_(running(b), first <= pe, pe <= sym.partition.partition_epoch)

    def update(sym: ClusterState, pe: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        snap = hist_get(enc, sym.metadata_log, pe)
        sym = with_broker(sym, broker, b._replace(applied_epoch=pe, initialised=True))
        return act_on(enc, sym, broker, snap)

    def guard_record(sym: ClusterState, snap: PartitionRegistration) -> Term:
        same = and_(*enc.equal(snap, sym.partition, PartitionRegistration))
        facts = enc.history(enc, snap, sym, broker) if enc.history is not None else True
        return and_(
            guard(sym, snap.partition_epoch),
            implies(eq(snap.partition_epoch, sym.partition.partition_epoch), same),
            facts,
        )

    def update_record(sym: ClusterState, snap: PartitionRegistration) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=snap.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, snap)

    def guard_latest(sym: ClusterState, _: Term) -> Term:
        return guard(sym, sym.partition.partition_epoch)

    def update_latest(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        sym = with_broker(
            sym, broker, b._replace(applied_epoch=sym.partition.partition_epoch, initialised=True)
        )
        return act_on(enc, sym, broker, sym.partition)

    if enc.abstract_history:
        return [Instance("apply_metadata", broker, None, "h", guard_record, update_record)]
    if enc.latest_metadata:
        return [Instance("apply_metadata", broker, "latest", None, guard_latest, update_latest)]
    return [Instance("apply_metadata", broker, None, "i", guard, update)]


def apply_registrations(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        b = sym.brokers[broker - 1]
        now = eligible_now(sym.registry)
        return and_(
            running(b),
            b.initialised,
            eq(b.applied_epoch, sym.partition.partition_epoch),
            leader_replica(b),
            not_(and_(*(eq(x, y) for x, y in zip(b.replica.eligible, now, strict=True)))),
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        r = sym.brokers[broker - 1].replica
        return with_replica(sym, broker, r._replace(eligible=eligible_now(sym.registry)))

    return [Instance("apply_registrations", broker, None, None, guard, update)]


def act_on(
    enc: Encoding, sym: ClusterState, broker: int, snap: PartitionRegistration
) -> ClusterState:
    s = enc.sets
    r = sym.brokers[broker - 1].replica
    member = s.has(Terms(enc).members(snap.replicas), broker)
    removed = with_replica(sym, broker, enc.no_replica())
    r0 = enc.merge(r.present, r, enc.new_replica(), Replica)
    stale = and_(r.present, r.view.present, snap.partition_epoch < r.view.partition_epoch)
    # the leader branch
    led = _as_leader(enc, r0, snap, broker)._replace(eligible=snap.eligible)
    as_leader = with_replica(sym, broker, led)
    as_leader = maybe_advance_hwm(enc, as_leader, broker)
    # the follower branch
    follower = forget_unacked(enc, r0)._replace(
        role=ite(snap.leader > 0, FOLLOWER, NONE),
        view=view_of(enc, snap),
        maximal_isr=snap.isr,
        leso=0,
        followers=(UNKNOWN_FOLLOWER,) * enc.n,
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
        eligible=enc.nobody_eligible(),
    )
    as_follower = with_replica(sym, broker, follower)
    acted = enc.merge(eq(snap.leader, broker), as_leader, as_follower)
    # a leader holding a newer registration keeps it, but its cache moves with the records
    leading = eq(r.role, LEADER)
    cached = tuple(ite(leading, e, old) for e, old in zip(snap.eligible, r.eligible, strict=True))
    kept = with_replica(sym, broker, r._replace(eligible=cached))
    return enc.merge(not_(member), removed, enc.merge(stale, kept, acted))


def _as_leader(enc: Encoding, r: Replica, snap: PartitionRegistration, broker: int) -> Replica:
    s = enc.sets
    cfg = enc.cfg
    view = view_of(enc, snap)
    promoted = forget_unacked(enc, r)._replace(
        role=LEADER,
        view=view,
        maximal_isr=snap.isr,
        leso=r.leo,
        followers=tuple(
            UNKNOWN_FOLLOWER._replace(caught_up=and_(s.has(snap.isr, m), m != broker))
            for m in range(1, enc.n + 1)
        ),
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
    )
    followers = r.followers
    if cfg.options.guard_on("leader_epoch_change.reset_out_of_sync_followers"):
        followers = tuple(
            f._replace(
                fetched_this_epoch=and_(f.fetched_this_epoch, s.has(snap.isr, m)),
                caught_up=and_(s.has(snap.isr, m), m != broker),
            )
            for m, f in enumerate(r.followers, start=1)
        )
    new_epoch = r._replace(
        view=view,
        maximal_isr=snap.isr,
        leso=r.leo,
        followers=followers,
        pending=False,
        pending_isr=0,
        pending_partition_epoch=0,
    )
    drop = and_(
        r.pending,
        or_(
            cfg.pending_isr_on_metadata == "reset", snap.partition_epoch > r.pending_partition_epoch
        ),
    )
    keep = and_(r.pending, not_(drop))
    same_epoch = r._replace(
        view=view,
        maximal_isr=s.ite(keep, s.union(snap.isr, r.pending_isr), snap.isr),
        pending=keep,
        pending_isr=s.ite(keep, r.pending_isr, 0),
        pending_partition_epoch=ite(keep, r.pending_partition_epoch, 0),
    )
    return enc.merge(
        ne(r.role, LEADER),
        promoted,
        enc.merge(snap.leader_epoch > r.view.leader_epoch, new_epoch, same_epoch, Replica),
        Replica,
    )


# --- lifecycle (model/actions/lifecycle.py) ------------------------------------------------------


def fence_now(enc: Encoding, sym: ClusterState, broker: int) -> ClusterState:
    return commit(enc, sym, decided(rules.fence_broker(metadata(enc, sym), FenceBroker(broker))))


def fence(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return and_(
            sym.budget.fences > 0,
            running(sym.brokers[broker - 1]),
            not_(sym.registry[broker - 1].fenced),
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        return fence_now(enc, spend(sym, "fences"), broker)

    return [Instance("fence", CONTROLLER, broker, None, guard, update)]


def unfence(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        b = sym.brokers[broker - 1]
        return and_(
            eq(b.status, RUNNING),
            sym.registry[broker - 1].fenced,
            b.initialised,
            eq(b.applied_epoch, sym.partition.partition_epoch),
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        outcome = rules.unfence_broker(metadata(enc, sym), UnfenceBroker(broker))
        return commit(enc, sym, decided(outcome))

    return [Instance("unfence", CONTROLLER, broker, None, guard, update)]


def controlled_shutdown(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return and_(
            sym.budget.clean_shutdowns > 0,
            eq(sym.brokers[broker - 1].status, RUNNING),
            sym.registry[broker - 1].active,
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        sym = spend(sym, "clean_shutdowns")
        outcome = rules.controlled_shutdown(metadata(enc, sym), ControlledShutdown(broker))
        sym = commit(enc, sym, decided(outcome))
        b = sym.brokers[broker - 1]
        return with_broker(sym, broker, b._replace(status=SHUTTING_DOWN))

    return [Instance("controlled_shutdown", broker, None, None, guard, update)]


def go_offline(
    enc: Encoding, sym: ClusterState, broker: int, status: int, lose: bool
) -> ClusterState:
    b = sym.brokers[broker - 1]
    r = b.replica
    stopped = enc.new_replica() if lose else enc.new_replica(r.log, r.leo, imin(r.hwm, r.leo))
    replica = enc.merge(r.present, stopped, enc.no_replica(), Replica)
    b = b._replace(
        status=status,
        initialised=False,
        replica=replica,
        fetch_response=enc.no_fetch_response(),
        ap_response=enc.no_ap_response(),
    )
    return with_broker(sym, broker, b)


def shutdown_complete(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return and_(
            eq(sym.brokers[broker - 1].status, SHUTTING_DOWN), ne(sym.partition.leader, broker)
        )

    def update(sym: ClusterState, _: Term) -> ClusterState:
        sym = go_offline(enc, sym, broker, OFFLINE_CLEAN, lose=False)
        return fence_now(enc, sym, broker)

    return [Instance("shutdown_complete", broker, None, None, guard, update)]


def crash(enc: Encoding, broker: int, lossy: bool) -> list[Instance]:
    name = "crash_lossy" if lossy else "crash"
    budget = "lossy_unclean_shutdowns" if lossy else "unclean_shutdowns"

    def guard(sym: ClusterState, _: Term) -> Term:
        return and_(getattr(sym.budget, budget) > 0, running(sym.brokers[broker - 1]))

    def update(sym: ClusterState, _: Term) -> ClusterState:
        sym = go_offline(enc, spend(sym, budget), broker, OFFLINE_UNCLEAN, lose=lossy)
        return enc.merge(sym.registry[broker - 1].fenced, sym, fence_now(enc, sym, broker))

    return [Instance(name, broker, None, None, guard, update)]


def restart(enc: Encoding, broker: int) -> list[Instance]:
    def guard(sym: ClusterState, _: Term) -> Term:
        return not_(running(sym.brokers[broker - 1]))

    def update(sym: ClusterState, _: Term) -> ClusterState:
        b = sym.brokers[broker - 1]
        incarnation = b.incarnation + 1
        previous = ite(eq(b.status, OFFLINE_CLEAN), b.epoch, -1)
        event = RegisterBroker(broker, incarnation, previous_epoch=previous)
        sym = commit(enc, sym, decided(rules.register_broker(metadata(enc, sym), event)))
        epoch = sym.registry[broker - 1].epoch
        b = Broker(
            RUNNING,
            epoch,
            incarnation,
            b.applied_epoch,
            False,
            b.replica,
            enc.no_fetch_response(),
            enc.no_ap_response(),
        )
        return with_broker(sym, broker, b)

    return [Instance("restart", broker, None, None, guard, update)]


# --- administration (model/actions/admin.py) -----------------------------------------------------


def admin(enc: Encoding, name: str) -> list[Instance]:
    budgets = {
        "reassign": "reassignments",
        "cancel_reassignment": "reassignment_cancels",
        "elect_preferred": "preferred_elections",
        "elect_unclean": "unclean_elections",
    }
    budget = budgets[name]
    cfg = enc.cfg

    def outcome(sym: ClusterState, target: tuple[int, ...] | None) -> Outcome:
        m = metadata(enc, sym)
        if name in ("reassign", "cancel_reassignment"):
            return decided(rules.alter_reassignment(m, AlterReassignmentRequest(target)))
        election = Election.PREFERRED if name == "elect_preferred" else Election.UNCLEAN
        return decided(rules.elect_leaders(m, ElectLeadersRequest(election)))

    out = []
    targets: tuple[Any, ...] = cfg.targets if name == "reassign" else (None,)
    for target in targets:

        def guard(sym: ClusterState, _: Term, target: Any = target) -> Term:
            return and_(getattr(sym.budget, budget) > 0, outcome(sym, target).changed)

        def update(sym: ClusterState, _: Term, target: Any = target) -> ClusterState:
            sym = spend(sym, budget)
            return commit(enc, sym, outcome(sym, target))

        out.append(Instance(name, CONTROLLER, target, None, guard, update))
    return out


def _per_broker(
    build: Callable[[Encoding, int], list[Instance]],
) -> Callable[[Encoding], list[Instance]]:
    def instances(enc: Encoding) -> list[Instance]:
        return [i for b in range(1, enc.n + 1) for i in build(enc, b)]

    return instances


_BUILDERS: dict[str, Callable[[Encoding], list[Instance]]] = {
    "produce": _per_broker(produce),
    "fetch": _per_broker(fetches),
    "fetch_response": _per_broker(fetch_response),
    "apply_registrations": _per_broker(apply_registrations),
    "replica_lag": _per_broker(replica_lag),
    "shrink_isr": _per_broker(shrink_isr),
    "recover_leader": _per_broker(recover_leader),
    "handle_alter_partition": _per_broker(handle_alter_partition),
    "alter_partition_response": _per_broker(alter_partition_response),
    "apply_metadata": _per_broker(apply_metadata),
    "fence": _per_broker(fence),
    "unfence": _per_broker(unfence),
    "controlled_shutdown": _per_broker(controlled_shutdown),
    "shutdown_complete": _per_broker(shutdown_complete),
    "crash": _per_broker(lambda enc, b: crash(enc, b, lossy=False)),
    "crash_lossy": _per_broker(lambda enc, b: crash(enc, b, lossy=True)),
    "restart": _per_broker(restart),
    "reassign": lambda enc: admin(enc, "reassign"),
    "cancel_reassignment": lambda enc: admin(enc, "cancel_reassignment"),
    "elect_preferred": lambda enc: admin(enc, "elect_preferred"),
    "elect_unclean": lambda enc: admin(enc, "elect_unclean"),
}
