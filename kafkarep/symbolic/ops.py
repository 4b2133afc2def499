"""Term helpers that evaluate concretely or build Z3 terms, folding constants.

The symbolic rules are written once against these helpers. Given Python values (a concrete
state) they compute Python values, which is how the agreement test runs them against the
concrete rules on every (state, action) pair; given Z3 terms they build the transition relation.
Constants are folded (a condition known to be True picks its branch), so model constants such as
broker ids never reach the solver.

Sorts: booleans (bool | BoolRef), integers (int | ArithRef), broker sets (int bitmask |
BitVecRef of width N+1: bit b for broker b, bit 0 for the id -1 that Kafka's last-known-leader
field can hold), epoch sets (frozenset | Array Int -> Bool).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import z3

Term = Any  # bool | int | frozenset | z3.ExprRef

# Integers are Z3 integers, or, for bounded model checking, bit-vectors of this many bits
# (signed): every integer there is small (epochs grow by at most one per step), and the
# solver then works on propositional logic, which is much faster for these formulas.
_BITS: list[int] = []


class bounded_integers:
    """Within `with bounded_integers(bits):` integers are `bits`-bit signed bit-vectors."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def __enter__(self) -> None:
        _BITS.append(self.bits)

    def __exit__(self, *exc: object) -> None:
        _BITS.pop()


def int_var(name: str) -> Term:
    return z3.BitVec(name, _BITS[-1]) if _BITS else z3.Int(name)


def int_val(value: int) -> Term:
    return z3.BitVecVal(value, _BITS[-1]) if _BITS else z3.IntVal(value)


def int_value(value: Term) -> int:
    """A model's value of an integer term."""
    if z3.is_bv_value(value):
        return int(value.as_signed_long())
    return int(value.as_long())


def const(x: Term) -> bool:
    return isinstance(x, bool | int | frozenset)


def and_(*xs: Term) -> Term:
    out = []
    for x in xs:
        if isinstance(x, bool):
            if not x:
                return False
            continue
        out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else z3.And(out)


def or_(*xs: Term) -> Term:
    out = []
    for x in xs:
        if isinstance(x, bool):
            if x:
                return True
            continue
        out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else z3.Or(out)


def not_(x: Term) -> Term:
    return (not x) if isinstance(x, bool) else z3.Not(x)


def bool_term(x: Term) -> Term:
    """A Z3 boolean (a folded constant becomes BoolVal)."""
    return z3.BoolVal(x) if isinstance(x, bool) else x


def implies(a: Term, b: Term) -> Term:
    return or_(not_(a), b)


def eq(a: Term, b: Term) -> Term:
    if const(a) and const(b):
        return bool(a == b)
    return a == b


def ne(a: Term, b: Term) -> Term:
    return not_(eq(a, b))


def ite(c: Term, a: Term, b: Term) -> Term:
    """If-then-else on booleans and integers (not on broker sets: see `Sets.ite`)."""
    if isinstance(c, bool):
        return a if c else b
    if a is b or (const(a) and const(b) and a == b and type(a) is type(b)):
        return a
    if (
        isinstance(a, int)
        and not isinstance(a, bool)
        and isinstance(b, int)
        and not isinstance(b, bool)
    ):
        a = int_val(a)
    return z3.If(c, a, b)


def imin(a: Term, b: Term) -> Term:
    if const(a) and const(b):
        return min(a, b)
    return ite(a <= b, a, b)


def imax(a: Term, b: Term) -> Term:
    if const(a) and const(b):
        return max(a, b)
    return ite(a >= b, a, b)


def select(
    items: Sequence[Term], index: Term, default: Term, pick: Callable[..., Term] = ite
) -> Term:
    """items[index] for a constant or symbolic index; `default` out of range."""
    if isinstance(index, int):
        return items[index] if 0 <= index < len(items) else default
    out = default
    for k in range(len(items) - 1, -1, -1):
        out = pick(index == k, items[k], out)
    return out


class Sets:
    """Broker-id sets for a cluster of N brokers: a bitmask when concrete, a tuple of N+1
    booleans when symbolic (element 0 is the id -1)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.width = n + 1
        self.ids = (-1, *range(1, n + 1))

    def index(self, broker: int) -> int:
        return 0 if broker == -1 else broker

    def bits(self, s: Term) -> tuple[Term, ...]:
        if isinstance(s, int):
            return tuple(bool(s >> i & 1) for i in range(self.width))
        return s

    def pack(self, bits: Sequence[Term]) -> Term:
        if all(isinstance(b, bool) for b in bits):
            return sum(1 << i for i, b in enumerate(bits) if b)
        return tuple(bits)

    def bit(self, broker: Term) -> Term:
        if isinstance(broker, int):
            if broker == -1 or 1 <= broker <= self.n:
                return 1 << self.index(broker)
            return 0
        return tuple(broker == b for b in self.ids)

    def of(self, brokers: Sequence[int] | frozenset[int] | range) -> int:
        mask = 0
        for b in brokers:
            mask |= 1 << self.index(b)
        return mask

    def members(self, mask: int) -> frozenset[int]:
        return frozenset(b for b in self.ids if mask >> self.index(b) & 1)

    def has(self, s: Term, broker: Term) -> Term:
        if not isinstance(broker, int):
            return or_(*(and_(broker == b, self.has(s, b)) for b in self.ids))
        if broker != -1 and not 1 <= broker <= self.n:
            return False
        i = self.index(broker)
        if isinstance(s, int):
            return bool(s >> i & 1)
        return s[i]

    def _zip(self, a: Term, b: Term, f: Callable[[Term, Term], Term]) -> Term:
        return self.pack([f(x, y) for x, y in zip(self.bits(a), self.bits(b), strict=True)])

    def union(self, *xs: Term) -> Term:
        out: Term = 0
        for x in xs:
            out = out | x if isinstance(out, int) and isinstance(x, int) else self._zip(out, x, or_)
        return out

    def inter(self, a: Term, b: Term) -> Term:
        if isinstance(a, int) and isinstance(b, int):
            return a & b
        return self._zip(a, b, and_)

    def minus(self, a: Term, b: Term) -> Term:
        if isinstance(a, int) and isinstance(b, int):
            return a & ~b
        return self._zip(a, b, lambda x, y: and_(x, not_(y)))

    def eq(self, a: Term, b: Term) -> Term:
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return and_(*(eq(x, y) for x, y in zip(self.bits(a), self.bits(b), strict=True)))

    def ne(self, a: Term, b: Term) -> Term:
        return not_(self.eq(a, b))

    def empty(self, s: Term) -> Term:
        if isinstance(s, int):
            return s == 0
        return and_(*(not_(x) for x in s))

    def subset(self, a: Term, b: Term) -> Term:
        return self.empty(self.minus(a, b))

    def size(self, s: Term) -> Term:
        if isinstance(s, int):
            return s.bit_count()
        total: Term = 0
        for x in s:
            total = total + (int(x) if isinstance(x, bool) else z3.If(x, int_val(1), int_val(0)))
        return total

    def ite(self, c: Term, a: Term, b: Term) -> Term:
        if isinstance(c, bool):
            return a if c else b
        if a is b or (isinstance(a, int) and isinstance(b, int) and a == b):
            return a
        return self._zip(a, b, lambda x, y: ite(c, x, y))

    def var(self, name: str) -> tuple[Term, ...]:
        return tuple(z3.Bool(f"{name}.{i}") for i in range(self.width))

    def value(self, model: z3.ModelRef, s: Term) -> int:
        if isinstance(s, int):
            return s
        return self.pack([x if isinstance(x, bool) else z3.is_true(model.eval(x, True)) for x in s])


# --- epoch sets (the positively acknowledged records at one offset) ----------------------------
# Concrete: a frozenset of epochs. Symbolic: a tuple of slots holding epochs, 0 for a free slot
# (epochs are at least 1); as many slots as the model has records, so never too few.

EMPTY_EPOCHS: frozenset[int] = frozenset()


def epoch_slots(s: Term, size: int) -> tuple[Term, ...]:
    if isinstance(s, frozenset):
        members = sorted(s)
        return tuple(members) + (0,) * (size - len(members))
    return s


def epochs_add(s: Term, epoch: Term, when: Term, size: int) -> Term:
    if isinstance(when, bool) and not when:
        return s
    if isinstance(s, frozenset) and isinstance(epoch, int) and isinstance(when, bool):
        return s | {epoch}
    slots = epoch_slots(s, size)
    present = or_(*(eq(x, epoch) for x in slots))
    out = []
    earlier_free: Term = False
    for x in slots:
        first_free = and_(eq(x, 0), not_(earlier_free))
        out.append(ite(and_(when, not_(present), first_free), epoch, x))
        earlier_free = or_(earlier_free, eq(x, 0))
    return tuple(out)


def epochs_within(s: Term, allowed: Term, present: Term) -> Term:
    """s is a subset of {allowed} when `present`, else empty."""
    if isinstance(s, frozenset) and const(allowed) and isinstance(present, bool):
        return s <= ({allowed} if present else set())
    slots = epoch_slots(s, len(s) if isinstance(s, tuple) else 1)
    return and_(*(or_(eq(x, 0), and_(present, eq(x, allowed))) for x in slots))


def epochs_ite(c: Term, a: Term, b: Term, size: int) -> Term:
    if isinstance(c, bool):
        return a if c else b
    if a is b:
        return a
    return tuple(
        ite(c, x, y) for x, y in zip(epoch_slots(a, size), epoch_slots(b, size), strict=True)
    )
