"""What the data plane's steps record in the prover's ghost, as `state.py` encodes it: an HWM
advance's acknowledgements and commits (`kafkarep/model/hwm.py` decides where the HWM moves),
and who received a write."""

from __future__ import annotations

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term, and_, eq, ite, not_, or_
from kafkarep.symbolic.state import ClusterState, Ghost


def advance_hwm(
    enc: Encoding, sym: ClusterState, broker: int, advance: Term, offset: Term
) -> ClusterState:
    """`Cluster.advance_hwm`: where `advance` holds, the leader's HWM moves to `offset`, its
    writes below it are acknowledged and the ghost records the commit (`hwm.advance_to`)."""
    cfg = enc.cfg
    s = enc.sets
    r = sym.brokers[broker - 1].replica
    at_min = s.size(r.view.isr) >= cfg.min_isr
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
    brokers = list(sym.brokers)
    brokers[broker - 1] = brokers[broker - 1]._replace(replica=r)
    return sym._replace(brokers=tuple(brokers), ghost=ghost)


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
        received = tuple(
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
        brokers = list(sym.brokers)
        brokers[p - 1] = brokers[p - 1]._replace(replica=r._replace(received=received))
        sym = sym._replace(brokers=tuple(brokers))
    return sym
