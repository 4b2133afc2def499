"""What a search is asked for and what it reports, whichever engine ran it: the run's options
and limits, its progress, what it found and how it ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple


class Limits(NamedTuple):
    max_states: int = 0  # 0: none; checked at the end of each level
    max_depth: int = 0
    max_seconds: float = 0.0


class RunOptions(NamedTuple):
    """How a model is run: the engine, its settings, where traces go, the engine's own flags."""

    engine: str = "explorer"
    limits: Limits | None = None  # None: the model file's
    symmetry: bool | None = None  # None: the model file's
    reduction: bool | None = None  # None: the model file's ([check] reduction, default on)
    por: bool | None = None  # None: the model file's ([check] por, default on)
    reports: Path = Path("reports")
    quiet: bool = False
    workers: int = 0  # 0: every core
    liveness: bool = False  # check the liveness properties too (the model file may ask already)
    engine_args: tuple[tuple[str, Any], ...] = ()


class Discovery(NamedTuple):
    """A violated clause (or a reached `sometimes` property) and the shortest path to it."""

    name: str
    depth: int
    path: tuple[int, ...]  # action indices from the initial state
    witness: str | None
    # A liveness violation is a lasso: the path's last step returns to the state at this index
    # (the states from it on repeat forever); equal to the path's length for a stutter.
    loop: int | None = None


class Progress(NamedTuple):
    distinct: int
    generated: int
    depth: int
    queue: int
    seconds: float
    done: bool = False


class Exploration(NamedTuple):
    distinct_states: int
    generated_states: int
    depth: int
    seconds: float
    complete: bool
    stop_reason: str  # "exhausted", "expected violations found", or the limit hit
    violations: dict[str, Discovery]
    reached: dict[str, Discovery]
    cores: int = 1
    collision_probability: float = 0.0
    seen_bytes: int = 0
    links_bytes: int = 0
    # Engine-specific figures, (name, value) with JSON values, for the summary and the verdict:
    # a sampling engine's seed and rerun command, action frequencies.
    details: tuple[tuple[str, Any], ...] = ()
