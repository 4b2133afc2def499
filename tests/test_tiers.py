"""Every test belongs to a tier (README "Tests"): README's `pytest` (pyproject's marker
expression) or `.ci/nightly`'s `pytest` runs. A test that neither collects, one marked with an
unconditional skip, or a marker expression changed in one place and not the other fails here.

The tiers are read from the files that define them: `addopts` in pyproject.toml, and every
`pytest` command line of `.ci/nightly`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from _pytest.mark.expression import Expression

from tests.helpers import ROOT

# Prints every collected test with its markers, one line each, without selecting by marker.
PLUGIN = """
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        marks = sorted({m.name for m in item.iter_markers()})
        print("TEST", item.nodeid, ",".join(marks))
        for m in item.iter_markers("skip"):
            print("SKIP", item.nodeid)
"""


def marker_expression(args: list[str]) -> str:
    """The `-m` expression of a pytest command line ("" when it selects every test)."""
    expression = ""
    for flag, value in zip(args, [*args[1:], ""], strict=True):
        if flag == "-m":
            expression = value
    return expression


def default_tier() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return marker_expression(shlex.split(pyproject["tool"]["pytest"]["ini_options"]["addopts"]))


def nightly_tiers(script: str) -> list[str]:
    """The marker expression of every `pytest` command line of a CI script."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if "pytest" in words:
            found.append(marker_expression(words[words.index("pytest") + 1 :]))
    return found


def collected(tmp_path: Path) -> tuple[dict[str, set[str]], set[str]]:
    """Every test of the suite with its markers, and those marked skip without a condition."""
    (tmp_path / "tier_plugin.py").write_text(PLUGIN)
    run = subprocess.run(
        [
            sys.executable,
            *("-m", "pytest", "--collect-only", "-q", "-n", "0", "-m", ""),
            *("-p", "tier_plugin", "-p", "no:cacheprovider"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tests: dict[str, set[str]] = {}
    skipped = set()
    for line in run.stdout.splitlines():
        if line.startswith("TEST "):
            _, node, *marks = line.split(" ")
            tests[node] = set(marks[0].split(",")) if marks and marks[0] else set()
        elif line.startswith("SKIP "):
            skipped.add(line.split(" ", 1)[1])
    return tests, skipped


def selects(expression: str, marks: set[str]) -> bool:
    def has(name: str, /, **kwargs: object) -> bool:
        return name in marks

    return not expression or Expression.compile(expression).evaluate(has)


def outside_every_tier(tests: dict[str, set[str]], tiers: list[str]) -> list[str]:
    return sorted(n for n, marks in tests.items() if not any(selects(t, marks) for t in tiers))


def test_every_test_belongs_to_a_tier(tmp_path: Path) -> None:
    tiers = [default_tier(), *nightly_tiers((ROOT / ".ci" / "nightly").read_text())]
    assert tiers[0] == "not slow" and "slow" in tiers[1:]
    tests, skipped = collected(tmp_path)
    assert len(tests) > 500
    assert outside_every_tier(tests, tiers) == []
    assert sorted(skipped) == [], "a test skipped without a condition runs in no tier"


def test_a_test_in_no_tier_is_found() -> None:
    """Seeded: a marker neither tier selects, and a nightly that lost its `-m slow`."""
    tests = {"tests/a.py::t": {"slow"}, "tests/b.py::t": set(), "tests/c.py::t": {"someday"}}
    assert outside_every_tier(tests, ["not slow and not someday", "slow"]) == ["tests/c.py::t"]
    tiers = nightly_tiers('step "x" python3 -m pytest -m "slow and spark"  # only Spark\n')
    assert tiers == ["slow and spark"]
    assert outside_every_tier(tests, ["not slow", *tiers]) == ["tests/a.py::t"]


def test_ci_runs_readme_s_tier_less_what_the_suite_checks() -> None:
    """`.ci/run` runs README's tier, less the model checks `kafkarep suite` makes there."""
    script = (ROOT / ".ci" / "run").read_text()
    (tier,) = nightly_tiers(script)
    assert tier == f"{default_tier()} and not models"
    assert re.search(r"kafkarep suite models --prove", script)
