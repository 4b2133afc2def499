"""A level's states expanded so that Kafka's classes answer their controller steps in batches
(`[rules] controller = "kafka"`, docs/oracle.md).

The worker takes its frontier a chunk at a time. A state whose expansion met a controller step
with no answer yet (the rules' outcome stood in for it, `kafkarep.model.controller.Unanswered`)
is not the model's: its successors are dropped and what its steps told the `sometimes`
properties is rewound. Once the chunk is done, the steps met are asked in one batch and those
states expanded again, until none is left. The chunk's expansions come out in frontier order, so
the search keeps the states, keys and traces it has when each step is asked alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from kafkarep.engines.kernel import Expander
from kafkarep.model import controller

CHUNK = 1024  # states expanded before their unanswered steps are asked

Entry = TypeVar("Entry")


class BatchError(Exception):
    """Steps still unanswered after their batch was asked: a hook that never answers."""


def in_batches(
    frontier: Iterable[Entry],
    expand: Callable[[int, Entry], Iterable[Any]],
    expander: Expander,
    chunk: int = CHUNK,
) -> Iterator[tuple[int, list[Any]]]:
    """(position in the frontier, the state's successors as `expand` gives them), in frontier
    order, every controller step of them answered by Kafka's classes. The caller turns
    `controller.collect` on around it."""
    held: list[tuple[int, Entry]] = []
    for item in enumerate(frontier):
        held.append(item)
        if len(held) == chunk:
            yield from _answered(held, expand, expander)
            held = []
    yield from _answered(held, expand, expander)


def _answered(
    held: list[tuple[int, Entry]], expand: Callable[[int, Entry], Iterable[Any]], expander: Expander
) -> Iterator[tuple[int, list[Any]]]:
    done: list[list[Any] | None] = [None] * len(held)
    todo = list(range(len(held)))
    while todo:
        again = []
        for i in todo:
            before, watched = controller.unanswered(), expander.watched()
            produced = list(expand(*held[i]))
            if controller.unanswered() == before:
                done[i] = produced
            else:
                expander.rewind(watched)
                again.append(i)
        if again and controller.ask_unanswered() == 0:
            raise BatchError(f"{len(again)} state(s) met controller steps no batch answers")
        todo = again
    for (local, _), successors in zip(held, done, strict=True):
        assert successors is not None
        yield local, successors
