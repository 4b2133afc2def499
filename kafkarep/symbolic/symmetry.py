"""The symmetry of induction: the action families whose obligations are shown for broker 1's
steps only, and when that is sound."""

from __future__ import annotations

from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.transition import Instance

# Families whose actions are per broker and whose rules never read the order of the replica
# list (only the controller's elections do): renaming brokers maps each of their steps to a
# step of the same family (see `symmetric_families`).
BROKER_FAMILIES = frozenset(
    {
        "produce",
        "fetch",
        "fetch_response",
        "apply_registrations",
        "replica_lag",
        "shrink_isr",
        "alter_partition_response",
        "apply_metadata",
    }
)


# The controller's per-broker families: they read the order of the replica list only to elect
# the first eligible replica, so they are symmetric too when elections are free.
CONTROLLER_FAMILIES = frozenset(
    {
        "handle_alter_partition",
        "fence",
        "unfence",
        "controlled_shutdown",
        "shutdown_complete",
        "crash",
        "crash_lossy",
        "restart",
    }
)


def symmetric_families(enc: Encoding) -> frozenset[str]:
    """The families whose obligations are shown for the steps of broker 1 only. Sound when
    renaming brokers is a symmetry of the induction: every broker is a replica and the replica
    list never changes (no reassignment), so the invariants and history facts, which name no
    broker and never read the order of the list, hold of a state exactly when they hold of its
    renaming (the list kept as it is); and the family's steps commute with renaming (a broker's
    own actions, and the controller's per-broker events when elections are free: the steps of
    broker b from state s are, renamed by a permutation p, the steps of broker p(b) from the
    renamed state, and a step naming a second broker c, such as a fetch from leader c, renames
    to the step naming p(c)). Then a pre-state that
    satisfies every invariant and a step of broker b that breaks one rename (swap b and 1) to a
    pre-state that satisfies every invariant and a step of broker 1 that breaks it."""
    if enc.reassigning or sorted(enc.cfg.replicas) != list(range(1, enc.n + 1)):
        return frozenset()
    symmetric = BROKER_FAMILIES | (CONTROLLER_FAMILIES if enc.free_elections else frozenset())
    return symmetric & {f.name for f in enc.families}


def taken(instances: list[Instance]) -> tuple[list[Instance], int]:
    """The steps of a symmetric family an obligation takes, and how many brokers they name
    (which the renamings of `symmetric_families` must then fix): broker 1's steps, naming broker
    1 only; or, where each of broker 1's steps names a second broker (a follower fetching from a
    leader: one step for each other broker), the one naming broker 2, and 2. A step of broker 1
    naming broker c, with a pre-state, renames (swap c and 2, which fixes 1) to the step naming
    2, with a pre-state satisfying the same invariants."""
    ones = [i for i in instances if i.broker == 1]
    # a symmetric family is per broker: leaving none would prove its obligations vacuously
    assert ones and all(i.broker is not None for i in instances), instances
    named = sorted(i.fixed for i in ones if i.actor > 0 and isinstance(i.fixed, int))
    if not named:
        return ones, 1
    others = max(i.broker or 0 for i in instances)
    assert len(ones) == len(named) == others - 1 and named == list(range(2, others + 1)), ones
    return [i for i in ones if i.fixed == 2], 2
