"""The makeLeader finding on a real Kafka cluster, 4.1.1 and 4.4.0
(tests/kraft/make_leader_finding.py, docs/mutations-and-findings.md): driven by the agent's gate
through the model's interleaving, Kafka's controller commits an ISR holding a broker without
committed records, and after two failures an acknowledged write is lost. A run in which Kafka's
periodic ISR expiry fires inside the trace's window (`ShrankFirst`, a timing the trace does not
take) is tried once more. Nightly tier; skipped without Java and Maven."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from kafkarep.broker_trace.events import AgentEvent
from kafkarep.realcluster.cluster import KAFKA_VERSION, Cluster
from tests.kraft.make_leader_finding import (
    ShrankFirst,
    _answer_of_a,
    _not_shrunk_since,
    agent_jar,
    reproduce,
)

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
    for attempt in (1, 2):  # once more if Kafka's ISR expiry fired in the trace's window
        gate_dir = tmp_path / f"gate-{attempt}"
        events = tmp_path / f"events-{attempt}"
        try:
            with Cluster(
                version=version, agent=agent_jar(), events_dir=events, gate_dir=gate_dir
            ) as cluster:
                result = reproduce(cluster, gate_dir)
            break
        except ShrankFirst as timing:
            if attempt == 2:
                raise
            print(f"attempt {attempt}: {timing}; again on a fresh cluster", flush=True)
    assert result.isr_lacking is not None
    isr, follower_end, hwm = result.isr_lacking
    assert isr == [1, 2, 3] and follower_end < hwm  # leader_candidate_completeness.isr
    assert result.acked is not None and result.acked[0] == 16
    assert result.survivor_log_end == 16
    assert result.lost


class _Events:
    """The leader's events as `Brokers.about` gives them (the detection, without a cluster)."""

    def __init__(self, *events: AgentEvent) -> None:
        self.events = events

    def about(self, broker: int, *kinds: str) -> list[AgentEvent]:
        return [e for e in self.events if e.node == broker and e.kind in kinds]


def _event(seq: int, kind: str, **fields: object) -> AgentEvent:
    return AgentEvent(seq, 0, 1, kind, "t", 0, dict(fields), seq)


@pytest.mark.parametrize("out_of_sync", [[2], [3]])
def test_an_isr_expiry_in_the_window_is_told_apart(out_of_sync: list[int]) -> None:
    """The events of a nightly run at 4.1.1: A's answer, then the ISR expiry took broker 2 out
    (a timing to try again); one that takes another broker out is not this window's."""
    answer = _event(63, "alter_partition_answer", answer_isr=[1, 2])
    shrink = _event(64, "isr_shrink_proposed", proposed_isr=[1], out_of_sync_replicas=out_of_sync)
    events: Any = _Events(answer, shrink)
    assert _answer_of_a(events) is answer
    if out_of_sync == [2]:
        with pytest.raises(ShrankFirst, match=r"proposed \[1\] after A committed"):
            _not_shrunk_since(events, answer.seq)
    else:
        _not_shrunk_since(events, answer.seq)
