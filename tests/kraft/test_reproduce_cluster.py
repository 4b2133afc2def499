"""`kafkarep reproduce` on real clusters, at Kafka 4.1.1 and 4.4.0 (docs/reproduce.md): the
makeLeader finding's trace is reached step by step, and a seeded bug's trace is not, stopping at
the step Kafka's code refuses. Nightly tier; skipped without Java and Maven."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.realcluster.cluster import KAFKA_VERSION
from tests.helpers import ROOT
from tests.kraft.conftest import MISSING

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=f"no agent: {MISSING}"),
]

FINDING = ROOT / "models" / "findings" / "make_leader_resets_pending_isr.toml"
SEEDED = ROOT / "models" / "mutations" / "isr_join_fetch_offset_at_hwm.toml"


def trace_of(model: Path, reports: Path) -> Path:
    main(
        [
            "check",
            "--quiet",
            "--reports",
            str(reports),
            "--json",
            str(reports / "s.json"),
            str(model),
        ]
    )
    (trace,) = reports.glob("traces/*/leader_candidate_completeness.isr.itf.json")
    return trace


def rows(out: str) -> list[tuple[int, str]]:
    """The progress lines: (step number, reached or NOT TAKEN), in the order taken."""
    found = []
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 4 and words[0].isdigit() and words[-1] in ("reached", "TAKEN"):
            found.append((int(words[0]), words[-1]))
    return found


@pytest.mark.parametrize("version", [KAFKA_VERSION, "4.4.0"])
def test_kafka_takes_the_finding_s_trace_to_its_violation(
    agent_jar: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    trace = trace_of(FINDING, tmp_path)
    capsys.readouterr()
    code = main(["reproduce", str(trace), "--kafka", version, "--agent", str(agent_jar)])
    out = capsys.readouterr().out
    assert code == 0, out
    # the fetch response waits behind the AlterPartition its fetch proposed: 10 before 9
    order = [1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12, 13, 14, 15]
    assert rows(out) == [(n, "reached") for n in order]
    assert (
        f"reached: Kafka {version} violates leader_candidate_completeness.isr: replica 3 in the "
        "ISR has log end 0 < the highest HWM 1"
    ) in out


@pytest.mark.parametrize("version", [KAFKA_VERSION, "4.4.0"])
def test_kafka_refuses_the_seeded_bug_s_step(
    agent_jar: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    """Step 7 of the seeded bug's trace: the leader proposes broker 3, whose fetch offset 0 is
    below the HWM 1, for the ISR; Kafka's leader does not."""
    trace = trace_of(SEEDED, tmp_path)
    capsys.readouterr()
    code = main(["reproduce", str(trace), "--kafka", version, "--agent", str(agent_jar)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert rows(out) == [(n, "reached") for n in range(1, 7)] + [(7, "TAKEN")]
    assert "broker 1 did not propose broker 3 for the ISR" in out
    assert f"not reached: Kafka {version} did not take the trace" in out
