"""Spark scaling benchmark: the local explorer on one core against Spark on one and two cores.

    python benchmarks/spark_scaling.py [MODEL] [--runs ENGINE:MASTER ...]

The model (default: `models/kip966_two_fences.toml`, 8,840,539 distinct states; about 30 minutes
for the three default runs on 2 cores) is explored completely, expected violations do not stop
it, by each engine in its own process: the explorer on one core, Spark on `local[1]` and on
`local-cluster[2,1,2048]` (two executor JVMs with a core each). A row gives the distinct states
per second of exploration (Spark's start-up is shown apart), the ratio to the first run, and the
CPU seconds of the whole process tree (driver, JVMs, Python workers), so the cost of the Spark
machinery shows beside the executors' task CPU (materialize, expand, decide). The machine's load
average is printed: on a shared machine a row's wall clock is only comparable with rows run
under the same load. docs/performance.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "kip966_two_fences.toml"
MILLION = 1_000_000
RUNS = ["explorer:-", "spark:local[1]", "spark:local-cluster[2,1,2048]"]

CHILD = r"""
import json, os, sys, time
engine, master, model = sys.argv[1:4]

def tree_cpu():
    # CPU seconds of this process and every descendant, with the reaped ones (cutime, cstime)
    ticks, children, own = os.sysconf("SC_CLK_TCK"), {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(pid))
        own[int(pid)] = sum(int(f) for f in fields[11:15]) / ticks
    total, stack = 0.0, [os.getpid()]
    while stack:
        pid = stack.pop()
        total += own.get(pid, 0.0)
        stack += children.get(pid, [])
    return total

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.properties.model_files import load_model
cfg = load_model(model)
chosen = properties.select(cfg.check.properties)
began = time.monotonic()
load = [os.getloadavg()[0]]
if engine == "explorer":
    result = Explorer(cfg, chosen, Limits(), workers=1).run()
    startup, details = 0.0, {}
else:
    from kafkarep.engines import spark, spark_context
    sc = spark_context.start_spark(master)
    startup = time.monotonic() - began
    result = spark.SparkRun(sc, cfg, Limits(), cfg.check.symmetry, [], None).run()
    details = dict(result.details)
load.append(os.getloadavg()[0])
print(json.dumps({
    "distinct": result.distinct_states, "generated": result.generated_states,
    "depth": result.depth, "complete": result.complete, "seconds": result.seconds,
    "startup": startup, "cpu": tree_cpu(), "cores": result.cores,
    "tasks": details.get("task_cpu_seconds", {}), "load": load,
}))
"""


def run(engine: str, master: str, model: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, engine, master, str(model)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"{engine} {master} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=Path, default=MODEL)
    parser.add_argument("--runs", nargs="+", default=RUNS, metavar="ENGINE:MASTER")
    args = parser.parse_args(argv)
    print(f"model {args.model}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    header = (
        f"{'engine':9} {'master':9} {'distinct':>10} {'depth':>5} {'seconds':>8} "
        f"{'states/s':>9} {'ratio':>6} {'start':>6} {'CPU s':>7} {'states/CPU s':>12}  "
        "task CPU s (materialize/expand/decide)  load"
    )
    print(header)
    base = 0.0
    counts = set()
    for spec in args.runs:
        engine, master = spec.split(":", 1)
        r = run(engine, master, args.model)
        rate = r["distinct"] / r["seconds"]
        base = base or rate
        counts.add((r["distinct"], r["generated"], r["depth"]))
        split = "/".join(f"{v:.0f}" for v in r["tasks"].values()) or "-"
        load = r["load"]
        print(
            f"{engine:9} {master:9} {r['distinct']:>10,} {r['depth']:>5} {r['seconds']:>8.1f} "
            f"{rate:>9,.0f} {rate / base:>6.2f} {r['startup']:>6.1f} {r['cpu']:>7.1f} "
            f"{r['distinct'] / r['cpu']:>12,.0f}  {split:38} {load[0]:.1f}-{load[1]:.1f}",
            flush=True,
        )
    if len(counts) != 1:
        sys.exit(f"engines disagree: {sorted(counts)}")
    if min(c[0] for c in counts) < MILLION:
        print(f"note: fewer than {MILLION:,} distinct states; pick a bigger model")


if __name__ == "__main__":
    main(sys.argv[1:])
