"""A level's states expanded so that Kafka's classes answer their controller steps in batches
(`[rules] controller = "kafka"`, docs/oracle.md).

The worker takes its frontier a chunk at a time. A state whose expansion met a controller step
with no answer yet (the rules' outcome stood in for it, `kafkarep.model.controller.Unanswered`)
is not the model's: its successors are dropped and what its steps told the `sometimes`
properties is rewound, and so for every later state of the chunk, which is expanded only to
collect the steps it meets. Then the steps met are asked in one batch and the chunk resumes at
the state set aside. Every expansion that counts is made in frontier order with every step
answered, so the search keeps the states, keys, traces and `sometimes` witnesses it has when each
step is asked alone.
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
    """The chunk's expansions, each final once every step before it in the chunk was answered:
    from the first state that meets a step with no answer, the rest of the chunk is expanded
    only to collect its steps (and rewound), and the search resumes at that state after the
    batch. So the `sometimes` hits, the properties pending and the claims counted follow the
    order they follow when each step is asked alone."""
    done: list[list[Any]] = []
    while len(done) < len(held):
        set_aside = False
        for i in range(len(done), len(held)):
            before, watched = controller.unanswered(), expander.watched()
            expander.answered_mark = before
            produced = list(expand(*held[i]))
            if not set_aside and controller.unanswered() == before:
                done.append(produced)
                continue
            expander.rewind(watched)
            set_aside = True
        expander.answered_mark = -1
        if set_aside and controller.ask_unanswered() == 0:
            raise BatchError(f"states met controller steps no batch answers ({held[len(done)][0]})")
    for (local, _), successors in zip(held, done, strict=True):
        yield local, successors
