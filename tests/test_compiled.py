"""The compiled hot path (kafkarep/common/compiled.py): a build is loaded only for the very
sources it was built from, so an edited rule never runs stale; and a compiled run finds what the
Python finds, state for state. The tests that run a build skip when these sources have none
(`kafkarep compile`; .ci/run makes one)."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kafkarep.common import compiled
from kafkarep.common.compiled import SUFFIX, Status
from tests.helpers import ROOT

PACKAGE = ROOT / "kafkarep"
MODELS = [
    ROOT / "models" / "history" / "v35_last_replica_standing.toml",
    ROOT / "models" / "reassignment.toml",
]


def copy_package(tmp_path: Path) -> Path:
    copy = tmp_path / "src" / "kafkarep"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def edit(copy: Path) -> None:
    """A user's edit of a rule (a comment is enough: the sources are no longer the build's)."""
    rule = copy / "rules" / "partition_change.py"
    rule.write_text(rule.read_text() + "\n# edited\n")


@pytest.fixture
def auto(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiled when built, as a user's run is (the suite itself runs the Python: conftest.py)."""
    monkeypatch.delenv("KAFKAREP_COMPILED")


def test_the_key_is_every_source(tmp_path: Path) -> None:
    copy = copy_package(tmp_path)
    key = compiled.source_key(copy)
    assert key == compiled.source_key(PACKAGE)
    edit(copy)
    edited = compiled.source_key(copy)
    assert edited != key
    (copy / "rules" / "new_rule.py").write_text("")  # a new module is a change too
    assert compiled.source_key(copy) not in (key, edited)


def test_code_shipped_as_a_zip_has_the_same_key(tmp_path: Path) -> None:
    """The Spark engine ships kafkarep to its executors as a zip (`spark_context`): imported from
    there, the sources have the driver's key, so an executor on a machine where they are
    compiled runs the build; an edited copy in a zip does not."""
    shipped = tmp_path / "code.zip"
    with zipfile.ZipFile(shipped, "w") as archive:
        for file in sorted(PACKAGE.rglob("*.py")):
            archive.write(file, file.relative_to(PACKAGE.parent).as_posix())
    assert compiled.source_key(shipped / "kafkarep") == compiled.source_key(PACKAGE)
    copy = copy_package(tmp_path)
    edit(copy)
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(edited, "w") as archive:
        for file in sorted(copy.rglob("*.py")):
            archive.write(file, file.relative_to(copy.parent).as_posix())
    assert compiled.source_key(edited / "kafkarep") == compiled.source_key(copy)
    assert compiled.source_key(edited / "kafkarep") != compiled.source_key(PACKAGE)
    assert compiled.source_key(tmp_path / "missing" / "kafkarep") is None


def test_a_build_of_other_sources_is_never_loaded(tmp_path: Path, auto: None) -> None:
    """A build is found by the key of the sources only; builds are never read (the fake one here
    would fail to load)."""
    copy, cache = copy_package(tmp_path), tmp_path / "cache"
    assert compiled.find(copy, cache) == Status("absent", compiled.source_key(copy))
    key = compiled.source_key(copy)
    assert key is not None
    fake = cache / key / "kafkarep" / "model" / f"state{SUFFIX}"
    fake.parent.mkdir(parents=True)
    fake.write_bytes(b"not a library")
    assert compiled.find(copy, cache) == Status("compiled", key, cache / key)
    assert compiled.modules_in(cache / key) == {"kafkarep.model.state": str(fake)}
    edit(copy)
    assert compiled.find(copy, cache) == Status("stale", compiled.source_key(copy))
    (cache / f"{compiled.source_key(copy)}.x1y2").mkdir()  # a build in progress is not one
    assert compiled.find(copy, cache).state == "stale"
    assert compiled.note(compiled.find(copy, cache)) is not None


def test_off_runs_the_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKAREP_COMPILED", "0")
    assert compiled.find(PACKAGE, tmp_path) == Status("off", None)
    assert compiled.note(Status("off", None)) is None


def test_what_is_compiled_is_the_hot_path_not_the_rules() -> None:
    """Of the rules only `rules/terms.py`: it takes any value, so Z3 terms pass through it."""
    names = {f.relative_to(PACKAGE).as_posix() for f in compiled.compiled_sources()}
    assert {"model/state.py", "model/actions/data.py", "engines/kernel.py"} <= names
    rules = {n for n in names if n.startswith("rules/")} - {"rules/terms.py"}
    assert not rules and not any(
        n.startswith("common/") or n.endswith("__init__.py") for n in names
    )


def built() -> Status:
    status = compiled.find()
    if status.state != "compiled":
        why = "no C compiler; " if compiled.compiler() is None else ""
        pytest.skip(f"no compiled build of these sources ({why}run `kafkarep compile`)")
    return status


PROBE = """
import json
import kafkarep.common.compiled as compiled
import kafkarep.model.state as state
print(json.dumps([compiled.STATUS.state, state.__file__]))
"""


def probe(src: Path) -> tuple[str, str]:
    """What a run of the package under `src` loads: its status and the state module's file."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("KAFKAREP_COMPILED", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, cwd=src, capture_output=True, text=True, check=True
    )
    state, file = json.loads(out.stdout)
    return state, file


def test_an_edited_copy_runs_as_python(tmp_path: Path, auto: None) -> None:
    status = built()
    copy = copy_package(tmp_path)
    state, file = probe(copy.parent)
    assert state == "compiled" and file.startswith(str(status.build)) and file.endswith(SUFFIX)
    edit(copy)
    assert probe(copy.parent) == ("stale", str(copy / "model" / "state.py"))


RUN = """
import json, sys
import kafkarep.model.state as state
from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.properties.model_files import load_model
cfg = load_model(sys.argv[1])
r = Explorer(cfg, properties.of_model(cfg),
             stop_when_found=[n for n, _ in cfg.expect.violates]).run()
counts = [r.distinct_states, r.generated_states, r.depth]
print(json.dumps({"file": state.__file__, "counts": counts,
                  "violations": sorted(r.violations.items()),
                  "reached": sorted(r.reached.items())}))
"""


@pytest.mark.parametrize("model", MODELS, ids=[m.stem for m in MODELS])
def test_compiled_and_python_find_the_same(model: Path, auto: None) -> None:
    built()
    runs = []
    for setting in ("0", "1"):
        env = {**os.environ, "KAFKAREP_COMPILED": setting}
        out = subprocess.run(
            [sys.executable, "-c", RUN, str(model)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout))
    python, fast = runs
    assert python["file"].endswith(".py") and fast["file"].endswith(SUFFIX)
    assert python["counts"] == fast["counts"]
    assert python["violations"] == fast["violations"] and python["reached"] == fast["reached"]


def kafkarep(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop("KAFKAREP_COMPILED", None)
    command = [sys.executable, "-m", "kafkarep", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)


def test_a_compiled_run_replays_its_traces(tmp_path: Path, auto: None) -> None:
    """A trace is checked against the state types' annotations, which a compiled NamedTuple does
    not keep (every field reads `type`): they come from the Python source. A trace with a field
    of the wrong type is still refused in one line."""
    built()
    model = ROOT / "models" / "mutations" / "hwm_below_min_isr.toml"
    assert kafkarep("check", str(model), cwd=tmp_path).returncode == 0
    trace = next(tmp_path.glob("reports/traces/*/min_isr_commit.hwm.itf.json"))
    replay = kafkarep("replay", "--quiet", str(trace), cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.startswith("confirmed: min_isr_commit.hwm violated")
    document = json.loads(trace.read_text())
    document["states"][1]["controller"] = "a controller"
    trace.write_text(json.dumps(document))
    replay = kafkarep("replay", "--quiet", str(trace), cwd=tmp_path)
    assert replay.returncode == 2 and len(replay.stderr.splitlines()) == 1, replay.stderr
    assert "states[1].controller" in replay.stderr


def test_the_prover_runs_the_compiled_guards(tmp_path: Path, auto: None) -> None:
    """The prover runs the model's guard predicates on its own NamedTuples; compiled, those
    predicates read them by name (`kafkarep/model/shapes.py`), not by position, so the proof is
    the Python's."""
    built()
    model = ROOT / "models" / "kip966_small.toml"
    summary = tmp_path / "prove.json"
    args = ["prove", str(model), "--property", "min_isr_commit", "--quiet", "--json", str(summary)]
    run = kafkarep(*args, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    proved = json.loads(summary.read_text())["models"][0]
    assert proved["agreement"]["disagreements"] == []
    assert [r["status"] for r in proved["results"]] == ["proved"]
