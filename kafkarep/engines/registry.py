"""The engines by name, as `kafkarep check --engine` and the suites choose them."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from kafkarep.engines.explorer import explore
from kafkarep.engines.results import Exploration, Progress, RunOptions
from kafkarep.model.config import ModelConfig

Engine = Callable[[ModelConfig, RunOptions, Callable[[Progress], None] | None], Exploration]


def _lazy(module: str, attribute: str = "explore") -> Engine:
    """An engine whose module (and its heavy imports: pyspark, hypothesis) loads on first use."""

    def run(
        cfg: ModelConfig, options: RunOptions, progress: Callable[[Progress], None] | None
    ) -> Exploration:
        engine: Engine = getattr(importlib.import_module(module), attribute)
        return engine(cfg, options, progress)

    return run


ENGINES: dict[str, Engine] = {
    "explorer": explore,
    "spark": _lazy("kafkarep.engines.spark"),
    "hypothesis": _lazy("kafkarep.engines.hypothesis_machine"),
}


# Engines that sample histories instead of exhausting them (expectations.problems judges them so).
SAMPLING = frozenset({"hypothesis"})
