"""Failpoints: named places in a long run where a test may have the process die, as a SIGKILL
would kill it there, to show that a run killed at that point resumes to the same answers.

A failpoint is armed by the environment variable `KAFKAREP_FAILPOINT=NAME:LEVEL` (for example
`staged:7`, the explorer's level 7 written but not yet named). When the run reaches that name at
that level it sends SIGKILL to its whole process group, so the explorer's worker processes, or
Spark's driver, JVM and Python workers, die with whichever process reached it: arm it only for a
run started in a process group of its own. Unarmed, a failpoint is one comparison. The names
are listed in `docs/explorer.md` ("The work dir and --resume").
"""

from __future__ import annotations

import os
import signal

ENV = "KAFKAREP_FAILPOINT"
GROUP = "KAFKAREP_FAILPOINT_GROUP"  # the run's process group, for the processes it starts


def _armed(value: str) -> tuple[str, int] | None:
    name, _, level = value.partition(":")
    return (name, int(level)) if name and level.isdigit() else None


ARMED = _armed(os.environ.get(ENV, ""))
if ARMED is not None and GROUP not in os.environ:
    # Spark's Python workers run in a process group of their own: they kill the run's.
    os.environ[GROUP] = str(os.getpgrp())


def reach(name: str, level: int) -> None:
    """The run is at failpoint `name` of level `level`: die here if a test armed it."""
    if ARMED is not None and (name, level) == ARMED:
        os.killpg(int(os.environ[GROUP]), signal.SIGKILL)
