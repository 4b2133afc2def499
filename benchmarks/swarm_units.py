"""Swarm units: how often a plain random walk with the Hypothesis engine's step distribution finds
a model's violation, with units per (family, actor) against units per family.

    python benchmarks/swarm_units.py [MODEL] [--walks N] [--steps S] [--seed K]

(default: models/history/kafka_6880_zombie_replica_fetch.toml, 40,000 walks of 50 steps). Each
walk starts from the initial state; at its first step it draws a share of units to hold back
(0 to 10 tenths), each unit held back with that probability when first enabled; each step draws
the free units against the held-back ones at odds HELD_BACK_ODDS : 1 per free unit, a unit
uniformly in the group drawn, and one of its enabled actions uniformly, as `FamilyChoice` in
kafkarep/engines/hypothesis_machine.py does with Hypothesis's draws. A walk stops at the first
state violating an `always` clause. Without Hypothesis's generation and shrinking the walks are
fast and independent, so the two unit choices compare on the distribution alone.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Hashable
from pathlib import Path

from kafkarep.engines.hypothesis_machine import HELD_BACK_ODDS
from kafkarep.engines.kernel import Judge, model_clauses
from kafkarep.model.actions import Action, active
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.properties.model_files import load_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "history" / "kafka_6880_zombie_replica_fetch.toml"
Unit = Callable[[int, Action], Hashable]
UNITS: dict[str, Unit] = {
    "family": lambda position, action: position,
    "family, actor": lambda position, action: (position, action.actor),
}


def walks(cfg: ModelConfig, unit: Unit, count: int, steps: int, seed: int) -> int:
    """How many of `count` walks reach a violation."""
    families = active(cfg)
    judge = Judge(cfg, model_clauses(cfg).always)
    rng = random.Random(seed)
    found = 0
    for _ in range(count):
        state = initial_state(cfg)
        share = rng.randint(0, 10)
        held: dict[Hashable, bool] = {}
        for _ in range(steps):
            enabled = [(i, a) for i, f in enumerate(families) for a in f.actions(cfg, state)]
            if not enabled:
                break
            units = sorted({unit(i, a) for i, a in enabled}, key=repr)
            for u in units:
                if u not in held:
                    held[u] = share > 0 and rng.randint(0, 9) >= 10 - share
            back = [u for u in units if held[u]]
            free = [u for u in units if not held[u]]
            group = free or back
            if free and back:
                odds = HELD_BACK_ODDS * len(free)
                group = free if rng.randint(0, odds + len(back) - 1) < odds else back
            chosen = rng.choice(group)
            position, action = rng.choice([(i, a) for i, a in enabled if unit(i, a) == chosen])
            state = families[position].apply(cfg, state, action)
            if judge.violated(state):
                found += 1
                break
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", type=Path, default=MODEL)
    parser.add_argument("--walks", type=int, default=40_000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cfg = load_model(args.model)
    print(f"{cfg.name}: {args.walks:,} walks of up to {args.steps} steps, seed {args.seed}")
    for name, unit in UNITS.items():
        began = time.monotonic()
        found = walks(cfg, unit, args.walks, args.steps, args.seed)
        seconds = time.monotonic() - began
        print(f"  units per {name:14} violations found in {found:5,} walks  ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
