"""Bounded model checking: the transition relation unrolled K steps from every initial state of
the model's shape (any ISR, leader and fenced brokers its replicas allow; or only the model's own
initial state), asking at each depth whether a property clause can be false. Depths are tried in
order, 0, 1, 2, ..., on one solver that gains one step per depth, so a counterexample is a
shortest one.

Each step is: an action number `act_k` picks an instance whose guard holds, and every field of
state k+1 equals that instance's update of state k (fields an instance leaves alone are not
mentioned). Instances with an argument get a fresh argument variable per step.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import z3

from kafkarep.symbolic import ops
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.initial import initial, model_initial, shape_constraint
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.properties import Clause
from kafkarep.symbolic.state import SORTS, ClusterState
from kafkarep.symbolic.transition import Instance, Relation


class Step(NamedTuple):
    instance: Instance
    arg: Any  # Python value of the instance's argument (None if it has none)


class Counterexample(NamedTuple):
    clause: str
    initial: tuple[frozenset[int], int, frozenset[int]]  # ISR, leader, fenced brokers
    steps: tuple[Step, ...]
    states: tuple[ClusterState, ...]  # Python values, initial state first


class Outcome(NamedTuple):
    found: dict[str, Counterexample]  # by clause
    depth: int  # deepest depth fully checked (a violation: its depth; -1: none)
    seconds: float
    timed_out: bool


def flat(enc: Encoding, spec: Any, value: Any) -> Iterator[tuple[str, Term]]:
    """The boolean and integer leaves of a value, in a fixed order."""
    if spec == "s":
        for bit in enc.sets.bits(value):
            yield "b", bit
    elif spec == "E":
        for slot in ops.epoch_slots(value, enc.r):
            yield "i", slot
    elif isinstance(spec, str):
        yield spec, value
    elif isinstance(spec, tuple):
        for item in value:
            yield from flat(enc, spec[1], item)
    else:
        for item, sort in zip(value, SORTS[spec], strict=True):
            yield from flat(enc, sort, item)


def _same(a: Term, b: Term) -> bool:
    if a is b:
        return True
    return ops.const(a) and ops.const(b) and a == b and type(a) is type(b)


def _choose(c: Term, a: Term, b: Term) -> Term:
    if ops.const(a) and ops.const(b):
        a = z3.BoolVal(a) if isinstance(a, bool) else ops.int_val(a)
    return z3.If(c, a, b)


class Unrolling:
    """The growing BMC formula: states 0..k and the steps between them."""

    def __init__(self, enc: Encoding, every_initial: bool, solver: z3.Solver | None = None) -> None:
        self.enc = enc
        self.rel = Relation(enc)
        self.solver = solver if solver is not None else bmc_solver()
        s = enc.sets
        if every_initial:
            self.isr: Term = s.var("init.isr")
            self.leader: Term = ops.int_var("init.leader")
            self.fenced: Term = s.var("init.fenced")
            self.solver.add(shape_constraint(enc, self.isr, self.leader, self.fenced))
            first = initial(enc, self.isr, self.leader, self.fenced)
        else:
            cfg = enc.cfg
            self.isr, self.leader, self.fenced = s.of(cfg.isr), cfg.leader, s.of(cfg.fenced)
            first = model_initial(enc)
        self.states: list[ClusterState] = [first]
        self.acts: list[z3.ArithRef] = []
        self.args: list[list[Term]] = []

    def extend(self) -> None:
        enc, rel = self.enc, self.rel
        k = len(self.acts)
        before = self.states[-1]
        after = enc.fresh(f"s{k + 1}")
        act = ops.int_var(f"act{k}")
        args: list[Term] = []
        enc.partition_epoch_limit = (
            1 + k
        )  # every initial state has partition epoch 1; a step adds at most 1
        updates = []
        self.solver.add(act >= 0, act < len(rel.instances))
        for i, instance in enumerate(rel.instances):
            if instance.arg == "i":
                arg: Term = ops.int_var(f"arg{k}.{i}")
            elif instance.arg == "s":
                arg = enc.sets.var(f"arg{k}.{i}")
            else:
                arg = None
            args.append(arg)
            guard = instance.guard(before, arg)
            if not (isinstance(guard, bool) and guard):
                self.solver.add(z3.Implies(act == i, guard))
            updates.append(list(flat(enc, ClusterState, instance.update(before, arg))))
        old = list(flat(enc, ClusterState, before))
        leaves = zip(flat(enc, ClusterState, after), old, strict=True)
        for j, ((_, new_leaf), (_, old_leaf)) in enumerate(leaves):
            chain: Term = old_leaf
            for i, update in enumerate(updates):
                leaf = update[j][1]
                if not _same(leaf, old_leaf):
                    chain = _choose(act == i, leaf, chain)
            if ops.const(new_leaf) and not _same(new_leaf, chain):
                raise AssertionError(f"leaf {j} of a field fixed for this model changes: {chain}")
            equation = ops.eq(new_leaf, chain)
            if not isinstance(equation, bool):
                self.solver.add(equation)
        enc.partition_epoch_limit = None
        self.states.append(after)
        self.acts.append(act)
        self.args.append(args)

    def counterexample(self, clause: str, model: z3.ModelRef, depth: int) -> Counterexample:
        enc = self.enc
        steps = []
        states = [enc.evaluate(model, self.states[0])]
        for k in range(depth):
            i = ops.int_value(model.eval(self.acts[k], True))
            instance = self.rel.instances[i]
            arg = self.args[k][i]
            value = None
            if isinstance(arg, tuple):
                value = enc.sets.value(model, arg)
            elif arg is not None:
                value = ops.int_value(model.eval(arg, True))
            steps.append(Step(instance, value))
            states.append(enc.evaluate(model, self.states[k + 1]))
        s = enc.sets

        def members(mask: Term) -> frozenset[int]:
            return frozenset(b for b in s.members(s.value(model, mask)) if b > 0)

        leader = self.leader
        if not isinstance(leader, int):
            leader = ops.int_value(model.eval(leader, True))
        return Counterexample(
            clause,
            (members(self.isr), leader, members(self.fenced)),
            tuple(steps),
            tuple(states),
        )


def bits_for(depth: int) -> int:
    """Bit-vector width for the integers of a `depth`-step unrolling: epochs and partition
    epochs stay below depth + 2, offsets below the record budget, error codes below 32."""
    return max(8, (depth + 40).bit_length() + 1)


def bmc_solver() -> z3.Solver:
    """One solver for the whole deepening, asked with push/pop. Z3's QF_BV solver switches to
    its incremental SAT core at the first push; answering each depth with the QF_BV tactic over
    the solver's assertions instead (the incremental core gets a millisecond, then gives way)
    found the violations of `v35_last_replica_standing` and `isr_join_fetch_offset_at_hwm` in
    40 to 75% of the time."""
    solver = z3.SolverFor("QF_BV")
    solver.set("combined_solver.solver2_timeout", 1)
    solver.set("combined_solver.solver2_unknown", 1)
    return solver


@contextmanager
def deadline(ctx: z3.Context, seconds: float) -> Iterator[None]:
    """Interrupt Z3 in `ctx` once `seconds` have passed, and again every 50 ms until the block
    ends (one that came just before Z3 starts listening would be lost): the query returns
    unknown. Not Z3's `timeout` parameter: set on the BMC solver, it made the same questions
    about four times slower (`v35_last_replica_standing`'s Leader Completeness: 11 s without,
    42 to 47 s with)."""
    if seconds == math.inf:
        yield
        return
    done = threading.Event()

    def interrupt() -> None:
        if done.wait(seconds):
            return
        while not done.is_set():
            ctx.interrupt()
            done.wait(0.05)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def check(
    cfg_enc: Callable[[int], Encoding],
    clauses: dict[str, Clause],
    depth: int,
    every_initial: bool = True,
    seconds: float = 0.0,
) -> Outcome:
    """Is any clause false in some state reachable in at most `depth` steps? Deepening: depth 0,
    1, 2, ... on one solver, the unrolling extended by one step per depth, asking (in a push/pop
    scope) whether some clause is false at exactly the new state. The first depth with a
    violation is its shortest. A depth without one adds its clauses as facts of that state
    (every path satisfies them there), which helps the deeper queries. `seconds` (0: none)
    bounds the whole search; on a timeout `Outcome.depth` is the deepest depth cleared (-1:
    none). `cfg_enc(capacity)` makes the encoding, inside the bounded-integer context."""
    started = time.monotonic()

    def elapsed() -> float:
        return time.monotonic() - started

    with ops.bounded_integers(bits_for(depth)):
        enc = cfg_enc(depth + 1)
        solver = bmc_solver()
        unrolling = Unrolling(enc, every_initial, solver=solver)
        for k in range(depth + 1):
            if k:
                if seconds and elapsed() >= seconds:
                    return Outcome({}, k - 1, elapsed(), True)
                unrolling.extend()
            state = unrolling.states[k]
            bad = [(name, ops.not_(clause(enc, state))) for name, clause in clauses.items()]
            terms = [
                b if not isinstance(b, bool) else z3.BoolVal(b) for _, b in bad if b is not False
            ]
            if not terms:
                continue  # every clause holds in state k, whatever the path
            left = seconds - elapsed() if seconds else math.inf
            if left <= 0:
                return Outcome({}, k - 1, elapsed(), True)
            solver.push()
            solver.add(z3.Or(terms))
            with deadline(solver.ctx, left):
                result = solver.check()
            if result == z3.unknown:
                return Outcome({}, k - 1, elapsed(), True)
            if result == z3.sat:
                model = solver.model()
                for name, b in bad:
                    if b is True or (not isinstance(b, bool) and z3.is_true(model.eval(b, True))):
                        cex = unrolling.counterexample(name, model, k)
                        return Outcome({name: cex}, k, elapsed(), False)
                raise AssertionError("a model without a violated clause")
            solver.pop()
            solver.add(*(z3.Not(t) for t in terms))
        return Outcome({}, depth, elapsed(), False)
