"""The leader's high watermark and producer acknowledgements (protocol description §2.5-§2.7).

The HWM advances to the highest offset every member of the Maximal ISR has fetched (§2.7, §6.5.2),
and every caught-up follower it waits for (by release: `waits_for_caught_up_follower`), only
while the ISR is at least MinISR (KIP-966, Kafka 3.7.0; always with ELR on). MinISR here is the
leader's: the one its broker's metadata image holds (`Replica.min_isr`). When it passes an
acks=all write, the write is acknowledged: positively if the Maximal ISR is at least MinISR,
negatively (NotEnoughReplicasAfterAppend) otherwise (§2.6). The ghost state records the True HWM
and any acknowledgement or advance that broke the MinISR rule; the rules never read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkarep.model.config import ModelConfig
from kafkarep.model.metadata_cache import isr_eligible
from kafkarep.model.shapes import ReplicaShape
from kafkarep.model.state import ClusterState, Ghost, Replica
from kafkarep.rules.domain import VALUES
from kafkarep.rules.guards import guard

if TYPE_CHECKING:  # domain.py reads this module
    from kafkarep.model.domain import Domain
from kafkarep.rules.terms import Term, and_, imax, imin, ite, not_, or_


@guard("hwm")
def isr_at_min_isr(
    cfg: ModelConfig, replica: ReplicaShape, min_isr: Any, sets: Any = VALUES
) -> Term:
    """KIP-966 (Kafka 3.7.0): the HWM advances only while the leader's ISR is at least MinISR
    (`isUnderMinIsr` in `Partition.maybeIncrementLeaderHW`), with ELR on or off; with ELR on
    only then does the Maximal ISR cover the controller's ISR and ELR. `min_isr` is the
    leader's: its broker's metadata image may not hold a change the controller committed."""
    assert replica.view is not None
    required = cfg.options.elr_enabled or cfg.hwm_requires_min_isr
    return or_(not required, sets.size(replica.view.isr) >= min_isr)


def hwm_members(cfg: ModelConfig, replica: ReplicaShape) -> Any:
    """The ISR the HWM is computed over: the Maximal ISR, the committed ISR with the members a
    pending AlterPartition adds (KIP-497, `maximalIsr` in `Partition.maybeIncrementLeaderHW` at
    2.7.0), or with `hwm_isr = "committed"` the committed ISR alone, as Kafka 2.6 and older did
    (`inSyncReplicaIds`, read at 2.6.0), whose leader wrote the ISR to ZooKeeper itself and so
    never had a change pending."""
    if cfg.hwm_isr == "committed":
        return replica.view.isr
    return replica.maximal_isr


@guard("hwm")
def waits_for_caught_up_follower(cfg: ModelConfig, replica: ReplicaShape, follower: int) -> Term:
    """The HWM also waits for a follower outside the Maximal ISR that caught up within
    replica.lag.time.max.ms (`Partition.maybeIncrementLeaderHW`): since 0.10.2.0 (KAFKA-4485)
    for every such follower, since 3.6.0 (KAFKA-15021, `shouldWaitForReplicaToJoinIsr` at
    4.1.0) only for one the leader would let join the ISR, so that an ISR join never finds the
    HWM beyond the joining follower's log, and a shutting-down follower no longer holds it back.
    `hwm_waits_for_caught_up_followers` names the release's (`config.HWM_WAITS`)."""
    waits = cfg.hwm_waits_for_caught_up_followers
    if waits == "none":  # 0.10.1 and older: the HWM is the ISR's alone
        return False
    caught_up = replica.followers[follower - 1].caught_up
    if waits == "caught-up" or caught_up is False:
        return caught_up
    return and_(caught_up, isr_eligible(cfg, replica, follower))


def hwm_offset(d: Domain, cfg: ModelConfig, replica: Any, broker_id: int) -> Term:
    """Where the leader's HWM would move: the highest offset every member of `hwm_members`
    has fetched, as far as the leader knows, held back to the LEO of each follower the HWM
    waits for (`waits_for_caught_up_follower`). Over any domain `d`."""
    members = hwm_members(cfg, replica)
    offset = replica.leo
    for member in cfg.broker_ids:
        inside = d.has(members, member)
        if member != broker_id and inside is not False:
            fetched = imax(replica.followers[member - 1].leo, 0)
            offset = ite(inside, imin(offset, fetched), offset)
    if not waits_for_caught_up_follower.enabled(cfg.options.disabled_guards):
        return offset
    for member in cfg.broker_ids:
        if member == broker_id:
            continue
        leo = replica.followers[member - 1].leo
        listed = d.has(replica.view.replicas, member)
        outside = not_(d.has(members, member))
        behind = leo < offset
        if listed is False or outside is False or behind is False:
            continue
        caught_up = waits_for_caught_up_follower.check(cfg, replica, member)
        offset = ite(and_(listed, outside, caught_up, behind), leo, offset)
    return offset


def maybe_advance_hwm(d: Domain, cfg: ModelConfig, state: Any, broker_id: int) -> Any:
    """The leader moves its HWM forward to `hwm_offset` while its ISR is at least MinISR
    (`Partition.maybeIncrementLeaderHW`, 4.1.0), acknowledging the writes it passes."""
    replica = state.brokers[broker_id - 1].replica
    offset = hwm_offset(d, cfg, replica, broker_id)
    advance = offset > replica.hwm
    if advance is False:
        return state
    advance = and_(
        advance,
        isr_at_min_isr.passes(cfg.options.disabled_guards, cfg, replica, d.min_isr(replica), d),
    )
    if advance is False:
        return state
    return d.advance_hwm(cfg, state, broker_id, advance, offset)


def advance_to(cfg: ModelConfig, state: ClusterState, broker_id: int, new_hwm: int) -> ClusterState:
    """The leader's HWM moves to `new_hwm` (`Domain.advance_hwm`): the writes below it are
    acknowledged, the ghost records the commit and any advance below MinISR."""
    broker = state.broker(broker_id)
    replica = broker.replica
    assert replica is not None and replica.view is not None
    members = hwm_members(cfg, replica)
    ghost = state.ghost
    if cfg.options.elr_enabled and len(replica.view.isr) < replica.min_isr:
        ghost = _first(ghost, hwm_below_min_isr=(broker_id, len(replica.view.isr)))
    ghost, unacked_from = _acknowledge(members, replica, new_hwm, ghost)
    if new_hwm > ghost.true_hwm:
        values = tuple(value for _, value in replica.log[ghost.true_hwm : new_hwm])
        ghost = ghost._replace(committed=ghost.committed + values)
    replica = replica._replace(hwm=new_hwm, unacked_from=unacked_from)
    return state.with_broker(broker_id, broker._replace(replica=replica))._replace(ghost=ghost)


def _acknowledge(
    members: frozenset[int], replica: Replica, new_hwm: int, ghost: Ghost
) -> tuple[Ghost, int]:
    """Acknowledge this leader's writes below the new HWM; returns the ghost and the rest.
    Positively while the ISR the HWM is computed over is at least MinISR
    (`Partition.checkEnoughReplicasReachOffset`)."""
    start = replica.unacked_from
    if start < 0 or start >= new_hwm:
        return ghost, start
    positive = len(members) >= replica.min_isr
    values = []
    for offset in range(start, new_hwm):
        entry = replica.log[offset]
        values.append(entry[1])
        if positive and ghost.receivers(entry[1]) < replica.min_isr:
            ghost = _first(ghost, ack_below_min_isr=(entry[1], ghost.receivers(entry[1])))
    if positive:
        ghost = ghost._replace(pos_acked=ghost.pos_acked | frozenset(values))
    else:
        ghost = ghost._replace(neg_acked=ghost.neg_acked | frozenset(values))
    ghost = ghost.forget_receivers(values)
    return ghost, (new_hwm if new_hwm < replica.leo else -1)


def nack_unacked(state: ClusterState, broker_id: int) -> ClusterState:
    """A leader that loses leadership (or crashes) fails its pending writes (NOT_LEADER)."""
    broker = state.broker(broker_id)
    replica = broker.replica
    if replica is None or replica.unacked_from < 0:
        return state
    values = frozenset(value for _, value in replica.log[replica.unacked_from :])
    ghost = state.ghost._replace(neg_acked=state.ghost.neg_acked | (values - state.ghost.pos_acked))
    ghost = ghost.forget_receivers(values)
    replica = replica._replace(unacked_from=-1)
    return state.with_broker(broker_id, broker._replace(replica=replica))._replace(ghost=ghost)


def _first(ghost: Ghost, **violation: tuple[int, int]) -> Ghost:
    """Keep the first witness of a violation only, so later steps do not multiply states."""
    name, value = next(iter(violation.items()))
    if getattr(ghost, name) is not None:
        return ghost
    if name == "ack_below_min_isr":
        return ghost._replace(ack_below_min_isr=value)
    return ghost._replace(hwm_below_min_isr=value)
