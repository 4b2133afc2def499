"""The step table of one counterexample, pinned as text: the Last Replica Standing
(`models/history/v35_last_replica_standing.toml`, `leader_completeness.committed_log`). A change
to the rules, the explorer's order, the trace's columns or wording shows here as a diff. To
accept one on purpose: `KAFKAREP_REWRITE_GOLDEN=1 pytest tests/test_golden_trace.py`."""

from __future__ import annotations

import io
import os

from rich.console import Console

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.model.replay import replay_path
from kafkarep.output.steps import render
from kafkarep.properties.model_files import load_model
from tests.helpers import DATA, ROOT

MODEL = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
GOLDEN = DATA / "golden" / "v35_last_replica_standing.leader_completeness.txt"
CLAUSE = "leader_completeness.committed_log"


def step_table() -> str:
    cfg = load_model(MODEL)
    result = Explorer(cfg, properties.ALL, Limits(max_depth=8)).run()
    found = result.violations[CLAUSE]
    out = io.StringIO()
    console = Console(file=out, width=160, color_system=None, force_terminal=False)
    render(replay_path(cfg, found.path), f"{CLAUSE} on {MODEL.name}", found.witness, console)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def test_the_step_table_is_the_pinned_one() -> None:
    text = step_table()
    if os.environ.get("KAFKAREP_REWRITE_GOLDEN"):
        GOLDEN.write_text(text)
    assert GOLDEN.is_file(), "write it once with KAFKAREP_REWRITE_GOLDEN=1"
    assert text == GOLDEN.read_text(), (
        "the step table changed; if on purpose: KAFKAREP_REWRITE_GOLDEN=1 pytest " + __file__
    )
