"""The package's layers point one way: a module imports only from its own package and from the
packages of lower layers (README "Layout"). An import that points up, or sideways between two
packages of one layer, fails here with the module and the import."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

# Lowest first. Packages on one line are peers: neither may import the other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("common",),
    ("kafka",),
    ("rules",),
    ("zookeeper", "planner"),
    ("model",),
    ("properties", "oracle", "metadata_log", "realcluster"),
    ("engines", "broker_trace"),
    ("symbolic", "reproduce"),
    ("output",),
    ("cli",),
    ("__main__",),
)
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}
PACKAGE = ROOT / "kafkarep"


def imported(file: Path) -> set[str]:
    """The kafkarep packages a module imports from (`kafkarep.<package>...`)."""
    found = set()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "kafkarep":
                names = [f"kafkarep.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {n.split(".")[1] for n in names if n.startswith("kafkarep.")}
    return found


def package_of(file: Path) -> str:
    return file.relative_to(PACKAGE).with_suffix("").parts[0]


def violations(modules: dict[str, Path]) -> list[str]:
    """Each module (by its name under kafkarep/) that imports up or sideways, with the import."""
    found = []
    for name, file in sorted(modules.items()):
        own = name.split("/")[0].removesuffix(".py")
        for other in sorted(imported(file) - {own}):
            if RANK[other] >= RANK[own]:
                found.append(f"kafkarep/{name} imports kafkarep.{other}")
    return found


def modules() -> dict[str, Path]:
    files = PACKAGE.rglob("*.py")
    return {f.relative_to(PACKAGE).as_posix(): f for f in files if f != PACKAGE / "__init__.py"}


def test_every_package_has_a_layer() -> None:
    packages = {package_of(f) for f in PACKAGE.rglob("*.py") if f.parent != PACKAGE}
    packages |= {f.stem for f in PACKAGE.glob("*.py") if f.name != "__init__.py"}
    assert packages == set(RANK)


def test_no_import_points_up_or_sideways() -> None:
    assert violations(modules()) == []


def test_an_import_pointing_up_or_sideways_is_found(tmp_path: Path) -> None:
    """Seeded: the rules reading the model's state (up), the oracle reading the properties
    (sideways, one layer), each in a copy of a real module."""
    up = tmp_path / "up.py"
    rules = PACKAGE / "rules" / "partition_change.py"
    up.write_text(rules.read_text() + "\nfrom kafkarep.model.state import ClusterState\n")
    sideways = tmp_path / "sideways.py"
    oracle = PACKAGE / "oracle" / "differential.py"
    sideways.write_text(oracle.read_text() + "\nfrom kafkarep import properties\n")
    seeded = {**modules(), "rules/partition_change.py": up, "oracle/differential.py": sideways}
    assert violations(seeded) == [
        "kafkarep/oracle/differential.py imports kafkarep.properties",
        "kafkarep/rules/partition_change.py imports kafkarep.model",
    ]
