"""The search kernel every engine calls: which clauses a run checks, how a state expands into its
successors, how a state is judged against the `always` clauses, and which step first reaches a
`sometimes` property.

The explorer's workers and the Spark tasks expand and judge with `Expander` and `Judge`; the
Hypothesis machine and the state graph judge with `Judge.violated`. Each writing below is the
only one, so an optimisation here (a clause of the controller alone judged once per controller
state, a step that cannot change the partition skipped for the properties that need one) is every
engine's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import cache
from typing import Any, NamedTuple

from kafkarep import properties as registry
from kafkarep.engines.results import Discovery, Exploration, Limits, Progress
from kafkarep.engines.seen import collision_probability
from kafkarep.model import controller
from kafkarep.model.actions import Action, active
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import Digests, combine, digests, fingerprint
from kafkarep.model.independence import (
    FOOTPRINTED,
    NotIndependent,
    footprint,
    independent,
    sleep_key,
)
from kafkarep.model.reduction import reducer
from kafkarep.model.state import ClusterState
from kafkarep.model.symmetry import canonical
from kafkarep.properties import Property
from kafkarep.properties.base import fires_on, needs_partition_change, reads, reads_after

ACTION_BITS = 16  # a step's key is its parent's position << 16 | the action's index
StateCheck = Callable[[ModelConfig, ClusterState], Any]
StepCheck = Callable[..., bool]
Found = dict[str, tuple[int, str]]  # clause -> (position of the first state violating it, witness)
Sleep = frozenset[Hashable] | None  # the sleep keys of the steps a state need not take (None: none)
# One independence claim in this many is re-checked by applying both orders
# (KAFKAREP_POR_AUDIT=1 checks every one).
AUDIT_EVERY = 4096


class Clauses(NamedTuple):
    """A run's `always` clauses (qualified names) and `sometimes` properties, in registry order."""

    always: tuple[tuple[str, StateCheck], ...]
    sometimes: tuple[tuple[str, StepCheck], ...]


def clauses(chosen: Iterable[Property], skip: Iterable[str] = ()) -> Clauses:
    """The clauses of the chosen properties, less the `always` clauses named in `skip`."""
    chosen, skipped = tuple(chosen), frozenset(skip)
    always = tuple(
        (p.qualified(c), c.check)
        for p in chosen
        if p.kind == "always"
        for c in p.clauses
        if p.qualified(c) not in skipped
    )
    sometimes = tuple((p.name, c.check) for p in chosen if p.kind == "sometimes" for c in p.clauses)
    return Clauses(always, sometimes)  # type: ignore[arg-type]


@cache
def model_clauses(cfg: ModelConfig) -> Clauses:
    """The clauses of the properties the model selects (`[check] properties`, its own too)."""
    return clauses(registry.of_model(cfg, with_liveness=False))


def conjunction(checks: list[StateCheck]) -> Callable[[ModelConfig, ClusterState], bool]:
    """One function that is True when every check holds (returns None) on a state: the checks
    called one after the other, without a loop's overhead per check."""
    calls = " and ".join(f"c{i}(cfg, state) is None" for i in range(len(checks))) or "True"
    namespace: dict[str, Any] = {f"c{i}": check for i, check in enumerate(checks)}
    exec(f"def all_hold(cfg, state):\n    return {calls}\n", namespace)  # generated
    all_hold: Callable[[ModelConfig, ClusterState], bool] = namespace["all_hold"]
    return all_hold


class Judge:
    """The `always` clauses on states given in level order: the first violation of each.

    Clauses that read only the controller are judged once per controller state (keyed by the
    controller's digest; many states share one); the others as one generated conjunction, each
    clause alone only when it fails. A clause found violated is not judged again."""

    CACHE_LIMIT = 1 << 20  # controller verdicts kept before the cache starts afresh

    def __init__(self, cfg: ModelConfig, always: Iterable[tuple[str, StateCheck]]) -> None:
        self.cfg = cfg
        self.always = tuple(always)
        self._verdicts: dict[int, tuple[tuple[str, str | None], ...] | None] = {}
        self._of_controller: list[tuple[str, StateCheck]] = []

    def violated(self, state: ClusterState) -> tuple[tuple[str, str], ...]:
        """Every clause the state violates, with its witness."""
        cfg = self.cfg
        found = ((name, check(cfg, state)) for name, check in self.always)
        return tuple((name, str(witness)) for name, witness in found if witness is not None)

    def first_violations(
        self, states: Iterable[tuple[int, ClusterState, Digests]], skip: Iterable[str] = ()
    ) -> Found:
        """clause -> (position, witness) of the first state, in the order given, violating it."""
        cfg, skipped = self.cfg, frozenset(skip)
        found: Found = {}
        todo = [(n, c) for n, c in self.always if n not in skipped and reads(c) == "state"]
        all_hold = conjunction([c for _, c in todo])
        of_controller = [
            (n, c) for n, c in self.always if n not in skipped and reads(c) == "controller"
        ]
        known = self._verdicts
        if len(known) > self.CACHE_LIMIT or of_controller != self._of_controller:
            known.clear()
            self._of_controller = of_controller
        for position, state, parts in states:
            if of_controller:
                if parts[0] in known:
                    witnesses = known[parts[0]]
                else:
                    verdicts = tuple((name, check(cfg, state)) for name, check in of_controller)
                    witnesses = known[parts[0]] = (
                        verdicts if any(w is not None for _, w in verdicts) else None
                    )
                for name, witness in witnesses or ():
                    if witness is not None and name not in found:
                        found[name] = (position, str(witness))
            if all_hold(cfg, state):
                continue
            for name, check in todo:
                witness = check(cfg, state)
                if witness is not None:
                    found[name] = (position, str(witness))
            todo = [(n, c) for n, c in todo if n not in found]
            all_hold = conjunction([c for _, c in todo])
        return found


class Expander:
    """Expands states: every enabled action applied in `FAMILIES` order and reduced, each
    successor's digests and search key (its fingerprint, of its canonical form under symmetry),
    and the `sometimes` properties not yet reached checked on every step. `hits` holds the
    smallest step key reaching each, given parents in level order."""

    def __init__(
        self,
        cfg: ModelConfig,
        sometimes: Iterable[tuple[str, StepCheck]],
        reached: Iterable[str] = (),
        symmetry: bool = False,
    ) -> None:
        self.cfg = cfg
        self.symmetry = symmetry
        self.families = [(f.actions, f.apply) for f in active(cfg)]
        self.reduce_one = reducer(cfg)
        done = frozenset(reached)
        # (name, check, whether only a step that changes the partition can reach it)
        self.pending = [(n, c, needs_partition_change(c)) for n, c in sometimes if n not in done]
        self.hits: dict[str, int] = {}
        self._awake_for: object = None  # the pending list `_awake` was computed for
        self._awake: frozenset[str] = frozenset()
        self.claims = 0  # independence claims since the last audit
        self.audit_every = int(os.environ.get("KAFKAREP_POR_AUDIT") or AUDIT_EVERY)
        # While Kafka's answers are collected (controller_batches.py): the count of steps that
        # stood in provisionally when this state's expansion began (-1: none are collected).
        self.answered_mark = -1

    def key(self, state: ClusterState, parts: Digests) -> int:
        """The fingerprint a search knows the state by."""
        if self.symmetry:
            return fingerprint(canonical(self.cfg, state))
        return combine(parts)

    def successors(
        self, state: ClusterState, parts: Digests, base: int
    ) -> Iterator[tuple[int, Action, ClusterState, Digests, int]]:
        """(step key, action, successor, its digests, its search key) for every enabled action;
        `base` is the parent's position << ACTION_BITS."""
        cfg, step = self.cfg, self._step
        index = -1  # the action's index among the state's successors
        # `successors(cfg, state)` unrolled: one generator less per successor.
        for actions, apply in self.families:
            for action in actions(cfg, state):
                index += 1
                after, after_parts, fp = step(state, parts, base | index, action, apply)
                yield base | index, action, after, after_parts, fp

    def asleep_successors(
        self, state: ClusterState, parts: Digests, base: int, sleep: Sleep
    ) -> Iterator[tuple[int, Action, ClusterState, Digests, int, Sleep]]:
        """`successors` less the steps asleep in the state, each successor with its own sleep
        set (partial-order reduction by sleep sets, docs/explorer.md#partial-order-reduction).
        A step is skipped when it is asleep here; a successor by step `a` inherits the steps
        asleep here and those taken here before `a` that are independent of `a`. Action indices
        are those of `successors`, so keys, parent links and traces are unchanged."""
        cfg = self.cfg
        if self.pending is not self._awake_for:
            self._awake_for, self._awake = self.pending, self.kept_awake()
        awake = self._awake
        steps = [
            (action, apply, sleep_key(state, action), footprint(state, action))
            for actions, apply in self.families
            for action in actions(cfg, state)
        ]
        # Steps asleep here, then those taken so far: (sleep key, footprint)
        behind: list[tuple[Hashable, int]] = []
        if sleep:
            behind = [(k, f) for a, _, k, f in steps if k in sleep and a.name not in awake]
        for index, (action, apply, key, mine) in enumerate(steps):
            if sleep and key in sleep and action.name not in awake:
                continue
            after, after_parts, fp = self._step(state, parts, base | index, action, apply)
            child: Sleep = None
            if mine >= 0 and behind:
                asleep = [k for k, f in behind if independent(f, mine)]
                if asleep:
                    child = frozenset(asleep)
                    self._audit(state, action, after, asleep)
            yield base | index, action, after, after_parts, fp, child
            if mine >= 0:
                behind.append((key, mine))

    def _step(
        self,
        state: ClusterState,
        parts: Digests,
        key: int,
        action: Action,
        apply: Callable[[ModelConfig, ClusterState, Action], ClusterState],
    ) -> tuple[ClusterState, Digests, int]:
        """One step, the body both expansions share: the successor reduced, the `sometimes`
        properties watched, its digests and search key."""
        after = self.reduce_one(apply(self.cfg, state, action), state)
        if self.pending:
            self._watch(state, action, after, key)
        after_parts = digests(after, state, parts)
        if self.symmetry:
            return after, after_parts, fingerprint(canonical(self.cfg, after))
        return after, after_parts, combine(after_parts)

    def watched(self) -> tuple[dict[str, int], list[Any], int]:
        """What expanding a state may change here: the `sometimes` hits, the properties still
        pending, the independence claims counted (`rewind` restores them)."""
        return dict(self.hits), list(self.pending), self.claims

    def rewind(self, watched: tuple[dict[str, int], list[Any], int]) -> None:
        """Forget an expansion that was not the model's (`controller_batches`)."""
        hits, self.pending, self.claims = watched
        self.hits = dict(hits)

    def kept_awake(self) -> frozenset[str]:
        """The families whose steps are never skipped while these `sometimes` properties are
        pending. None for a property that reads only the state after the step (every step into
        the same state reaches it), nor for one that reads only the partition before and after
        and the step (`on_partition_change`): a step asleep in a state was taken, or asleep, in
        an earlier state of the path, and the steps between are independent of it, so none
        touched the controller, and the property answers there as here, a level earlier. Else
        the families that may reach the property (`only_on`), or every family."""
        awake: set[str] = set()
        for _, check, _ in self.pending:
            if reads_after(check) or needs_partition_change(check):
                continue
            awake |= fires_on(check) or FOOTPRINTED
        return frozenset(awake)

    def _audit(
        self, state: ClusterState, action: Action, after: ClusterState, asleep: list[Hashable]
    ) -> None:
        """Every `AUDIT_EVERY`th claim, apply both orders: a rule changed so that two steps
        declared independent no longer commute stops the run rather than lose states. The claim
        checked is the first of the list (the order the steps are enumerated in), so a run
        audits the same claims every time."""
        if self.answered_mark >= 0 and controller.unanswered() != self.answered_mark:
            return  # a step stood in for Kafka's answer: `after` may not be the model's
        self.claims += len(asleep)
        if self.claims < self.audit_every:
            return
        self.claims = 0
        for key in asleep if self.audit_every == 1 else asleep[:1]:
            check_commutes(self.cfg, state, action, after, key, self.reduce_one)

    def _watch(self, state: ClusterState, action: Action, after: ClusterState, step: int) -> None:
        cfg = self.cfg
        for name, check, on_change in self.pending:
            if on_change and after.controller.log[-1] is state.controller.log[-1]:
                continue
            if check(cfg, state, action, after):
                self.hits[name] = step  # the first step to reach it: the smallest key
                self.pending = [p for p in self.pending if p[0] != name]

    def chosen(
        self, state: ClusterState, parts: Digests, wanted: set[int]
    ) -> Iterator[tuple[int, ClusterState, Digests]]:
        """(action index, successor, its digests) for the actions with the given indices among
        `successors`, applying only those (enumerating the enabled actions is cheap, applying
        them is not)."""
        cfg, last, index = self.cfg, max(wanted), 0
        for actions, apply in self.families:
            for action in actions(cfg, state):
                if index in wanted:
                    after = self.reduce_one(apply(cfg, state, action), state)
                    yield index, after, digests(after, state, parts)
                if index == last:
                    return
                index += 1


def check_commutes(
    cfg: ModelConfig,
    state: ClusterState,
    action: Action,
    after: ClusterState,
    key: Hashable,
    reduce_one: Callable[[ClusterState, ClusterState | None], ClusterState],
) -> None:
    """Raise `NotIndependent` unless the step named `key`, enabled in `state`, commutes with
    `action` (whose successor is `after`): each stays enabled after the other, and both orders
    reach one state."""
    theirs = _named(cfg, state, key)
    assert theirs is not None, f"{key} is asleep where it is not enabled"
    other_first = reduce_one(theirs[1](cfg, state, theirs[0]), state)
    mine_then = _named(cfg, other_first, sleep_key(state, action))
    theirs_then = _named(cfg, after, key)
    if (
        mine_then is None
        or theirs_then is None
        or fingerprint(reduce_one(theirs_then[1](cfg, after, theirs_then[0]), after))
        != fingerprint(reduce_one(mine_then[1](cfg, other_first, mine_then[0]), other_first))
    ):
        raise NotIndependent(
            f"{theirs[0].describe()} by {theirs[0].actor_name()} and {action.describe()} by "
            f"{action.actor_name()} are declared independent (kafkarep/model/independence.py) "
            "but do not commute in a reachable state: a rule now touches more than its "
            "footprint says. Run with --no-por, and widen the footprint"
        )


def _named(
    cfg: ModelConfig, state: ClusterState, key: Hashable
) -> tuple[Action, Callable[[ModelConfig, ClusterState, Action], ClusterState]] | None:
    """The enabled step of `state` with this sleep key, and its family's apply."""
    for family in active(cfg):
        for action in family.actions(cfg, state):
            if sleep_key(state, action) == key:
                return action, family.apply
    return None


def stop_reason(
    limits: Limits,
    depth: int,
    distinct: int,
    stop_when_found: set[str],
    violations: dict[str, Discovery],
) -> str | None:
    """Why a search stops before expanding the next level (a limit, or every expected violation
    found), or None to go on. Shared by the engines that search level by level."""
    if limits.max_depth and depth >= limits.max_depth:
        return f"depth limit {limits.max_depth}"
    if limits.max_states and distinct >= limits.max_states:
        return f"state limit {limits.max_states}"
    if stop_when_found and stop_when_found <= _found_names(violations):
        return "expected violations found"
    return None


class Totals(NamedTuple):
    """Where an exhaustive search ended: its counts, its stop reason and what it found."""

    distinct: int
    generated: int
    depth: int
    seconds: float
    reason: str  # "exhausted" when the search is complete (stop_reason says the others)
    violations: dict[str, Discovery]
    reached: dict[str, Discovery]


def finish(
    totals: Totals,
    progress: Callable[[Progress], None] | None,
    cores: int,
    seen_bytes: int,
    links_bytes: int,
    details: tuple[tuple[str, Any], ...] = (),
) -> Exploration:
    """The end of an exhaustive search, as the explorer and Spark both end: the last progress
    line, then the result with TLC's fingerprint collision estimate."""
    t = totals
    if progress:
        progress(Progress(t.distinct, t.generated, t.depth, 0, t.seconds, done=True))
    return Exploration(
        t.distinct,
        t.generated,
        t.depth,
        t.seconds,
        t.reason == "exhausted",
        t.reason,
        t.violations,
        t.reached,
        cores,
        collision_probability(t.distinct, t.generated),
        seen_bytes,
        links_bytes,
        details,
    )


def _found_names(violations: dict[str, Discovery]) -> set[str]:
    names = set(violations)
    names |= {name.split(".")[0] for name in violations}
    return names
