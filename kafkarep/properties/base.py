"""What a property is: a name, a kind, named clauses, one paragraph of intent, a source.

Kinds: `always` (every clause holds in every reachable state), `sometimes` (some step reaches
it), and the liveness kinds `eventually` (every fair behaviour reaches a state where the goal
holds) and `leads_to` (P ~> Q: from every state where the premise holds, every fair behaviour
reaches one where the goal holds). A liveness clause returns a bit mask over the property's
subjects (brokers, written values, or the partition as one subject): bit i set when it holds for
subject i, so one property states "for every broker b, P(b) ~> Q(b)" as TLA+ does with a
quantifier."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, cast

from kafkarep.model.actions.base import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState

StateCheck = Callable[[ModelConfig, ClusterState], str | None]
StepCheck = Callable[[ModelConfig, ClusterState, Action, ClusterState], bool]
MaskCheck = Callable[[ModelConfig, ClusterState], int]  # a liveness clause: a bit per subject
Subjects = Callable[[ModelConfig], tuple[str, ...]]  # the subjects' names, bit 0 first

# The clauses marked below (a set, not an attribute on the function: compiled functions take none)
_READS_CONTROLLER: set[StateCheck] = set()
_ON_PARTITION_CHANGE: set[StepCheck] = set()
_READS_AFTER: set[StepCheck] = set()
_FIRES_ON: dict[StepCheck, frozenset[str]] = {}


# Clauses whose verdict is a predicate written over a domain (`kafkarep/model/domain.py`), so
# the prover runs the same predicate on its terms: the clause -> (domain, cfg, state) -> Term
_PREDICATES: dict[StateCheck, Callable[..., Any]] = {}


def predicate(holds: Callable[..., Any]) -> Callable[[StateCheck], StateCheck]:
    """Marks a state clause whose verdict is `holds(d, cfg, state)` over a domain: the clause
    returns None exactly where that holds on the model's values (and says what is wrong where
    it does not), and `kafkarep prove` proves the same predicate on its terms."""

    def mark(check: StateCheck) -> StateCheck:
        _PREDICATES[check] = holds
        return check

    return mark


def predicate_of(check: StateCheck | StepCheck | MaskCheck) -> Callable[..., Any] | None:
    """The predicate over a domain a state clause is the verdict of (None: none declared)."""
    return _PREDICATES.get(cast(StateCheck, check))


def provable(prop: Property) -> bool:
    """A safety property whose every clause declares its predicate over a domain: `kafkarep
    prove` proves the conjunction of its clauses."""
    return prop.kind == "always" and all(predicate_of(c.check) for c in prop.clauses)


def reads_controller(check: StateCheck) -> StateCheck:
    """Marks a state clause that reads only the model and `state.controller` (not the brokers,
    the ghost state or the budgets): an engine may evaluate it once per controller state.
    tests/test_properties.py checks the claim on reachable states."""
    _READS_CONTROLLER.add(check)
    return check


def on_partition_change(check: StepCheck) -> StepCheck:
    """Marks a `sometimes` step that can only be reached by a step that changes the partition
    (it compares the partition before and after): an engine skips it on the other steps. It
    reads only the partition before and after and the step (the explorer's sleep sets rely on
    this, `kernel.Expander.kept_awake`).
    tests/test_properties.py checks the claim on reachable steps."""
    _ON_PARTITION_CHANGE.add(check)
    return check


def reads_after_only(check: StepCheck) -> StepCheck:
    """Marks a `sometimes` step whose answer depends only on the state after it: every step into
    that state reaches it, so a search that keeps every state (a sleep set skips steps, not
    states) keeps the first step that does. tests/test_properties.py checks the claim."""
    _READS_AFTER.add(check)
    return check


def only_on(*families: str) -> Callable[[StepCheck], StepCheck]:
    """Marks a `sometimes` step that only a step of these action families can reach."""

    def mark(check: StepCheck) -> StepCheck:
        _FIRES_ON[check] = frozenset(families)
        return check

    return mark


def reads_after(check: StateCheck | StepCheck | MaskCheck) -> bool:
    return check in _READS_AFTER


def fires_on(check: StateCheck | StepCheck | MaskCheck) -> frozenset[str] | None:
    """The only families whose steps can reach this `sometimes` step (None: any)."""
    return _FIRES_ON.get(cast(StepCheck, check))


def needs_partition_change(check: StateCheck | StepCheck | MaskCheck) -> bool:
    return check in _ON_PARTITION_CHANGE


def reads(check: StateCheck | StepCheck | MaskCheck) -> str:
    """What a clause reads: "controller" (see `reads_controller`) or the whole "state"."""
    return "controller" if check in _READS_CONTROLLER else "state"


class Clause(NamedTuple):
    name: str
    check: StateCheck | StepCheck | MaskCheck


class Property(NamedTuple):
    name: str
    kind: str  # "always", "sometimes", "eventually" or "leads_to"
    clauses: tuple[Clause, ...]  # liveness: ("premise", "goal") for leads_to, ("goal",)
    doc: str
    source: str
    subjects: Subjects | None = None  # liveness only

    @property
    def liveness(self) -> bool:
        return self.kind in LIVENESS_KINDS

    def goal(self) -> MaskCheck:
        """A liveness property's goal clause."""
        return cast(MaskCheck, self.clauses[-1].check)

    def premise(self) -> MaskCheck | None:
        """A `leads_to` property's premise clause (None for `eventually`)."""
        return cast(MaskCheck, self.clauses[0].check) if self.kind == "leads_to" else None

    def subject_names(self, cfg: ModelConfig) -> tuple[str, ...]:
        """A liveness property's subjects in this model, bit 0 first."""
        return self.subjects(cfg) if self.subjects is not None else ("the partition",)

    def width(self, cfg: ModelConfig) -> int:
        """The mask of a liveness property's subjects in this model."""
        return (1 << len(self.subject_names(cfg))) - 1

    def qualified(self, clause: Clause) -> str:
        return f"{self.name}.{clause.name}"


def always(name: str, doc: str, source: str, **clauses: StateCheck) -> Property:
    return Property(name, "always", tuple(Clause(n, c) for n, c in clauses.items()), doc, source)


def sometimes(name: str, doc: str, source: str, check: StepCheck) -> Property:
    return Property(name, "sometimes", (Clause("reached", check),), doc, source)


LIVENESS_KINDS = ("eventually", "leads_to")


def eventually(name: str, doc: str, source: str, subjects: Subjects, goal: MaskCheck) -> Property:
    return Property(name, "eventually", (Clause("goal", goal),), doc, source, subjects)


def leads_to(
    name: str, doc: str, source: str, subjects: Subjects, premise: MaskCheck, goal: MaskCheck
) -> Property:
    clauses = (Clause("premise", premise), Clause("goal", goal))
    return Property(name, "leads_to", clauses, doc, source, subjects)
