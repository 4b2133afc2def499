"""The guard catalogue lists every guard: a module that defines one and is missing from
`model/guard_catalogue.py` would leave its guards unknown to `[rules] disable_guards`."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import kafkarep
from kafkarep.model.config import ModelError
from kafkarep.model.guard_catalogue import MODULES, all_guards
from kafkarep.properties.model_files import parse_model
from kafkarep.rules.guards import REFUSED, Guard
from tests.helpers import ROOT


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


def guard_names_written_as_strings(files: list[Path]) -> list[str]:
    """Every string constant in these modules that is a guard's qualified name (`area.name`):
    a guard named so is unchecked (a typo turns it on for good)."""
    names = set(all_guards()) | {REFUSED + name for name in all_guards()}
    found = []
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{file}:{node.lineno}: {node.value!r}")
    return found


def test_the_prover_refers_to_every_guard_by_its_object() -> None:
    """The prover runs the model's guards where the model's steps ask them, and switches one
    off by its object (`Encoding.guard_on(guard)`), so a misspelt guard is an import error and
    mypy's, never a guard on for good."""
    prover = sorted((ROOT / "kafkarep" / "symbolic").rglob("*.py"))
    assert len(prover) > 40
    assert guard_names_written_as_strings(prover) == []


def test_a_guard_named_by_a_string_is_found(tmp_path: Path) -> None:
    """Seeded: a copy of a prover module that names its guard by string again."""
    text = (ROOT / "kafkarep" / "symbolic" / "transition" / "cluster.py").read_text()
    assert "guard_on(fetch_offset_matches)" in text
    seeded = tmp_path / "cluster.py"
    named = text.replace(
        "guard_on(fetch_offset_matches)", 'guard_on("fetch_response.fetch_offset_matches")'
    )
    seeded.write_text(named)
    line = next(n for n, t in enumerate(seeded.read_text().splitlines(), 1) if '"fetch_resp' in t)
    found = guard_names_written_as_strings([seeded])
    assert found == [f"{seeded}:{line}: 'fetch_response.fetch_offset_matches'"]
