"""Bad input never crashes: Hypothesis makes bad inputs for every command and every file kind and
runs the command line in this process (`kafkarep.cli.main.main`). An input fails the test when it
exits 3 (internal error), prints a traceback, ends exit 2 without the one `error:` line, or runs
past SECONDS_PER_INPUT.

The inputs are structured mutations of real files (the bundled models, an ITF trace and a work
dir written by `kafkarep check`, the conformance cases and metadata-log dumps in tests/data, a
summary JSON as a baseline: a key dropped, a value replaced, retyped, truncated or extended), the
same files with their bytes corrupted, and flags with bad values. Every run is kept cheap: the
explorer runs in-process with few states (--max-states, --max-depth), prove runs bounded model
checking to depth 1 only, and nothing starts Java (no --oracle; differential always has a flag it
refuses; validate-log has a --kafka-home that is not a Kafka).

The default suite runs `FUZZ` (a few hundred inputs); `pytest -m slow tests/test_fuzz_cli.py` runs
`FUZZ_SLOW` (10,000). Failing inputs are kept in Hypothesis's database under .hypothesis/fuzz-cli
(git-ignored) and tried first on the next run; every bug found so far is a case in REGRESSIONS.
"""

from __future__ import annotations

import atexit
import copy
import io
import json
import math
import os
import re
import shutil
import signal
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from kafkarep.cli.main import main
from kafkarep.common.exit_codes import BAD_INPUT, EXPECTATION_NOT_MET, OK
from tests.helpers import DATA, ROOT

MODELS = ROOT / "models"
ALL_MODELS = sorted(MODELS.rglob("*.toml"))
SMALL_MODELS = [m for m in ALL_MODELS if "large" not in m.parts]  # prove's
CASE_FILES = sorted((DATA / "conformance").glob("*.json"))
DUMPS = sorted((DATA / "metadata-logs").glob("*.txt"))
TRACE_MODEL = MODELS / "mutations" / "hwm_below_min_isr.toml"  # violated at depth 3, 84 states
SECONDS_PER_INPUT = 60.0

settings.register_profile(
    "fuzz",
    max_examples=300,
    deadline=None,
    database=DirectoryBasedExampleDatabase(ROOT / ".hypothesis" / "fuzz-cli"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("fuzz-slow", settings.get_profile("fuzz"), max_examples=10_000)
FUZZ = settings.get_profile("fuzz")
FUZZ_SLOW = settings.get_profile("fuzz-slow")


class Input(NamedTuple):
    """One command line. In `argv` and the file names, {tmp} is the input's own directory."""

    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()  # written under {tmp} first
    workdir: bool = False  # the saved work dir copied to {tmp}/work first (for --resume)


# --- running one input ----------------------------------------------------------------------


class Hang(BaseException):
    """An input ran past SECONDS_PER_INPUT (not an Exception: the CLI must not catch it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(case: Input) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of one command line, run in its own directory."""
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kafkarep-fuzz-") as tmp:
        if case.workdir:
            shutil.copytree(saved_workdir(), Path(tmp) / "work")
        for name, content in case.files:
            path = Path(name.replace("{tmp}", tmp))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        argv = [arg.replace("{tmp}", tmp) for arg in case.argv]
        os.chdir(tmp)  # whatever a command writes by default lands here
        try:
            with time_limit(SECONDS_PER_INPUT), redirect_stdout(out), redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as stop:  # argparse: --help, or a bad flag
                    code = stop.code if isinstance(stop.code, int) else BAD_INPUT
        finally:
            os.chdir(here)
    return code, out.getvalue(), err.getvalue()


ERROR_LINE = re.compile(r"^kafkarep(?: [\w-]+)?: error: ")


def never_crashes(case: Input) -> None:
    code, out, err = run(case)
    shown = f"{' '.join(case.argv)}\nexit {code}\nstderr: {err[-2000:]}"
    assert code in (OK, EXPECTATION_NOT_MET, BAD_INPUT), shown
    assert "Traceback (most recent call last)" not in out + err, shown
    if code == BAD_INPUT:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert ERROR_LINE.match(last), shown


# --- the real files the mutations start from, made once per session -------------------------


@cache
def session_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="kafkarep-fuzz-base-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@cache
def saved_run() -> Path:
    """A `kafkarep check` of TRACE_MODEL: its traces, summary JSON and work dir (to depth 2)."""
    folder = session_dir() / "run"
    quiet = ("--quiet", "--workers", "1", "--reports", str(folder))
    assert main(["check", *quiet, "--json", str(folder / "summary.json"), str(TRACE_MODEL)]) == 0
    work = ("--workdir", str(folder / "work"), "--max-depth", "2")
    main(["check", *quiet, "--json", str(folder / "partial.json"), *work, str(TRACE_MODEL)])
    assert (folder / "work" / "manifest.json").is_file()
    return folder


def saved_trace() -> dict[str, Any]:
    trace = next(saved_run().rglob("min_isr_commit.hwm.itf.json"))
    document: dict[str, Any] = json.loads(trace.read_text())
    return document


# What --resume reads first: the newest saved level's manifest (the run stops at depth 2).
NEWEST_LEVEL = "level-00002/level.json"


def saved_workdir() -> Path:
    return saved_run() / "work"


def saved_summary() -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((saved_run() / "summary.json").read_text())
    return summary


# --- mutations ------------------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.sampled_from([-1, 0, 2**31, 2**63, -(2**64), 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["", "x", "RECOVERED", "changed", "4.1", "3", "-1", "None", "#set"]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=8,
)

Path_ = tuple[Any, ...]


def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """The path to every node of a JSON value (keys and indices), the root first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def retyped(value: Any) -> list[Any]:
    """The same value as other JSON kinds."""
    out: list[Any] = [str(value), [value], {"value": value}, None, True, 0, 1.5]
    if isinstance(value, list | dict):
        out += [
            len(value),
            list(value.values()) if isinstance(value, dict) else dict(enumerate(value)),
        ]
    if isinstance(value, str) and value.lstrip("-").isdigit():
        out.append(int(value))
    return out


WORDS = ["", "x", "kraft", "zookeeper", "explorer", "holds", "violates", "4.0", "3.5", "RECOVERING"]


def nudged(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the same kind: the type checks pass, what it means may not."""
    if isinstance(value, bool):
        return st.just(not value)
    if isinstance(value, int):
        return st.sampled_from([value - 1, value + 1, -1, 0, 1, 2, 3, 4, 5, 8, 9, 2**31, -(2**40)])
    if isinstance(value, float):
        return st.sampled_from([-1.0, 0.0, 1e-9, 1e300, math.nan, math.inf])
    if isinstance(value, str):
        return st.sampled_from([*WORDS, value.upper(), value + value])
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return st.lists(st.integers(-1, 9), max_size=6)
    if isinstance(value, list):
        return st.permutations(value).map(list) if value else st.just([0])
    return st.just({}) if isinstance(value, dict) else st.just(0)


@st.composite
def mutated(draw: st.DrawFn, document: Any, focus: Callable[[Path_], bool] | None = None) -> Any:
    """A JSON document (or a TOML one, as a dict) with one to three structured mutations; half
    the time only values nudged to others of their kind, so more inputs pass the checks and
    reach what runs after them."""
    doc = copy.deepcopy(document)
    kinds = ["drop", "replace", "retype", "shorten", "extend", "nudge"]
    if draw(st.booleans()):
        kinds = ["nudge"]
    for _ in range(draw(st.integers(1, 3))):
        every = paths(doc)
        chosen = [p for p in every if focus(p)] if focus is not None else []
        focused = draw(st.booleans())
        if chosen and focused:
            every = chosen
        where = draw(st.sampled_from(every))
        parent = doc
        for key in where[:-1]:
            parent = parent[key]
        value = parent[where[-1]] if where else doc
        op = draw(st.sampled_from(kinds))
        if op == "drop" and where:
            del parent[where[-1]]
            continue
        if op == "replace":
            new = draw(JSON_VALUES)
        elif op == "retype":
            new = draw(st.sampled_from(retyped(value)))
        elif op == "shorten" and isinstance(value, list | str):
            new = value[: draw(st.integers(0, max(len(value) - 1, 0)))]
        elif op == "nudge":  # a value of the same kind
            new = draw(nudged(value))
        elif op == "extend" and isinstance(value, dict):
            new = {**value, draw(st.text(max_size=8)): draw(JSON_VALUES)}
        elif op == "extend" and isinstance(value, list):
            extra = draw(st.sampled_from(value) if value else JSON_VALUES)
            new = [*value, copy.deepcopy(extra)]
        else:
            new = draw(JSON_VALUES)
        if where:
            parent[where[-1]] = new
        else:
            doc = new
    return doc


@st.composite
def corrupted(draw: st.DrawFn, content: bytes) -> bytes:
    """The bytes of a file, corrupted: truncated, a byte flipped, bytes inserted or cut out,
    not UTF-8, nested too deep, a number too long, or nothing left."""
    size = len(content)
    at = draw(st.integers(0, size))
    op = draw(
        st.sampled_from(
            ["truncate", "flip", "insert", "cut", "latin1", "nest", "digits", "empty", "bom"]
        )
    )
    if op == "truncate":
        return content[:at]
    if op == "flip" and size:
        at = min(at, size - 1)
        return content[:at] + bytes([content[at] ^ draw(st.integers(1, 255))]) + content[at + 1 :]
    if op == "insert":
        return content[:at] + draw(st.binary(min_size=1, max_size=8)) + content[at:]
    if op == "cut":
        return content[:at] + content[at + draw(st.integers(1, 64)) :]
    if op == "latin1":
        return content[:at] + b"\xe9\xff" + content[at:]
    if op == "nest":
        return b"[" * 100_000 + content
    if op == "digits":
        return content[:at] + b"9" * 5000 + content[at:]
    if op == "bom":
        return b"\xef\xbb\xbf" + content
    return b""


def json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items() if v is not None
            )
            + "}"
        )
    return json.dumps(str(value))


def toml_bytes(document: Any) -> bytes:
    """A TOML file of a (mutated) model: null is left out, as TOML has none."""
    if not isinstance(document, dict):
        return f"value = {toml_value(document)}\n".encode()
    lines = [
        f"{json.dumps(k)} = {toml_value(v)}"
        for k, v in document.items()
        if not isinstance(v, dict | type(None))
    ]
    for section, table in document.items():
        if isinstance(table, dict):
            lines.append(f"[{json.dumps(section)}]")
            lines += [
                f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items() if v is not None
            ]
    return ("\n".join(lines) + "\n").encode()


@st.composite
def model_file(draw: st.DrawFn, models: list[Path] = ALL_MODELS) -> bytes:
    source = draw(st.sampled_from(models))
    if draw(st.integers(0, 4)) == 0:
        return draw(corrupted(source.read_bytes()))
    return toml_bytes(draw(mutated(tomllib.loads(source.read_text()))))


# --- flags ----------------------------------------------------------------------------------

# Not a bad value of a limit, a huge one: a search as big as the model (--max-states, --max-depth)
BAD_INTS = ["-1", "x", "", "1.5", " ", "0x10", "nan", "--1", "²", "٣"]
HUGE = "99999999999999999999999"
BAD_FLOATS = ["-1", "nan", "inf", "-inf", "x", "", "1e999", "0"]
PATHS_OUT = ["{tmp}", "{tmp}/model.toml/under-a-file", "{tmp}/new/dir/out.json", "/dev/null"]


def flag(name: str, values: list[str]) -> st.SearchStrategy[list[str]]:
    return st.sampled_from(values).map(lambda value: [name, value])


def flags(*choices: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    """Some of the flags, in any order."""
    picked = st.lists(st.one_of(*choices), max_size=4)
    return picked.map(lambda chosen: [word for one in chosen for word in one])


def some_flags(*choices: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    """Flags for an input whose point is its file: none, three times out of four (a bad flag
    is refused before the file is read; the argv kind has them all)."""
    return st.one_of(st.just([]), st.just([]), st.just([]), flags(*choices))


def switch(name: str) -> st.SearchStrategy[list[str]]:
    return st.just([name])


SEARCH_FLAGS = (
    flag("--max-states", ["1", "50", "300", "-5", *BAD_INTS]),
    flag("--max-depth", ["1", "3", "-2", *BAD_INTS]),
    flag("--max-seconds", ["0.5", "5", *BAD_FLOATS]),
    flag("--workers", ["1", "-1", "x", "1.5"]),
    flag("--engine", ["explorer", "nope", "", "EXPLORER", "z3"]),
    switch("--symmetry"),
    switch("--no-symmetry"),
    switch("--reduction"),
    switch("--no-reduction"),
)
CHECK_FLAGS = (
    *SEARCH_FLAGS,
    flag("--spill-after", ["0", "1", "10", *BAD_INTS]),
    flag("--partitions", ["1", "0", *BAD_INTS]),
    flag("--examples", ["1", "0", *BAD_INTS]),
    flag("--steps", ["1", "0", *BAD_INTS]),
    flag("--seed", ["1", HUGE, *BAD_INTS]),
    flag("--json", PATHS_OUT),
    flag("--reports", PATHS_OUT),
    flag("--workdir", ["{tmp}/wd", "{tmp}/model.toml", "{tmp}/model.toml/wd"]),
    switch("--resume"),
    switch("--list-guards"),
)
CHECK = ("check", "--quiet", "--workers", "1", "--engine", "explorer", "--max-states", "300")
CHECK_CAPS = ("--max-depth", "5", "--reports", "{tmp}/reports", "--json", "{tmp}/summary.json")
PROVE = ("prove", "--quiet", "--no-induction", "--depth", "1", "--agreement-depth", "0")
PROVE_CAPS = ("--timeout", "10", "--reports", "{tmp}/reports", "--json", "{tmp}/prove.json")
PROVE_FLAGS = (
    flag("--property", ["leader_completeness", "min_isr_commit", "metadata", "nope", ""]),
    flag("--depth", ["1", "0", "-1", *BAD_INTS]),
    flag("--brokers", ["1", "2", "3", "0", "9", HUGE, *BAD_INTS]),
    flag("--timeout", ["5", *BAD_FLOATS, "1e-9"]),
    flag("--agreement-depth", ["0", "1", "-1", *BAD_INTS]),
    flag("--workers", ["1", "0", "-1", "x"]),
    flag("--json", PATHS_OUT),
    flag("--reports", PATHS_OUT),
    switch("--every-initial"),
    switch("--no-bmc"),
    switch("--all-obligations"),
)
GRAPH_FLAGS = (
    flag("--max-states", ["1", "20", "0", "-1", *BAD_INTS]),
    flag("--max-depth", ["1", "2", "-1", *BAD_INTS]),
    flag("--dot", ["{tmp}/g.dot", *PATHS_OUT]),
    switch("--symmetry"),
    switch("--no-symmetry"),
)
KAFKA = ["4.1", "3.9.2", "4.4.0", "all", "9.9", "", "x", "4", "4.", " 4.1 ", "4.1.9"]
IDS = st.one_of(
    st.lists(st.integers(-2, 12), max_size=8).map(lambda ids: ",".join(map(str, ids))),
    st.sampled_from(["", ",", "1,,2", "1,1", "0,1,2", "²", "١,٢", "99999999999999999999", " 1 "]),
    st.text(alphabet="0123456789, -x", max_size=12),
)


@st.composite
def plan_input(draw: st.DrawFn) -> Input:
    argv = ["plan", "--current", draw(IDS), "--target", draw(IDS)]
    for name in ("--isr", "--min-isr", "--parallel-replicas"):
        if draw(st.booleans()):
            argv += [name, draw(IDS)]
    if draw(st.booleans()):
        argv += ["--json", draw(st.sampled_from(["{tmp}/plan.json", *PATHS_OUT]))]
    return Input(tuple(argv))


@st.composite
def differential_input(draw: st.DrawFn) -> Input:
    """Always refused before Kafka starts: the last --kafka is unknown or --cases not positive."""
    argv = ["differential"]
    seeds = flag("--seed", ["1", HUGE, *BAD_INTS])
    argv += draw(flags(seeds, flag("--area", ["elections", "nope"])))
    refused = draw(
        st.sampled_from(
            [["--kafka", v] for v in ("9.9", "", "x", "4.")]
            + [["--cases", v] for v in ("0", "-1", "x")]
        )
    )
    if refused[0] == "--cases":
        argv += ["--kafka", draw(st.sampled_from(KAFKA[:3]))]
    return Input((*argv, *refused))


# --- the inputs of each file kind -----------------------------------------------------------


@st.composite
def model_input(draw: st.DrawFn) -> Input:
    """A bad model file through each command that reads one."""
    command = draw(st.sampled_from(["check", "graph", "replay", "suite", "prove"]))
    model = draw(model_file(SMALL_MODELS if command == "prove" else ALL_MODELS))
    files = [("{tmp}/model.toml", model)]
    if command == "check":
        argv = [*CHECK, *CHECK_CAPS, *draw(some_flags(*CHECK_FLAGS)), "{tmp}/model.toml"]
    elif command == "graph":
        argv = ["graph", "{tmp}/model.toml", "--dot", "{tmp}/g.dot", "--max-states", "200"]
        argv += draw(some_flags(*GRAPH_FLAGS))
    elif command == "replay":
        trace = next(saved_run().rglob("*.itf.json"))
        argv = [
            "replay",
            str(trace),
            "--model",
            "{tmp}/model.toml",
            *draw(flags(switch("--quiet"))),
        ]
    elif command == "suite":
        argv = ["suite", "--quiet", "--workers", "1", "--engine", "explorer", "--max-states", "100"]
        argv += ["--max-depth", "4", "--reports", "{tmp}/reports", "{tmp}/models"]
        files = [("{tmp}/models/model.toml", model)]
        if draw(st.booleans()):
            files.append(("{tmp}/models/other.toml", draw(model_file())))
    else:
        argv = [*PROVE, *PROVE_CAPS, *draw(some_flags(*PROVE_FLAGS)), "{tmp}/model.toml"]
    return Input(tuple(argv), tuple(files))


def in_meta(path: Path_) -> bool:
    return path[:1] == ("#meta",) or len(path) <= 2


@st.composite
def trace_input(draw: st.DrawFn) -> Input:
    document = saved_trace()
    if draw(st.integers(0, 5)) == 0:
        content = draw(corrupted(json_bytes(document)))
    else:
        content = json_bytes(draw(mutated(document, in_meta)))
    argv = ["replay", "{tmp}/trace.itf.json", *draw(flags(switch("--quiet")))]
    return Input(tuple(argv), (("{tmp}/trace.itf.json", content),))


def shallow(path: Path_) -> bool:
    return len(path) <= 3


@st.composite
def cases_input(draw: st.DrawFn) -> Input:
    cases = json.loads(draw(st.sampled_from(CASE_FILES)).read_text())
    start = draw(st.integers(0, len(cases) - 1))
    cases = cases[start : start + draw(st.integers(1, 4))]
    if draw(st.integers(0, 5)) == 0:
        content = draw(corrupted(json_bytes(cases)))
    else:
        content = json_bytes(draw(mutated(cases, shallow)))
    argv = ["conform", "{tmp}/cases.json"]
    if draw(st.integers(0, 5)) == 0:
        argv.append(draw(st.sampled_from(["{tmp}", "{tmp}/missing.json", str(TRACE_MODEL)])))
    argv += draw(some_flags(flag("--kafka", KAFKA), switch("--write")))
    return Input(tuple(argv), (("{tmp}/cases.json", content),))


PAYLOAD = re.compile(r"(payload: )(\{.*\})$")


@st.composite
def dump_input(draw: st.DrawFn) -> Input:
    lines = draw(st.sampled_from(DUMPS)).read_text().splitlines()
    op = draw(st.sampled_from(["payload", "payload", "lines", "bytes"]))
    if op == "payload":
        numbers = [n for n, line in enumerate(lines) if PAYLOAD.search(line)]
        for number in draw(st.lists(st.sampled_from(numbers), min_size=1, max_size=3, unique=True)):
            found = PAYLOAD.search(lines[number])
            assert found is not None
            payload = draw(mutated(json.loads(found.group(2)), lambda p: p[:1] == ("data",)))
            lines[number] = lines[number][: found.start(2)] + json.dumps(payload)
    elif op == "lines":
        for _ in range(draw(st.integers(1, 4))):
            n = draw(st.integers(0, len(lines) - 1))
            kind = draw(st.sampled_from(["drop", "repeat", "swap", "cut", "digits"]))
            if kind == "drop":
                del lines[n]
            elif kind == "repeat":
                lines.insert(n, lines[n])
            elif kind == "swap":
                m = draw(st.integers(0, len(lines) - 1))
                lines[n], lines[m] = lines[m], lines[n]
            elif kind == "cut":
                lines[n] = lines[n][: draw(st.integers(0, len(lines[n])))]
            else:
                lines[n] = re.sub(
                    r"\d+",
                    draw(st.sampled_from(["-1", "9" * 5000, "x"])),
                    lines[n],
                    count=1,
                )
    content = ("\n".join(lines) + "\n").encode()
    if op == "bytes":
        content = draw(corrupted(content)).replace(b"\0", b"")
    argv = ["validate-log", "{tmp}/log.txt"]
    argv += draw(
        some_flags(
            flag("--kafka", KAFKA),
            flag("--topic", ["elr-kill9-all", "", "x"]),
            flag("--partition", ["0", "1", "-1", HUGE, *BAD_INTS]),
            flag("--json", ["{tmp}/verdicts.json", *PATHS_OUT]),
        )
    )
    argv += ["--kafka-home", "{tmp}/no-kafka"]  # a segment is never decoded with Java here
    return Input(tuple(argv), (("{tmp}/log.txt", content),))


@st.composite
def manifest_input(draw: st.DrawFn) -> Input:
    manifest = json.loads((saved_workdir() / NEWEST_LEVEL).read_text())
    if draw(st.integers(0, 5)) == 0:
        content = draw(corrupted(json_bytes(manifest)))
    else:
        content = json_bytes(draw(mutated(manifest)))
    argv = [*CHECK, *CHECK_CAPS, "--workdir", "{tmp}/work", "--resume", str(TRACE_MODEL)]
    return Input(tuple(argv), ((f"{{tmp}}/work/{NEWEST_LEVEL}", content),), workdir=True)


@st.composite
def baseline_input(draw: st.DrawFn) -> Input:
    summary = saved_summary()
    if draw(st.integers(0, 5)) == 0:
        content = draw(corrupted(json_bytes(summary)))
    else:
        content = json_bytes(draw(mutated(summary, shallow)))
    argv = ["suite", "--quiet", "--workers", "1", "--engine", "explorer", "--reports", "{tmp}/r"]
    argv += ["--baseline", "{tmp}/baseline.json", str(TRACE_MODEL)]
    return Input(tuple(argv), (("{tmp}/baseline.json", content),))


@st.composite
def argv_input(draw: st.DrawFn) -> Input:
    """Flags with bad values for every command, and command lines that are not one."""
    command = draw(st.sampled_from(["check", "prove", "graph", "plan", "differential", "any"]))
    if command == "check":
        argv = [*CHECK, *CHECK_CAPS, *draw(flags(*CHECK_FLAGS)), str(TRACE_MODEL)]
    elif command == "prove":
        argv = [*PROVE, *PROVE_CAPS, *draw(flags(*PROVE_FLAGS)), str(TRACE_MODEL)]
    elif command == "graph":
        argv = ["graph", str(TRACE_MODEL), "--dot", "{tmp}/g.dot", *draw(flags(*GRAPH_FLAGS))]
    elif command == "plan":
        return draw(plan_input())
    elif command == "differential":
        return draw(differential_input())
    else:
        words = st.sampled_from(["check", "replay", "conform", "plan", "--help", "-h", "--", "-"])
        argv = draw(st.lists(words | st.text(max_size=6), max_size=4))
        if argv[:1] in (["check"], ["suite"]):
            argv = [*argv[:1], *CHECK[1:], *CHECK_CAPS, *argv[1:]]
    return Input(tuple(argv))


KINDS: dict[str, st.SearchStrategy[Input]] = {
    "model": model_input(),
    "trace": trace_input(),
    "cases": cases_input(),
    "dump": dump_input(),
    "manifest": manifest_input(),
    "baseline": baseline_input(),
    "argv": argv_input(),
}
# Each kind by its weight: models and traces have the most to go wrong, runs of a model cost most.
INPUTS = st.sampled_from(
    ["model"] * 4
    + ["trace"] * 3
    + ["cases"] * 3
    + ["dump"] * 2
    + ["manifest", "baseline"]
    + ["argv"] * 3
).flatmap(lambda kind: KINDS[kind])


def unmutated() -> dict[str, Input]:
    """Each kind's input before any mutation: the file as kafkarep wrote it or the tests keep it."""
    trace = ("{tmp}/t.itf.json", json_bytes(saved_trace()))
    cases = ("{tmp}/c.json", CASE_FILES[0].read_bytes())
    dump = ("{tmp}/log.txt", DUMPS[0].read_bytes())
    baseline = ("{tmp}/b.json", json_bytes(saved_summary()))
    suite = (
        "suite",
        "--quiet",
        "--workers",
        "1",
        "--reports",
        "{tmp}/r",
        "--baseline",
        "{tmp}/b.json",
    )
    return {
        "model": Input((*CHECK_CHEAP, MODEL)),
        "trace": Input(("replay", "{tmp}/t.itf.json"), (trace,)),
        "cases": Input(("conform", "{tmp}/c.json"), (cases,)),
        "dump": Input(("validate-log", "{tmp}/log.txt", "--kafka-home", "{tmp}/no"), (dump,)),
        "manifest": manifest_case(
            json_bytes(json.loads((saved_workdir() / NEWEST_LEVEL).read_text()))
        ),
        "baseline": Input((*suite, MODEL), (baseline,)),
    }


@pytest.mark.parametrize("kind", ["model", "trace", "cases", "dump", "manifest", "baseline"])
def test_the_unmutated_inputs_are_accepted(kind: str) -> None:
    """What the fuzzer mutates is good input to begin with: a check that refused everything
    would pass the fuzz test."""
    code, _, err = run(unmutated()[kind])
    assert code in (OK, EXPECTATION_NOT_MET), err


@FUZZ
@given(INPUTS)
def test_bad_input_never_crashes(case: Input) -> None:
    never_crashes(case)


@pytest.mark.slow
@FUZZ_SLOW
@given(INPUTS)
def test_bad_input_never_crashes_at_length(case: Input) -> None:
    never_crashes(case)


# --- every bug the fuzzer found, as an explicit case ----------------------------------------


def trace_case(change: Callable[[dict[str, Any]], Any]) -> Input:
    document = saved_trace()
    change(document)
    return Input(("replay", "{tmp}/t.itf.json"), (("{tmp}/t.itf.json", json_bytes(document)),))


def trace_bytes(content: bytes) -> Input:
    return Input(("replay", "{tmp}/t.itf.json"), (("{tmp}/t.itf.json", content),))


def cases_case(change: Callable[[dict[str, Any]], Any]) -> Input:
    case = json.loads((DATA / "conformance" / "alter_partition.json").read_text())[0]
    change(case)
    return Input(("conform", "{tmp}/c.json"), (("{tmp}/c.json", json_bytes([case])),))


def manifest_case(content: bytes) -> Input:
    """Both saved levels' manifests replaced: --resume has no whole level to fall back to."""
    argv = (*CHECK, *CHECK_CAPS, "--workdir", "{tmp}/work", "--resume", str(TRACE_MODEL))
    files = ((f"{{tmp}}/work/{NEWEST_LEVEL}", content), ("{tmp}/work/level-00001/level.json", b""))
    return Input(argv, files, workdir=True)


def manifest_with(**fields: Any) -> bytes:
    return json_bytes({**json.loads((saved_workdir() / NEWEST_LEVEL).read_text()), **fields})


def dump_case(change: Callable[[str], str]) -> Input:
    text = change((DATA / "metadata-logs" / "elr_kill9_all.txt").read_text())
    argv = ("validate-log", "{tmp}/log.txt", "--kafka-home", "{tmp}/no-kafka")
    return Input(argv, (("{tmp}/log.txt", text.encode()),))


def model_case(argv: tuple[str, ...], section: str) -> Input:
    """TRACE_MODEL with one more section."""
    model = f"{TRACE_MODEL.read_text()}\n{section}\n"
    return Input((*argv, "{tmp}/m.toml"), (("{tmp}/m.toml", model.encode()),))


def first_change(text: str, old: str, new: str) -> str:
    """The first PARTITION_CHANGE_RECORD line with `old` replaced by `new`."""
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if '"PARTITION_CHANGE_RECORD"' in line)
    lines[n] = lines[n].replace(old, new)
    return "\n".join(lines) + "\n"


def without_metadata_version(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if '"metadata.version"' not in line)


NESTED = b"[" * 100_000
LONG = b"9" * 5000
PROVE_CHEAP = (*PROVE, *PROVE_CAPS)
CHECK_CHEAP = (*CHECK, *CHECK_CAPS)
MODEL = str(TRACE_MODEL)


def meta(document: dict[str, Any]) -> dict[str, Any]:
    kafkarep: dict[str, Any] = document["#meta"]["kafkarep"]
    return kafkarep


# (bug, input): each exited 3 (internal error) before its fix, or ran on a value it now refuses
# (marked "accepted").
REGRESSIONS: dict[str, Callable[[], Input]] = {
    "trace #meta a list": lambda: trace_case(lambda d: d.update({"#meta": []})),
    "trace path item an object": lambda: trace_case(lambda d: meta(d).update(path=[{}])),
    "trace path item negative (accepted)": lambda: trace_case(
        lambda d: meta(d).update(path=[-1, 0, 0])
    ),
    "trace initial ISR unknown": lambda: trace_case(
        lambda d: meta(d).update(initial={"isr": [9], "leader": 9, "fenced": []})
    ),
    "trace key with a newline": lambda: trace_case(lambda d: d["states"][0].update({"a\nb": 1})),
    "trace nested too deeply": lambda: trace_bytes(NESTED),
    "trace integer too long": lambda: trace_bytes(LONG),
    "cases before an integer": lambda: cases_case(lambda c: c.update(before=3)),
    "cases brokers a list": lambda: cases_case(lambda c: c.update(brokers=[])),
    "cases config an integer": lambda: cases_case(lambda c: c.update(config=5)),
    "cases action type an object": lambda: cases_case(lambda c: c["action"].update(type={})),
    "cases expect.after null": lambda: cases_case(lambda c: c["expect"].update(after=None)),
    "cases broker key with a newline": lambda: cases_case(lambda c: c.update(brokers={"0\n": {}})),
    "cases nested too deeply": lambda: Input(
        ("conform", "{tmp}/c.json"), (("{tmp}/c.json", NESTED),)
    ),
    "manifest violations null": lambda: manifest_case(manifest_with(violations=None)),
    "manifest distinct a list": lambda: manifest_case(manifest_with(distinct=[])),
    "manifest nested too deeply": lambda: manifest_case(NESTED),
    "dump change without partitionId": lambda: dump_case(
        lambda t: first_change(t, '"partitionId":0,', "")
    ),
    "dump leader null": lambda: dump_case(
        lambda t: first_change(t, '"isr"', '"leader":null,"isr"')
    ),
    "dump offset too long": lambda: dump_case(
        lambda t: t.replace("baseOffset: 8 ", "baseOffset: " + "9" * 5000 + " ")
    ),
    "dump without metadata.version": lambda: dump_case(without_metadata_version),
    "dump min.insync.replicas not a number": lambda: dump_case(
        lambda t: t.replace(
            '"name":"min.insync.replicas","value":"2"', '"name":"min.insync.replicas","value":""'
        )
    ),
    "prove --timeout nan": lambda: Input((*PROVE_CHEAP, "--timeout", "nan", str(TRACE_MODEL))),
    "prove --json a directory": lambda: Input((*PROVE_CHEAP, "--json", "{tmp}", str(TRACE_MODEL))),
    "prove [prove] timeout a string": lambda: model_case(PROVE_CHEAP, '[prove]\ntimeout = "x"'),
    "prove [prove] depth a list": lambda: model_case(PROVE_CHEAP, "[prove]\ndepth = [1]"),
    "plan superscript digit": lambda: Input(("plan", "--current", "²", "--target", "1")),
    "plan id too long": lambda: Input(("plan", "--current", "9" * 5000, "--target", "1")),
    "check --max-seconds nan (accepted)": lambda: Input(
        (*CHECK, *CHECK_CAPS, "--max-seconds", "nan", MODEL)
    ),
    "model file named \\x1e": lambda: Input((*CHECK_CHEAP, "\x1e")),
    "unknown flag with a newline": lambda: Input((*CHECK_CHEAP, MODEL, "--x\n")),
    "model integer too long": lambda: model_case(
        CHECK_CHEAP, "[check]\nmax_states = " + "9" * 5000
    ),
    "model nested too deeply": lambda: model_case(
        CHECK_CHEAP, "[check]\nproperties = " + "[" * 5000
    ),
}


@pytest.mark.parametrize("bug", REGRESSIONS)
def test_found_by_the_fuzzer_is_one_line_exit_2(bug: str) -> None:
    code, _, err = run(REGRESSIONS[bug]())
    assert code == BAD_INPUT, err
    assert len(err.strip().splitlines()) == 1 and ERROR_LINE.match(err), err
