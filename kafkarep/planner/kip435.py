"""KIP-435: incremental (batched) partition reassignment, as pure functions.

`next_step` computes one partition's next reassignment step from the final target replicas
(FTR), the current replicas (CR), the ISR, MinISR and `reassignment.parallel.replica.count` (R):
the replicas to drop (DR), the new replicas (NR) and the step's target replicas (TR). `plan`
iterates it, assuming each step completes (its target replicas all in sync, which is when a KRaft
reassignment completes, `PartitionReassignmentReplicas.maybeCompleteReassignment`).
`collect_batch` picks the steps that run together across partitions
(`reassignment.parallel.partition.count` P, `reassignment.parallel.leader.movements` L);
`plan_cluster` iterates it.

The KIP's text is ambiguous in places. Each reading kafkarep takes has a name, used in the code,
the tests and docs/reassignment-and-zookeeper.md:

- READING_LEADER_STEP: when the new preferred leader FTR[0] is not yet a replica, the step that
  adds it drops nothing and adds only it (and any MinISR deficit). The KIP's worked example does
  this in its first step, "(5, 0, 1, 2, 3, 4) // +5, new leader (5) is elected", although its
  step list (2.3) would also drop [0, 1] there.
- READING_RESTORE_SIZE: a later step adds as many replicas as bring TR back to size(FTR), at most
  R (3.4 "as many as R allows"). The example's second step, -[0,1] +[6] with R = 2, adds one, not
  two: the early leader already took one place of the batch (0, 1) -> (5, 6).
- READING_UNUSED_N: step 2.1 computes n = max(R, size(FTR) - size(CR)) and no later step uses it;
  kafkarep does not use it either. Drops are limited by R (2.3), adds by R (3.4).
- READING_OUT_OF_SYNC_FIRST: ER keeps CR's order but puts the out-of-sync replicas first, so they
  are dropped first (they cost nothing to drop; a step that keeps one cannot complete, since a
  KRaft reassignment completes only with every target replica in the ISR). KIP-236 orders its
  drop candidates the same way (leader, ISR, then the out-of-sync replicas).
- READING_MIN_ISR_DEFICIT: the MinISR-first exception (3.3, and the Proposed Changes paragraph:
  "even if it exceeds the limit on parallel replica reassignments") adds as many new replicas as
  bring the replicas able to be in sync (in-sync kept replicas plus new ones) up to
  min(MinISR, size(FTR)), even beyond R. It applies to whichever step finds the ISR short; in a
  plan whose steps complete that is only the first, as the KIP says. (3.3's own formula,
  min(MinISR, R) - size(NR), would not exceed R and contradicts that paragraph.)
- READING_MIN_ISR_FLOOR: a step never drops an in-sync replica if that leaves fewer replicas able
  to be in sync than min(MinISR, size(FTR)), or than the partition had: it drops fewer (3.1
  "enough online replicas to fulfil the min.insync.replicas"). When it can neither drop nor add,
  the step equals CR and the controller waits for the ISR (the KIP's "Wait until this step is not
  identical to the current assignment"); so it does with no replica in the ISR at all.
- READING_TARGET_ORDER: TR lists the final-target replicas it holds in FTR order, then the old
  replicas it keeps in CR order. So the new preferred leader leads the list from the step that
  adds it, and the last step equals FTR (step 5).
- READING_LEADER_MOVEMENT: a step involves a leader movement when it changes the preferred leader
  (TR[0] differs from CR[0]).
- READING_LEADER_FIRST_BATCH: a batch takes the leader-moving steps first, at most min(L, P) of
  them in the given partition order, and fills up to P with steps that move no leader (the
  pseudo-code's `if` has no `else`; the prose says leader movements over the limit are replaced
  by steps without one).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeVar

READINGS = (
    "READING_LEADER_STEP",
    "READING_RESTORE_SIZE",
    "READING_UNUSED_N",
    "READING_OUT_OF_SYNC_FIRST",
    "READING_MIN_ISR_DEFICIT",
    "READING_MIN_ISR_FLOOR",
    "READING_TARGET_ORDER",
    "READING_LEADER_MOVEMENT",
    "READING_LEADER_FIRST_BATCH",
)


class PlanError(ValueError):
    """Bad planner input: one line naming what is wrong."""


class ReassignmentStep(NamedTuple):
    """One step of one partition: CR -> TR = CR + NR - DR."""

    current: tuple[int, ...]  # CR
    drop: tuple[int, ...]  # DR, in CR order (READING_OUT_OF_SYNC_FIRST decides which)
    new: tuple[int, ...]  # NR, in FTR order
    target: tuple[int, ...]  # TR
    final_target: tuple[int, ...]  # FTR

    @property
    def waits(self) -> bool:
        """Nothing can move yet: the controller waits for the ISR (READING_MIN_ISR_FLOOR)."""
        return self.target == self.current

    @property
    def moves_leader(self) -> bool:
        """READING_LEADER_MOVEMENT."""
        return self.target[0] != self.current[0]

    @property
    def last(self) -> bool:
        return self.target == self.final_target


def min_isr_floor(final_target: Sequence[int], min_isr: int) -> int:
    """The replicas a step must keep able to be in sync: MinISR, or fewer when the final target
    itself has fewer replicas (as Kafka's effective MinISR,
    `ReplicationControlManager.getTopicEffectiveMinIsr`)."""
    return min(min_isr, len(final_target))


def able_to_be_in_sync(step: ReassignmentStep, isr: Iterable[int]) -> int:
    """The replicas of TR in the ISR the step started from, plus the new ones it starts."""
    in_sync = frozenset(isr)
    return sum(1 for r in step.target if r in in_sync) + len(step.new)


def next_step(
    final_target: Sequence[int],
    current: Sequence[int],
    isr: Iterable[int],
    min_isr: int,
    parallel_replicas: int,
) -> ReassignmentStep | None:
    """The next step of one partition, or None when CR already equals FTR."""
    ftr, cr = tuple(final_target), tuple(current)
    in_sync = frozenset(isr)
    check_partition(ftr, cr, in_sync, min_isr, parallel_replicas)
    if cr == ftr:
        return None
    in_sync &= frozenset(cr)
    if not in_sync:
        return _wait(ftr, cr)  # the KIP waits for "at least one replica ISR"
    missing = tuple(r for r in ftr if r not in cr)
    floor = min_isr_floor(ftr, min_isr)
    if ftr[0] not in cr:
        # READING_LEADER_STEP, with READING_MIN_ISR_DEFICIT.
        return _step(ftr, cr, (), missing[: max(1, floor - len(in_sync))])
    excess = tuple(r for r in cr if r not in ftr and r not in in_sync) + tuple(
        r for r in cr if r not in ftr and r in in_sync
    )  # READING_OUT_OF_SYNC_FIRST
    keep_at_least = min(floor, len(in_sync))  # READING_MIN_ISR_FLOOR
    for count in range(min(parallel_replicas, len(excess)), -1, -1):
        drop = excess[:count]
        kept_in_sync = len(in_sync - frozenset(drop))
        restore = len(ftr) - (len(cr) - count)  # READING_RESTORE_SIZE
        adds = max(min(restore, parallel_replicas), floor - kept_in_sync)  # ..._MIN_ISR_DEFICIT
        adds = max(0, min(adds, len(missing)))
        if kept_in_sync + adds >= keep_at_least:
            if not drop and not adds and (excess or missing):
                return _wait(ftr, cr)  # READING_MIN_ISR_FLOOR: nothing can move yet
            return _step(ftr, cr, drop, missing[:adds])
    raise AssertionError("dropping nothing always keeps the in-sync replicas")


def _wait(ftr: tuple[int, ...], cr: tuple[int, ...]) -> ReassignmentStep:
    return ReassignmentStep(cr, (), (), cr, ftr)


def _step(
    ftr: tuple[int, ...], cr: tuple[int, ...], drop: tuple[int, ...], new: tuple[int, ...]
) -> ReassignmentStep:
    dropped = frozenset(drop)
    held = (frozenset(cr) - dropped) | frozenset(new)
    target = tuple(r for r in ftr if r in held) + tuple(
        r for r in cr if r not in ftr and r not in dropped
    )  # READING_TARGET_ORDER
    ordered_drop = tuple(r for r in cr if r in dropped)
    return ReassignmentStep(cr, ordered_drop, new, target, ftr)


class Plan(NamedTuple):
    """A partition's steps, assuming each completes. `waited_for` names the replicas the
    partition had to wait for first (the step from the given ISR could move nothing)."""

    steps: tuple[ReassignmentStep, ...]
    waited_for: tuple[int, ...] = ()


def step_bound(final_target: Sequence[int], current: Sequence[int]) -> int:
    """The most steps a plan takes: every step drops an excess replica or adds a missing one,
    except a final pure reordering."""
    excess = len(set(current) - set(final_target))
    missing = len(set(final_target) - set(current))
    return max(1, excess + missing)


def plan(
    final_target: Sequence[int],
    current: Sequence[int],
    isr: Iterable[int],
    min_isr: int,
    parallel_replicas: int,
) -> Plan:
    """Every step from CR to FTR. After a step completes its target replicas are the ISR (a KRaft
    reassignment completes exactly then); a step that must wait assumes the current replicas
    catch up first."""
    ftr, cr, in_sync = tuple(final_target), tuple(current), frozenset(isr)
    steps: list[ReassignmentStep] = []
    waited: tuple[int, ...] = ()
    bound = step_bound(ftr, cr)
    while True:
        step = next_step(ftr, cr, in_sync, min_isr, parallel_replicas)
        if step is None:
            return Plan(tuple(steps), waited)
        if step.waits:
            if steps or waited:
                raise AssertionError(f"a plan waits after its first step: {step}")
            waited = tuple(r for r in cr if r not in in_sync)
            in_sync = frozenset(cr)
            continue
        steps.append(step)
        if len(steps) > bound:
            raise AssertionError(f"plan exceeds its bound of {bound} steps: {steps}")
        cr, in_sync = step.target, frozenset(step.target)


def check_partition(
    final_target: tuple[int, ...],
    current: tuple[int, ...],
    isr: frozenset[int],
    min_isr: int,
    parallel_replicas: int,
) -> None:
    for name, replicas in (("target", final_target), ("current", current)):
        if not replicas:
            raise PlanError(f"the {name} replicas are empty")
        if len(set(replicas)) != len(replicas):
            twice = next(r for r in replicas if replicas.count(r) > 1)
            raise PlanError(f"the {name} replicas list broker {twice} twice")
        if any(r < 0 for r in replicas):
            raise PlanError(f"the {name} replicas have a negative broker id")
    outside = sorted(isr - frozenset(current))
    if outside:
        raise PlanError(f"ISR member {outside[0]} is not a current replica {list(current)}")
    if min_isr < 1:
        raise PlanError(f"min.insync.replicas must be at least 1, not {min_isr}")
    if parallel_replicas < 1:
        raise PlanError(f"the parallel replica count must be at least 1, not {parallel_replicas}")


# --- batches across partitions ---------------------------------------------------------------


class PartitionState(NamedTuple):
    """What the planner reads of one partition being reassigned."""

    final_target: tuple[int, ...]
    current: tuple[int, ...]
    isr: frozenset[int]
    min_isr: int


Key = TypeVar("Key", bound=Hashable)


def collect_batch(
    steps: Sequence[tuple[Key, ReassignmentStep]],
    parallel_partitions: int,
    leader_movements: int,
) -> tuple[tuple[Key, ReassignmentStep], ...]:
    """The steps that run together (READING_LEADER_FIRST_BATCH); waiting steps never run."""
    if parallel_partitions < 1 or leader_movements < 1:
        raise PlanError("the parallel partition count and leader movements must be at least 1")
    runnable = [(key, step) for key, step in steps if not step.waits]
    leaders = [(k, s) for k, s in runnable if s.moves_leader][
        : min(leader_movements, parallel_partitions)
    ]
    others = [(k, s) for k, s in runnable if not s.moves_leader]
    return tuple(leaders + others[: parallel_partitions - len(leaders)])


def plan_cluster(
    partitions: Mapping[Key, PartitionState],
    parallel_replicas: int,
    parallel_partitions: int,
    leader_movements: int,
) -> tuple[tuple[tuple[Key, ReassignmentStep], ...], ...]:
    """Every batch until each partition holds its final target; partitions in mapping order.
    A partition whose first step must wait has its current replicas catch up first, as in
    `plan`; a step of a batch completes before the next batch is computed."""
    state = dict(partitions)
    for key, p in state.items():
        step = next_step(p.final_target, p.current, p.isr, p.min_isr, parallel_replicas)
        if step is not None and step.waits:
            state[key] = p._replace(isr=frozenset(p.current))
    bound = sum(step_bound(p.final_target, p.current) for p in state.values())
    batches: list[tuple[tuple[Key, ReassignmentStep], ...]] = []
    while True:
        pending: list[tuple[Key, ReassignmentStep]] = []
        for key, p in state.items():
            step = next_step(p.final_target, p.current, p.isr, p.min_isr, parallel_replicas)
            if step is not None:
                pending.append((key, step))
        if not pending:
            return tuple(batches)
        batch = collect_batch(pending, parallel_partitions, leader_movements)
        if not batch or len(batches) >= bound:
            raise AssertionError(f"no progress after {len(batches)} batches: {pending}")
        batches.append(batch)
        for key, step in batch:
            state[key] = state[key]._replace(current=step.target, isr=frozenset(step.target))
