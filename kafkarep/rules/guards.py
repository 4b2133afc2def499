"""Named guards: the small predicates that let a rule or an action go ahead.

Every guard has a qualified name (`area.name`) and, for controller rules, the Kafka error it
answers with, so a model file can switch one off by name to seed a bug (`disable_guards =
["alter_partition.partition_epoch_current"]`); `model/guard_catalogue.py` lists them all, so an
unknown name is an input error rather than a silent no-op. A model may also make a guard refuse
always (`refuse_guards`), to seed a liveness bug: a step that never happens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.rules.terms import Term, and_, ite, not_, or_

REFUSED = "!"  # before a guard's name in the switched-off set: the guard always refuses


class Guard(NamedTuple):
    area: str
    name: str
    error: Error | None
    check: Callable[..., Term]  # a bool, or a term in the prover's domain
    doc: str
    qualified: str  # "area.name", kept: the explorer asks millions of times

    def enabled(self, disabled: frozenset[str]) -> bool:
        """False when a model switched this guard off (to seed a bug)."""
        return self.qualified not in disabled

    def refuses_always(self, disabled: frozenset[str]) -> bool:
        """True when a model made this guard refuse whatever it is asked (a seeded bug)."""
        return REFUSED + self.qualified in disabled

    def passes(self, disabled: frozenset[str], *args: Any) -> Term:
        """True when the predicate holds, or when the guard is switched off; False when it is
        made to refuse always."""
        forced = _forced(disabled, self.qualified) if disabled else None
        return self.check(*args) if forced is None else forced


def _forced(disabled: frozenset[str], qualified: str) -> bool | None:
    """True: the model switched the guard off; False: it made it refuse; None: as written."""
    if qualified in disabled:
        return True
    if REFUSED + qualified in disabled:
        return False
    return None


def guard(area: str, error: Error | None = None) -> Callable[[Callable[..., Term]], Guard]:
    """Make the decorated predicate the guard `area.<function name>`."""

    def make(check: Callable[..., Term]) -> Guard:
        doc = (check.__doc__ or "").strip()
        return Guard(area, check.__name__, error, check, doc, f"{area}.{check.__name__}")

    return make


def all_pass(guards: tuple[Guard, ...], disabled: frozenset[str], *args: Any) -> Term:
    """Every guard passes, in any domain: asked in order, a guard that refuses for certain ends
    the check (the later ones are not asked, as in Kafka)."""
    passes: Term = True
    for entry in guards:
        passes = and_(passes, entry.passes(disabled, *args))
        if passes is False:
            return False
    return passes


def first_failure(guards: tuple[Guard, ...], disabled: frozenset[str], *args: Any) -> Guard | None:
    """The first guard, in order, that refuses; switched-off guards always pass (concrete)."""
    for entry in guards:
        if not entry.passes(disabled, *args):
            return entry
    return None


class Refusal(NamedTuple):
    """Whether guards checked in order refuse, and the error of the first that does (codes as
    `code` gives them); `guard` names it when the refusal is a constant."""

    refused: Term
    error: Term
    guard: str | None


def refusal(
    guards: tuple[Guard, ...],
    disabled: frozenset[str],
    code: Callable[[Error], Term],
    *args: Any,
) -> Refusal:
    """Check guards in Kafka's order, in any domain: a guard that refuses for certain ends the
    check (the later ones are not evaluated, as in Kafka); a guard that refuses only in some
    states contributes that condition and its error."""
    pending: list[tuple[Term, Guard]] = []
    for entry in guards:
        passes = entry.passes(disabled, *args)
        if passes is True:
            continue
        if passes is False and not pending:
            assert entry.error is not None
            return Refusal(True, code(entry.error), entry.qualified)
        pending.append((passes, entry))
        if passes is False:
            break
    refused: Term = False
    error: Term = code(Error.NONE)
    for passes, entry in reversed(pending):
        assert entry.error is not None
        error = ite(passes, error, code(entry.error))
        refused = or_(not_(passes), refused)
    return Refusal(refused, error, None)
