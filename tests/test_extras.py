"""Spark and Z3 are extras (`kafkarep[spark]`, `kafkarep[prove]`): without them the explorer, the
Hypothesis engine, replay and the suite's reports run, and a command that needs one says which in
one line, exit code 2.

Each command runs in a process where Z3, PySpark and py4j cannot be imported: a sitecustomize
on PYTHONPATH sets `sys.modules[name] = None` for each, which makes `import name` raise
ModuleNotFoundError as a missing package does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kafkarep.common.exit_codes import BAD_INPUT, OK
from tests.helpers import ROOT

EXTRAS = ("z3", "pyspark", "py4j")
SMALL = ROOT / "models" / "liveness" / "unfence_refused.toml"  # 233 states
VIOLATES = ROOT / "models" / "mutations" / "hwm_below_min_isr.toml"  # found within 10 examples


@pytest.fixture(scope="module")
def without_extras(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a process in which the extras' modules cannot be imported."""
    site = tmp_path_factory.mktemp("no-extras")
    (site / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in EXTRAS)
    )
    path = os.pathsep.join(p for p in (str(site), str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "KAFKAREP_COMPILED": "0"}


def kafkarep(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkarep", *map(str, args)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_extras_cannot_be_imported_there(without_extras: dict[str, str]) -> None:
    for name in EXTRAS:
        run = subprocess.run(
            [sys.executable, "-c", f"import {name}"], env=without_extras, capture_output=True
        )
        assert run.returncode != 0, name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("prove", "models/kip966_small.toml"),
            "kafkarep prove: error: needs Z3: pip install 'kafkarep[prove]'",
        ),
        (("prove", "--help"), "kafkarep prove: error: needs Z3: pip install 'kafkarep[prove]'"),
        (
            ("check", "--engine", "spark", SMALL),
            "kafkarep check: error: needs PySpark: pip install 'kafkarep[spark]'",
        ),
        (
            ("suite", "--prove", SMALL),
            "kafkarep suite: error: needs Z3: pip install 'kafkarep[prove]'",
        ),
    ],
    ids=["prove", "prove-help", "check-spark", "suite-prove"],
)
def test_a_command_that_needs_a_missing_extra_names_it(
    without_extras: dict[str, str], tmp_path: Path, args: tuple[str | Path, ...], message: str
) -> None:
    run = kafkarep(without_extras, *args, *_outputs(args[0], tmp_path))
    assert run.stderr.splitlines() == [message]
    assert run.returncode == BAD_INPUT
    assert not list(tmp_path.iterdir())  # nothing ran


def test_the_help_lists_what_a_command_needs(without_extras: dict[str, str]) -> None:
    run = kafkarep(without_extras, "--help")
    assert run.returncode == OK
    assert "needs Z3: pip install 'kafkarep[prove]'" in run.stdout


def test_the_core_runs_without_the_extras(without_extras: dict[str, str], tmp_path: Path) -> None:
    """The explorer (liveness included), the suite with its JUnit and HTML reports, the
    Hypothesis engine and replay."""
    check = kafkarep(without_extras, "check", SMALL, *_outputs("check", tmp_path / "check"))
    assert check.returncode == OK, check.stderr
    suite = kafkarep(without_extras, "suite", SMALL, *_outputs("suite", tmp_path / "suite"))
    assert suite.returncode == OK, suite.stderr
    assert (tmp_path / "suite" / "html" / "index.html").exists()
    assert (tmp_path / "suite" / "junit.xml").exists()
    sampled = kafkarep(
        without_extras,
        "check",
        "--engine",
        "hypothesis",
        "--seed",
        "1",
        "--examples",
        "200",
        VIOLATES,
        *_outputs("check", tmp_path / "hypothesis"),
    )
    assert sampled.returncode == OK, sampled.stderr
    traces = sorted((tmp_path / "hypothesis" / "traces").rglob("*.itf.json"))
    assert traces
    replay = kafkarep(without_extras, "replay", "--quiet", traces[0])
    assert replay.returncode == OK, replay.stderr


def _outputs(command: str | Path, where: Path) -> list[str]:
    """Flags that keep a command's files in `where`."""
    if command == "check":
        return ["--quiet", "--reports", str(where), "--json", str(where / "summary.json")]
    if command == "suite":
        return [
            "--quiet",
            "--reports",
            str(where),
            "--json",
            str(where / "suite.json"),
            "--junit",
            str(where / "junit.xml"),
            "--html",
            str(where / "html"),
        ]
    return []


def test_the_extras_are_declared() -> None:
    """The core installs neither Spark nor Z3; each extra brings one; `dev` brings both."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "pyspark" not in core and "z3" not in core
    extras = project["optional-dependencies"]
    assert [d.split(">")[0] for d in extras["spark"]] == ["pyspark"]
    assert [d.split(">")[0] for d in extras["prove"]] == ["z3-solver"]
    assert "kafkarep[spark,prove]" in extras["dev"]
