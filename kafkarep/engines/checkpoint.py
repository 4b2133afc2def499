"""A named work dir (`--workdir DIR`): the last completed levels of a search, kept so that
`--resume` continues a killed run to the same final counts, depth, verdicts and traces.

The explorer and the Spark engine keep the same layout:

    manifest.json        the newest saved level's manifest (a copy of its `level.json`)
    links/               the parent links, one pair of NumPy files per level (`links.py`)
    level-DDDDD/         a saved level: its parts (`part-PPPPP.pkl`), the explorer's seen set,
                         and `level.json`: the run's identity, its counts, violations and reached
                         properties up to that level, and the size and SHA-256 of every file

What a part holds is the engine's own (the explorer: a worker's share of the level's states;
Spark: a partition's outcome), so a run resumes with the engine that made it.

Every file is written under a temporary name, synced, then renamed: a reader never sees half of
one. A level is named complete by its `level.json`, written after its parts; `manifest.json` is
written after that; the level before the newest is kept until the next one is complete. So a
kill at any point leaves at least one complete level, and `--resume` takes the newest level whose
files all have the size and digest its `level.json` records, saying so when that is not the one
`manifest.json` names. It never resumes from a level it cannot verify: with none, it refuses in
one line (exit 2).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kafkarep.common import shape
from kafkarep.common.exit_codes import UsageError
from kafkarep.common.failpoints import reach
from kafkarep.common.shape import At
from kafkarep.engines.results import Discovery
from kafkarep.model.config import ModelConfig

MANIFEST = "manifest.json"
LEVEL = "level.json"
VERSION = 3  # 2: the engine is part of the identity; 3: each level verifies itself
COUNTS = ("depth", "distinct", "generated", "seconds", "violations", "reached")


def level_dir(workdir: Path, depth: int) -> Path:
    return workdir / f"level-{depth:05d}"


def identity(cfg: ModelConfig, engine: str, symmetry: bool, **extra: Any) -> dict[str, Any]:
    """What a resumed run must share with the run it resumes: the engine, the model file's
    bytes, the search's switches."""
    path = Path(cfg.path)
    text = path.read_bytes() if path.is_file() else repr(cfg).encode()
    return {
        "version": VERSION,
        "engine": engine,
        "model": cfg.path,
        "model_sha256": hashlib.sha256(text).hexdigest(),
        "symmetry": symmetry,
        "reduction": cfg.check.reduction,
        **extra,
    }


def clear(workdir: Path) -> None:
    """A new run in a named work dir starts from nothing (only kafkarep's files go)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / MANIFEST).unlink(missing_ok=True)
    for entry in workdir.iterdir():
        if entry.is_dir() and (
            entry.name.startswith(("level-", ".level-")) or entry.name in ("links", "faults")
        ):
            shutil.rmtree(entry)
    (workdir / "links").mkdir()


def staging(workdir: Path, depth: int) -> Path:
    """An empty directory to write level `depth` into before `commit` names it."""
    folder = workdir / f".level-{depth:05d}.tmp"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    return folder


def write_atomically(path: Path, data: bytes) -> None:
    """The file appears whole or not at all: written aside, synced, renamed."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def commit(workdir: Path, depth: int, folder: Path | None, manifest: dict[str, Any]) -> None:
    """Make level `depth` the one to resume from. The explorer wrote its files into `folder`
    (from `staging`), Spark's tasks into the level's directory itself. Their sizes and digests
    go into the level's `level.json`, which names the level complete; then `manifest.json`;
    then the levels before the previous one are dropped."""
    final = level_dir(workdir, depth)
    where = folder if folder is not None else final
    # a temporary file is not the level's: a task killed while writing it left it there
    written = [f for f in sorted(where.iterdir()) if not f.name.startswith(".") and f.name != LEVEL]
    files = {f.name: _describe(f) for f in written}
    for file in written:
        _sync(file)
    links = {f.name: f.stat().st_size for f in sorted((workdir / "links").glob("*.npy"))}
    saved = {**manifest, "depth": depth, "files": files, "links": links}
    text = (json.dumps(saved, indent=1) + "\n").encode()
    reach("staged", depth)
    if folder is not None:
        write_atomically(folder / LEVEL, text)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(folder, final)
    else:
        write_atomically(final / LEVEL, text)
    _sync(workdir)
    reach("named", depth)
    write_atomically(workdir / MANIFEST, text)
    reach("manifest", depth)
    for entry in workdir.glob("level-*"):
        if entry.name < level_dir(workdir, depth - 1).name:
            shutil.rmtree(entry, ignore_errors=True)


def _describe(file: Path) -> list[Any]:
    with open(file, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        return [size, hashlib.file_digest(handle, "sha256").hexdigest()]


def _sync(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def saved_level(
    workdir: Path,
    mine: dict[str, Any],
    fields: Iterable[str] = (),
    note: Callable[[str], None] | None = None,
) -> dict[str, Any] | None:
    """The manifest of the newest level of the run in `workdir` that verifies: every file the
    size and digest its `level.json` records, the link files there, the counts and the engine's
    own `fields` present. A run of another engine, model or search is refused in one line (exit
    2), as is a work dir with no level that verifies. None (start from the initial state) when
    the run made the work dir but was stopped before it saved a level. `note` (else stderr)
    hears it when the newest whole level is not the one `manifest.json` names."""
    if not workdir.is_dir():
        raise UsageError(f"--resume: {workdir}: no such work dir")
    named = _named_depth(workdir)
    depths = sorted(
        (int(d.name[6:]) for d in workdir.glob("level-*") if d.name[6:].isdigit()), reverse=True
    )
    problems: list[str] = []
    for depth in depths:
        saved, problem = _verify(workdir, depth, mine, (*COUNTS, *fields))
        if saved is not None:
            if problems or named[0] != depth:
                why = problems[0] if problems else named[1]
                (note or _note)(f"{why}; resuming from level {depth}, the newest that is whole")
            return saved
        problems.append(problem)
    if not depths and (workdir / "links").is_dir():
        # The run made this work dir and stopped before its first level was saved.
        (note or _note)(f"{workdir} holds no level yet; starting from the initial state")
        return None
    if not depths:
        raise UsageError(f"--resume: {workdir} holds no saved level of a run")
    raise UsageError(f"--resume: no level in {workdir} can be resumed from ({problems[0]})")


def _note(message: str) -> None:
    print(f"kafkarep: --resume: {message}", file=sys.stderr, flush=True)


def _named_depth(workdir: Path) -> tuple[int, str]:
    """The level `manifest.json` names, or -1 and why there is none."""
    path = workdir / MANIFEST
    try:
        depth = json.loads(path.read_text())["depth"]
    except FileNotFoundError:
        return -1, f"{path} is missing"
    except (OSError, ValueError, TypeError, KeyError):
        return -1, f"{path} is unreadable"
    return (depth, "") if isinstance(depth, int) else (-1, f"{path} is unreadable")


def _verify(
    workdir: Path, depth: int, mine: dict[str, Any], fields: Iterable[str]
) -> tuple[dict[str, Any] | None, str]:
    """(the level's manifest, "") if level `depth` is whole, else (None, what is wrong)."""
    folder = level_dir(workdir, depth)
    path = folder / LEVEL
    if not path.is_file():
        return None, f"level {depth} is incomplete: {path} is missing"
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None, f"{path} is unreadable"
    if not isinstance(saved, dict):
        return None, f"{path}: expected a JSON object"
    _same_run(saved, mine, workdir)
    missing = [f for f in ("files", "links", *fields) if f not in saved]
    if missing or saved["depth"] != depth:
        return None, f"{path}: malformed (lacks {', '.join(missing) or 'its own depth'})"
    try:
        _check_counts(saved, shape.at(path, UsageError))
    except UsageError as problem:
        return None, str(problem)
    for name, (size, digest) in saved["files"].items():
        file = folder / name
        if not file.is_file() or _describe(file) != [size, digest]:
            return None, f"level {depth} is damaged: {file} is not the file it saved"
    for name, size in saved["links"].items():
        file = workdir / "links" / name
        if not file.is_file() or file.stat().st_size != size:
            return None, f"level {depth} is damaged: {file} is not the file it saved"
    return saved, ""


def _same_run(saved: dict[str, Any], mine: dict[str, Any], workdir: Path) -> None:
    """Refuse, in one line, a saved run that is not this one."""
    if saved.get("version") != mine["version"]:
        raise UsageError(
            f"--resume: {workdir} holds a run of another version of kafkarep; start a new run"
        )
    if saved.get("engine") != mine["engine"]:
        raise UsageError(
            f"--resume: {workdir} holds a run of the {saved.get('engine')} engine; resume it "
            f"with --engine {saved.get('engine')}, or start a new run without --resume"
        )
    for field in mine:
        # the model's path may move with its bytes; Spark checks its partitions itself
        if field in ("version", "engine", "model", "partitions"):
            continue
        if saved.get(field) != mine[field]:
            raise UsageError(
                f"--resume: {workdir} holds a run of {saved.get('model')} with another "
                f"{field.replace('_', ' ')}; start a new run without --resume"
            )


def _check_counts(saved: dict[str, Any], where: At) -> None:
    """The counts a resumed run reads, each of the kind the engines write (one line if not)."""
    for name in ("depth", "distinct", "generated"):
        shape.field(saved, name, where, shape.at_least(0))
    shape.field(saved, "seconds", where, shape.number)
    for name in ("violations", "reached"):
        for clause, found in shape.field(saved, name, where, shape.obj).items():
            inside = where.key(name).key(clause)
            if len(shape.array(found, inside)) != 3:
                inside.fail("expected [depth, path, witness]")
            shape.at_least(0)(found[0], inside.index(0))
            shape.each(shape.at_least(0))(found[1], inside.index(1))
            shape.optional(shape.text)(found[2], inside.index(2))
    parts = shape.field(saved, "parts", where, shape.array, [])  # the explorer's
    for index, part in enumerate(parts):
        inside = where.key("parts").index(index)
        if len(shape.array(part, inside)) != 3:
            inside.fail("expected [file name, states, bytes]")
        shape.text(part[0], inside.index(0))
        shape.integer(part[2], inside.index(2))
    for name in ("level_size", "partitions"):  # Spark's
        shape.field(saved, name, where, shape.optional(shape.at_least(0)), None)
    for name, file in shape.field(saved, "files", where, shape.obj).items():
        inside = where.key("files").key(name)
        if len(shape.array(file, inside)) != 2 or "/" in name:
            inside.fail("expected [size, SHA-256] of a file of the level")
        shape.at_least(0)(file[0], inside.index(0))
        shape.text(file[1], inside.index(1))
    for name, size in shape.field(saved, "links", where, shape.obj).items():
        if "/" in name:
            where.key("links").key(name).fail("expected the name of a link file")
        shape.at_least(0)(size, where.key("links").key(name))


def plain(found: dict[str, Discovery]) -> dict[str, list[Any]]:
    """Discoveries as JSON values, for the manifest."""
    return {n: [d.depth, list(d.path), d.witness] for n, d in sorted(found.items())}


def discoveries(saved: dict[str, list[Any]]) -> dict[str, Discovery]:
    return {n: Discovery(n, int(v[0]), tuple(int(i) for i in v[1]), v[2]) for n, v in saved.items()}
