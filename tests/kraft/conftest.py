"""The kafkarep agent for the real-cluster tests: why it cannot be built here (`MISSING`), and
the jar `agent/build.sh` builds, once a session (`agent_jar`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT

BUILD = ROOT / "agent" / "build.sh"


def missing() -> str | None:
    """Why the agent cannot be built and run here, or None."""
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (the agent needs Java 17 and Maven)"
    return None


MISSING = missing()


@pytest.fixture(scope="session")
def agent_jar() -> Path:
    done = subprocess.run(
        ["bash", str(BUILD)], capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"agent/build.sh failed:\n{done.stderr[-3000:]}"
    jar = Path(done.stdout.strip().splitlines()[-1])
    assert jar.is_file(), done.stdout
    return jar
