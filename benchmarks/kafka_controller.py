"""Kafka's own classes answering a model's controller steps (`controller = "kafka"`), against the
rules, side by side in one invocation (alternating, `--rounds` times), each run in its own process
with one worker.

    python benchmarks/kafka_controller.py [--rounds R] [MODEL]
    (default: models/kip966_small.toml, 2 rounds; Java 17 and Maven)

Prints per run the wall seconds (the harness's JVM start included) and the distinct states, checks
that both found the same states, and prints the median ratio Kafka/rules, the number of distinct
controller steps Kafka answered, the batches they were asked in, and the harness's share of the
Kafka run's time (asking and waiting for its answers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.model.config import with_kafka_controller
from kafkarep.oracle import kafka_controller
from kafkarep.properties.model_files import load_model
cfg = load_model(sys.argv[1])
if sys.argv[2] == "kafka":
    cfg = with_kafka_controller(cfg)
began = time.monotonic()
result = Explorer(cfg, properties.select(cfg.check.properties), workers=1,
                  stop_when_found=[n for n, _ in cfg.expect.violates]).run()
wall = time.monotonic() - began
asked = sum(c.asked for c in kafka_controller._CONTROLLERS.values())
batches = sum(c.batches for c in kafka_controller._CONTROLLERS.values())
harness = sum(c.seconds for c in kafka_controller._CONTROLLERS.values())
kafka_controller.close()
print(json.dumps({"distinct": result.distinct_states, "wall": wall, "asked": asked,
                  "batches": batches, "harness": harness}))
"""


def run(model: str, controller: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, controller], check=True, capture_output=True, text=True
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", nargs="?", default="models/kip966_small.toml")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    ratios, asked, batches, shares = [], [], [], []
    for round_ in range(1, args.rounds + 1):
        order = ("rules", "kafka") if round_ % 2 else ("kafka", "rules")
        runs = {controller: run(args.model, controller) for controller in order}
        rules, kafka = runs["rules"], runs["kafka"]
        if rules["distinct"] != kafka["distinct"]:
            print(f"different states: rules {rules['distinct']}, Kafka {kafka['distinct']}")
            return 1
        ratios.append(kafka["wall"] / rules["wall"])
        asked.append(kafka["asked"])
        batches.append(kafka["batches"])
        shares.append(kafka["harness"] / kafka["wall"])
        print(
            f"round {round_}: {rules['distinct']:,.0f} states; rules {rules['wall']:.1f}s, "
            f"Kafka {kafka['wall']:.1f}s ({kafka['asked']:.0f} steps asked in "
            f"{kafka['batches']:.0f} batches, harness {kafka['harness']:.2f}s); "
            f"ratio {ratios[-1]:.2f}",
            flush=True,
        )
    print(
        f"{args.model}: Kafka-answered / rules = {statistics.median(ratios):.2f} (median of "
        f"{args.rounds}); {statistics.median(asked):.0f} distinct controller steps in "
        f"{statistics.median(batches):.0f} batches; the harness "
        f"{100 * statistics.median(shares):.1f}% of the Kafka run"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
