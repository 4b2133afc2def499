"""The auxiliary invariants and history facts on reachable states: each must hold on every state
of a bounded exploration, so a wrong one is found without a solver."""

from __future__ import annotations

import multiprocessing
from typing import Any, NamedTuple

from kafkarep.model.config import ModelConfig
from kafkarep.model.state import ClusterState
from kafkarep.symbolic import invariants
from kafkarep.symbolic import state as symbolic
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
    workers: int = 1,
) -> tuple[int, tuple[Unsound, ...]]:
    """Evaluate the auxiliary invariants (by default every one of `invariants.AUXILIARY`) and
    the history facts (by default all, on every record of the metadata log a broker may still
    apply, and `invariants.pair` on every two such records) on every state of a bounded
    exploration. An invariant used in a proof must hold on
    every reachable state; this catches a wrong one without a solver. Returns the number of
    states visited and the invariants found false, each with the first state where it is.

    With `workers` > 1, forked processes share the evaluation: each explores the same states in
    the same order (exploring costs a few percent of evaluating) and evaluates every
    `workers`-th one; the answer is the one a single process gives."""
    job = _Job(
        cfg,
        depth,
        invariants.AUXILIARY if lemmas is None else lemmas,
        invariants.FACTS + invariants.QUORUM_FACTS if facts is None else facts,
        limit,
    )
    if workers <= 1:
        states, found = _evaluate(job, 0, 1)
    else:
        global _JOB
        _JOB = job
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                shares = pool.starmap(_share, [(k, workers) for k in range(workers)])
        finally:
            _JOB = None
        states = shares[0][0]
        found = {}
        for _, share in shares:
            for name, (index, state) in share.items():
                if name not in found or index < found[name][0]:
                    found[name] = (index, state)
    first = sorted(found.items(), key=lambda item: item[1][0])
    return states, tuple(Unsound(name, state) for name, (_, state) in first)


class _Job(NamedTuple):
    cfg: ModelConfig
    depth: int
    lemmas: tuple[Any, ...]
    facts: tuple[Any, ...]
    limit: int


# The job the worker processes evaluate (set in the parent just before forking).
_JOB: _Job | None = None


def _share(k: int, workers: int) -> tuple[int, dict[str, tuple[int, ClusterState]]]:
    assert _JOB is not None
    return _evaluate(_JOB, k, workers)


def _evaluate(job: _Job, k: int, workers: int) -> tuple[int, dict[str, tuple[int, ClusterState]]]:
    """States visited, and each invariant found false on the states whose index is k modulo
    `workers`, with the index and state where it first is."""
    enc = Encoding(job.cfg)
    found: dict[str, tuple[int, ClusterState]] = {}
    states = 0
    for state, path in explore(job.cfg, job.depth):
        states += 1
        if (states - 1) % workers == k:
            for name in _false(enc, project_along(enc, state, path), job, found):
                found[name] = (states - 1, state)
        if job.limit and states >= job.limit:
            break
    return states, found


def _false(
    enc: Encoding, sym: symbolic.ClusterState, job: _Job, found: dict[str, Any]
) -> list[str]:
    """The invariants and facts not yet in `found` that are false on one state."""
    out = [
        inv.name for inv in job.lemmas if inv.name not in found and inv.holds(enc, sym) is not True
    ]
    low = min(b.applied_epoch for b in sym.brokers)
    records = sym.metadata_log[low - 1 :]
    for fact in job.facts:
        name = f"history.{fact.name}"
        if name in found:
            continue
        if isinstance(fact, PairFact):
            bad = any(
                fact.holds(enc, a, b, sym) is not True
                for i, a in enumerate(records)
                for b in records[i + 1 :]
            )
        else:
            bad = any(fact.holds(enc, record, sym) is not True for record in records)
        if bad:
            out.append(name)
    # what the prover assumes of any two records a broker may still apply
    if "history.pair" not in found and any(
        invariants.pair(enc, a, b, sym, job.facts) is not True
        for i, a in enumerate(records)
        for b in records[i + 1 :]
    ):
        out.append("history.pair")
    return out
