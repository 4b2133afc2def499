"""acks=1 producers (`[cluster] acks = "1"`): the leader appends whatever its ISR
(`Partition.appendRecordsToLeader` refuses only acks=all below MinISR), and since 3.7.0 the HWM
does not pass such a write while the ISR is below MinISR (`hwm_requires_min_isr`, KAFKA-15583)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.model.config import ModelError, load_model
from kafkarep.symbolic.encoding import AbstractionError, Encoding

# The leader alone in the ISR below MinISR 2, one write, one lossy unclean shutdown.
ALONE = """
[cluster]
brokers = 2
replicas = [1, 2]
isr = [1]
min_isr = 2
records = 1
acks = {acks}
[rules]
kafka_version = "3.9"
elr = false
hwm_requires_min_isr = {gate}
[faults]
lossy_unclean_shutdowns = 1
[expect]
{expect}
"""


def _check(tmp_path: Path, acks: str, gate: str, expect: str) -> int:
    path = tmp_path / "alone.toml"
    path.write_text(ALONE.format(acks=acks, gate=gate, expect=expect))
    return main(["check", str(path), "--reports", str(tmp_path / "r")])


def test_an_acks_1_write_committed_below_min_isr_is_lost_without_the_hwm_gate(
    tmp_path: Path,
) -> None:
    """3.6's HWM passes an acks=1 write on the lone leader, which loses it in a lossy restart
    and is elected again: a committed record is gone (the Last Replica Standing, acks=1). The
    same cluster with acks=all holds: its write waits for the ISR to reach MinISR."""
    expect = (
        'result = "violates"\n'
        "violates = { leader_candidate_completeness = 3, leader_completeness = 5 }"
    )
    assert _check(tmp_path, '"1"', "false", expect) == 0
    assert _check(tmp_path, '"all"', "false", 'result = "holds"') == 0


def test_the_hwm_gate_keeps_an_acks_1_write_below_min_isr_uncommitted(tmp_path: Path) -> None:
    """3.7+: the write is appended at once, but committed only once the ISR is back at MinISR,
    so losing it before then breaks no property."""
    assert _check(tmp_path, '"1"', "true", 'result = "holds"') == 0


def test_a_bad_acks_value_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(ALONE.format(acks='"0"', gate="true", expect=""))
    with pytest.raises(ModelError, match="acks must be"):
        load_model(path)


def test_prove_refuses_acks_1(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text(ALONE.format(acks='"1"', gate="true", expect=""))
    with pytest.raises(AbstractionError, match="acks=all producers only"):
        Encoding(load_model(path))


@pytest.mark.parametrize(("written", "acks"), [("-1", "all"), ('"all"', "all"), ("1", "1")])
def test_acks_as_kafka_spells_it(tmp_path: Path, written: str, acks: str) -> None:
    path = tmp_path / "a.toml"
    path.write_text(ALONE.format(acks=written, gate="true", expect=""))
    assert load_model(path).acks == acks
