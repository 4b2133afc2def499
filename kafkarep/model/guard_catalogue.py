"""Every guard a model file may switch off by name (`[rules] disable_guards`): the guards of the
controller rules and of the cluster model, collected from the modules listed here, the modules
that define them. A module that defines a guard and is missing here fails
`tests/test_guard_catalogue.py`."""

from __future__ import annotations

import importlib
from types import ModuleType

from kafkarep.rules.guards import Guard

# By name: `kafkarep.rules` re-exports functions named as some of its modules.
MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"kafkarep.{name}")
    for name in (
        "rules.alter_partition",
        "rules.broker_events",
        "rules.elections",
        "rules.min_isr_change",
        "rules.partition_change",
        "rules.reassignment",
        "model.actions.alter_partition",
        "model.actions.data",
        "model.actions.failover",
        "model.actions.lifecycle",
        "model.actions.metadata",
        "model.hwm",
        "model.metadata_cache",
    )
)


def all_guards() -> dict[str, Guard]:
    """Every guard of the rules and of the cluster model, by qualified name."""
    found = {
        g.qualified: g for module in MODULES for g in vars(module).values() if isinstance(g, Guard)
    }
    return dict(sorted(found.items()))


def controller_guards() -> frozenset[str]:
    """The guards of the controller rules (`kafkarep.rules`), which Kafka's classes hold."""
    return frozenset(
        g.qualified
        for module in MODULES
        if module.__name__.startswith("kafkarep.rules.")
        for g in vars(module).values()
        if isinstance(g, Guard)
    )
