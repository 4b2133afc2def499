"""What `--workdir` costs the explorer: one model run without a work dir and with one, side by
side in one invocation (alternating, `--rounds` times), each in its own process.

    python benchmarks/checkpoint.py [--workers N] [--rounds R] [MODEL]
    (default: models/kip966_small.toml, 1 worker, 2 rounds)

Prints per run the CPU seconds (every process's, the figure that does not depend on what else
the machine is doing) and wall seconds, then the median CPU ratio with/without and the size of
the saved level.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.properties.model_files import load_model
cfg = load_model(sys.argv[1])
workdir = Path(sys.argv[3]) if sys.argv[3] else None
began = time.monotonic()
result = Explorer(cfg, properties.select(cfg.check.properties), workers=int(sys.argv[2]),
                  workdir=workdir).run()
wall = time.monotonic() - began
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
newest = max(workdir.glob("level-*")) if workdir else None  # the level before is kept too
saved = sum(f.stat().st_size for f in newest.iterdir()) if newest else 0
print(json.dumps({"distinct": result.distinct_states, "generated": result.generated_states,
                  "cpu": cpu, "wall": wall, "saved_bytes": saved}))
"""


def run(model: str, workers: int, workdir: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, str(workers), workdir],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="models/kip966_small.toml")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    ratios = []
    for round_ in range(1, args.rounds + 1):
        plain = run(args.model, args.workers, "")
        with tempfile.TemporaryDirectory() as work:
            kept = run(args.model, args.workers, work)
        assert (plain["distinct"], plain["generated"]) == (kept["distinct"], kept["generated"])
        ratios.append(kept["cpu"] / plain["cpu"])
        print(
            f"round {round_}: {plain['distinct']:,.0f} states; without a work dir "
            f"{plain['cpu']:.1f} CPU-s ({plain['wall']:.1f} s wall), with one {kept['cpu']:.1f} "
            f"CPU-s ({kept['wall']:.1f} s wall); last level saved "
            f"{kept['saved_bytes'] / 1e6:.1f} MB"
        )
    print(f"{args.model}: --workdir costs x{statistics.median(ratios):.3f} CPU (median)")


if __name__ == "__main__":
    main()
