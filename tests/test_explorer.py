"""The explorer finds the Last Replica Standing at its shortest depth, traces replay, the
expectations and exit codes are right, and fingerprints do not depend on the process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkarep import properties
from kafkarep.cli.main import main
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

LRS = ROOT / "models" / "history" / "v35_last_replica_standing.toml"


def test_last_replica_standing_found_in_at_most_8_steps(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    code = main(["check", "--quiet", "--reports", str(tmp_path), "--json", str(summary), str(LRS)])
    assert code == 0
    report = json.loads(summary.read_text())["models"][0]
    assert report["engine"] == "explorer" and report["expectations_met"]
    by_name = {r["property"]: r for r in report["results"]}
    lc = by_name["leader_completeness.committed_log"]
    assert lc["status"] == "violated" and lc["trace_length"] <= 8
    assert by_name["log_matching.stable_prefix"]["status"] == "holds"
    assert by_name["unclean_shutdown_hits_leader"]["status"] == "reached"
    trace = Path(lc["trace_file"])
    document = json.loads(trace.read_text())
    assert document["vars"][:4] == ["controller", "brokers", "ghost", "budget"]
    assert len(document["states"]) == lc["trace_length"] + 1
    assert main(["replay", "--quiet", str(trace)]) == 0


def test_tampered_trace_does_not_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--quiet", "--reports", str(tmp_path), str(LRS)]) == 0
    trace = next((tmp_path / "traces").rglob("leader_completeness.committed_log.itf.json"))
    document = json.loads(trace.read_text())
    document["states"][3]["ghost"]["committed"] = [7]
    trace.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["replay", "--quiet", str(trace)]) == 1
    assert "state 3 differs" in capsys.readouterr().out
    trace.write_text("{")
    assert main(["replay", str(trace)]) == 2


def test_flipped_expectation_exits_1(tmp_path: Path) -> None:
    flipped = tmp_path / "flipped.toml"
    flipped.write_text(
        LRS.read_text()
        .replace('result = "violates"', 'result = "holds"')
        .replace("violates = { leader_completeness = 7, leader_candidate_completeness = 5 }", "")
    )
    summary = tmp_path / "s.json"
    assert (
        main(
            [
                *("check", "--quiet", "--max-depth", "8", "--reports", str(tmp_path)),
                *("--json", str(summary), str(flipped)),
            ]
        )
        == 1
    )
    report = json.loads(summary.read_text())["models"][0]
    assert not report["expectations_met"]
    assert any("unexpected violation of leader_completeness" in p for p in report["problems"])


def test_state_limit_is_incomplete() -> None:
    cfg = load_model(ROOT / "models" / "kip966_small.toml")
    result = Explorer(cfg, properties.ALL, Limits(max_states=500)).run()
    assert not result.complete and result.stop_reason == "state limit 500"
    assert result.distinct_states >= 500  # checked at the end of a level


def test_search_is_deterministic() -> None:
    cfg = load_model(LRS)
    runs = [Explorer(cfg, properties.ALL, Limits(max_states=3000)).run() for _ in range(2)]
    assert runs[0].distinct_states == runs[1].distinct_states
    assert runs[0].generated_states == runs[1].generated_states
    assert runs[0].violations == runs[1].violations


FINGERPRINTS = r"""
import sys
from kafkarep.properties.model_files import load_model
from kafkarep.model.initial import initial_state
from kafkarep.model.actions import successors
from kafkarep.model.encoding import fingerprint
cfg = load_model(sys.argv[1])
frontier, out = [initial_state(cfg)], []
for _ in range(4):
    frontier = [s for state in frontier for _, s in successors(cfg, state)]
    out.extend(fingerprint(s) for s in frontier)
print(",".join(map(str, out)))
"""


def test_fingerprints_are_stable_across_processes() -> None:
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", FINGERPRINTS, str(LRS)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    values = next(iter(outputs)).strip().split(",")
    assert len(values) > 50 and all(0 <= int(v) < 2**64 for v in values)


def test_symmetry_keeps_verdicts_and_depths_with_fewer_states(tmp_path: Path) -> None:
    """Brokers 4 and 5 hold no role in this model, so they are interchangeable: the reduced
    search finds the same violations at the same depths in fewer states."""
    model = tmp_path / "lrs5.toml"
    text = LRS.read_text().replace("brokers = 3", "brokers = 5")
    model.write_text("\n".join(line for line in text.splitlines() if "distinct_states" not in line))
    cfg = load_model(model)
    runs = [
        Explorer(cfg, properties.ALL, Limits(max_depth=5), symmetry=symmetry).run()
        for symmetry in (False, True)
    ]
    plain, reduced = runs
    assert {n: d.depth for n, d in plain.violations.items()} == {
        n: d.depth for n, d in reduced.violations.items()
    }
    assert "leader_candidate_completeness.isr" in reduced.violations
    assert reduced.distinct_states < plain.distinct_states


def test_worker_processes_give_the_single_process_counts_and_traces() -> None:
    cfg = load_model(ROOT / "models" / "history" / "kafka_7128_isr_join_below_leso.toml")
    stop = [name for name, _ in cfg.expect.violates]
    runs = [
        Explorer(cfg, properties.ALL, stop_when_found=stop, workers=workers).run()
        for workers in (1, 2)
    ]
    one, two = runs
    assert two.cores == 2 and one.cores == 1
    assert (one.distinct_states, one.generated_states, one.depth) == (
        two.distinct_states,
        two.generated_states,
        two.depth,
    )
    assert one.violations == two.violations and one.reached == two.reached


@pytest.mark.parametrize("workers", [1, 2])
def test_a_level_spilled_to_disk_gives_the_same_counts_and_traces(workers: int) -> None:
    """With a tiny memory allowance most of every level goes to chunk files (and, with two
    workers, chunks move between them by name): the counts, reached properties and traces are
    those of the run held in memory."""
    cfg = load_model(ROOT / "models" / "mutations" / "isr_join_fetch_offset_at_hwm.toml")
    stop = [name for name, _ in cfg.expect.violates]
    held, spilled = (
        Explorer(
            cfg, properties.ALL, stop_when_found=stop, workers=workers, spill_after=limit
        ).run()
        for limit in (0, 64)
    )
    assert "spilled_states" not in dict(held.details)
    assert dict(spilled.details)["spilled_states"] > held.distinct_states // 2
    assert (held.distinct_states, held.generated_states, held.depth) == (
        spilled.distinct_states,
        spilled.generated_states,
        spilled.depth,
    )
    assert held.violations == spilled.violations and held.reached == spilled.reached
