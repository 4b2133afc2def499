"""The HWM and acknowledgements (`kafkarep/model/hwm.py`)."""

from __future__ import annotations

from kafkarep.model.hwm import isr_at_min_isr, waits_for_caught_up_follower
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, imax, imin, ite, not_, or_
from kafkarep.symbolic.state import ClusterState, Ghost
from kafkarep.symbolic.transition.cluster import with_replica


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
    if enc.guard_on(waits_for_caught_up_follower):  # False where the release waits for none
        for m in range(1, enc.n + 1):
            f = r.followers[m - 1]
            waits = and_(
                m != broker,
                s.has(r.view.replicas, m),
                not_(s.has(r.maximal_isr, m)),
                waits_for_caught_up_follower.check(cfg, r, m),
                f.leo < offset,
            )
            offset = ite(waits, f.leo, offset)
    at_min = s.size(r.view.isr) >= cfg.min_isr
    passes = enc.check(isr_at_min_isr, cfg, r, cfg.min_isr, s)
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
    received = list(r.received)
    for o in range(enc.r):
        judged = and_(acking, start <= o, o < offset)
        ack_below = or_(ack_below, and_(judged, positive, s.size(received[o]) < cfg.min_isr))
        pos[o] = ops.epochs_add(pos[o], r.log[o], and_(judged, positive), enc.r)
        received[o] = s.ite(judged, 0, received[o])
    unacked = ite(acking, ite(offset < r.leo, offset, -1), start)
    extend = and_(advance, offset > g.true_hwm)
    committed = tuple(
        ite(and_(extend, g.true_hwm <= o, o < offset), r.log[o], c)
        for o, c in enumerate(g.committed)
    )
    # the epoch a commit is made in is the leader's continuous leadership's first (the same
    # as its own epoch but where a reassignment's completion kept it leader: `Ghost.led_since`)
    leader_epoch = g.led_since[broker - 1] if enc.reassigning else r.view.leader_epoch
    committed_in = tuple(
        ite(
            and_(advance, r.hwm <= o, o < offset, or_(g.true_hwm <= o, leader_epoch < c)),
            leader_epoch,
            c,
        )
        for o, c in enumerate(g.committed_in)
    )
    ghost = Ghost(
        ite(extend, offset, g.true_hwm),
        committed,
        tuple(pos),
        ack_below,
        hwm_below,
        committed_in,
        g.led_since,
    )
    r = r._replace(hwm=ite(advance, offset, r.hwm), unacked_from=unacked, received=tuple(received))
    return with_replica(sym, broker, r)._replace(ghost=ghost)
