"""Entry point: parse the subcommand, run it, and turn every failure into one line and an exit
code (0 met, 1 not met, 2 bad input, 3 internal error)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from kafkarep.cli import (
    check,
    compile,
    conform,
    differential,
    graph,
    plan,
    prove,
    replay,
    suite,
    validate_log,
)
from kafkarep.common.exit_codes import BAD_INPUT, INTERNAL_ERROR, UsageError

COMMANDS = (
    conform,
    check,
    replay,
    suite,
    graph,
    plan,
    prove,
    differential,
    validate_log,
    compile,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kafkarep",
        description="Check Apache Kafka's replication protocol against a formal model.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except UsageError as error:
        print(f"kafkarep {args.command}: error: {_one_line(str(error))}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        print(f"kafkarep {args.command}: interrupted", file=sys.stderr)
        return INTERNAL_ERROR
    except Exception as error:
        if isinstance(error, OSError) and error.filename is not None:
            # a file or directory named on the command line that cannot be written (or read):
            # a directory where a file goes, a path under a file, no permission
            problem = _one_line(f"{error.filename}: {error.strerror}")
            print(f"kafkarep {args.command}: error: {problem}", file=sys.stderr)
            return BAD_INPUT
        if os.environ.get("KAFKAREP_DEBUG"):
            traceback.print_exc()
        print(
            f"kafkarep {args.command}: internal error: {error.__class__.__name__}: {error} "
            "(set KAFKAREP_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def _one_line(message: str) -> str:
    """A message as one line, whatever the input put in it: a newline or any other character
    that is not printable (a key with a newline, a file named "\\x1e") as Python escapes it."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def entry() -> None:
    sys.exit(main())
