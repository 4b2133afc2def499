"""Inductive proofs: a property, strengthened with named auxiliary invariants, holds in every
initial state of the model's shape and is preserved by every action.

Each obligation is one query, timed: (invariant, "initial") or (invariant, action family). The
pre-state is any symbolic state where every invariant being proved holds (not a reachable
state); a satisfiable query is a counterexample to induction: a before/after pair that breaks
the invariant, not shown reachable.

The metadata log is abstract here (`Encoding(abstract_history=True)`): a broker applying metadata
may apply any record the history facts allow. A history fact is a predicate of a record and the
current state; it is proved of every record the controller ever commits: of the current record,
and kept by every action for any record that has them (the `history.<fact>` obligations). Any
two records then also agree with each other (`pair`): each met the older one when it was
committed.

What each obligation assumes and shows is built by `goals.Goals`; this module discharges them.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import z3

from kafkarep.model.config import ModelConfig
from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.goals import Goals, Pair
from kafkarep.symbolic.initial import initial, shape_constraint
from kafkarep.symbolic.lemmas import AnyFact, Fact, Invariant
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState, PartitionRegistration
from kafkarep.symbolic.symmetry import symmetric_families, taken
from kafkarep.symbolic.transition import Instance, Relation


class Obligation(NamedTuple):
    invariant: str
    action: str  # "initial" or a family name
    status: str  # "proved", "failed" or "unknown"
    seconds: float
    # before, the instance taken, after
    cti: tuple[ClusterState, Instance, ClusterState] | None = None


class Probe(NamedTuple):
    """One step an obligation takes: its instance, argument, guard and successor, and the
    successor as a substitution for the post-state variables."""

    instance: Instance
    arg: Any
    guard: Term
    after: ClusterState
    successor: list[tuple[z3.ExprRef, z3.ExprRef]]
    keeps_current: bool  # the step leaves the controller's registration as it is
    # the applied record's pair facts (an "h" instance): against the current registration,
    # and against the records a history fact (and a pair fact) is about
    applied: Term = True
    history: Term = True
    paired: Term = True


Context = tuple[z3.Solver, list[Probe]]


# A step's goal split into at most this many parts is asked part by part, its premises
# assumed; a larger one is asked whole, with the family's other steps, in one query. Measured on
# the completeness proofs at N = 5 (`--workers 1`): 125 s asked whole, 178 s with every goal
# split, 98 s so (`history.applied_as_leader` under `apply_metadata`: 16.7 s whole, 5.6 s in two
# parts; a goal of many small parts pays a query each). An invariant or fact marked `by_part` is
# always asked part by part: the number of parts does not tell which goals Z3 refutes faster in
# pieces (`one_leader_per_epoch` has 166 and is faster whole).
SPLIT_UP_TO = 2


Part = tuple[list[z3.BoolRef], z3.BoolRef]  # premises, conclusion


def flat(term: z3.BoolRef) -> Iterator[z3.BoolRef]:
    """The conjuncts of a term: nested conjunctions flattened, `true` left out."""
    if z3.is_and(term):
        for child in term.children():
            yield from flat(child)
    elif not z3.is_true(term):
        yield term


def conjuncts(goal: z3.BoolRef) -> list[Part]:
    """The goal as (premises, conclusion) pairs whose conjunction it is: its implications'
    premises taken as assumptions, its first conjunction split (`P => A and B` is `P => A` and
    `P => B`)."""
    out: list[Part] = []

    def walk(t: z3.BoolRef, premises: list[z3.BoolRef], split: bool) -> None:
        if split and z3.is_and(t):
            for c in t.children():
                walk(c, premises, False)
        elif z3.is_implies(t):
            a, b = t.children()
            walk(b, [*premises, a], split)
        elif z3.is_or(t) and t.num_args() == 2 and z3.is_not(t.arg(0)):
            walk(t.arg(1), [*premises, t.arg(0).arg(0)], split)
        elif z3.is_or(t) and t.num_args() == 2 and z3.is_not(t.arg(1)):
            walk(t.arg(0), [*premises, t.arg(1).arg(0)], split)
        else:
            out.append((premises, t))

    walk(goal, [], True)
    return out


class Prover:
    """Discharges obligations for one model; results are cached."""

    def __init__(
        self,
        cfg: ModelConfig,
        invariants: tuple[Invariant, ...],
        facts: tuple[AnyFact, ...],
        timeout: float = 60.0,
        pair: Pair | None = None,
    ) -> None:
        self.enc = Encoding(cfg, abstract_history=True, free_elections=True)
        self.invariants = invariants
        self.all_facts = facts
        self.pair = pair
        self.symmetric = symmetric_families(self.enc)
        self.rel = Relation(self.enc)
        self.families: dict[str, list[Instance]] = {}
        for instance in self.rel.instances:
            self.families.setdefault(instance.family, []).append(instance)
        # the steps each family's obligations take, and under a symmetric family how many
        # brokers they name
        self.taken: dict[str, list[Instance]] = {}
        fixed: dict[str, int] = {}
        for family, instances in self.families.items():
            if family in self.symmetric:
                self.taken[family], fixed[family] = taken(instances)
            else:
                self.taken[family] = instances
        self.goals = Goals(self.enc, invariants, facts, pair, fixed)
        self.by_part = frozenset(
            [i.name for i in invariants if i.by_part]
            + [f"history.{f.name}" for f in facts if isinstance(f, Fact) and f.by_part]
        )
        self.enc.history = self.goals.applied
        self.timeout = timeout
        self.done: dict[tuple[Any, ...], Obligation] = {}
        self.contexts: dict[tuple[str, frozenset[str]], Context] = {}
        self.probes: dict[str, list[Probe]] = {}
        self.variants: dict[tuple[AnyFact, ...], Prover] = {}
        # The variables every obligation is stated over: the pre-state, a post-state (replaced
        # by each step's successor: see `_goal_term`), and the records a history fact is about.
        self.before = self.enc.fresh("x")
        self.after = self.enc.fresh("y")
        self.record = self.enc.fresh("record", PartitionRegistration)
        self.second = self.enc.fresh("record2", PartitionRegistration)
        self.assumed_conjuncts: dict[frozenset[str], frozenset[int]] = {}
        self.conjunct_ids: dict[int, tuple[z3.BoolRef, frozenset[int]]] = {}
        self.goal_terms: dict[tuple[str, int | None, bool], z3.BoolRef] = {}
        self.start: ClusterState | None = None  # the initial states of the model's shape
        self.start_shape: Term = True

    def with_facts(self, facts: tuple[AnyFact, ...]) -> Prover:
        """A prover for the same model assuming (and proving) other history facts: the apply
        relation depends on them, so it is another prover (one per fact set, kept)."""
        if facts == self.all_facts:
            return self
        variant = self.variants.get(facts)
        if variant is None:
            variant = Prover(self.enc.cfg, self.invariants, facts, self.timeout, self.pair)
            self.variants[facts] = variant
        return variant

    def _solver(self) -> z3.Solver:
        solver = z3.Solver()
        solver.set("timeout", max(1, int(self.timeout * 1000)))
        # Z3's older arithmetic solver: 10 to 40% faster on the heaviest obligations here
        # (`history.applied_as_leader`), 4% on the whole N = 3 completeness proof
        solver.set("smt.arith.solver", 2)
        # Every atom asserted, not only those Z3 finds relevant, and unit clauses kept to the
        # end of a search: the completeness proofs at N = 5 in 0.8 of the time, measured side
        # by side (docs/prove.md, "How the proof was closed, and kept fast"); not for BMC,
        # where they cost more (kafka_7128's depth-10 search: 46 against 29 s)
        solver.set("smt.relevancy", 0)
        solver.set("smt.delay_units", True)
        return solver

    def _check(self, solver: z3.Solver, goal: Term) -> tuple[str, z3.ModelRef | None]:
        if isinstance(goal, bool) and not goal:
            return "proved", None
        solver.push()
        try:
            solver.add(ops.bool_term(goal))
            result = solver.check()
            if result == z3.unsat:
                return "proved", None
            if result == z3.sat:
                return "failed", solver.model()
            return "unknown", None
        finally:
            solver.pop()

    def initiation(self, name: str) -> Obligation:
        key = (name, "initial")
        if key in self.done:
            return self.done[key]
        enc = self.enc
        started = time.monotonic()
        if self.start is None:
            isr, leader = enc.sets.var("i.isr"), z3.Int("i.leader")
            fenced = enc.sets.var("i.fenced")
            self.start = initial(enc, isr, leader, fenced)
            self.start_shape = ops.bool_term(shape_constraint(enc, isr, leader, fenced))
        state = self.start
        goal = self.goals.goal(name, self.record, self.second)
        solver = self._solver()
        solver.add(self.start_shape)
        status, model = self._check(solver, ops.not_(goal(state, state)))
        cti = None
        if model is not None:
            start = enc.evaluate(model, state)
            cti = (start, self.rel.instances[0], start)
        result = Obligation(name, "initial", status, time.monotonic() - started, cti)
        self.done[key] = result
        return result

    def _taken(self, family: str) -> list[Instance]:
        """The steps an obligation of the family takes: under a symmetric family, broker 1's
        (naming broker 2 if they name a second broker: `symmetry.taken`)."""
        return self.taken[family]

    def _context(self, family: str, together: frozenset[str]) -> Context:
        """One solver per (family, invariant set): the pre-state's assumptions and the steps of
        the family's instances, shared by that family's obligations (each a push/pop)."""
        key = (family, together)
        found = self.contexts.get(key)
        if found is not None:
            return found
        solver = self._solver()
        for a in self.goals.assumed(self.before, together):
            solver.add(ops.bool_term(a))
        context = (solver, self._probes(family))
        self.contexts[key] = context
        return context

    def _probes(self, family: str) -> list[Probe]:
        """The steps of the family's instances taken, from the pre-state (built once)."""
        found = self.probes.get(family)
        if found is not None:
            return found
        enc = self.enc
        before = self.before
        probes = []
        for k, instance in enumerate(self._taken(family)):
            arg = _argument(enc, instance, k)
            after = instance.update(before, arg)
            guard = instance.guard(before, arg)
            same = all(
                map(
                    _same,
                    enc.leaves(before.partition, PartitionRegistration),
                    enc.leaves(after.partition, PartitionRegistration),
                )
            )
            probe = Probe(instance, arg, guard, after, self._successor(after), same)
            if instance.arg == "h":
                # the record applied is a record of the log: against the current one, and
                # against the records the obligation is about
                probe = probe._replace(
                    applied=self.goals.paired(arg, before.partition, before),
                    history=self.goals.two(self.record, arg, before),
                    paired=self.goals.two(self.second, arg, before),
                )
            probes.append(probe)
        self.probes[family] = probes
        return probes

    def _successor(self, after: ClusterState) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        """The substitution of a successor for the post-state variables."""
        out = []
        for var, value in zip(self.enc.leaves(self.after), self.enc.leaves(after), strict=True):
            if ops.const(var):
                # a field no step changes (a constant of every state: `Encoding.fixed`)
                assert _same(var, value), f"a step changed a fixed field to {value}"
                continue
            if isinstance(value, bool):
                value = z3.BoolVal(value)
            elif isinstance(value, int):
                value = ops.int_val(value)
            out.append((var, value))
        return out

    def _goal_term(self, name: str, family: str, current: bool) -> z3.BoolRef:
        """What an obligation shows, over the pre- and post-state variables: built once per
        invariant (and symmetry) and instantiated for each step by substitution, which Z3 does
        far faster than Python builds the term again over each successor."""
        key = (name, self.goals.fixed_by(family), current)
        found = self.goal_terms.get(key)
        if found is None:
            goal = self.goals.goal(name, self.record, self.second, family, current)
            found = ops.bool_term(goal(self.before, self.after))
            self.goal_terms[key] = found
        return found

    def consecution(self, name: str, family: str, together: frozenset[str]) -> Obligation:
        key = (name, family, together)
        if key in self.done:
            return self.done[key]
        enc = self.enc
        started = time.monotonic()
        solver, probes = self._context(family, together)
        cases: list[tuple[Probe, Term]] = []  # the ways to break it: each a disjunct
        together_cases: list[Term] = []  # asked in one query
        alone: list[Term] = []  # asked one by one
        for probe in probes:
            guard = self._guard(probe, name)
            goal = self._goal_term(name, family, not probe.keeps_current)
            kept = z3.substitute(goal, *probe.successor)
            parts = conjuncts(kept)
            left = self._left_to_show(parts, together, guard)
            if len(left) <= SPLIT_UP_TO or name in self.by_part:
                broken = [ops.and_(guard, *premises, ops.not_(part)) for premises, part in left]
                alone += broken
            else:
                if not _same_parts(left, parts):
                    kept = z3.And(*(ops.implies(ops.and_(*p), c) for p, c in left))
                broken = [ops.and_(guard, ops.not_(kept))]
                together_cases += broken
            cases += [(probe, b) for b in broken]
        queries = ([ops.or_(*together_cases)] if together_cases else []) + alone
        status, model = "proved", None
        for query in queries:  # unsatisfiable each, so their disjunction is
            status, model = self._check(solver, query)
            if status != "proved":
                break
        cti = None
        if model is not None:
            for probe, broken in cases:
                if z3.is_true(model.eval(ops.bool_term(broken), True)):
                    before = enc.evaluate(model, self.before)
                    cti = (before, probe.instance, enc.evaluate(model, probe.after))
                    break
        result = Obligation(name, family, status, time.monotonic() - started, cti)
        self.done[key] = result
        return result

    def _guard(self, probe: Probe, name: str) -> Term:
        """What a step of the obligation's family assumes: its guard, and the applied record's
        pair facts (against the records a history or pair fact's obligation is about)."""
        history = name.startswith("history.")
        paired = any(f"history.{f.name}" == name for f in self.goals.pair_facts)
        return ops.and_(
            probe.guard,
            probe.applied,
            probe.history if history else True,
            probe.paired if paired else True,
        )

    def _left_to_show(self, parts: list[Part], together: frozenset[str], guard: Term) -> list[Part]:
        """The parts of a step's goal, each without the conjuncts of its conclusion that are
        also conjuncts of what it assumes (the invariants proved together and the history facts
        of the context, the step's guard, the part's premises), and without a part left with
        none: these hold whatever the step, and asking Z3 costs a query each (a tenth of its
        work on the completeness proofs: an invariant about fields the step keeps is, after the
        substitution, the very term the context assumes). Terms are compared as Z3 shares
        them: by AST id."""
        given = self._assumed_conjuncts(together)
        if not isinstance(guard, bool):
            given = given | self._conjunct_ids(guard)
        out = []
        for premises, conclusion in parts:
            have = given.union(*(self._conjunct_ids(p) for p in premises))
            rest = [c for c in flat(conclusion) if c.get_id() not in have]
            if rest:
                out.append((premises, rest[0] if len(rest) == 1 else z3.And(*rest)))
        return out

    def _assumed_conjuncts(self, together: frozenset[str]) -> frozenset[int]:
        found = self.assumed_conjuncts.get(together)
        if found is None:
            terms = [ops.bool_term(a) for a in self.goals.assumed(self.before, together)]
            found = frozenset().union(*(self._conjunct_ids(t) for t in terms))
            self.assumed_conjuncts[together] = found
        return found

    def _conjunct_ids(self, term: z3.BoolRef) -> frozenset[int]:
        """The AST ids of a term's conjuncts, kept with the term: Z3 reuses the id of an AST
        it has freed, and the conjuncts live as long as the term does."""
        found = self.conjunct_ids.get(term.get_id())
        if found is None:
            found = (term, frozenset(c.get_id() for c in flat(term)))
            self.conjunct_ids[term.get_id()] = found
        return found[1]

    def prove(
        self, names: list[str], stop_at_failure: bool = False, workers: int = 1
    ) -> list[Obligation]:
        """Every obligation of these invariants, proved together: each holds initially, and
        each action keeps it in any state where all of them (and the history facts) hold.
        The names must include every history fact (`history.<fact>`). With several workers,
        the obligations are discharged in that many processes, and the result is the same
        list (stopping at the first failure: the workers stop at the first they find, and
        what precedes it here and is not done is discharged in this process)."""
        together = frozenset(names)
        if workers > 1:
            self._discharge_in_parallel(names, together, workers, stop_at_failure)
        out = []
        for name in names:
            out.append(self.initiation(name))
            for family in self.families:
                if stop_at_failure and out[-1].status != "proved":
                    return out
                out.append(self.consecution(name, family, together))
        return out

    def job_order(self, names: list[str], stop_at_failure: bool) -> list[str]:
        """The order the workers take the invariants in. Stopping at the first failure, the
        sequential one, so that the failure it meets first is met as soon: the property's own
        clauses lead, and where induction does not close they fail in seconds, where the heavy
        facts take minutes each (at N = 5, 1,130 s against 92 s). Otherwise the heaviest first
        (see `_discharge_in_parallel`)."""
        if stop_at_failure:
            return list(names)
        heavy = {f"history.{f.name}" for f in self.goals.facts if f.by is not None}
        heavy |= {f"history.{f.name}" for f in self.goals.pair_facts}
        return sorted(names, key=lambda n: (n not in heavy, n not in self.by_part))

    def _discharge_in_parallel(
        self, names: list[str], together: frozenset[str], workers: int, stop_at_failure: bool
    ) -> None:
        """Fill the cache with every obligation not in it yet, from worker processes (forked:
        each builds its own prover for the same model and invariants). A job is one invariant's
        or fact's obligations, initial and under every family, so that its goal terms are built
        in one worker only (at N = 5, 7.5 CPU seconds in all, a tenth of a worker's). The
        heaviest go first, so that no long one is left to run while the other workers idle: the
        per-broker history facts (each states something of every broker) and the pair facts
        (each assumes every fact of two records), then the invariants asked by part. Stopping
        at the first failure, the workers stop at the first one they find: `prove` then
        discharges in this process whatever precedes it in its own order and is not done yet."""
        jobs: list[list[tuple[str, str]]] = []
        for name in self.job_order(names, stop_at_failure):
            job = [(name, "initial")] if (name, "initial") not in self.done else []
            job += [(name, f) for f in self.families if (name, f, together) not in self.done]
            if job:
                jobs.append(job)
        if sum(map(len, jobs)) < 2:
            return
        global _TEMPLATE
        _TEMPLATE = self
        context = multiprocessing.get_context("fork")
        try:
            with context.Pool(min(workers, len(jobs)), initializer=_start_worker) as pool:
                for job, results in zip(
                    jobs, pool.imap(_discharge, [(job, together) for job in jobs]), strict=True
                ):
                    for (name, family), (status, seconds, cti) in zip(job, results, strict=True):
                        found = None
                        if cti is not None:
                            before, index, after = cti
                            taken = (
                                self.rel.instances[0] if index < 0 else self.families[family][index]
                            )
                            found = (before, taken, after)
                        key = (name, "initial") if family == "initial" else (name, family, together)
                        self.done[key] = Obligation(name, family, status, seconds, found)
                    if stop_at_failure and any(r[0] != "proved" for r in results):
                        break  # leaving the pool's block terminates the workers
        finally:
            _TEMPLATE = None


# The prover a worker process copies (set in the parent just before forking).
_TEMPLATE: Prover | None = None
_WORKER: Prover | None = None


def _start_worker() -> None:
    global _WORKER
    template = _TEMPLATE
    assert template is not None
    _WORKER = Prover(
        template.enc.cfg, template.invariants, template.all_facts, template.timeout, template.pair
    )


Outcome = tuple[str, float, tuple[ClusterState, int, ClusterState] | None]


def _discharge(job: tuple[list[tuple[str, str]], frozenset[str]]) -> list[Outcome]:
    """A job's obligations in a worker, each (name, family) or (name, "initial"): status,
    seconds and counterexample to induction of each (with the index of the instance taken in
    its family, as instances do not cross processes)."""
    obligations, together = job
    prover = _WORKER
    assert prover is not None
    out: list[Outcome] = []
    for name, family in obligations:
        if family == "initial":
            o = prover.initiation(name)
            out.append((o.status, o.seconds, None if o.cti is None else (o.cti[0], -1, o.cti[2])))
            continue
        o = prover.consecution(name, family, together)
        if o.cti is None:
            out.append((o.status, o.seconds, None))
            continue
        before, instance, after = o.cti
        out.append((o.status, o.seconds, (before, prover.families[family].index(instance), after)))
    return out


def _same_parts(a: list[Part], b: list[Part]) -> bool:
    """Nothing dropped: the whole goal is asked as it is (rebuilt from its parts, the same
    query costs Z3 more)."""
    if len(a) != len(b):
        return False
    return all(x.get_id() == y.get_id() for (_, x), (_, y) in zip(a, b, strict=True))


def _same(a: Term, b: Term) -> bool:
    """Two leaves are the same term (or the same constant)."""
    if ops.const(a) or ops.const(b):
        return type(a) is type(b) and bool(a == b)
    return bool(a.eq(b))


def _argument(enc: Encoding, instance: Instance, k: int) -> Any:
    if instance.arg == "i":
        return z3.Int(f"arg{k}")
    if instance.arg == "s":
        return enc.sets.var(f"arg{k}")
    if instance.arg == "h":
        return enc.fresh(f"arg{k}", PartitionRegistration)
    return None
