"""Broker sets and epoch sets over terms, for the symbolic state (`state`).

The scalar operations (`and_`, `ite`, ...) are `kafkarep.rules.terms`, which the controller rules
are written against; they are re-exported here for the encoding's modules.

Broker sets (int bitmask | tuple of N+1 BoolRef: bit b for broker b, bit 0 for the id -1 that
Kafka's last-known-leader field can hold), epoch sets (frozenset | tuple of epoch slots).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3

from kafkarep.rules.terms import (
    Term,
    and_,
    bool_term,
    bounded_integers,
    const,
    eq,
    imax,
    imin,
    implies,
    int_val,
    int_value,
    int_var,
    ite,
    ne,
    not_,
    or_,
    select,
)

# z3py's argument checks in Python (sorts of every operand, on every call) cost the prover a
# few percent; Z3 itself still refuses a sort mismatch (`Z3Exception`). `python -O` does the same.
z3.z3.Z3_DEBUG = False

__all__ = [
    "EMPTY_EPOCHS",
    "Sets",
    "Term",
    "and_",
    "bool_term",
    "bounded_integers",
    "const",
    "epoch_slots",
    "epochs_add",
    "epochs_ite",
    "epochs_within",
    "eq",
    "imax",
    "imin",
    "implies",
    "int_val",
    "int_value",
    "int_var",
    "ite",
    "ne",
    "not_",
    "or_",
    "select",
]


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
