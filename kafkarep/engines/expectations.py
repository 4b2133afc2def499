"""Whether a run found what its model file expects (`[expect]`): the violations (and at which
depth), the `sometimes` properties reached, the pinned distinct-state count.

`problems` lists every way a run differs from the expectations (empty: all met); `matches` says
whether an expectation names a clause. They judge an engine's `Exploration`, so they live with
the engines: the Hypothesis engine reads `matches` to stop once every expected violation is
found, the checking and suite layers above read both.
"""

from __future__ import annotations

from kafkarep.engines.results import Exploration
from kafkarep.model.config import ModelConfig


def matches(expected: str, clause: str) -> bool:
    """An expectation names a property (any of its clauses) or one clause."""
    return clause == expected or clause.startswith(expected + ".")


def within_bound(cfg: ModelConfig, exploration: Exploration) -> bool:
    """The search stopped where the model's bounded verdict ends (`[expect] within_depth`):
    every state of at most that many steps was judged. A run whose depth a flag changed, one
    resumed from a deeper level, or one that checks liveness (a lasso needs every state) does
    not settle it."""
    bound = cfg.expect.within_depth
    return (
        bound is not None
        and exploration.stop_reason == f"depth limit {bound}"
        and exploration.depth == bound
        and not liveness_checked(exploration)
    )


def liveness_checked(exploration: Exploration) -> bool:
    """The run checked liveness properties (the explorer reports how, in its details)."""
    return any(name == "liveness" for name, _ in exploration.details)


def scope(cfg: ModelConfig | None, exploration: Exploration) -> str | None:
    """How far the search settles the model: "complete", "complete to depth D" for a bounded
    verdict stopped at its bound, or None (stopped early)."""
    if exploration.complete:
        return "complete"
    if cfg is not None and within_bound(cfg, exploration):
        return f"complete to depth {cfg.expect.within_depth}"
    return None


def settled(cfg: ModelConfig, exploration: Exploration) -> bool:
    """The run's state count is comparable with a pinned one: the search is complete (for a
    bounded verdict, within its depth), stopped at the model's bound, or stopped once every
    expected violation was found."""
    bound = cfg.expect.within_depth
    if exploration.complete:
        return bound is None or exploration.depth <= bound
    return within_bound(cfg, exploration) or exploration.stop_reason == "expected violations found"


def problems(
    cfg: ModelConfig, exploration: Exploration, pin_states: bool = True, sampled: bool = False
) -> tuple[str, ...]:
    """Every way the run differs from what the model file expects (empty: all met).

    A `sampled` run (the Hypothesis engine) never completes: spending its budget without a
    violation meets `holds`, its state count is not compared with the pin, and a trace it found
    may be longer than the pinned shortest depth, up to twice that, never shorter."""
    expect = cfg.expect
    found = exploration.violations
    out: list[str] = []
    expected_names = [name for name, _ in expect.violates]
    for name, depth in expect.violates:
        hits = [d for clause, d in found.items() if matches(name, clause)]
        if not hits:
            why = (
                ""
                if exploration.complete or within_bound(cfg, exploration)
                else f" (search incomplete: {exploration.stop_reason})"
            )
            out.append(f"expected a violation of {name}; none found{why}")
            continue
        shortest = min(d.depth for d in hits)
        if sampled and depth is not None and not depth <= shortest <= 2 * depth:
            out.append(
                f"{name} violated by a trace of {shortest} steps; the shortest is {depth}, "
                f"so a sampled trace should have {depth} to {2 * depth}"
            )
        elif not sampled and depth is not None and shortest != depth:
            out.append(
                f"{name} violated at depth {shortest}, expected depth {depth} "
                "(update [expect] violates on purpose if the model changed)"
            )
    for clause, discovery in sorted(found.items()):
        if not any(matches(name, clause) for name in expected_names):
            out.append(
                f"unexpected violation of {clause} at depth {discovery.depth}: {discovery.witness}"
            )
    bound = expect.within_depth
    if (
        expect.result in ("holds", None)
        and not exploration.complete
        and not within_bound(cfg, exploration)
        and not found
        and not sampled
    ):
        if bound is not None and liveness_checked(exploration):
            out.append(
                f"[expect] within_depth = {bound} settles the safety properties only: liveness "
                "needs every state (run without --liveness)"
            )
        else:
            out.append(
                f"search incomplete ({exploration.stop_reason}): cannot say the model holds"
                + (f" within {bound} steps" if bound is not None else "")
            )
    pinned = expect.distinct_states
    pin_states = pin_states and not sampled
    if (
        pin_states
        and pinned is not None
        and settled(cfg, exploration)
        and exploration.distinct_states != pinned
    ):
        out.append(
            f"distinct states {exploration.distinct_states:,} != pinned {pinned:,} "
            "(update [expect] distinct_states on purpose)"
        )
    for name in expect.reached:
        if name not in exploration.reached:
            out.append(f"sometimes-property {name} never reached")
    return tuple(out)
