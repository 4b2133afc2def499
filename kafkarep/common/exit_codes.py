"""Exit codes and the error that maps to bad input (README "Exit codes"). Below every layer: an
engine or a report may raise `UsageError`, and the command line turns it into one line."""

from __future__ import annotations

import os
import traceback

OK = 0  # every expectation met
EXPECTATION_NOT_MET = 1  # an unexpected violation, a missing expected one, a failed case
BAD_INPUT = 2  # a malformed model or case file, an unknown flag or broker id
INTERNAL_ERROR = 3  # a bug in kafkarep


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit code 2."""


def internal_error(error: Exception) -> str:
    """The one line an internal error is reported as, where a run goes on past it (the
    suite's next model); the traceback too, on stderr, with KAFKAREP_DEBUG=1."""
    if os.environ.get("KAFKAREP_DEBUG"):
        traceback.print_exc()
    return f"internal error: {error.__class__.__name__}: {error}"
