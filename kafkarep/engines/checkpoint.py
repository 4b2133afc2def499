"""A named work dir (`--workdir DIR`): the last completed level of a search, kept so that
`--resume` continues a killed run to the same final counts, depth, verdicts and traces.

The explorer and the Spark engine keep the same layout:

    manifest.json        the run's identity and its counts, violations and reached properties
                         up to the saved level; written last, atomically
    links/               the parent links, one pair of NumPy files per level (`links.py`)
    level-DDDDD/         the saved level: its parts (`part-PPPPP.pkl`), the explorer's seen set

A level directory is complete before the manifest names it: it is written under a temporary
name, its files synced, then renamed. The older level goes only after the manifest moved on, so
a kill at any point leaves one complete level that the manifest names. What a part holds is the
engine's own (the explorer: a worker's share of the level's states; Spark: a partition's
outcome), so a run resumes with the engine that made it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from kafkarep.common import shape
from kafkarep.common.exit_codes import UsageError
from kafkarep.common.shape import At
from kafkarep.engines.results import Discovery
from kafkarep.model.config import ModelConfig

MANIFEST = "manifest.json"
VERSION = 2  # 2: the engine is part of the identity


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


def commit(workdir: Path, depth: int, folder: Path | None, manifest: dict[str, Any]) -> None:
    """Make level `depth` the one to resume from: its folder synced and renamed (when the
    engine wrote one here), then the manifest replaced, then the older levels dropped."""
    if folder is not None:
        for file in folder.iterdir():
            _sync(file)
        final = level_dir(workdir, depth)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(folder, final)
    temporary = workdir / f".{MANIFEST}.tmp"
    temporary.write_text(json.dumps(manifest, indent=1) + "\n")
    _sync(temporary)
    os.replace(temporary, workdir / MANIFEST)
    current = level_dir(workdir, depth).name
    for entry in workdir.glob("level-*"):
        if entry.name < current:
            shutil.rmtree(entry, ignore_errors=True)


def _sync(file: Path) -> None:
    with open(file, "rb") as handle:
        os.fsync(handle.fileno())


def read_manifest(workdir: Path, mine: dict[str, Any]) -> dict[str, Any]:
    """The saved run's manifest, refused in one line (exit 2) when it is missing, unreadable,
    or from another engine, model or search."""
    path = workdir / MANIFEST
    if not path.is_file():
        raise UsageError(f"--resume: {path} not found (no level of a run was saved there)")
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as error:
        raise UsageError(f"--resume: cannot read {path}: {error}") from None
    if not isinstance(saved, dict):
        raise UsageError(f"--resume: {path}: expected a JSON object")
    if saved.get("version") != mine["version"]:
        raise UsageError(f"--resume: {path} is from another version of kafkarep; start a new run")
    if saved.get("engine") != mine["engine"]:
        raise UsageError(
            f"--resume: {workdir} holds a run of the {saved.get('engine')} engine; resume it "
            f"with --engine {saved.get('engine')}, or start a new run without --resume"
        )
    for field in ("model_sha256", "symmetry", "reduction"):
        if saved.get(field) != mine[field]:
            raise UsageError(
                f"--resume: {workdir} holds a run of {saved.get('model')} with another "
                f"{field.replace('_', ' ')}; start a new run without --resume"
            )
    _check_counts(saved, shape.at(f"--resume: {path}", UsageError))
    return saved


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


def plain(found: dict[str, Discovery]) -> dict[str, list[Any]]:
    """Discoveries as JSON values, for the manifest."""
    return {n: [d.depth, list(d.path), d.witness] for n, d in sorted(found.items())}


def discoveries(saved: dict[str, list[Any]]) -> dict[str, Discovery]:
    return {n: Discovery(n, int(v[0]), tuple(int(i) for i in v[1]), v[2]) for n, v in saved.items()}
