"""Two source trees side by side, for the benchmarks' `--against REV`: this checkout and REV
checked out into a temporary worktree, both compiled first when `KAFKAREP_COMPILED=1`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # this checkout


@contextmanager
def against(rev: str) -> Iterator[dict[str, Path]]:
    """{REV: its worktree, "this tree": this checkout}; the worktree is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="kafkarep-against-") as scratch:
        other = Path(scratch) / "tree"
        git = ["git", "-C", str(HERE)]
        subprocess.run(git + ["worktree", "add", "--detach", str(other), rev], check=True)
        try:
            trees = {rev: other, "this tree": HERE}
            if os.environ.get("KAFKAREP_COMPILED") == "1":
                for tree in trees.values():
                    subprocess.run(
                        [sys.executable, "-m", "kafkarep", "compile"],
                        cwd=tree,
                        env={**os.environ, "PYTHONPATH": str(tree)},
                        check=True,
                    )
            yield trees
        finally:
            subprocess.run(git + ["worktree", "remove", "--force", str(other)], check=True)
