"""The relation against the concrete rules: on every state of a bounded exploration, the
instances enabled are the concrete actions, each update is the projection of the concrete
successor, and each property clause has the concrete verdict."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from kafkarep import properties as registry
from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.properties.base import predicate_of
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.agreement.disagreement import Disagreement, difference, source, step
from kafkarep.symbolic.agreement.elections import Elections
from kafkarep.symbolic.agreement.exploration import Path, levels, project_along, written
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.projection import comparable
from kafkarep.symbolic.properties import clauses
from kafkarep.symbolic.transition import Instance, Relation


class Agreement(NamedTuple):
    states: int
    pairs: int  # (state, instance, argument) evaluations
    enabled: int  # of which enabled: concrete steps compared
    disagreements: tuple[Disagreement, ...]
    depth: int = 0
    families: tuple[str, ...] = ()  # the families of the relation a compared step took
    unvisited: tuple[str, ...] = ()  # the relation's families no compared step took
    seconds: float = 0.0
    trail: tuple[Action, ...] = ()  # how the first disagreeing state was reached
    elections: int = 0  # controller steps whose free elections were compared (`Elections`)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "depth": self.depth,
            "states": self.states,
            "pairs": self.pairs,
            "steps": self.enabled,
            "election_steps": self.elections,
            "families": list(self.families),
            "families_not_compared": list(self.unvisited),
            "seconds": round(self.seconds, 3),
            "disagreements": [
                {"action": step(d.action), "problem": d.problem, "where": d.where}
                for d in self.disagreements
            ],
        }
        if self.trail:
            out["trail"] = [step(a) for a in self.trail]
        return out


def concrete_clause(name: str, cfg: ModelConfig) -> Any:
    prop_name, _, clause_name = name.partition(".")
    prop = registry.by_name(cfg)[prop_name]
    return next(c.check for c in prop.clauses if c.name == clause_name)


def check_state(
    enc: Encoding, rel: Relation, state: ClusterState, path: Path, taken: set[str] | None = None
) -> tuple[int, int, list[Disagreement]]:
    """Compare one state: every clause, and every instance of the relation on every argument.
    Returns the evaluations, the concrete steps and the disagreements; adds to `taken` the
    families of the steps compared."""
    cfg = enc.cfg
    problems: list[Disagreement] = []
    before = project_along(enc, state, path)
    for name, clause in clauses(cfg).items():
        verdict = clause(enc, before)
        check = concrete_clause(name, cfg)
        concrete = check(cfg, state) is None
        if verdict is not concrete:
            problems.append(
                Disagreement(
                    state,
                    None,
                    f"clause {name}: symbolic {verdict}, concrete {concrete}",
                    source(predicate_of(check) or clause),  # where the predicate is written
                )
            )
    expected: dict[Action, ClusterState] = {}
    for action, after in successors(cfg, state):
        if action in expected:
            problems.append(Disagreement(state, action, "the concrete model lists it twice"))
        expected[action] = after
    got: dict[Action, tuple[symbolic.ClusterState, Instance]] = {}
    evaluations = 0
    for instance in rel.instances:
        for arg in rel.domain(instance, before):
            evaluations += 1
            enabled = instance.guard(before, arg)
            if not isinstance(enabled, bool):
                problems.append(
                    Disagreement(
                        state, None, f"{instance.label}: guard not constant", source(instance.guard)
                    )
                )
                continue
            if not enabled:
                continue
            action = rel.action(instance, arg, state)
            if action in got:
                problems.append(
                    Disagreement(
                        state, action, "two symbolic instances enable it", source(instance.guard)
                    )
                )
            got[action] = instance.update(before, arg), instance
    for action in expected.keys() - got.keys():
        problems.append(
            Disagreement(
                state, action, "enabled concretely, not symbolically", _guard_of(rel, action)
            )
        )
    for action in got.keys() - expected.keys():
        problems.append(
            Disagreement(
                state, action, "enabled symbolically, not concretely", source(got[action][1].guard)
            )
        )
    for action in expected.keys() & got.keys():
        after = expected[action]
        want = comparable(
            project_along(enc, after, written(state, after, action, path, enc.reassigning))
        )
        update, instance = got[action]
        if taken is not None:
            taken.add(instance.family)
        have = comparable(update)
        if have != want:
            problems.append(
                Disagreement(state, action, difference(have, want), source(instance.update))
            )
    return evaluations, len(expected), problems


def _guard_of(rel: Relation, action: Action) -> str:
    """The guard of the instance that should have enabled a concrete action."""
    for instance in rel.instances:
        if instance.family == action.name and instance.actor == action.actor:
            return source(instance.guard)
    return f"kafkarep/symbolic/transition/: {action.name} (no instance for this actor)"


# The default extent of the check `prove` runs first: level by level (a level is always
# finished) until at least MIN_STATES states were compared and the last level compared a step of
# no family the levels before it had not; or until MAX_STATES were.
MIN_STATES = 1000


MAX_STATES = 40_000


def check(
    cfg: ModelConfig,
    depth: int | None = None,
    limit: int = 0,
    progress: Callable[[Agreement], None] | None = None,
    elections: bool = False,
) -> Agreement:
    """Compare the relation with the concrete rules on every state of a breadth-first
    exploration from the model's initial state: to `depth`, or by default as far as
    MIN_STATES and MAX_STATES say. Stops after the first level with a disagreement (so the ones
    reported are the shallowest). `progress` is called after each level. With `elections`,
    each state's controller steps are also compared with induction's free elections
    (`Elections.cover`)."""
    started = time.monotonic()
    enc = Encoding(cfg)
    rel = Relation(enc)
    wanted = {instance.family for instance in rel.instances}
    free = Elections(cfg) if elections else None
    tally = _Tally(wanted)
    for d, level in enumerate(levels(cfg)):
        known = len(tally.taken)
        for reached in level:
            tally.states += 1
            e, n, found = check_state(enc, rel, reached.state, reached.path, tally.taken)
            tally.pairs += e
            tally.steps += n
            if free is not None:
                cover = free.cover(reached.state, reached.path)
                tally.elections += cover.steps
                found.extend(cover.disagreements)
            if found and not tally.problems:
                tally.trail = reached.trail
            for problem in found:
                if all(problem[1:] != p[1:] for p in tally.problems):
                    tally.problems.append(problem)
            if limit and tally.states >= limit:
                break
        tally.depth = d
        if progress is not None:
            progress(tally.result(started))
        if tally.problems or (limit and tally.states >= limit) or d == depth:
            break
        settled = len(tally.taken) == known or tally.taken >= wanted
        if depth is None and (
            tally.states >= MAX_STATES or (settled and tally.states >= MIN_STATES)
        ):
            break
    return tally.result(started)


class _Tally:
    """What `check` has counted so far."""

    def __init__(self, wanted: set[str]) -> None:
        self.wanted = wanted
        self.taken: set[str] = set()
        self.states = self.pairs = self.steps = self.elections = self.depth = 0
        self.problems: list[Disagreement] = []
        self.trail: tuple[Action, ...] = ()

    def result(self, started: float) -> Agreement:
        return Agreement(
            self.states,
            self.pairs,
            self.steps,
            tuple(self.problems),
            self.depth,
            tuple(sorted(self.taken)),
            tuple(sorted(self.wanted - self.taken)),
            time.monotonic() - started,
            self.trail,
            self.elections,
        )
