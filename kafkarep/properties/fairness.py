"""Which behaviours a liveness property quantifies over: weak fairness per (family, subject).

As in the public KIP-966 specification (`LivenessSpec`: `WF_vars(Action(b))` for each broker b
and each healing action), every healing family is weakly fair for each broker it acts for: if
it stays enabled for that broker, it eventually takes a step for it. A step's subject is its
actor, or for a controller step its broker argument (the controller unfences broker 3: subject
3), so one broker's progress never stands in for another's. Faults (the families with a
budget) are not fair: they may happen, never must. A model may take fairness away from healing
families with `[check] unfair = [...]` (a broker that may stay down: `unfair = ["restart"]`).

Stuttering is allowed, as in TLA+: a behaviour may stay in a state forever when no fair unit is
enabled there.
"""

from __future__ import annotations

from kafkarep.model.actions import FAMILIES, Action, active
from kafkarep.model.actions.base import CONTROLLER
from kafkarep.model.config import ModelConfig

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
