"""The Hypothesis engine: deep random histories of the cluster model, shrunk to short traces.

`machine_class(session)` builds a Hypothesis rule-based state machine from any model file: one
rule per action family the model can enable (`kafkarep.model.actions.active`), whose precondition
is that the family has an enabled action, and an invariant that checks every `always` clause the
model selects. `FamilyChoice` draws each step's family (with swarm testing) and its action. The
machine keeps its path as indices into `successors(cfg, state)`, so a counterexample replays
through the rules like the explorer's.

`explore` runs it for `kafkarep check --engine hypothesis`, in rounds: examples until one violates
a clause; Hypothesis shrinks it, then `shorten` replays shorter step sequences; the next round
skips the clauses found, while an expected violation is still missing. Sampling never proves
anything, so the exploration is never complete.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from kafkarep import properties as registry
from kafkarep.common.exit_codes import UsageError
from kafkarep.engines.expectations import matches
from kafkarep.engines.kernel import Judge, StateCheck, StepCheck, clauses
from kafkarep.engines.results import Discovery, Exploration, Progress, RunOptions
from kafkarep.engines.seen import collision_probability
from kafkarep.engines.shorten import shorten
from kafkarep.model.actions import Action, Family, active
from kafkarep.model.config import ModelConfig
from kafkarep.model.encoding import fingerprint
from kafkarep.model.initial import initial_state
from kafkarep.model.replay import replay_path
from kafkarep.model.state import ClusterState
from kafkarep.properties import Property

# Budgets by profile (examples, steps per example); [hypothesis] examples/steps and the
# --examples/--steps flags override them.
PROFILES = {"fast": (100, 30), "default": (500, 50), "long": (5000, 100)}
SHRINK_EXAMPLES = 200  # examples Hypothesis may shrink with before `shorten` takes over
HELD_BACK_ODDS = 10  # a unit the swarm holds back is drawn this many times less often


class Plan(NamedTuple):
    examples: int
    steps: int
    seed: int
    swarm: bool
    profile: str
    per_actor: bool = False  # swarm units per (family, actor), else per family


class Violation(AssertionError):
    """Invariants failed: every clause violated in the last state, with the path to it."""

    def __init__(self, clauses: tuple[tuple[str, str], ...], path: tuple[int, ...]) -> None:
        names = ", ".join(name for name, _ in clauses)
        super().__init__(f"{names} violated after {len(path)} step(s): {clauses[0][1]}")
        self.clauses = clauses
        self.path = path


class StopSampling(KeyboardInterrupt):
    """Ends a Hypothesis run at once: the engine passes a KeyboardInterrupt straight through,
    without recording the example or shrinking (any other exception would be a failure)."""


class OutOfTime(StopSampling):
    """The time limit passed with no violation found."""


class ShrinkingDone(StopSampling):
    """Hypothesis has shrunk for its share of examples: the shortest violation it has seen goes
    to `shorten`, which finishes the job far more cheaply by deleting steps outright."""


class Tally:
    """What the examples of a run saw (mutable, one per run, shared by its rounds)."""

    def __init__(self, progress: Callable[[Progress], None] | None, deadline: float = 0.0) -> None:
        self.progress = progress
        self.deadline = deadline
        self.start = self.last_report = time.monotonic()
        self.examples = self.steps = self.depth = 0
        self.fingerprints: set[int] = set()
        self.frequencies: Counter[str] = Counter()  # steps by family, while generating
        self.reached: dict[str, Discovery] = {}
        self.found_at: int | None = None  # examples run when the round saw its first violation
        self.shortest: Violation | None = None  # the round's shortest violation so far
        self.shrink_examples = 0  # the share of examples Hypothesis may shrink with (0: no limit)
        self.swarm: Counter[bool] = Counter()  # swarm decisions on families, by held back

    def new_example(self, state: ClusterState) -> None:
        now = time.monotonic()
        if self.found_at is None and self.deadline and now > self.deadline:
            raise OutOfTime
        if self.found_at is not None and 0 < self.shrink_examples <= self.examples - self.found_at:
            raise ShrinkingDone
        self.examples += 1
        self.fingerprints.add(fingerprint(state))
        if self.progress is not None and now - self.last_report >= 2.0:
            self.last_report = now
            self.progress(self.snapshot())

    def snapshot(self, done: bool = False) -> Progress:
        seconds = time.monotonic() - self.start
        return Progress(len(self.fingerprints), self.steps, self.depth, 0, seconds, done)


class Session(NamedTuple):
    """One round: the model, the clauses its machine checks, where it tallies what it sees."""

    cfg: ModelConfig
    judge: Judge  # the `always` clauses
    sometimes: tuple[tuple[str, StepCheck], ...]
    tally: Tally
    swarm: bool = True
    per_actor: bool = False

    @property
    def always(self) -> tuple[tuple[str, StateCheck], ...]:
        return self.judge.always


def new_session(
    cfg: ModelConfig,
    chosen: tuple[Property, ...] | None = None,
    skip: frozenset[str] = frozenset(),
    tally: Tally | None = None,
    swarm: bool = True,
    per_actor: bool = False,
) -> Session:
    """A session over the model's selected properties (or `chosen`), less the clauses in `skip`."""
    chosen = registry.of_model(cfg, with_liveness=False) if chosen is None else chosen
    always, sometimes = clauses(chosen, skip)
    return Session(cfg, Judge(cfg, always), sometimes, tally or Tally(None), swarm, per_actor)


class ModelMachine(RuleBasedStateMachine):
    """One example: the cluster state, the path of action indices to it, the enabled actions."""

    session: ClassVar[Session]
    families: ClassVar[tuple[Family, ...]]

    def __init__(self) -> None:
        super().__init__()
        self.state = initial_state(self.session.cfg)
        self.path: list[int] = []
        self.enabled = self._enabled()
        self.checked: ClusterState | None = None  # the last state the invariant checked
        self.session.tally.new_example(self.state)
        # Hypothesis draws each step's rule from this attribute; ours chooses as FamilyChoice
        # says (a test fails should a Hypothesis release stop reading it).
        self._rules_strategy = FamilyChoice(self)  # type: ignore[assignment]

    def _enabled(self) -> tuple[tuple[Action, ...], ...]:
        cfg, state = self.session.cfg, self.state
        return tuple(tuple(family.actions(cfg, state)) for family in self.families)

    @precondition(lambda self: not any(self.enabled))
    @rule()
    def stutter(self) -> None:
        """Nothing is enabled (the budgets are spent and the cluster has settled): the state
        stays as it is for the rest of the example."""

    def take(self, position: int, action: Action) -> None:
        session = self.session
        cfg, tally, before = session.cfg, session.tally, self.state
        family = self.families[position]
        index = sum(len(actions) for actions in self.enabled[:position])
        self.path.append(index + self.enabled[position].index(action))
        self.state = family.apply(cfg, before, action)
        self.enabled = self._enabled()
        tally.steps += 1
        tally.depth = max(tally.depth, len(self.path))
        if tally.found_at is None:  # while generating, not while shrinking
            tally.frequencies[family.name] += 1
        tally.fingerprints.add(fingerprint(self.state))
        for name, check in session.sometimes:
            if name not in tally.reached and check(cfg, before, action, self.state):
                tally.reached[name] = Discovery(name, len(self.path), tuple(self.path), None)

    @invariant()
    def always_properties_hold(self) -> None:
        """Every `always` clause of the session holds in the current state."""
        if self.checked is self.state:
            return  # a stutter step changes nothing
        self.checked = self.state
        violated = self.session.judge.violated(self.state)
        if violated:
            tally = self.session.tally
            if tally.found_at is None:
                tally.found_at = tally.examples
            violation = Violation(violated, tuple(self.path))
            if tally.shortest is None or len(violation.path) < len(tally.shortest.path):
                tally.shortest = violation
            raise violation


class FamilyChoice(st.SearchStrategy[tuple[Any, dict[str, Any]]]):
    """Which rule runs next: a unit with an enabled action, drawn uniformly, then one of its
    enabled actions. A unit is an action family, or with `[hypothesis] swarm_units = "actor"`
    one family of one actor (the controller or a broker).

    Swarm testing: an example holds back a random share of the units (none to all, drawn at its
    first step; each unit decided the first time it is enabled). A held-back unit is drawn
    HELD_BACK_ODDS times less often than the others, so a rare interleaving (metadata applied
    late, a fetch response withheld, a fault in the middle of replication) is not drowned by
    frequent actions, and no example gets stuck. Units per actor let one broker lag while
    another keeps up. This stands in for Hypothesis's own rule choice, whose feature flags
    switch rules off entirely and abandon an example as invalid when only switched-off rules are
    enabled.
    """

    def __init__(self, machine: ModelMachine) -> None:
        super().__init__()
        self.machine = machine
        rules = {r.function.__name__: r for r in type(machine).setup_state().rules}
        self.rules = [rules[family.name] for family in machine.families]
        self.stutter = rules["stutter"]
        self.share: int | None = None  # tenths of the units held back
        self.held: dict[int, bool] = {}
        # A unit (a family, or a family of one actor: `_unit`) is drawn
        # by its position among all units, filtered to those in the group drawn from: a
        # recorded choice keeps naming the same unit when the shrinker deletes earlier steps,
        # where an index into the enabled ones would name another.
        self.per_actor = machine.session.per_actor
        self.actors = max(machine.session.cfg.broker_ids) + 1 if self.per_actor else 1
        units = len(self.rules) * self.actors
        self.group: frozenset[int] = frozenset()
        self.unit = st.sampled_from(range(units)).filter(lambda u: u in self.group)

    def do_draw(self, data: Any) -> tuple[Any, dict[str, Any]]:
        machine = self.machine
        if self.share is None:
            self.share = data.draw(st.integers(0, 10)) if machine.session.swarm else 0
        runnable = sorted(
            {self._unit(i, a) for i, actions in enumerate(machine.enabled) for a in actions}
        )
        if not runnable:
            return self.stutter, {}
        held = [u for u in runnable if self._held_back(data, u)]
        free = [u for u in runnable if u not in held]
        group = free or held
        if free and held:  # odds HELD_BACK_ODDS : 1 for each free unit against a held one
            odds = HELD_BACK_ODDS * len(free)
            group = free if data.draw(st.integers(0, odds + len(held) - 1)) < odds else held
        unit = group[0]
        if len(group) > 1:
            self.group = frozenset(group)
            unit = data.draw(self.unit)
        position = unit // self.actors
        actions = [a for a in machine.enabled[position] if self._unit(position, a) == unit]
        action = actions[0] if len(actions) == 1 else data.draw(st.sampled_from(actions))
        return self.rules[position], {"action": action}

    def _unit(self, position: int, action: Action) -> int:
        return position * self.actors + action.actor if self.per_actor else position

    def _held_back(self, data: Any, unit: int) -> bool:
        held = self.held.get(unit)
        if held is None:
            share = self.share or 0
            held = self.held[unit] = share > 0 and (data.draw(st.integers(0, 9)) >= 10 - share)
            tally = self.machine.session.tally
            if tally.found_at is None:
                tally.swarm[held] += 1
        return held


def _family_rule(position: int, family: Family) -> Callable[..., None]:
    def step(self: ModelMachine, action: Action) -> None:
        self.take(position, action)

    def has_enabled_action(self: ModelMachine) -> bool:
        return bool(self.enabled[position])

    step.__name__ = step.__qualname__ = family.name
    step.__doc__ = family.doc
    # FamilyChoice draws the action from those the swarm allows (`nothing` would fail loudly
    # should Hypothesis's own rule choice ever run instead).
    return precondition(has_enabled_action)(rule(action=st.nothing())(step))


def machine_class(session: Session) -> type[ModelMachine]:
    """A state machine for the session's model: one rule per action family it can enable; the
    invariant checks the session's `always` clauses."""
    families = active(session.cfg)
    namespace: dict[str, Any] = {"session": session, "families": families}
    for position, family in enumerate(families):
        namespace[family.name] = _family_rule(position, family)
    words = re.split(r"[^A-Za-z0-9]+", session.cfg.name)
    title = "".join(word[:1].upper() + word[1:] for word in words if word)
    return type(f"{title or 'Model'}Machine", (ModelMachine,), namespace)


# --- the engine ----------------------------------------------------------------------------------


def plan_for(cfg: ModelConfig, engine_args: tuple[tuple[str, Any], ...] = ()) -> Plan:
    """The budget: flags over the model's [hypothesis] section over its profile's defaults."""
    given = dict(engine_args)
    profile = cfg.setting("hypothesis", "profile", "default")
    if profile not in PROFILES:
        raise UsageError(
            f"{cfg.path}: [hypothesis] profile {profile!r} is unknown; one of {', '.join(PROFILES)}"
        )
    examples, steps = PROFILES[profile]

    def number(key: str, default: int | None, low: int) -> int | None:
        value = given.get(key, cfg.setting("hypothesis", key, default))
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise UsageError(f"{cfg.path}: [hypothesis] {key} must be an integer")
        if value is not None and value < low:
            where = f"--{key}" if key in given else f"{cfg.path}: [hypothesis] {key}"
            raise UsageError(f"{where} must be at least {low}")
        return value

    swarm = cfg.setting("hypothesis", "swarm", True)
    if not isinstance(swarm, bool):
        raise UsageError(f"{cfg.path}: [hypothesis] swarm must be true or false")
    units = cfg.setting("hypothesis", "swarm_units", "family")
    if units not in ("family", "actor"):
        raise UsageError(f'{cfg.path}: [hypothesis] swarm_units must be "family" or "actor"')
    chosen_seed = number("seed", None, 0)
    return Plan(
        number("examples", examples, 1) or examples,
        number("steps", steps, 1) or steps,
        secrets.randbelow(2**32) if chosen_seed is None else chosen_seed,
        swarm,
        profile,
        units == "actor",
    )


def hypothesis_settings(plan: Plan, derandomize: bool = False, quiet: bool = True) -> settings:
    """Hypothesis settings for a plan: no example database (a run is its seed), no deadline or
    health checks (steps are slow by design); quiet for `kafkarep check`, whose report is the
    step table, and not quiet under pytest, which prints the failing program."""
    return settings(
        max_examples=plan.examples,
        stateful_step_count=plan.steps,
        derandomize=derandomize,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet if quiet else Verbosity.normal,
        print_blob=False,
    )


def rerun_command(cfg: ModelConfig, plan: Plan) -> str:
    return (
        f"kafkarep check {cfg.path} --engine hypothesis --seed {plan.seed} "
        f"--examples {plan.examples} --steps {plan.steps}"
    )


def explore(
    cfg: ModelConfig, options: RunOptions, progress: Callable[[Progress], None] | None
) -> Exploration:
    plan = plan_for(cfg, options.engine_args)
    max_seconds = options.limits.max_seconds if options.limits else cfg.check.max_seconds
    tally = Tally(progress, time.monotonic() + max_seconds if max_seconds else 0.0)
    tally.shrink_examples = SHRINK_EXAMPLES
    chosen = registry.of_model(cfg, with_liveness=False)
    expected = [name for name, _ in cfg.expect.violates]
    violations: dict[str, Discovery] = {}
    needed: dict[str, int] = {}
    reason = f"sampled {plan.examples} examples of up to {plan.steps} steps"
    while True:
        session = new_session(cfg, chosen, frozenset(violations), tally, plan.swarm, plan.per_actor)
        if not session.always:
            break
        tally.found_at, tally.shortest, before = None, None, tally.examples
        machine = seed(plan.seed)(machine_class(session))
        try:
            run_state_machine_as_test(machine, settings=hypothesis_settings(plan))
        except (Violation, ShrinkingDone):
            pass
        except OutOfTime:
            reason = f"time limit {max_seconds:g}s"
            break
        if tally.shortest is None:
            break  # the round spent its whole budget
        found = _record(cfg, session, tally.shortest, violations)
        needed.update({name: (tally.found_at or 0) - before for name in found})
        if all(any(matches(e, c) for c in violations) for e in expected):
            # Further rounds only look for the expected violations not found yet.
            reason = "expected violations found" if expected else "violation found"
            break
    if progress is not None:
        progress(tally.snapshot(done=True))
    distinct = len(tally.fingerprints)
    return Exploration(
        distinct_states=distinct,
        generated_states=tally.steps,
        depth=tally.depth,
        seconds=time.monotonic() - tally.start,
        complete=False,
        stop_reason=reason,
        violations=violations,
        reached=dict(tally.reached),
        cores=1,
        collision_probability=collision_probability(distinct, tally.steps + tally.examples),
        details=_details(cfg, plan, tally, needed),
    )


def _record(
    cfg: ModelConfig, session: Session, violation: Violation, into: dict[str, Discovery]
) -> list[str]:
    """Shorten the shrunk path for its first clause; record every clause violated at its end."""
    name = violation.clauses[0][0]
    check = dict(session.always)[name]
    path = shorten(cfg, violation.path, lambda state: check(cfg, state) is not None)
    final = replay_path(cfg, path).final
    found = []
    for clause, witness in session.judge.violated(final):
        if clause not in into:
            into[clause] = Discovery(clause, len(path), path, witness)
            found.append(clause)
    return found


def _details(
    cfg: ModelConfig, plan: Plan, tally: Tally, needed: dict[str, int]
) -> tuple[tuple[str, Any], ...]:
    decided = sum(tally.swarm.values())
    held = tally.swarm[True] / decided if decided else 0.0
    units = "(family, actor) units" if plan.per_actor else "action families"
    swarm = f"{held:.0%} of the {units} held back on average" if plan.swarm else "off"
    return (
        ("seed", plan.seed),
        ("rerun", rerun_command(cfg, plan)),
        ("profile", plan.profile),
        ("examples run", tally.examples),
        *((("examples to find", needed),) if needed else ()),
        ("swarm", swarm),
        ("action frequencies", dict(tally.frequencies.most_common())),
    )
