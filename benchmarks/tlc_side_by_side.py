"""TLC and kafkarep on the same protocol and bounds, one after the other on this machine.

    python benchmarks/tlc_side_by_side.py [--tlc-seconds S] [--workers N] [--no-shipped] [--verdict]

Needs TLC (tla2tools.jar, built from github.com/tlaplus/tlaplus) and Vanlightly/kafka-tlaplus's
specs under TLC_WORK (default /tmp/tlc-work). Both tools use 2 workers. State counts are not
comparable one to one (the two models have different variables and abstractions); time to the
same verdict on the same bounds is. Pairs:

- the 3.5 protocol with one lossy unclean shutdown: time to the Last Replica Standing violation
  (TLC: Vanlightly's v3.5 cfg with AvoidLastReplicaStanding FALSE; kafkarep:
  models/history/v35_last_replica_standing.toml);
- KIP-966 at the shipped cfg's bounds (models/kip966_shipped.toml): the states each found in
  --tlc-seconds (TLC does not finish), and with --verdict kafkarep's time to a complete
  verdict (about 11 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TLC_DIR = ROOT.parent / "shared" / "tlc"


def tlc(spec: Path, cfg: Path, seconds: int) -> dict[str, str]:
    out = subprocess.run(
        ["bash", str(TLC_DIR / "run.sh"), str(spec), str(cfg), str(seconds)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    line = out.splitlines()[-1] if out else ""
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    statuses = ("complete", "PARTIAL", "stopped_at_error")
    fields["status"] = next((w for w in statuses if w in line), "?")
    return fields


def kafkarep(model: Path, workers: int, *extra: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        start = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "kafkarep", "check", str(model), "--quiet", "--workers",
             str(workers), "--reports", tmp, "--json", str(summary), *extra],
            cwd=ROOT, check=False, capture_output=True,
        )  # fmt: skip
        wall = time.monotonic() - start
        report: dict[str, object] = json.loads(summary.read_text())["models"][0]
    report["wall_s"] = round(wall, 1)
    return report


def violated(report: dict[str, object]) -> str:
    results = report.get("results", [])
    assert isinstance(results, list)
    found = [r for r in results if r.get("status") == "violated"]
    return ", ".join(f"{r['property']} (depth {r['trace_length']})" for r in found) or "holds"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc-seconds", type=int, default=120)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-shipped", action="store_true", help="only the quick pair")
    parser.add_argument("--verdict", action="store_true", help="kafkarep to a complete verdict")
    args = parser.parse_args()
    work = Path(os.environ.get("TLC_WORK", "/tmp/tlc-work"))
    if not (work / "tla2tools.jar").exists():
        print(f"tlc_side_by_side: no TLC in {work}: build it first ({TLC_DIR / 'README.md'})")
        return 2
    kraft = work / "kafka-tlaplus" / "kafka_data_replication" / "kraft"
    rows: list[tuple[str, str, str]] = []

    t = tlc(kraft / "v3.5", TLC_DIR / "cfg" / "v35-shipped-AvoidLastReplicaStanding-FALSE.cfg", 0)
    k = kafkarep(ROOT / "models" / "history" / "v35_last_replica_standing.toml", args.workers)
    rows.append(
        (
            "3.5 protocol, Last Replica Standing",
            f"{t.get('result')} at depth {t.get('trace_states', '?')}, "
            f"{t.get('distinct')} distinct, {t.get('wall_s')} s",
            f"{violated(k)}, {k['distinct_states']:,} distinct, {k['wall_s']} s",
        )
    )
    if not args.no_shipped:
        spec = kraft / "kip-966"
        t = tlc(spec, spec / "kafka_replication_kip_966.cfg", args.tlc_seconds)
        model = ROOT / "models" / "kip966_shipped.toml"
        partial = kafkarep(model, args.workers, "--max-seconds", str(args.tlc_seconds))
        rows.append(
            (
                f"KIP-966 shipped bounds, first {args.tlc_seconds} s",
                f"{t.get('status')}: {t.get('distinct')} distinct, queue {t.get('queue')}",
                f"{partial['distinct_states']:,} distinct, depth {partial['depth']}",
            )
        )
        if args.verdict:
            k = kafkarep(model, args.workers)
            verdict = "complete" if k["complete"] else "incomplete"
            rows.append(
                (
                    "KIP-966 shipped bounds, to a verdict",
                    f"no verdict after {t.get('wall_s')} s",
                    f"{verdict}, {violated(k)}, {k['distinct_states']:,} distinct, {k['wall_s']} s",
                )
            )
    width = max(len(r[0]) for r in rows)
    print(f"{'run':<{width}}  {'TLC (2 workers)':<60}  kafkarep ({args.workers} workers)")
    for name, left, right in rows:
        print(f"{name:<{width}}  {left:<60}  {right}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
