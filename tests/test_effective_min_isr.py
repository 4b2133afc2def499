"""Kafka's effective MinISR, min(min.insync.replicas, replicas), since 3.7.0
(`Partition.effectiveMinIsr`, `ReplicationControlManager.getTopicEffectiveMinIsr`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.model.config import ModelError, load_model

TWO_REPLICAS = """
[cluster]
brokers = 3
replicas = [1, 2]
isr = [1, 2]
min_isr = 3
records = 1
[rules]
metadata_version = "4.0"
elr = true
[faults]
fences = 1
{more}
[expect]
result = "holds"
reached = ["record_committed"]
"""


def _write(tmp_path: Path, more: str = "") -> Path:
    path = tmp_path / "rf2.toml"
    path.write_text(TWO_REPLICAS.format(more=more))
    return path


def test_min_isr_above_the_replicas_is_the_replica_count(tmp_path: Path) -> None:
    """A topic with min.insync.replicas 3 on two replicas takes acks=all writes and commits
    them, as Kafka 3.7+ does; the raw MinISR would refuse every write."""
    path = _write(tmp_path)
    assert load_model(path).min_isr == 2
    assert main(["check", str(path), "--reports", str(tmp_path / "r")]) == 0


def test_a_reassignment_below_min_isr_is_refused(tmp_path: Path) -> None:
    more = "reassignments = 1\n[reassignment]\ntargets = [[1]]"
    with pytest.raises(
        ModelError, match="min_isr 3 is above the 1 replicas the partition may have"
    ):
        load_model(_write(tmp_path, more))


def test_a_reassignment_that_keeps_enough_replicas_keeps_min_isr(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    text = TWO_REPLICAS.format(more="reassignments = 1\n[reassignment]\ntargets = [[1, 2, 3]]")
    path.write_text(text.replace("min_isr = 3", "min_isr = 2"))
    assert load_model(path).min_isr == 2


def test_a_plan_without_a_target_moves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[cluster]\nmin_isr = 1\n[plan]\nparallel_replicas = 1\n")
    assert load_model(path).min_isr == 1
