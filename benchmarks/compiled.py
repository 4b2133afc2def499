"""What the compiled hot path gains: one model explored as Python and compiled, side by side in one
invocation (alternating, `--rounds` times), each run in its own process.

    kafkarep compile   # first: a build of these sources
    python benchmarks/compiled.py [--workers N] [--rounds R] [MODEL]
    (default: models/kip966_small.toml, 1 worker, 2 rounds)

Prints per run the CPU seconds (every process's: the figure that does not depend on what else
the machine is doing) and wall seconds, checks that both runs found the same states, and prints
the median ratio Python/compiled of the CPU seconds. Each run says which it was by the file its
`kafkarep.model.state` came from, so a missing build cannot pass for a compiled run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from kafkarep.common import compiled

CHILD = r"""
import json, resource, sys, time
import kafkarep.model.state as state
from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.properties.model_files import load_model
cfg = load_model(sys.argv[1])
began = time.monotonic()
result = Explorer(cfg, properties.select(cfg.check.properties), workers=int(sys.argv[2]),
                  stop_when_found=[n for n, _ in cfg.expect.violates]).run()
wall = time.monotonic() - began
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"distinct": result.distinct_states, "generated": result.generated_states,
                  "depth": result.depth, "cpu": cpu, "wall": wall, "file": state.__file__}))
"""


def run(model: str, workers: int, setting: str) -> dict[str, float | str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, str(workers)],
        env={**os.environ, "KAFKAREP_COMPILED": setting},
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float | str] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="models/kip966_small.toml")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.environ.pop("KAFKAREP_COMPILED", None)
    status = compiled.find()
    if status.state != "compiled":
        sys.exit(f"no compiled build of these sources ({status.state}): run `kafkarep compile`")
    ratios = []
    for round_ in range(1, args.rounds + 1):
        python = run(args.model, args.workers, "0")
        fast = run(args.model, args.workers, "1")
        assert str(python["file"]).endswith(".py"), python["file"]
        assert str(fast["file"]).endswith(compiled.SUFFIX), fast["file"]
        counts = [(r["distinct"], r["generated"], r["depth"]) for r in (python, fast)]
        assert counts[0] == counts[1], counts
        ratios.append(float(python["cpu"]) / float(fast["cpu"]))
        print(
            f"round {round_}: {python['distinct']:,} distinct, {python['generated']:,} generated, "
            f"depth {python['depth']}; Python {python['cpu']:.1f} CPU-s ({python['wall']:.1f} s "
            f"wall), compiled {fast['cpu']:.1f} CPU-s ({fast['wall']:.1f} s wall): "
            f"x{ratios[-1]:.2f}",
            flush=True,
        )
    print(f"{args.model}: compiled is x{statistics.median(ratios):.2f} faster in CPU (median)")


if __name__ == "__main__":
    main()
