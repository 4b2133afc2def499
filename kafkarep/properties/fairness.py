"""Which behaviours a liveness property quantifies over: weak fairness per (family, subject).

As in the public KIP-966 specification (`LivenessSpec`: `WF_vars(Action(b))` for each broker b
and each healing action), every healing family is weakly fair for each broker it acts for: if
it stays enabled for that broker, it eventually takes a step for it. A step's subject is its
actor, or for a controller step its broker argument (the controller unfences broker 3: subject
3), so one broker's progress never stands in for another's. Faults (the families with a
budget) are not fair: they may happen, never must. A model may take fairness away from healing
families with `[check] unfair = [...]` (a broker that may stay down: `unfair = ["restart"]`).

Stuttering is allowed, as in TLA+: a behaviour may stay in a state forever when no fair unit is
enabled there. "No fair step enabled" means `enabled_units` of that state is empty: no action of
a fair family is enabled for any subject.

`enabled_units` and `lasso_problem` are the one definition of a fair unit being enabled and of a
fair lasso: `kafkarep replay` judges a trace with them, and the explorer judges every lasso it
found on its state graph with them, on the concrete states, before it reports it.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkarep.model.actions import FAMILIES, Action, active, enabled
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.config import ModelConfig
from kafkarep.model.reduction import reduce
from kafkarep.model.state import ClusterState

FAMILY_INDEX = {family.name: index for index, family in enumerate(FAMILIES)}
SUBJECT_BITS = 8  # a unit is its family's index << 8 | its subject (a broker id, or 0)


def unit(action: Action) -> int:
    """The fairness unit a step belongs to: its family and the broker it is for."""
    subject = action.actor
    if subject == CONTROLLER and isinstance(action.arg, int):
        subject = action.arg
    return FAMILY_INDEX[action.name] << SUBJECT_BITS | subject


def describe(code: int) -> str:
    family = FAMILIES[code >> SUBJECT_BITS].name
    subject = code & ((1 << SUBJECT_BITS) - 1)
    return f"{family} for broker {subject}" if subject else f"{family} (controller)"


def fair_families(cfg: ModelConfig) -> frozenset[int]:
    """The indices of the families that are weakly fair in this model."""
    unfair = set(cfg.check.unfair)
    return frozenset(
        FAMILY_INDEX[f.name] for f in active(cfg) if f.budget is None and f.name not in unfair
    )


def is_fair(cfg: ModelConfig, code: int) -> bool:
    return code >> SUBJECT_BITS in fair_families(cfg)


def enabled_units(cfg: ModelConfig, state: ClusterState) -> frozenset[int]:
    """The fair units enabled in a state: for each fair family, the subjects it may take a step
    for. Empty: no fair step is enabled, and a behaviour may stutter here forever."""
    fair = fair_families(cfg)
    return frozenset(code for a in enabled(cfg, state) if (code := unit(a)) >> SUBJECT_BITS in fair)


def starved(
    cfg: ModelConfig, cycle: Sequence[ClusterState], taken: Sequence[Action]
) -> tuple[int, ...]:
    """The fair units enabled in every state of a cycle and never taken on it: a behaviour that
    repeats the cycle forever is not weakly fair to them. A stutter is a cycle of one state and
    no step."""
    always: frozenset[int] | None = None
    for state in cycle:
        here = enabled_units(cfg, state)
        always = here if always is None else always & here
    return tuple(sorted((always or frozenset()) - {unit(a) for a in taken}))


def lasso_problem(
    cfg: ModelConfig, states: Sequence[ClusterState], actions: Sequence[Action], loop: int
) -> str | None:
    """Why a lasso is not a fair behaviour, or None. `states` are a path's states, the initial
    one first, `actions` its steps; the behaviour repeats the steps after state `loop` forever,
    or stutters at the last state when `loop` is the last state. The cycle must close (its last
    state is the loop state, up to the model's sound reductions) and be weakly fair."""
    last = len(states) - 1
    if loop < last:
        reduced = cfg._replace(check=cfg.check._replace(reduction=True))
        if reduce(reduced, states[-1]) != reduce(reduced, states[loop]):
            return f"the last state is not state {loop}: the cycle does not close"
    cycle = states[loop:-1] if loop < last else states[loop:]
    hungry = starved(cfg, cycle, actions[loop:])
    if hungry:
        names = ", ".join(describe(code) for code in hungry)
        where = "is enabled at the stutter" if loop == last else "stays enabled"
        return f"the cycle is not fair: {names} {where} and is never taken"
    return None
