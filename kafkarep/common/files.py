"""A user's input file read at the boundary: a missing, unreadable or malformed file becomes one
line naming the file and the problem, raised as the caller's own error (a `UsageError` kind).
What is inside is checked next by the reader, with `kafkarep.common.shape`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_text(path: Path, kind: str, error: type[Exception]) -> str:
    """The file's text; `kind` names it in the message ("no such model file")."""
    try:
        return path.read_text()
    except FileNotFoundError:
        raise error(f"{path}: no such {kind} file") from None
    except UnicodeDecodeError:
        raise error(f"{path}: cannot read (not UTF-8 text)") from None
    except (OSError, ValueError) as problem:  # a directory, no permission, a NUL in the name
        raise error(f"{path}: cannot read ({problem.__class__.__name__})") from None


def read_json(path: Path, kind: str, error: type[Exception]) -> Any:
    """The file's JSON document, or `error` with the line of the first syntax error."""
    text = read_text(path, kind, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise error(f"{path}: malformed JSON at line {problem.lineno}: {problem.msg}") from None
    except ValueError:  # Python reads no integer of more than 4,300 digits
        raise error(f"{path}: malformed JSON: an integer with too many digits") from None
    except RecursionError:
        raise error(f"{path}: malformed JSON: nested too deeply") from None
