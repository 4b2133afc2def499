"""The explorer's hot path compiled with mypyc, and run only when built from exactly these sources.

`kafkarep compile` (`build`) compiles the modules of `COMPILED` (the model, the property clauses,
the search kernel, Kafka's metadata records) with mypyc and a C compiler, from a copy of every
source of the package, into `~/.cache/kafkarep/compiled/<key>/`: the key is a hash of every
`kafkarep/**/*.py` (path and content) and of the Python that runs them. Nothing is written into
the source tree.

`kafkarep/__init__.py` calls `install` before any other kafkarep module is imported: it hashes
the sources the process would import and, if a build of that key exists, puts a finder first on
`sys.meta_path` that loads the compiled modules from it; every other module is the Python. There
is no other way in, so a build of other sources is never loaded: after any edit (a rule, a
model action, a module the compiled ones only import), the key is new and everything runs as
Python until `kafkarep compile` builds it again. Every source is in the key, not only the
compiled ones, because compiled code relies on the types it was compiled against (a NamedTuple's
field is read by its position). `KAFKAREP_COMPILED=0` runs the Python whatever is built.

The rules (`kafkarep/rules`) are not compiled: the prover runs them on Z3 terms, which compiled
code would refuse where the rules say `int`, and compiling them gains nothing measurable
(docs/performance.md, "The compiled hot path"). The one exception is `rules/terms.py`, the
operations every enabled condition of the model folds through (`kafkarep/model/domain.py`):
they take any value (`Term` is `Any`), so Z3 terms pass through them compiled.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from collections.abc import Iterator
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.util import find_spec, module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple, get_type_hints

PACKAGE = Path(__file__).resolve().parents[1]  # the kafkarep package these sources are in
SUFFIX = EXTENSION_SUFFIXES[0]  # ".cpython-311-x86_64-linux-gnu.so"
# What is compiled, under kafkarep/ (a directory: its modules); no package's __init__.py is.
COMPILED = (
    "kafka/errors.py",
    "kafka/metadata.py",
    "rules/terms.py",
    "model",
    "properties",
    "engines/kernel.py",
)
NOT_COMPILED = ("properties/model_files.py",)  # reads model files once: nothing to gain
KEEP = 5  # builds kept in the cache (several checkouts may share it), the newest


class CompileError(Exception):
    """A build that could not be made: one line saying why."""


class Status(NamedTuple):
    """What `install` found: "compiled", "stale" (builds of other sources only), "absent" (no
    build at all) or "off" (KAFKAREP_COMPILED=0); `build` is the directory loaded from."""

    state: str
    key: str | None
    build: Path | None = None


def cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kafkarep" / "compiled"


def source_key(package: Path = PACKAGE) -> str | None:
    """A hash of every source of the package and of the Python running it; None when a source
    cannot be read (then nothing compiled is used)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.implementation.cache_tag} {SUFFIX}\0".encode())
    try:
        sources = _sources(package) if package.is_dir() else _zipped_sources(package)
        for name, data in sources:
            digest.update(b"%d %s %d\0" % (len(name), name, len(data)))
            digest.update(data)
    except (OSError, zipfile.BadZipFile):
        return None
    return digest.hexdigest()


def _sources(package: Path) -> Iterator[tuple[bytes, bytes]]:
    """(path under the package, content) of every source, in the order of their paths."""
    files = []
    for directory, subdirectories, names in os.walk(package):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        files += [os.path.join(directory, n) for n in names if n.endswith(".py")]
    for file in sorted(files):
        with open(file, "rb") as source:
            data = source.read()
        yield os.path.relpath(file, package).replace(os.sep, "/").encode(), data


def _zipped_sources(package: Path) -> Iterator[tuple[bytes, bytes]]:
    """The same, for a package imported from a zip: the code the Spark engine ships to its
    executors (`spark_context`). Its key is the driver's, so an executor on a machine where
    those sources are compiled runs the build too."""
    archive = next((p for p in package.parents if p.is_file()), None)
    if archive is None:
        raise OSError(f"{package}: neither a directory nor in a zip")
    prefix = package.relative_to(archive).as_posix() + "/"
    with zipfile.ZipFile(archive) as zipped:
        names = [
            n
            for n in zipped.namelist()
            if n.startswith(prefix) and n.endswith(".py") and "/__pycache__/" not in n
        ]
        for member in sorted(names):
            yield member[len(prefix) :].encode(), zipped.read(member)


def compiled_sources(package: Path = PACKAGE) -> list[Path]:
    """The sources `COMPILED` names, under the package."""
    files: list[Path] = []
    for entry in COMPILED:
        path = package / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    skipped = {package / entry for entry in NOT_COMPILED}
    return [f for f in files if f.name != "__init__.py" and f not in skipped]


def modules_in(build: Path) -> dict[str, str]:
    """Module name -> compiled file, for a build directory (mypyc's shared library included)."""
    found = {}
    for file in build.rglob(f"*{SUFFIX}"):
        parts = file.relative_to(build).as_posix().removesuffix(SUFFIX).split("/")
        found[".".join(parts)] = str(file)
    return found


def find(package: Path = PACKAGE, directory: Path | None = None) -> Status:
    """The build of these sources in the cache, if there is one."""
    if os.environ.get("KAFKAREP_COMPILED") == "0":
        return Status("off", None)
    directory = directory or cache()
    key = source_key(package)
    build = directory / key if key else None
    if build is not None and build.is_dir():
        return Status("compiled", key, build)
    return Status("stale" if builds(directory) else "absent", key)


def builds(directory: Path) -> list[Path]:
    """The complete builds in the cache (a build in progress has a "." in its name)."""
    if not directory.is_dir():
        return []
    return [p for p in directory.iterdir() if p.is_dir() and "." not in p.name]


class Finder:
    """Loads the modules of one build, by name; every other module is left to the usual finders."""

    def __init__(self, modules: dict[str, str]) -> None:
        self.modules = modules

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        file = self.modules.get(name)
        if file is None:
            return None
        return spec_from_file_location(name, file, loader=ExtensionFileLoader(name, file))


STATUS = Status("absent", None)


def install() -> Status:
    """Load the compiled modules of these sources from now on, if they are built (see above)."""
    global STATUS
    if not any(isinstance(finder, Finder) for finder in sys.meta_path):
        STATUS = find()
        if STATUS.build is not None:
            sys.meta_path.insert(0, Finder(modules_in(STATUS.build)))
            with contextlib.suppress(OSError):
                os.utime(STATUS.build)  # used now: `_prune` keeps the builds used last
    return STATUS


def type_hints(record: type) -> dict[str, Any]:
    """The type hints of a class as its Python source declares them. A compiled NamedTuple keeps
    only erased ones (every field `type` or `tuple`), so for a class of a compiled module they
    are read from that module's source, run once in a module of its own
    (`_python_source.<name>`) that nothing else imports."""
    module = sys.modules[record.__module__]
    if not isinstance(getattr(module.__spec__, "loader", None), ExtensionFileLoader):
        return get_type_hints(record)
    source = _python_module(record.__module__)
    found: Any = source
    for part in record.__qualname__.split("."):
        found = getattr(found, part)
    return get_type_hints(found)


@functools.cache
def _python_module(name: str) -> ModuleType:
    file = PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py")
    spec = spec_from_file_location(f"_python_source.{name}", file)
    assert spec is not None and spec.loader is not None, file
    module = module_from_spec(spec)
    sys.modules[spec.name] = module  # get_type_hints reads a class's globals from there
    spec.loader.exec_module(module)
    return module


def note(status: Status | None = None) -> str | None:
    """One line when the hot path runs as Python though it could be compiled, else None."""
    status = status or STATUS
    if status.state == "stale":
        return (
            "note: the model runs as Python: its sources changed since `kafkarep compile` "
            "(run it again to compile them)"
        )
    if status.state == "absent":
        return "note: the model runs as Python (`kafkarep compile` compiles it for a faster search)"
    return None


def compiler() -> str | None:
    """The C compiler Python's extensions are built with, if it is installed."""
    command = (sysconfig.get_config_var("CC") or "cc").split()
    return shutil.which(command[0]) if command else None


def built(package: Path = PACKAGE, directory: Path | None = None) -> Path | None:
    """The build of these sources, if it is made (whatever KAFKAREP_COMPILED says)."""
    key = source_key(package)
    if key is None:
        raise CompileError(f"cannot read every source under {package}")
    target = (directory or cache()) / key
    return target if target.is_dir() else None


def build(package: Path = PACKAGE, directory: Path | None = None) -> Path:
    """Compile these sources into the cache, unless they are; the build."""
    directory = directory or cache()
    done = built(package, directory)
    if done is not None:
        return done
    key = source_key(package)
    assert key is not None
    target = directory / key
    if find_spec("mypyc") is None:
        raise CompileError("mypyc is not installed (pip install mypy)")
    if compiler() is None:
        raise CompileError("no C compiler (install gcc or clang): the model runs as Python")
    directory.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=directory))  # a "." marks work in progress
    try:
        copy = work / "src" / "kafkarep"
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", f"*{SUFFIX}"))
        if source_key(copy) != key:
            raise CompileError("the sources changed while they were copied: run it again")
        files = [str(f.relative_to(copy.parent)) for f in compiled_sources(copy)]
        mypyc = subprocess.run(
            # (z3 and pyspark have no types; no compiled module reads them)
            [sys.executable, "-m", "mypyc", "--ignore-missing-imports", *files],
            cwd=copy.parent,
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")},
            capture_output=True,
            text=True,
        )
        if mypyc.returncode != 0:
            lines = (mypyc.stdout + mypyc.stderr).strip().splitlines() or ["no output"]
            first = next((line for line in lines if ": error:" in line), lines[-1])
            raise CompileError(f"mypyc failed: {first}")
        out = work / "out"
        for file in copy.parent.glob(f"*{SUFFIX}"):  # mypyc's shared library
            out.mkdir(exist_ok=True)
            file.rename(out / file.name)
        for file in copy.rglob(f"*{SUFFIX}"):
            place = out / file.relative_to(copy.parent)
            place.parent.mkdir(parents=True, exist_ok=True)
            file.rename(place)
        try:
            out.rename(target)  # atomic: a build directory is complete or absent
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _prune(directory)
    return target


def _prune(directory: Path) -> None:
    """Keep the `KEEP` builds used last, and work left by a build that died an hour ago or more
    (a build that is in use is one of the last used)."""
    used = sorted(builds(directory), key=lambda p: p.stat().st_mtime, reverse=True)
    old = time.time() - 3600
    abandoned = [p for p in directory.iterdir() if "." in p.name and p.stat().st_mtime < old]
    for path in used[KEEP:] + abandoned:
        shutil.rmtree(path, ignore_errors=True)
