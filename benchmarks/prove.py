"""Induction benchmark: the completeness properties proved for N brokers, wall-clock per N.

    python benchmarks/prove.py [--brokers 3,4,5] [--workers 2] [--property P ...] [MODEL]
    (default: models/kip966_small.toml, Leader Completeness and Leader Candidate Completeness)

Each N runs `kafkarep prove MODEL --brokers N --no-bmc --all-obligations` in its own process,
as a user would, and the figure is that command's wall-clock time (start-up included). Issue 9's
target: each N in under a minute on 2 cores. Also printed: the status of each property, the
obligations discharged, and the CPU seconds of the run (every process's).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMPLETENESS = ["leader_completeness", "leader_candidate_completeness"]
CLI = "import sys; from kafkarep.cli.main import main; sys.exit(main())"  # `kafkarep`


def run(model: str, n: int, properties: list[str], workers: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        summary = Path(folder) / "prove.json"
        command = [sys.executable, "-c", CLI, "prove", model, "--quiet"]
        command += ["--brokers", str(n), "--no-bmc", "--all-obligations"]
        command += ["--workers", str(workers), "--json", str(summary), "--reports", folder]
        for p in properties:
            command += ["--property", p]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        code = subprocess.run(command, check=False, stdout=subprocess.DEVNULL).returncode
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        results = json.loads(summary.read_text())["models"][0]["results"] if code < 2 else []
    return {"n": n, "exit": code, "wall": wall, "cpu": cpu, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="models/kip966_small.toml")
    parser.add_argument("--brokers", default="3,4,5")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--property", action="append", dest="properties")
    args = parser.parse_args()
    properties = args.properties or COMPLETENESS
    print(f"{args.model}: {', '.join(properties)} by induction, {args.workers} workers")
    print(f"{'N':>2}  {'wall s':>7}  {'CPU s':>7}  {'obligations':>11}  status")
    for n in (int(x) for x in args.brokers.split(",")):
        row = run(args.model, n, properties, args.workers)
        results = row["results"]
        assert isinstance(results, list)
        statuses = ", ".join(f"{r['property']} {r['status']}" for r in results) or "error"
        proved = max((int(r["obligations_proved"]) for r in results), default=0)
        total = max((int(r["obligations"]) for r in results), default=0)
        print(
            f"{n:>2}  {row['wall']:>7.1f}  {row['cpu']:>7.1f}  {proved:>5}/{total:<5}  "
            f"{statuses} (exit {row['exit']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
