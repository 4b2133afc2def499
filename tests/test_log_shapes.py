"""The leader-epoch functions of `kafkarep/model/logs.py` are written once and read a log through
`shapes.LogShape`: the model's records (`logs.Entries`) or the prover's epoch per offset
(`symbolic/transition/logs.py: Epochs`). The two readings are the only second writing; here they
answer alike on every log the prover's abstraction covers (epochs that never decrease), and apart
exactly where its documented assumption fails."""

from __future__ import annotations

from itertools import pairwise, product

import pytest

from kafkarep.model.logs import Entries, diverges, end_offset_for_epoch, truncation_point

pytest.importorskip("z3")  # the prover's module imports Z3

from kafkarep.symbolic.transition.logs import Epochs

R = 3  # offsets a prover's log has room for
EPOCHS = range(0, 5)


def logs(monotone: bool) -> list[tuple[int, ...]]:
    found = []
    for length in range(R + 1):
        for epochs in product(range(1, 4), repeat=length):
            if monotone == all(a <= b for a, b in pairwise(epochs)):
                found.append(epochs)
    return found


def readings(epochs: tuple[int, ...]) -> tuple[Entries, Epochs]:
    model = Entries(tuple((e, value) for value, e in enumerate(epochs, 1)))
    prover = Epochs(epochs + (0,) * (R - len(epochs)), len(epochs))
    return model, prover


@pytest.mark.parametrize("epochs", logs(monotone=True), ids=str)
def test_both_readings_answer_alike(epochs: tuple[int, ...]) -> None:
    model, prover = readings(epochs)
    assert prover.latest_epoch == model.latest_epoch
    for epoch in EPOCHS:
        assert end_offset_for_epoch(prover, epoch) == end_offset_for_epoch(model, epoch)
        for leader_epoch in EPOCHS:
            for offset in range(R + 1):
                mine = diverges(prover, leader_epoch, offset, epoch)
                assert mine == diverges(model, leader_epoch, offset, epoch)
        for end in range(R + 1):
            assert truncation_point(prover, epoch, end) == truncation_point(model, epoch, end)


def test_they_part_only_on_a_log_whose_epochs_decrease() -> None:
    """The prover's latest epoch is its last record's; the model's the largest (Kafka's leader
    epoch cache ignores an append in an older epoch), which differ only in the logs of a follower
    that fetched from a broker of another leader epoch, before KIP-320 (KAFKA-6880)."""
    parted = []
    for epochs in logs(monotone=False):
        model, prover = readings(epochs)
        if prover.latest_epoch != model.latest_epoch:
            parted.append(epochs)
    assert (3, 1) in parted and (1, 2, 1) in parted
