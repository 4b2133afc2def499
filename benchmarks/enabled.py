"""Enumeration benchmark: what asking which steps are enabled costs, per action family.

    python benchmarks/enabled.py [--states N] [--rounds R] [--against REV] [MODEL]
    (default: models/kip966_small.toml, 20,000 states, 3 rounds)

The first N states of a breadth-first search of the model (the rules as they are, no reduction)
are kept; then each family's enabled steps are listed in every one of them, R times, and the
median CPU microseconds a state are printed per family and in all (`enabled(cfg, state)`, what
the explorer asks). A change to how a family's enabled condition is written shows here in
seconds, where `benchmarks/explore.py` needs minutes and mixes it with everything else.

`--against REV` runs the same in another commit, checked out into a temporary worktree, the two
trees alternating, each in its own process, and prints the ratios REV / this tree. With
`KAFKAREP_COMPILED=1` both trees are compiled first (`kafkarep compile` in each) and run compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import trees

CHILD = r"""
import json, sys, time
from kafkarep.properties.model_files import load_model
from kafkarep.model.actions import FAMILIES, apply, enabled
from kafkarep.model.initial import initial_state

cfg = load_model(sys.argv[1])
limit, rounds = int(sys.argv[2]), int(sys.argv[3])
seen, frontier, states = set(), [initial_state(cfg)], []
while frontier and len(states) < limit:
    following = []
    for state in frontier:
        for action in enabled(cfg, state):
            after = apply(cfg, state, action)
            if after not in seen:
                seen.add(after)
                following.append(after)
                states.append(after)
    frontier = following
states = states[:limit]

def per_state(ask):
    times = []
    for _ in range(rounds):
        started = time.process_time()
        for state in states:
            for _ in ask(state):
                pass
        times.append((time.process_time() - started) * 1e6 / len(states))
    return sorted(times)[len(times) // 2]

figures = {f.name: per_state(lambda s, f=f: f.actions(cfg, s)) for f in FAMILIES}
figures["enabled()"] = per_state(lambda s: enabled(cfg, s))
print(json.dumps({"states": len(states), "figures": figures}))
"""


def measure(model: str, states: int, rounds: int, tree: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(Path(model).resolve()), str(states), str(rounds)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tree,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def table(runs: dict[str, list[dict[str, object]]]) -> None:
    names = list(runs)
    figures = {
        name: {
            family: statistics.median(r["figures"][family] for r in results)  # type: ignore[index]
            for family in results[0]["figures"]  # type: ignore[attr-defined]
        }
        for name, results in runs.items()
    }
    families = list(figures[names[0]])
    print(
        f"{'family':28}" + "".join(f"{n[:12]:>14}" for n in names) + ("  ratio" * (len(names) > 1))
    )
    for family in families:
        row = [figures[n].get(family, float("nan")) for n in names]
        ratio = f"  x{row[0] / row[1]:.2f}" if len(row) > 1 and row[1] else ""
        if max(row) >= 0.05 or family == "enabled()":
            print(f"{family:28}" + "".join(f"{v:>11.2f} us" for v in row) + ratio)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="models/kip966_small.toml")
    parser.add_argument("--states", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", help="another commit, measured side by side")
    args = parser.parse_args(argv)
    if args.against is None:
        result = measure(args.model, args.states, args.rounds, trees.HERE)
        print(f"{args.model}: {result['states']:,} states, median of {args.rounds} rounds")
        table({"this tree": [result]})
        return
    with trees.against(args.against) as checkouts:
        runs: dict[str, list[dict[str, object]]] = {name: [] for name in checkouts}
        for _ in range(args.rounds):  # the trees alternate; each run is its own process
            for name, tree in checkouts.items():
                runs[name].append(measure(args.model, args.states, 1, tree))
    count = runs["this tree"][0]["states"]
    print(f"{args.model}: {count:,} states, {args.rounds} rounds a tree, alternating")
    table(runs)


if __name__ == "__main__":
    main(sys.argv[1:])
