"""The property clauses `kafkarep prove` proves: the predicates of `kafkarep/properties/` each
clause declares (`properties.base.predicate`), run on the prover's domain (`Cluster`: a record is
its offset and epoch)."""

from __future__ import annotations

from collections.abc import Callable

from kafkarep.properties import ALL
from kafkarep.properties.base import predicate_of
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.ops import Term
from kafkarep.symbolic.state import ClusterState
from kafkarep.symbolic.transition.cluster import Cluster

Clause = Callable[[Encoding, ClusterState], Term]  # true when the clause holds

# The properties this engine proves: the safety properties whose every clause declares its
# predicate over a domain; each is the conjunction of its clauses.
SUPPORTED = tuple(
    prop.name
    for prop in ALL
    if prop.kind == "always" and all(predicate_of(c.check) for c in prop.clauses)
)


def _clause(holds: Callable[..., Term]) -> Clause:
    def clause(enc: Encoding, sym: ClusterState) -> Term:
        return holds(Cluster(enc), enc.cfg, sym)

    clause.__name__ = holds.__name__
    return clause


def _clauses() -> dict[str, Clause]:
    clauses: dict[str, Clause] = {}
    for prop in ALL:
        if prop.name not in SUPPORTED:
            continue
        for clause in prop.clauses:
            holds = predicate_of(clause.check)
            assert holds is not None  # SUPPORTED
            clauses[f"{prop.name}.{clause.name}"] = _clause(holds)
    return clauses


CLAUSES: dict[str, Clause] = _clauses()


def clauses_of(prop: str) -> dict[str, Clause]:
    return {name: c for name, c in CLAUSES.items() if name.split(".")[0] == prop}
