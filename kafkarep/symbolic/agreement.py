"""The agreement check: the symbolic rules against the concrete ones, on every (state, action)
pair of a bounded exploration.

For each concrete state reached (breadth first, to a depth) the projection is taken, and every
instance of the transition relation is evaluated on it, for every argument: the instances whose
guard holds must be exactly the concrete enabled actions, and each update must equal the
projection of the concrete successor. The evaluation runs the same functions that build the Z3
relation, on Python values; `z3_sample` also evaluates the Z3 terms themselves on some states.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import properties as registry
from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState, Role
from kafkarep.symbolic import ops, projection
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.domain import Terms
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.lemmas import PairFact
from kafkarep.symbolic.projection import comparable
from kafkarep.symbolic.properties import CLAUSES
from kafkarep.symbolic.state import SORTS
from kafkarep.symbolic.symmetry import BROKER_FAMILIES
from kafkarep.symbolic.transition import Instance, Relation


class Path(NamedTuple):
    """What a projection needs that the concrete state does not keep, recorded along the path
    that reached it: each value's (offset, epoch) when written, and `Ghost.committed_in`."""

    locs: dict[int, tuple[int, int]]
    committed_in: tuple[int, ...] = ()

    def key(self) -> tuple[object, ...]:
        return tuple(sorted(self.locs.items())), self.committed_in


def project(enc: Encoding, state: ClusterState, path: Path) -> symbolic.ClusterState:
    return projection.project(enc, state, path.locs, path.committed_in)


class Disagreement(NamedTuple):
    state: ClusterState
    action: Action | None
    problem: str
    # the encoding function to update ("kafkarep/symbolic/transition/data.py: fetch")
    where: str = ""


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


def step(action: Action | None) -> str:
    """An action as a trace shows it: 'broker 2 fetch', 'controller fence(3)'."""
    if action is None:
        return "the state itself"
    return f"{action.actor_name()} {action.describe()}"


def source(function: Any) -> str:
    """Where a guard, update or clause is written: 'kafkarep/symbolic/transition/data.py: fetch'."""
    code = getattr(function, "__code__", None)
    if code is None:
        return repr(function)
    path = code.co_filename.replace("\\", "/")
    package = path.rfind("kafkarep/")
    where = path[package:] if package >= 0 else path
    return f"{where}: {code.co_qualname.split('.<locals>')[0]}"


def written(before: ClusterState, after: ClusterState, action: Action, path: Path) -> Path:
    """The path extended by a step: where a produce put its record, (offset, epoch) by value;
    and, for each offset a leader's HWM moved past, the lower of its leader epoch and the one
    recorded (any epoch recorded at or above the True HWM is replaced)."""
    locs = path.locs
    if action.name == "produce":
        replica = after.broker(action.actor).replica
        assert replica is not None
        epoch, value = replica.log[-1]
        locs = {**locs, value: (replica.leo - 1, epoch)}
    committed_in = list(path.committed_in)
    for b, broker in enumerate(after.brokers, start=1):
        r, old = broker.replica, before.broker(b).replica
        if r is None or old is None or r.role != Role.LEADER or r.view is None:
            continue
        le = r.view.leader_epoch
        for o in range(old.hwm, r.hwm):
            committed_in += [0] * (o + 1 - len(committed_in))
            if o >= before.ghost.true_hwm or le < committed_in[o]:
                committed_in[o] = le
    return Path(locs, tuple(committed_in))


def concrete_clause(name: str) -> Any:
    prop_name, _, clause_name = name.partition(".")
    prop = registry.BY_NAME[prop_name]
    return next(c.check for c in prop.clauses if c.name == clause_name)


class Reached(NamedTuple):
    """A concrete state of the exploration, the path's records (`Path`), and the actions that
    reached it from the initial state."""

    state: ClusterState
    path: Path
    trail: tuple[Action, ...]


def levels(cfg: ModelConfig) -> Iterator[list[Reached]]:
    """The concrete states reachable from the model's initial state, breadth first, one list
    per depth (a state reached along two paths that recorded different things is kept twice:
    the projections differ)."""
    start = initial_state(cfg)
    seen: set[tuple[ClusterState, tuple[object, ...]]] = {(start, Path({}).key())}
    level = [Reached(start, Path({}), ())]
    while level:
        yield level
        following = []
        for state, path, trail in level:
            for action, after in successors(cfg, state):
                after_path = written(state, after, action, path)
                key = (after, after_path.key())
                if key not in seen:
                    seen.add(key)
                    following.append(Reached(after, after_path, (*trail, action)))
        level = following


def explore(cfg: ModelConfig, depth: int) -> Iterator[tuple[ClusterState, Path]]:
    """Concrete states to `depth`, each with what was recorded on the way (`Path`)."""
    for d, level in enumerate(levels(cfg)):
        for reached in level:
            yield reached.state, reached.path
        if d == depth:
            return


def check_state(
    enc: Encoding, rel: Relation, state: ClusterState, path: Path, taken: set[str] | None = None
) -> tuple[int, int, list[Disagreement]]:
    """Compare one state: every clause, and every instance of the relation on every argument.
    Returns the evaluations, the concrete steps and the disagreements; adds to `taken` the
    families of the steps compared."""
    cfg = enc.cfg
    problems: list[Disagreement] = []
    before = project(enc, state, path)
    for name, clause in CLAUSES.items():
        verdict = clause(enc, before)
        concrete = concrete_clause(name)(cfg, state) is None
        if verdict is not concrete:
            problems.append(
                Disagreement(
                    state,
                    None,
                    f"clause {name}: symbolic {verdict}, concrete {concrete}",
                    source(clause),
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
        want = comparable(project(enc, after, written(state, after, action, path)))
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


# Fields of the symbolic state that are sequences by broker id (element k is broker k + 1) or
# by partition epoch (element k is the record of epoch k + 1).
_BY_BROKER = {"brokers", "registry", "ap_requests", "followers", "member_epochs", "received"}


def difference(have: object, want: object, path: str = "", spec: object = None) -> str:
    """The first field where two projections differ ('brokers[1].replica.hwm: symbolic 0,
    concrete 1'); broker sets are shown as sets."""
    if isinstance(have, tuple) and isinstance(want, tuple) and len(have) == len(want):
        names = getattr(have, "_fields", None)
        specs = SORTS.get(type(have), ())
        for k, (a, b) in enumerate(zip(have, want, strict=True)):
            if a != b:
                if names:
                    where = f"{path}.{names[k]}" if path else names[k]
                    inner = specs[k] if k < len(specs) else None
                else:
                    field = path.rsplit(".", 1)[-1]
                    by_id = field in _BY_BROKER or field == "metadata_log"
                    where = f"{path}[{k + 1}]" if by_id else f"{path}[{k}]"
                    inner = spec[1] if isinstance(spec, tuple) and spec[0] == "vec" else None
                return difference(a, b, where, inner)
    return f"{path or 'state'}: symbolic {_shown(have, spec)}, concrete {_shown(want, spec)}"


def _shown(value: object, spec: object) -> str:
    if spec == "s" and isinstance(value, int) and not isinstance(value, bool):
        members = [b for b in range(-1, value.bit_length()) if b != 0 and value >> max(b, 0) & 1]
        return "{" + ",".join(map(str, members)) + "}"
    return repr(value)


def concrete_source(action: Action) -> str:
    """Where the concrete model applies an action of this family."""
    from kafkarep.model.actions import BY_NAME

    family = BY_NAME.get(action.name)
    return source(family.apply) if family is not None else action.name


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


class Z3Agreement(NamedTuple):
    states: int
    enabled: int
    seconds: float
    disagreements: tuple[Disagreement, ...]


def z3_check(cfg: ModelConfig, depth: int, limit: int = 0, exact: int = 0) -> Z3Agreement:
    """The same comparison with the Z3 terms themselves. The guard and successor terms of every
    instance are built once over one symbolic state; each concrete state is then fixed by a
    model and Z3 evaluates the terms in it: the guards that are true must be the concrete enabled
    actions and the successors the concrete ones. For the first `exact` states a solver also
    shows that the relation (guard and successor equations) admits no other successor."""
    import z3

    started = time.monotonic()
    visited = list(explore(cfg, depth))
    if limit:
        visited = visited[:limit]
    capacity = max(s.partition.partition_epoch for s, _ in visited) + 2
    enc = Encoding(cfg, capacity)
    rel = Relation(enc)
    x = enc.fresh("x")
    probes = []
    for instance in rel.instances:
        if instance.arg == "i":
            args: list[object] = list(range(1, capacity + 1))
        elif instance.arg == "s":
            args = list(rel.domain(instance, project(enc, visited[0][0], visited[0][1])))
        else:
            args = [None]
        for arg in args:
            probes.append((instance, arg, instance.guard(x, arg), instance.update(x, arg)))
    problems: list[Disagreement] = []
    enabled = 0
    for number, (state, path) in enumerate(visited):
        before = project(enc, state, path)
        fixed = z3.Solver()
        fixed.add(*enc.equal(x, pad(enc, before)))
        if fixed.check() != z3.sat:
            problems.append(Disagreement(state, None, "Z3: the projection is not a state"))
            continue
        model = fixed.model()
        expected = {action: after for action, after in successors(cfg, state)}
        seen: dict[Action, symbolic.ClusterState] = {}
        for instance, arg, guard, after in probes:
            if not z3.is_true(model.eval(guard, True)):
                continue
            action = rel.action(instance, arg, state)
            if action not in expected:
                problems.append(Disagreement(state, action, "Z3: enabled, not concretely"))
                continue
            seen[action] = after
            concrete = expected[action]
            want = project(enc, concrete, written(state, concrete, action, path))
            have = enc.evaluate(model, after)
            have = have._replace(metadata_log=have.metadata_log[: want.partition.partition_epoch])
            if comparable(have) != comparable(want):
                problems.append(Disagreement(state, action, "Z3: " + difference(have, want)))
        for action in expected.keys() - seen.keys():
            problems.append(Disagreement(state, action, "Z3: enabled concretely only"))
        enabled += len(seen)
        if number < exact and seen:
            problems.extend(_only_successors(enc, x, before, state, path, expected, seen))
    return Z3Agreement(len(visited), enabled, time.monotonic() - started, tuple(problems))


def pad(enc: Encoding, sym: symbolic.ClusterState) -> symbolic.ClusterState:
    return sym._replace(
        metadata_log=sym.metadata_log
        + (enc.blank_registration(),) * (enc.capacity - len(sym.metadata_log))
    )


def _only_successors(
    enc: Encoding,
    x: symbolic.ClusterState,
    before: symbolic.ClusterState,
    state: ClusterState,
    path: Path,
    expected: dict[Action, ClusterState],
    seen: dict[Action, symbolic.ClusterState],
) -> list[Disagreement]:
    """No successor but the concrete one satisfies `y == update(x)` for an enabled instance."""
    import z3

    solver = z3.Solver()
    solver.add(*enc.equal(x, pad(enc, before)))
    problems = []
    for k, (action, update) in enumerate(seen.items()):
        concrete = expected[action]
        want = pad(enc, project(enc, concrete, written(state, concrete, action, path)))
        y = enc.fresh(f"y{k}")
        solver.push()
        solver.add(*enc.equal(y, update))
        low = min(b.applied_epoch for b in want.brokers)  # records below are compacted away
        differs = [
            z3.Not(z3.And(*[t for t in enc.equal(a, b, spec) if not isinstance(t, bool)] or [True]))
            for a, b, spec in _parts(enc, y, want, low)
        ]
        solver.add(z3.Or(differs))
        if solver.check() != z3.unsat:
            problems.append(Disagreement(state, action, "Z3: another successor is admitted"))
        solver.pop()
    return problems


def _parts(
    enc: Encoding, y: symbolic.ClusterState, want: symbolic.ClusterState, low: int
) -> Iterator[tuple[object, object, object]]:
    for field, spec in zip(
        symbolic.ClusterState._fields, SORTS[symbolic.ClusterState], strict=True
    ):
        if field == "metadata_log":
            for k in range(low - 1, want.partition.partition_epoch):
                yield y.metadata_log[k], want.metadata_log[k], symbolic.PartitionRegistration
        else:
            yield getattr(y, field), getattr(want, field), spec


class Unsound(NamedTuple):
    """An auxiliary invariant (or history fact) false in a reachable state: it is wrong."""

    invariant: str
    state: ClusterState


def check_invariants(
    cfg: ModelConfig,
    depth: int,
    lemmas: tuple[Any, ...] | None = None,
    facts: tuple[Any, ...] | None = None,
    limit: int = 0,
) -> tuple[int, tuple[Unsound, ...]]:
    """Evaluate the auxiliary invariants (by default every one of `invariants.AUXILIARY`) and
    the history facts (by default all, on every record of the metadata log a broker may still
    apply, and `invariants.pair` on every two such records) on every state of a bounded
    exploration. An invariant used in a proof must hold on
    every reachable state; this catches a wrong one without a solver. Returns the number of
    states visited and the invariants found false, each with the first state where it is."""
    from kafkarep.symbolic import invariants

    enc = Encoding(cfg)
    chosen = invariants.AUXILIARY if lemmas is None else lemmas
    history = invariants.FACTS + invariants.QUORUM_FACTS if facts is None else facts
    found: dict[str, Unsound] = {}
    states = 0
    for state, path in explore(cfg, depth):
        states += 1
        sym = project(enc, state, path)
        for inv in chosen:
            if inv.name not in found and inv.holds(enc, sym) is not True:
                found[inv.name] = Unsound(inv.name, state)
        low = min(b.applied_epoch for b in sym.brokers)
        records = sym.metadata_log[low - 1 :]
        for fact in history:
            name = f"history.{fact.name}"
            if name in found:
                continue
            if isinstance(fact, PairFact):
                bad = any(
                    fact.holds(enc, a, b, sym) is not True
                    for k, a in enumerate(records)
                    for b in records[k + 1 :]
                )
            else:
                bad = any(fact.holds(enc, record, sym) is not True for record in records)
            if bad:
                found[name] = Unsound(name, state)
        # what the prover assumes of any two records a broker may still apply
        if "history.pair" not in found and any(
            invariants.pair(enc, a, b, sym, history) is not True
            for k, a in enumerate(records)
            for b in records[k + 1 :]
        ):
            found["history.pair"] = Unsound("history.pair", state)
        if limit and states >= limit:
            break
    return states, tuple(found.values())


class Cover(NamedTuple):
    """The free elections of induction against the exact ones (`Encoding.free_elections`)."""

    steps: int  # enabled controller steps compared
    widened: int  # of which the free relation admits another leader too
    disagreements: tuple[Disagreement, ...]


class Elections:
    """The exact and the free relation of a model, for metadata logs of a given capacity (the
    free election makes whether a record is appended symbolic, so the log must have room)."""

    def __init__(self, cfg: ModelConfig) -> None:
        import z3

        self.cfg = cfg
        self.solver = z3.Solver()
        self._by_capacity: dict[int, tuple[Encoding, Encoding, Relation, Relation]] = {}
        # what a controller step was found to do, by what the election reads (the rest of the
        # state is carried over alike by both relations)
        self._seen: dict[tuple[object, ...], tuple[int, Disagreement | None]] = {}

    def relations(self, capacity: int) -> tuple[Encoding, Encoding, Relation, Relation]:
        capacity = -(-capacity // 4) * 4
        if capacity not in self._by_capacity:
            exact = Encoding(self.cfg, capacity)
            free = Encoding(self.cfg, capacity, free_elections=True)
            self._by_capacity[capacity] = (exact, free, Relation(exact), Relation(free))
        return self._by_capacity[capacity]

    def cover(self, state: ClusterState, path: Path) -> Cover:
        """Each enabled step of the exact relation in this state is a step of the free one, and
        every leader the free one admits instead was in the ISR or ELR before the step (any
        replica where the exact election was unclean)."""
        exact, free, exact_rel, free_rel = self.relations(state.partition.partition_epoch + 2)
        steps = widened = 0
        problems: list[Disagreement] = []
        before = pad(exact, project(exact, state, path))
        for precise, loose in zip(exact_rel.instances, free_rel.instances, strict=True):
            if precise.family in BROKER_FAMILIES:
                continue  # a broker's own step: no election
            for arg in exact_rel.domain(precise, before):
                if precise.guard(before, arg) is not True:
                    continue
                key = (
                    precise.label,
                    arg,
                    before.partition,
                    before.registry,
                    before.ap_requests,
                    before.budget,
                ) + tuple((b.status, b.epoch, b.incarnation) for b in before.brokers)
                if key not in self._seen:
                    self._seen[key] = self._step(free, precise, loose, before, arg, state)
                wider, problem = self._seen[key]
                steps += 1
                widened += wider
                if problem is not None:
                    action = exact_rel.action(precise, arg, state)
                    problems.append(problem._replace(state=state, action=action))
        return Cover(steps, widened, tuple(problems))

    def _step(
        self,
        free: Encoding,
        precise: Instance,
        loose: Instance,
        before: symbolic.ClusterState,
        arg: object,
        state: ClusterState,
    ) -> tuple[int, Disagreement | None]:
        """(1 if the free step admits another leader, else 0; what is wrong with it)."""
        solver = self.solver
        want = precise.update(before, arg)
        have = loose.update(before, arg)
        if have == want:
            return 0, None  # no election in this step: the same values
        same = list(free.equal(have, want))
        if any(t is False for t in same) or _unsat(solver, same):
            return 0, Disagreement(
                state, None, "the free election misses it", source(Terms.widen_election)
            )
        other = ops.ne(have.partition.leader, want.partition.leader)
        if isinstance(other, bool) or _unsat(solver, [other]):
            return 0, None
        # clean (from the ISR or ELR) as the exact election was, or unclean like it
        clean = state.partition.isr | state.partition.elr
        eligible = clean if want.partition.leader in clean else set(state.partition.replicas)
        if not _unsat(solver, [ops.ne(have.partition.leader, e) for e in eligible]):
            leader = solver.model().eval(have.partition.leader, True)
            return 1, Disagreement(
                state, None, f"the free choice elects {leader}", source(Terms.widen_election)
            )
        return 1, None


def free_elections_cover(cfg: ModelConfig, depth: int, limit: int = 0) -> Cover:
    """`Elections.cover` on every state of a bounded exploration."""
    elections = Elections(cfg)
    steps = widened = 0
    problems: list[Disagreement] = []
    for number, (state, path) in enumerate(explore(cfg, depth)):
        if limit and number >= limit:
            break
        found = elections.cover(state, path)
        steps += found.steps
        widened += found.widened
        problems.extend(found.disagreements)
    return Cover(steps, widened, tuple(problems))


def _unsat(solver: Any, terms: list[Any]) -> bool:
    """Whether the terms (some maybe Python bools) are unsatisfiable together; on sat the
    solver keeps its model."""
    import z3

    solver.reset()
    solver.add(*(ops.bool_term(t) for t in terms))
    return bool(solver.check() == z3.unsat)
