"""Explorer benchmark: per model, distinct and generated states, states/s, memory per state.

    python benchmarks/explore.py [--workers N] [--symmetry] [--no-factor] [--por-rounds R]
                                 [--records N] [--seconds S] [--against REV [--rounds R]]
                                 [MODEL ...]
    (default: the standard models)

Each model runs in its own process so peak memory (max RSS) is its own. Two memory figures:
`B/state` retained is what the search keeps per distinct state for the rest of the run (the
fingerprint store; parent links go to per-level files on disk), `RSS/state` is
(peak RSS - RSS after start-up) / distinct states, which also counts the frontier and Python's
allocator. `states/s` is wall-clock; `/CPU-s` divides by the CPU seconds of the run (every
process's), the figure that does not depend on what else the machine is doing.

Each model runs with the sound reductions of kafkarep/model/reduction.py (the default) and again
without them (the plain rules), and `reduction` is the factor plain/reduced distinct states;
`--no-factor` skips the plain run. With `--symmetry` the first run also uses broker-id symmetry.

Every run uses the partial-order reduction (sleep sets) as `kafkarep check` does, on the model's
safety properties. `--por-rounds R` runs each model R times without it and R times with it,
alternating, and prints the ratio of the median CPU seconds (the steps it skips are the
`generated` difference; the states and depth must be the same).

`--against REV` runs each model side by side with another commit (`HEAD~1`, a tag) in one
invocation: REV is checked out into a temporary worktree, and the two trees' runs alternate
(`--rounds R`, default 3), each in its own process with its tree first on the path. It prints a
row per run, checks that both trees found the same distinct states and depth, and prints the
median ratios REV/this tree of the CPU and wall seconds. With `KAFKAREP_COMPILED=1` both trees
are compiled first (`kafkarep compile` in each), so both run compiled; else both run as Python.
A model with a bounded verdict (`[expect] within_depth`) runs to the same depth in both trees.

`--records N` overrides the model's `records` bound, for bounds no bundled model pins: the
shipped bounds with two records, unbounded, are `--records 2 --workers 2
models/kip966_shipped.toml`, a run that stops at `--seconds` (default 1800) and prints how far it
got. A model's own depth bound (`[expect] within_depth`, `[check] max_depth`) is kept:
`models/kip966_shipped_two_records.toml` is the same bounds checked to depth 20.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import trees

STANDARD = [
    "models/kip966_small.toml",
    "models/history/v35_last_replica_standing.toml",
    "models/reassignment.toml",
]

CHILD = r"""
import json, resource, sys, time
import tomllib
from kafkarep.properties.model_files import parse_model
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep import properties
from inspect import signature
with open(sys.argv[1], "rb") as file:
    raw = tomllib.load(file)
# a bounded verdict as a tree from before `within_depth` reads it: the same depth limit
bound = raw.get("expect", {}).pop("within_depth", None)
if bound is not None:
    raw.setdefault("check", {})["max_depth"] = bound
cfg = parse_model(raw, sys.argv[1])
cfg = cfg._replace(check=cfg.check._replace(reduction=sys.argv[5] == "1"))
if sys.argv[7] != "-":
    cfg = cfg._replace(budget=cfg.budget._replace(records=int(sys.argv[7])))
# a tree from before the partial-order reduction has no `por`
por = {"por": sys.argv[6] == "1"} if "por" in signature(Explorer).parameters else {}
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
def cpu():
    return sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
cpu0 = cpu()
explorer = Explorer(cfg, properties.select(cfg.check.properties),
                    Limits(max_depth=cfg.check.max_depth, max_seconds=float(sys.argv[2])),
                    stop_when_found=[n for n, _ in cfg.expect.violates],
                    workers=int(sys.argv[3]), symmetry=sys.argv[4] == "1", **por)
r = explorer.run()
cpu_seconds = cpu() - cpu0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"distinct": r.distinct_states, "generated": r.generated_states, "depth": r.depth,
                  "seconds": r.seconds, "cpu_seconds": cpu_seconds, "complete": r.complete,
                  "stop": r.stop_reason,
                  "rss_per_state": (peak - base) * 1024 / max(r.distinct_states, 1),
                  "retained_per_state": r.seen_bytes / max(r.distinct_states, 1),
                  "links_on_disk": r.links_bytes, "cores": r.cores}))
"""


def run(
    model: str,
    seconds: float,
    workers: int,
    symmetry: bool,
    reduction: bool = True,
    por: bool = True,
    records: int | None = None,
    tree: Path | None = None,
) -> dict[str, object]:
    """One run in its own process; `tree`: the source tree it imports kafkarep from."""
    flags = ["1" if symmetry else "0", "1" if reduction else "0", "1" if por else "0"]
    flags.append("-" if records is None else str(records))
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(Path(model).resolve()), str(seconds), str(workers)]
        + flags,
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=tree,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=STANDARD)
    parser.add_argument("--workers", type=int, default=1, help="explorer processes (cores)")
    parser.add_argument("--symmetry", action="store_true", help="broker-id symmetry too")
    parser.add_argument(
        "--no-factor", action="store_true", help="skip the run without reductions (no factor)"
    )
    parser.add_argument("--seconds", type=float, default=1800.0, help="time limit per model")
    parser.add_argument(
        "--por-rounds", type=int, default=0, metavar="R", help="R runs without and with POR"
    )
    parser.add_argument("--records", type=int, help="override the models' records bound")
    parser.add_argument("--against", metavar="REV", help="side by side with this commit")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --against (default 3)")
    args = parser.parse_args(argv)
    if args.por_rounds:
        compare_por(args)
        return
    if args.against:
        against(args)
        return
    print(
        f"{'model':40} {'distinct':>11} {'generated':>12} {'depth':>5} {'secs':>8} "
        f"{'states/s':>9} {'/CPU-s':>8} {'B/state':>8} {'RSS/state':>9} {'cores':>5} "
        f"{'reduction':>9}  verdict"
    )
    for model in args.models:
        r: dict[str, Any] = run(
            model, args.seconds, args.workers, args.symmetry, records=args.records
        )
        factor = "-"
        if not args.no_factor:
            plain: dict[str, Any] = run(
                model, args.seconds, args.workers, False, reduction=False, records=args.records
            )
            factor = f"{plain['distinct'] / r['distinct']:.2f}x"
            line(f"{Path(model).stem} (plain rules)", plain, "-")
        line(Path(model).stem, r, factor)


def compare_por(args: argparse.Namespace) -> None:
    print(f"{'model':40} {'POR':>4} {'distinct':>11} {'generated':>12} {'depth':>5} {'CPU s':>8}")
    for model in args.models:
        cpu: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.por_rounds):
            for por in (False, True):
                r: dict[str, Any] = run(
                    model, args.seconds, args.workers, args.symmetry, por=por, records=args.records
                )
                cpu[por].append(r["cpu_seconds"])
                print(
                    f"{Path(model).stem:40} {'on' if por else 'off':>4} {r['distinct']:>11,} "
                    f"{r['generated']:>12,} {r['depth']:>5} {r['cpu_seconds']:>8.1f}",
                    flush=True,
                )
        off, on = sorted(cpu[False]), sorted(cpu[True])
        ratio = off[len(off) // 2] / on[len(on) // 2]
        print(f"{Path(model).stem}: POR x{ratio:.2f} (median CPU seconds {off} against {on})")


def against(args: argparse.Namespace) -> None:
    with trees.against(args.against) as checkouts:
        for model in args.models:
            side_by_side(args, model, checkouts)


def side_by_side(args: argparse.Namespace, model: str, trees: dict[str, Path]) -> None:
    print(
        f"{'model':32} {'tree':12} {'distinct':>11} {'generated':>12} {'depth':>5} "
        f"{'CPU s':>8} {'wall s':>8}"
    )
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            r: dict[str, Any] = run(
                model, args.seconds, args.workers, args.symmetry, records=args.records, tree=tree
            )
            runs[name].append(r)
            print(
                f"{Path(model).stem:32} {name[:12]:12} {r['distinct']:>11,} {r['generated']:>12,} "
                f"{r['depth']:>5} {r['cpu_seconds']:>8.1f} {r['seconds']:>8.1f}",
                flush=True,
            )
    (before, after) = (runs[name] for name in trees)
    if len({(r["distinct"], r["depth"]) for r in before + after}) > 1:
        print(f"{Path(model).stem}: the two trees found different states or depths")
    for figure in ("cpu_seconds", "seconds"):
        ratio = statistics.median(r[figure] for r in before) / statistics.median(
            r[figure] for r in after
        )
        print(f"{Path(model).stem}: {figure} median x{ratio:.2f} ({args.against} / this tree)")


def line(name: str, r: dict[str, Any], factor: str) -> None:
    rate = r["distinct"] / r["seconds"] if r["seconds"] else 0
    per_cpu = r["distinct"] / r["cpu_seconds"] if r["cpu_seconds"] else 0
    print(
        f"{name:40} {r['distinct']:>11,} {r['generated']:>12,} {r['depth']:>5} "
        f"{r['seconds']:>8.1f} {rate:>9,.0f} {per_cpu:>8,.0f} {r['retained_per_state']:>8.1f} "
        f"{r['rss_per_state']:>9,.0f} {r['cores']:>5} {factor:>9}  "
        f"{'complete' if r['complete'] else r['stop']}",
        flush=True,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
