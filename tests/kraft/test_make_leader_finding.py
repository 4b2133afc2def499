"""The makeLeader finding on a real Kafka cluster, 4.1.1 and 4.4.0
(tests/kraft/make_leader_finding.py, docs/mutations-and-findings.md): driven by the agent's gate
through the model's interleaving, Kafka's controller commits an ISR holding a broker without
committed records, and after two failures an acknowledged write is lost. Nightly tier; skipped
without Java and Maven."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafkarep.realcluster.cluster import KAFKA_VERSION, Cluster
from tests.kraft.make_leader_finding import agent_jar, reproduce

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("java") is None or shutil.which("mvn") is None,
        reason="the agent needs Java 17 and Maven",
    ),
]


@pytest.mark.parametrize("version", [KAFKA_VERSION, "4.4.0"])
def test_kafka_reaches_the_violation_and_loses_an_acknowledged_write(
    tmp_path: Path, version: str
) -> None:
    gate_dir = tmp_path / "gate"
    with Cluster(
        version=version, agent=agent_jar(), events_dir=tmp_path / "events", gate_dir=gate_dir
    ) as cluster:
        result = reproduce(cluster, gate_dir)
    assert result.isr_lacking is not None
    isr, follower_end, hwm = result.isr_lacking
    assert isr == [1, 2, 3] and follower_end < hwm  # leader_candidate_completeness.isr
    assert result.acked is not None and result.acked[0] == 16
    assert result.survivor_log_end == 16
    assert result.lost
