"""`kafkarep compile [--status]`: compile the model, the property clauses and the search kernel
with mypyc for a faster search (`kafkarep/common/compiled.py`; needs mypy and a C compiler).

The build goes to ~/.cache/kafkarep/compiled/, keyed by a hash of every source of the package:
a run uses it only while every source is as it was compiled, and runs the Python otherwise (an
edited rule is never checked stale). Compile again after an edit. Exit 0, or 2 when it cannot.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from kafkarep.common import compiled
from kafkarep.common.exit_codes import OK, UsageError


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "compile",
        help="compile the model with mypyc for a faster search (used while its sources are as "
        "compiled)",
        description=__doc__,
    )
    parser.add_argument(
        "--status", action="store_true", help="say whether runs use a compiled build; build none"
    )
    parser.set_defaults(run=run)


def describe(status: compiled.Status) -> str:
    if status.state == "compiled":
        return f"compiled: runs of these sources use {status.build}"
    if status.state == "off":
        return "off: KAFKAREP_COMPILED=0, runs are Python"
    return compiled.note(status) or status.state


def run(args: argparse.Namespace) -> int:
    if args.status:
        print(describe(compiled.find()))
        return OK
    count = len(compiled.compiled_sources())
    began = time.monotonic()
    try:
        build = compiled.built()
        if build is None:
            print(f"compiling {count} modules with mypyc (a minute or two) ...", flush=True)
            build = compiled.build()
    except compiled.CompileError as error:
        raise UsageError(str(error)) from None
    print(f"compiled ({time.monotonic() - began:.0f} s): runs of these sources use {build}")
    return OK
