"""Entry point: parse the subcommand, run it, and turn every failure into one line and an exit
code (0 met, 1 not met, 2 bad input, 3 internal error)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from kafkarep.common.exit_codes import BAD_INPUT, INTERNAL_ERROR, UsageError
from kafkarep.oracle import kafka_controller  # noqa: F401  Kafka's classes answer controller = "kafka"

# The libraries that come with an extra (pyproject.toml), by top-level module: what a command
# that needs one says is missing, and what to install.
EXTRAS = {
    "z3": ("Z3", "prove"),
    "pyspark": ("PySpark", "spark"),
    "py4j": ("PySpark", "spark"),
}

NAMES = (
    "conform",
    "check",
    "replay",
    "suite",
    "graph",
    "plan",
    "prove",
    "differential",
    "validate_log",
    "validate_trace",
    "kafka_patch",
    "reproduce",
    "compile",
)


class _NeedsExtra:
    """A command whose module cannot be imported without an extra (`prove` without Z3): it is
    still listed, takes any arguments, and says in one line what to install (exit code 2)."""

    def __init__(self, name: str, missing: ModuleNotFoundError) -> None:
        self.name = name.replace("_", "-")
        self.missing = missing

    def add_parser(self, commands: Any) -> None:
        what, extra = EXTRAS[_top_module(self.missing)]
        parser = commands.add_parser(
            self.name,
            help=f"needs {what}: pip install 'kafkarep[{extra}]'",
            add_help=False,
            prefix_chars="\0",  # every argument, --help included, is taken as given
        )
        parser.add_argument("arguments", nargs="*")
        parser.set_defaults(run=self.run)

    def run(self, args: argparse.Namespace) -> int:
        raise self.missing


def _command(name: str) -> ModuleType | _NeedsExtra:
    try:
        return importlib.import_module(f"kafkarep.cli.{name}")
    except ModuleNotFoundError as missing:
        if _top_module(missing) not in EXTRAS:
            raise
        return _NeedsExtra(name, missing)


def _top_module(error: ModuleNotFoundError) -> str:
    return (error.name or "").split(".")[0]


COMMANDS = tuple(_command(name) for name in NAMES)


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
    except ModuleNotFoundError as error:
        if _top_module(error) not in EXTRAS:
            return _internal_error(args.command, error)
        # a library of an extra that is not installed: Z3 for prove, PySpark for Spark
        what, extra = EXTRAS[_top_module(error)]
        print(
            f"kafkarep {args.command}: error: needs {what}: pip install 'kafkarep[{extra}]'",
            file=sys.stderr,
        )
        return BAD_INPUT
    except Exception as error:
        if isinstance(error, OSError) and error.filename is not None:
            # a file or directory named on the command line that cannot be written (or read):
            # a directory where a file goes, a path under a file, no permission
            problem = _one_line(f"{error.filename}: {error.strerror}")
            print(f"kafkarep {args.command}: error: {problem}", file=sys.stderr)
            return BAD_INPUT
        return _internal_error(args.command, error)


def _internal_error(command: str, error: Exception) -> int:
    if os.environ.get("KAFKAREP_DEBUG"):
        traceback.print_exc()
    print(
        f"kafkarep {command}: internal error: {error.__class__.__name__}: {error} "
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
