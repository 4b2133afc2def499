"""The property clauses `kafkarep prove` proves: the predicates of `kafkarep/properties/` each
clause declares (`properties.base.predicate`), run on the prover's domain (`Cluster`: a record is
its offset and epoch), and those of a model's own properties that declare theirs
(`[check] extra_properties`, docs/user-properties.md)."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.model.config import ModelConfig, PropertyModule
from kafkarep.properties import ALL, extra_of
from kafkarep.properties.base import Property, predicate_of, provable
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import Cluster

Clause = Callable[[Encoding, ClusterState], Term]  # true when the clause holds


# The built-in properties this engine proves.
SUPPORTED = tuple(prop.name for prop in ALL if provable(prop))


def _clause(holds: Callable[..., Term]) -> Clause:
    def clause(enc: Encoding, sym: ClusterState) -> Term:
        return holds(Cluster(enc), enc.cfg, sym)

    clause.__name__ = holds.__name__
    return clause


def _clauses(props: tuple[Property, ...]) -> dict[str, Clause]:
    clauses: dict[str, Clause] = {}
    for prop in props:
        if not provable(prop):
            continue
        for clause in prop.clauses:
            holds = predicate_of(clause.check)
            assert holds is not None  # provable
            clauses[f"{prop.name}.{clause.name}"] = _clause(holds)
    return clauses


CLAUSES: dict[str, Clause] = _clauses(ALL)


def supported(cfg: ModelConfig) -> tuple[str, ...]:
    """The properties prove proves on this model: the built-in ones and its own provable ones."""
    return SUPPORTED + tuple(prop.name for prop in extra_of(cfg) if provable(prop))


def own_clauses(cfg: ModelConfig) -> dict[str, Clause]:
    """The clauses of the model's own provable properties (built once per process)."""
    modules = cfg.check.extra_properties
    if modules not in _OWN:
        _OWN[modules] = _clauses(extra_of(cfg))
    return _OWN[modules]


_OWN: dict[tuple[PropertyModule, ...], dict[str, Clause]] = {}


def clauses(cfg: ModelConfig) -> dict[str, Clause]:
    """Every clause prove proves on this model."""
    return {**CLAUSES, **own_clauses(cfg)}


def clauses_of(prop: str, cfg: ModelConfig | None = None) -> dict[str, Clause]:
    every = CLAUSES if cfg is None else clauses(cfg)
    return {name: c for name, c in every.items() if name.split(".")[0] == prop}
