"""Terms: values that are Python values or Z3 terms, and the operations on them.

The controller rules are written once against these operations. Given Python values (the
explorer, the tests, the conformance cases) they compute Python values, folding every condition
as Python would; given Z3 terms (the prover) they build the terms of the transition relation.
Constants are folded, so a condition known to be True picks its branch and model constants never
reach the solver.

Sorts: booleans (bool | BoolRef) and integers (int | ArithRef, or bit-vectors within
`bounded_integers`). Broker sets and replica lists have a representation per domain
(`kafkarep.rules.domain`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# Z3 comes with the `prove` extra (pip install 'kafkarep[prove]'). The explorer and every other
# engine run the rules on Python values, which each operation below folds before any `z3.` call:
# only the prover, which passes Z3 terms, reaches one, so without Z3 the rules run as they are.
try:
    import z3
except ModuleNotFoundError:  # tests/test_extras.py runs the explorer so
    z3 = None

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
    # `x is True` is `isinstance(x, bool) and x`, at a fraction of the cost: these run for
    # every condition the rules, the model and the invariants evaluate on Python values, where
    # every x is a bool and no list is made
    out: list[Term] | None = None
    for x in xs:
        if x is True:
            continue
        if x is False:
            return False
        if out is None:
            out = [x]
        else:
            out.append(x)
    if out is None:
        return True
    return out[0] if len(out) == 1 else z3.And(out)


def or_(*xs: Term) -> Term:
    out: list[Term] | None = None
    for x in xs:
        if x is False:
            continue
        if x is True:
            return True
        if out is None:
            out = [x]
        else:
            out.append(x)
    if out is None:
        return False
    return out[0] if len(out) == 1 else z3.Or(out)


def not_(x: Term) -> Term:
    if x is True:
        return False
    if x is False:
        return True
    return z3.Not(x)


def bool_term(x: Term) -> Term:
    """A Z3 boolean (a folded constant becomes BoolVal)."""
    return z3.BoolVal(x) if isinstance(x, bool) else x


def implies(a: Term, b: Term) -> Term:
    if a is False:
        return True
    if a is True:
        return b
    return or_(z3.Not(a), b)


def eq(a: Term, b: Term) -> Term:
    # on two Python values, Python's equality (a bool); otherwise Z3's (a term)
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
