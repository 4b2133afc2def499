"""The kafkarep agent's cost to a broker: produce throughput of two real clusters side by side.

    PYTHONPATH=. python benchmarks/agent_overhead.py [--rounds 5] [--records 50000]

Starts two Kafka 4.1.1 clusters of the real-cluster harness (kafkarep/realcluster/cluster.py) at
once, one whose brokers run the agent (`agent/build.sh`) and one without, each with a topic of three
replicas. Each round runs Kafka's ProducerPerformance (`--records` records of 100 bytes,
acks=all) on one cluster then the other, alternating which goes first, so that what else the
machine does falls on both. Prints each round's records a second and the median ratio (with
the agent / without). Needs Java 17 and Maven.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from kafkarep.realcluster.cluster import Cluster
from tests.helpers import ROOT

TOPIC = "perf"


def rate(cluster: Cluster, records: int) -> float:
    result = cluster.produce_perf(TOPIC, records)
    if result.acked != records:
        raise SystemExit(f"only {result.acked} of {records} records acknowledged")
    found = re.findall(r"^\d+ records sent, ([\d.]+) records/sec", result.output, re.M)
    return float(found[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    built = subprocess.run(
        ["bash", str(ROOT / "agent" / "build.sh")], capture_output=True, text=True, check=True
    )
    jar = Path(built.stdout.strip().splitlines()[-1])
    scratch = Path(tempfile.mkdtemp(prefix="kafkarep-overhead-"))
    with (
        Cluster(log=lambda _: None) as plain,
        Cluster(log=lambda _: None, agent=jar, events_dir=scratch / "events") as instrumented,
    ):
        clusters = {"without": plain, "with": instrumented}
        for cluster in clusters.values():
            cluster.create_topic(TOPIC, assignment=[1, 2, 3])
            cluster.produce_perf(TOPIC, 5_000)  # warm-up
        rates: dict[str, list[float]] = {"without": [], "with": []}
        for number in range(args.rounds):
            order = ["without", "with"] if number % 2 == 0 else ["with", "without"]
            for name in order:
                rates[name].append(rate(clusters[name], args.records))
            print(
                f"round {number + 1}: without {rates['without'][-1]:,.0f} records/s, "
                f"with the agent {rates['with'][-1]:,.0f}",
                flush=True,
            )
    events = sum(1 for f in (scratch / "events").glob("*.jsonl") for _ in f.open())
    shutil.rmtree(scratch)
    ratios = [w / o for w, o in zip(rates["with"], rates["without"], strict=True)]
    median = statistics.median
    print(
        f"median: without {median(rates['without']):,.0f} records/s, with the agent "
        f"{median(rates['with']):,.0f}; ratio with/without {median(ratios):.2f} "
        f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}); {events:,} events written"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
