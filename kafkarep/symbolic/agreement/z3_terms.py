"""The agreement check on the Z3 terms themselves: the guards and successors Z3 evaluates in a
model of each concrete state are the concrete ones, and the relation admits no other successor."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import NamedTuple

import z3

from kafkarep.model.actions import Action, successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.symbolic import state as symbolic
from kafkarep.symbolic.agreement.disagreement import Disagreement, difference
from kafkarep.symbolic.agreement.exploration import Path, explore, pad, project_along, written
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.projection import comparable
from kafkarep.symbolic.state import SORTS
from kafkarep.symbolic.transition import Relation


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
            args = list(rel.domain(instance, project_along(enc, visited[0][0], visited[0][1])))
        else:
            args = [None]
        for arg in args:
            probes.append((instance, arg, instance.guard(x, arg), instance.update(x, arg)))
    problems: list[Disagreement] = []
    enabled = 0
    for number, (state, path) in enumerate(visited):
        before = project_along(enc, state, path)
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
            want = project_along(
                enc, concrete, written(state, concrete, action, path, enc.reassigning)
            )
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
    solver = z3.Solver()
    solver.add(*enc.equal(x, pad(enc, before)))
    problems = []
    for k, (action, update) in enumerate(seen.items()):
        concrete = expected[action]
        want = pad(
            enc,
            project_along(enc, concrete, written(state, concrete, action, path, enc.reassigning)),
        )
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
