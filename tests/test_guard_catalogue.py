"""The guard catalogue lists every guard: a module that defines one and is missing from
`model/guard_catalogue.py` would leave its guards unknown to `[rules] disable_guards`."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kafkarep
from kafkarep.model.config import ModelError
from kafkarep.model.guard_catalogue import MODULES, all_guards
from kafkarep.properties.model_files import parse_model
from kafkarep.rules.guards import Guard


def _every_guard() -> dict[str, Guard]:
    found: dict[str, Guard] = {}
    for info in pkgutil.walk_packages(kafkarep.__path__, "kafkarep."):
        if ".symbolic" in info.name or info.name.startswith(("kafkarep.cli", "kafkarep.__main__")):
            continue  # the prover reads guards, it defines none; the CLI neither
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Guard) and value.check.__module__ == info.name:
                found[value.qualified] = value
    return found


def test_every_guard_defined_anywhere_is_in_the_catalogue() -> None:
    every = _every_guard()
    assert len(every) >= 37
    assert set(all_guards()) == set(every)
    defining = {g.check.__module__ for g in every.values()}
    assert defining == {m.__name__ for m in MODULES}


def test_an_unknown_guard_or_property_is_a_model_error() -> None:
    base = {"cluster": {"brokers": 3}}
    parse_model({**base, "rules": {"disable_guards": ["fetch.broker_epoch_not_stale"]}})
    with pytest.raises(ModelError, match=r"unknown guard 'fetch\.no_such_guard'"):
        parse_model({**base, "rules": {"disable_guards": ["fetch.no_such_guard"]}})
    with pytest.raises(ModelError, match=r"\[check\] properties names an unknown property"):
        parse_model({**base, "check": {"properties": ["no_such_property"]}})
