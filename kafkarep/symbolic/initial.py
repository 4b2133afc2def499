"""The initial states of a model's shape (`kafkarep/model/initial.py`), symbolic: the model's
own, or any ISR, leader and fenced brokers its replicas allow.
"""

from __future__ import annotations

from kafkarep.model.metadata_cache import FENCED
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import (
    FOLLOWER,
    LEADER,
    NONE,
    RUNNING,
    UNKNOWN_FOLLOWER,
    Broker,
    BrokerRegistration,
    Budget,
    ClusterState,
    FollowerView,
    Ghost,
    PartitionRegistration,
    Replica,
    View,
)


def initial(enc: Encoding, isr: Term, leader: Term, fenced: Term) -> ClusterState:
    """The established cluster `initial_state` builds, for an ISR, leader and fenced set that
    may be symbolic (all initial states of the model's shape)."""
    s = enc.sets
    eligible = tuple(ops.ite(s.has(fenced, b), FENCED, 1) for b in range(1, enc.n + 1))
    partition = PartitionRegistration(
        leader, 1, 1, isr, 0, 0, 0, 0, False, enc.replica_slots, eligible
    )
    metadata_log = (partition,) + (enc.blank_registration(),) * max(enc.capacity - 1, 0)
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
                        FollowerView(0, 1, True, True),
                        UNKNOWN_FOLLOWER,
                        FollowerView,
                    )
                    for m in range(1, enc.n + 1)
                ),
                eligible=eligible,
            )
            follow = enc.new_replica()._replace(
                role=ops.ite(leader > 0, FOLLOWER, NONE), view=view, maximal_isr=isr
            )
            replica = enc.merge(ops.eq(leader, b), lead, follow, Replica)
        brokers.append(
            Broker(RUNNING, 1, 0, 1, True, replica, enc.no_fetch_response(), enc.no_ap_response())
        )
    led_since = tuple(
        ops.ite(ops.eq(leader, b), 1, 0) if enc.reassigning else 0 for b in range(1, enc.n + 1)
    )
    ghost = Ghost(
        0, (0,) * enc.r, (ops.EMPTY_EPOCHS,) * enc.r, False, False, (0,) * enc.r, led_since
    )
    return ClusterState(
        partition,
        metadata_log,
        tuple(BrokerRegistration(s.has(fenced, b), False, 1, 0) for b in range(1, enc.n + 1)),
        (enc.no_ap_request(),) * enc.n,
        tuple(brokers),
        ghost,
        Budget(*(getattr(enc.cfg.budget, f) for f in Budget._fields)),
    )


def model_initial(enc: Encoding) -> ClusterState:
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
