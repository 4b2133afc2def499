"""The agreement check: the symbolic rules against the concrete ones, on every (state, action)
pair of a bounded exploration.

For each concrete state reached (breadth first, to a depth) the projection is taken, and every
instance of the transition relation is evaluated on it, for every argument: the instances whose
guard holds must be exactly the concrete enabled actions, and each update must equal the
projection of the concrete successor. The evaluation runs the same functions that build the Z3
relation, on Python values; `z3_sample` also evaluates the Z3 terms themselves on some states.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import properties as registry
from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState, Role
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding, Sym, comparable
from kafkarep.symbolic.induction import PairFact
from kafkarep.symbolic.properties import CLAUSES
from kafkarep.symbolic.transition import Relation


class Path(NamedTuple):
    """What a projection needs that the concrete state does not keep, recorded along the path
    that reached it: each value's (offset, epoch) when written, and `Ghost.committed_in`."""

    locs: dict[int, tuple[int, int]]
    committed_in: tuple[int, ...] = ()

    def key(self) -> tuple[object, ...]:
        return tuple(sorted(self.locs.items())), self.committed_in


def project(enc: Encoding, state: ClusterState, path: Path) -> Sym:
    return enc.project(state, path.locs, path.committed_in)


class Disagreement(NamedTuple):
    state: ClusterState
    action: Action | None
    problem: str


class Agreement(NamedTuple):
    states: int
    pairs: int  # (state, instance, argument) evaluations
    enabled: int  # of which enabled: concrete steps compared
    disagreements: tuple[Disagreement, ...]


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


def explore(cfg: ModelConfig, depth: int) -> Iterator[tuple[ClusterState, Path]]:
    """Concrete states to `depth`, each with what was recorded on the way (`Path`)."""
    start = initial_state(cfg)
    seen: set[tuple[ClusterState, tuple[object, ...]]] = {(start, Path({}).key())}
    level: list[tuple[ClusterState, Path]] = [(start, Path({}))]
    for d in range(depth + 1):
        following = []
        for state, path in level:
            yield state, path
            if d == depth:
                continue
            for action, after in successors(cfg, state):
                after_path = written(state, after, action, path)
                key = (after, after_path.key())
                if key not in seen:
                    seen.add(key)
                    following.append((after, after_path))
        level = following


def check_state(
    enc: Encoding, rel: Relation, state: ClusterState, path: Path
) -> tuple[int, int, list[Disagreement]]:
    cfg = enc.cfg
    problems: list[Disagreement] = []
    before = project(enc, state, path)
    for name, clause in CLAUSES.items():
        symbolic = clause(enc, before)
        concrete = concrete_clause(name)(cfg, state) is None
        if symbolic is not concrete:
            problems.append(
                Disagreement(state, None, f"{name}: symbolic {symbolic}, concrete {concrete}")
            )
    expected: dict[Action, ClusterState] = {}
    for action, after in successors(cfg, state):
        if action in expected:
            problems.append(Disagreement(state, action, "the concrete model lists it twice"))
        expected[action] = after
    got: dict[Action, Sym] = {}
    evaluations = 0
    for instance in rel.instances:
        for arg in rel.domain(instance, before):
            evaluations += 1
            enabled = instance.guard(before, arg)
            if not isinstance(enabled, bool):
                problems.append(Disagreement(state, None, f"{instance.label}: guard not constant"))
                continue
            if not enabled:
                continue
            action = rel.action(instance, arg, state)
            if action in got:
                problems.append(Disagreement(state, action, "two symbolic instances enable it"))
            got[action] = instance.update(before, arg)
    for action in expected.keys() - got.keys():
        problems.append(Disagreement(state, action, "enabled concretely, not symbolically"))
    for action in got.keys() - expected.keys():
        problems.append(Disagreement(state, action, "enabled symbolically, not concretely"))
    for action in expected.keys() & got.keys():
        after = expected[action]
        want = comparable(project(enc, after, written(state, after, action, path)))
        have = comparable(got[action])
        if have != want:
            problems.append(Disagreement(state, action, difference(have, want)))
    return evaluations, len(expected), problems


def difference(have: object, want: object, path: str = "") -> str:
    """The first field where two projections differ."""
    if isinstance(have, tuple) and isinstance(want, tuple) and len(have) == len(want):
        names = getattr(have, "_fields", None)
        for k, (a, b) in enumerate(zip(have, want, strict=True)):
            if a != b:
                name = names[k] if names else str(k)
                return difference(a, b, f"{path}.{name}" if path else name)
    return f"{path or 'state'}: symbolic {have!r}, concrete {want!r}"


def check(cfg: ModelConfig, depth: int, limit: int = 0) -> Agreement:
    enc = Encoding(cfg)
    rel = Relation(enc)
    states = evaluations = enabled = 0
    problems: list[Disagreement] = []
    for state, path in explore(cfg, depth):
        states += 1
        e, n, found = check_state(enc, rel, state, path)
        evaluations += e
        enabled += n
        problems.extend(found)
        if limit and states >= limit:
            break
    return Agreement(states, evaluations, enabled, tuple(problems))


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
    import time

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
        seen: dict[Action, Sym] = {}
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
            have = have._replace(hist=have.hist[: want.cur.pe])
            if comparable(have) != comparable(want):
                problems.append(Disagreement(state, action, "Z3: " + difference(have, want)))
        for action in expected.keys() - seen.keys():
            problems.append(Disagreement(state, action, "Z3: enabled concretely only"))
        enabled += len(seen)
        if number < exact and seen:
            problems.extend(_only_successors(enc, x, before, state, path, expected, seen))
    return Z3Agreement(len(visited), enabled, time.monotonic() - started, tuple(problems))


def pad(enc: Encoding, sym: Sym) -> Sym:
    return sym._replace(hist=sym.hist + (enc.blank_snap(),) * (enc.c - len(sym.hist)))


def _only_successors(
    enc: Encoding,
    x: Sym,
    before: Sym,
    state: ClusterState,
    path: Path,
    expected: dict[Action, ClusterState],
    seen: dict[Action, Sym],
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
        low = min(b.applied for b in want.brokers)  # records below are compacted away
        differs = [
            z3.Not(z3.And(*[t for t in enc.equal(a, b, spec) if not isinstance(t, bool)] or [True]))
            for a, b, spec in _parts(enc, y, want, low)
        ]
        solver.add(z3.Or(differs))
        if solver.check() != z3.unsat:
            problems.append(Disagreement(state, action, "Z3: another successor is admitted"))
        solver.pop()
    return problems


def _parts(enc: Encoding, y: Sym, want: Sym, low: int) -> Iterator[tuple[object, object, object]]:
    from kafkarep.symbolic.encoding import SORTS, Snap

    for field, spec in zip(Sym._fields, SORTS[Sym], strict=True):
        if field == "hist":
            for k in range(low - 1, want.cur.pe):
                yield y.hist[k], want.hist[k], Snap
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
        low = min(b.applied for b in sym.brokers)
        records = sym.hist[low - 1 :]
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


def free_elections_cover(cfg: ModelConfig, depth: int, limit: int = 0) -> Cover:
    """On every state of a bounded exploration, each enabled step of the exact relation is a
    step of the free one (the over-approximation is one), and every leader the free one admits
    instead was in the ISR or ELR before the step (any replica where the exact election was
    unclean)."""
    import z3

    visited = list(explore(cfg, depth))
    if limit:
        visited = visited[:limit]
    # a symbolic metadata log (the free election makes whether a record is appended symbolic)
    capacity = max(s.partition.partition_epoch for s, _ in visited) + 2
    exact, free = Encoding(cfg, capacity), Encoding(cfg, capacity, free_elections=True)
    exact_rel, free_rel = Relation(exact), Relation(free)
    steps = widened = 0
    problems: list[Disagreement] = []
    solver = z3.Solver()
    for state, path in visited:
        before = pad(exact, project(exact, state, path))
        for precise, loose in zip(exact_rel.instances, free_rel.instances, strict=True):
            for arg in exact_rel.domain(precise, before):
                if precise.guard(before, arg) is not True:
                    continue
                steps += 1
                want = precise.update(before, arg)
                have = loose.update(before, arg)
                action = exact_rel.action(precise, arg, state)
                same = list(free.equal(have, want))
                if any(t is False for t in same) or _unsat(solver, same):
                    problems.append(Disagreement(state, action, "the free election misses it"))
                    continue
                other = ops.ne(have.cur.leader, want.cur.leader)
                if isinstance(other, bool) or _unsat(solver, [other]):
                    continue
                widened += 1
                # clean (from the ISR or ELR) as the exact election was, or unclean like it
                clean = state.partition.isr | state.partition.elr
                eligible = clean if want.cur.leader in clean else set(state.partition.replicas)
                if not _unsat(solver, [ops.ne(have.cur.leader, e) for e in eligible]):
                    leader = solver.model().eval(have.cur.leader, True)
                    problems.append(Disagreement(state, action, f"the free choice elects {leader}"))
    return Cover(steps, widened, tuple(problems))


def _unsat(solver: Any, terms: list[Any]) -> bool:
    """Whether the terms (some maybe Python bools) are unsatisfiable together; on sat the
    solver keeps its model."""
    import z3

    solver.reset()
    solver.add(*(ops.bool_term(t) for t in terms))
    return bool(solver.check() == z3.unsat)
