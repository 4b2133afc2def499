"""Explorer benchmark: per model, distinct and generated states, states/s, memory per state.

    python benchmarks/explore.py [MODEL ...]        (default: the standard models)

Each model runs in its own process so peak memory (max RSS) is its own; bytes per distinct
state is (peak RSS - RSS after start-up) / distinct states.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

STANDARD = [
    "models/kip966_small.toml",
    "models/v35_last_replica_standing.toml",
    "models/reassignment.toml",
]

CHILD = r"""
import json, resource, sys, time
from kafkarep.model.config import load_model
from kafkarep.engines.explorer import Explorer, Limits
import properties
cfg = load_model(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
explorer = Explorer(cfg, properties.select(cfg.check.properties),
                    Limits(max_seconds=float(sys.argv[2])),
                    stop_when_found=[n for n, _ in cfg.expect.violates])
r = explorer.run()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"distinct": r.distinct_states, "generated": r.generated_states, "depth": r.depth,
                  "seconds": r.seconds, "complete": r.complete, "stop": r.stop_reason,
                  "bytes_per_state": (peak - base) * 1024 / max(r.distinct_states, 1)}))
"""


def main(argv: list[str]) -> None:
    models = argv or STANDARD
    seconds = 600.0
    print(
        f"{'model':45} {'distinct':>11} {'generated':>12} {'depth':>5} {'secs':>8} "
        f"{'states/s':>9} {'B/state':>8}  verdict"
    )
    for model in models:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, model, str(seconds)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0
        print(
            f"{Path(model).stem:45} {r['distinct']:>11,} {r['generated']:>12,} {r['depth']:>5} "
            f"{r['seconds']:>8.1f} {rate:>9,.0f} {r['bytes_per_state']:>8,.0f}  "
            f"{'complete' if r['complete'] else r['stop']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
