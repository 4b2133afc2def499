"""The properties kafkarep checks, each declared once, read by the explorer, Spark, Hypothesis,
`replay`, the suite and `graph`. The prover (`kafkarep prove`) reads their names and kinds here
and encodes six of their clauses as Z3 terms of its own (`kafkarep/symbolic/properties.py`),
compared with these on explored states by its agreement check.

An `always` property is a conjunction of named clauses, each a predicate over one state that
returns None when it holds or a witness sentence when it does not. A `sometimes` property is a
predicate over one step (state before, action, state after) that a model should make true at
least once: it proves the model reaches the interesting states.

    leader_completeness            the leader holds the committed log and every acked write
    leader_candidate_completeness  every running ISR (and ELR) member holds the committed log
    min_isr_commit                 acks and HWM respect MinISR
    log_matching                   replicas agree below their HWMs
    no_committed_record_lost       every acked write exists somewhere
    metadata                       the controller's metadata and the brokers' copies are sound
    (sometimes) record_committed, elr_leader_elected, reassignment_completed,
                unclean_shutdown_hits_leader, leader_changed, isr_below_min_isr

The liveness properties (`liveness.py`, under the weak fairness of `fairness.py`) are checked
when a model asks for them (`[check] liveness = true`, `kafkarep check --liveness`, or by name in
`[check] properties`): the explorer keeps the whole state graph for them, which a safety check
does not need.

A model may add properties of its own, declared with the same API in a module it names
(`[check] extra_properties`, `extra.py`, docs/user-properties.md): `of_model` selects them
beside these, and `by_name` and `clause_names` know their names.
"""

from __future__ import annotations

from kafkarep.model.config import ModelConfig
from kafkarep.properties import (
    completeness,
    durability,
    extra,
    liveness,
    log_matching,
    metadata_invariants,
    min_isr,
    reachability,
)
from kafkarep.properties.base import Clause, Property

ALL: tuple[Property, ...] = (
    completeness.LEADER_COMPLETENESS,
    completeness.LEADER_CANDIDATE_COMPLETENESS,
    min_isr.MIN_ISR_COMMIT,
    log_matching.LOG_MATCHING,
    durability.NO_COMMITTED_RECORD_LOST,
    metadata_invariants.METADATA,
    *reachability.SOMETIMES,
)
LIVENESS: tuple[Property, ...] = liveness.LIVENESS
BY_NAME = {p.name: p for p in ALL + LIVENESS}


def extra_of(cfg: ModelConfig) -> tuple[Property, ...]:
    """The model's own properties (`[check] extra_properties`); a bad module is a `ModelError`
    naming it (`extra.py`)."""
    return extra.load(cfg.check.extra_properties, BY_NAME)


def by_name(cfg: ModelConfig) -> dict[str, Property]:
    """Every property a model can name, by name: the built-in ones and its own."""
    own = extra_of(cfg)
    return {**BY_NAME, **{p.name: p for p in own}} if own else BY_NAME


def clause_names(own: tuple[Property, ...] = ()) -> set[str]:
    """Every property name and every `property.clause` name (with a model's own properties)."""
    names = set(BY_NAME) | {p.name for p in own}
    for prop in ALL + own:  # a liveness property is named whole
        names |= {f"{prop.name}.{clause.name}" for clause in prop.clauses}
    return names


def select(
    names: tuple[str, ...] | None, with_liveness: bool = False, own: tuple[Property, ...] = ()
) -> tuple[Property, ...]:
    """The properties a model checks: every safety one (the built-in ones, then the model's
    `own`), or those named (a clause name selects its property); with every liveness property
    too when asked."""
    safety = ALL + own
    chosen = safety if names is None else ()
    if names is not None:
        wanted = {name.split(".")[0] for name in names}
        chosen = tuple(p for p in safety + LIVENESS if p.name in wanted)
    if with_liveness:
        chosen += tuple(p for p in LIVENESS if p not in chosen)
    return chosen


def of_model(cfg: ModelConfig, with_liveness: bool | None = None) -> tuple[Property, ...]:
    """The properties a model file selects (`[check] properties`, `liveness` unless
    `with_liveness` says, and its own from `[check] extra_properties`)."""
    live = cfg.check.liveness if with_liveness is None else with_liveness
    return select(cfg.check.properties, live, extra_of(cfg))


__all__ = [
    "ALL",
    "BY_NAME",
    "LIVENESS",
    "Clause",
    "Property",
    "by_name",
    "clause_names",
    "extra_of",
    "of_model",
    "select",
]
