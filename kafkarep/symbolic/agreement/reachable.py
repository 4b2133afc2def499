"""The auxiliary invariants and history facts on reachable states: each must hold on every state
of a bounded exploration, so a wrong one is found without a solver."""

from __future__ import annotations

from typing import Any, NamedTuple

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.symbolic import invariants
from kafkarep.symbolic.agreement.exploration import explore, project_along
from kafkarep.symbolic.encoding import Encoding
from kafkarep.symbolic.lemmas import PairFact


class Unsound(NamedTuple):
    """An auxiliary invariant (or history fact) false in a reachable state: it is wrong."""

    invariant: str
    state: ClusterState


def check_invariants(
    cfg: ModelConfig,
    depth: int,
    lemmas: tuple[Any, ...] | None = None,
    facts: tuple[Any, ...] | None = None,
    limit: int = 0,
) -> tuple[int, tuple[Unsound, ...]]:
    """Evaluate the auxiliary invariants (by default every one of `invariants.AUXILIARY`) and
    the history facts (by default all, on every record of the metadata log a broker may still
    apply, and `invariants.pair` on every two such records) on every state of a bounded
    exploration. An invariant used in a proof must hold on
    every reachable state; this catches a wrong one without a solver. Returns the number of
    states visited and the invariants found false, each with the first state where it is."""
    enc = Encoding(cfg)
    chosen = invariants.AUXILIARY if lemmas is None else lemmas
    history = invariants.FACTS + invariants.QUORUM_FACTS if facts is None else facts
    found: dict[str, Unsound] = {}
    states = 0
    for state, path in explore(cfg, depth):
        states += 1
        sym = project_along(enc, state, path)
        for inv in chosen:
            if inv.name not in found and inv.holds(enc, sym) is not True:
                found[inv.name] = Unsound(inv.name, state)
        low = min(b.applied_epoch for b in sym.brokers)
        records = sym.metadata_log[low - 1 :]
        for fact in history:
            name = f"history.{fact.name}"
            if name in found:
                continue
            if isinstance(fact, PairFact):
                bad = any(
                    fact.holds(enc, a, b, sym) is not True
                    for k, a in enumerate(records)
                    for b in records[k + 1 :]
                )
            else:
                bad = any(fact.holds(enc, record, sym) is not True for record in records)
            if bad:
                found[name] = Unsound(name, state)
        # what the prover assumes of any two records a broker may still apply
        if "history.pair" not in found and any(
            invariants.pair(enc, a, b, sym, history) is not True
            for k, a in enumerate(records)
            for b in records[k + 1 :]
        ):
            found["history.pair"] = Unsound("history.pair", state)
        if limit and states >= limit:
            break
    return states, tuple(found.values())
