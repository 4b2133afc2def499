"""`kafkarep kafka-patch FILE.java... --kafka V [--out DIR]`: compile edited Kafka sources against
a release's jars into a classes directory for `--kafka-classes` (the oracle then runs Kafka's
controller with these classes in place of the release's).

`kafkarep kafka-patch --source CLASS --kafka V [--out DIR]` is the starting point: it writes the
release's source of CLASS (`org.apache.kafka.controller.PartitionChangeBuilder`), from
`kafka-metadata-V-sources.jar` on Maven Central, into the current directory or DIR, to edit and
pass back. docs/oracle.md, "A patched controller". Exit 0, or 2 for bad input (a missing or
non-.java file, an unknown release, a source that does not compile) or without Java and Maven.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from kafkarep.cli.options import check_kafka_flag
from kafkarep.common.exit_codes import OK, UsageError
from kafkarep.kafka.jars import DEPENDENCY_PLUGIN_VERSION
from kafkarep.kafka.releases import resolve
from kafkarep.oracle.harness import HOME, OracleError, runner

# Marks a directory this command wrote, which it may empty and write again.
STAMP = ".kafka-patch"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "kafka-patch",
        help="compile edited Kafka sources into classes for --kafka-classes (needs Java, Maven)",
        description=__doc__,
    )
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE.java", help="edited sources")
    parser.add_argument(
        "--kafka",
        required=True,
        metavar="VERSION",
        help="the Kafka release the sources come from and compile against (a line such as 4.1 "
        "means its newest patch)",
    )
    parser.add_argument(
        "--source",
        action="append",
        metavar="CLASS",
        help="write the release's source of CLASS (org.apache.kafka.controller."
        "PartitionChangeBuilder, or PartitionChangeBuilder) to edit; repeatable",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where the classes go (default oracle/target/VERSION/patched; emptied first), or "
        "with --source where the sources go (default: the current directory)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_kafka_flag(args.kafka)
    release = resolve(args.kafka)
    if args.source and args.files:
        raise UsageError("give edited FILE.java sources or --source CLASS, not both")
    if args.source:
        return _extract(release, args.source, args.out or Path())
    if not args.files:
        raise UsageError("no FILE.java to compile (or --source CLASS to start from)")
    for file in args.files:
        if not file.exists():
            raise UsageError(f"{file} does not exist")
        if not file.is_file():
            raise UsageError(f"{file} is not a file")
        if file.suffix != ".java":
            raise UsageError(f"{file} is not a Java source (.java)")
    return _compile(release, args.files, args.out or HOME / "target" / release / "patched")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _classpath(release: str) -> list[str]:
    """The release's runtime classpath: the jars the oracle's harness runs with."""
    try:
        run = runner(release, _log)
    except OracleError as error:
        raise UsageError(str(error)) from None
    return (run.parent / "classpath.txt").read_text().strip().split(os.pathsep)


# --- --source -----------------------------------------------------------------------------------


def _extract(release: str, names: list[str], out: Path) -> int:
    classes = [name.removesuffix(".java").split("$")[0] for name in names]
    targets = [out / (name.rsplit(".", 1)[-1] + ".java") for name in classes]
    for target in targets:
        if target.exists():
            raise UsageError(f"{target} exists (it may hold edits): remove it or use --out")
    sources = _sources_jar(release)
    with zipfile.ZipFile(sources) as jar:
        entries = [name for name in jar.namelist() if name.endswith(".java")]
        chosen = [_entry(name, entries, sources) for name in classes]
        out.mkdir(parents=True, exist_ok=True)
        for entry, target in zip(chosen, targets, strict=True):
            target.write_bytes(jar.read(entry))
            print(f"{target}: {entry} of {sources.name}")
    files = " ".join(str(target) for target in targets)
    print(f"kafka-patch: edit, then: kafkarep kafka-patch {files} --kafka {release}")
    return OK


def _entry(name: str, entries: list[str], sources: Path) -> str:
    """The entry of the sources jar for a class: by its full name, or by its simple name when
    one class has it."""
    path = name.replace(".", "/") + ".java"
    if path in entries:
        return path
    if "." not in name:
        found = [entry for entry in entries if entry.rsplit("/", 1)[-1] == path]
        if len(found) == 1:
            return found[0]
        if found:
            raise UsageError(f"--source {name}: several classes have that name: {', '.join(found)}")
    raise UsageError(f"--source {name}: {sources.name} has no {path}")


def _sources_jar(release: str) -> Path:
    """`kafka-metadata-RELEASE-sources.jar` in Maven's local repository, beside the jar the
    oracle runs (fetched from Maven Central the first time)."""
    jar_name = f"kafka-metadata-{release}.jar"
    jar = next((Path(e) for e in _classpath(release) if Path(e).name == jar_name), None)
    if jar is None:
        raise UsageError(f"Kafka {release}'s runtime classpath has no {jar_name}")
    sources = jar.with_name(f"kafka-metadata-{release}-sources.jar")
    if sources.is_file():
        return sources
    _log(f"fetching {sources.name} from Maven Central")
    plugin = f"org.apache.maven.plugins:maven-dependency-plugin:{DEPENDENCY_PLUGIN_VERSION}:get"
    artifact = f"-Dartifact=org.apache.kafka:kafka-metadata:{release}:jar:sources"
    done = subprocess.run(
        ["mvn", "-B", "-q", plugin, artifact, "-Dtransitive=false"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not sources.is_file():
        lines = (done.stdout + done.stderr).strip().splitlines()
        error = next((line for line in lines if "[ERROR]" in line), lines[-1] if lines else "")
        raise UsageError(f"Maven could not fetch {sources.name}: {error.strip()}")
    return sources


# --- compile ------------------------------------------------------------------------------------


def _compile(release: str, files: list[Path], out: Path) -> int:
    if shutil.which("javac") is None:
        raise UsageError("javac is not installed (kafka-patch needs a JDK 17 or later)")
    if out.exists() and not (out / STAMP).is_file() and any(out.iterdir()):
        raise UsageError(f"{out} holds other files: give an empty or new --out DIR")
    classpath = os.pathsep.join(_classpath(release))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    partial.chmod(0o755)  # mkdtemp makes it private
    try:
        done = subprocess.run(
            [
                *("javac", "--release", "17", "-nowarn", "-proc:none", "-encoding", "UTF-8"),
                *("-cp", classpath, "-d", str(partial)),
                *map(str, files),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise UsageError(_compile_error(files, done.stdout + done.stderr))
        sources = " ".join(str(file) for file in files)
        (partial / STAMP).write_text(f"kafkarep kafka-patch {sources} --kafka {release}\n")
        shutil.rmtree(out, ignore_errors=True)
        partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.class"))
    print(f"{out}:")
    for name in written:
        print(f"  {name}")
    top = [name for name in written if "$" not in name]
    count = f"{len(files)} source{'s' if len(files) != 1 else ''}"
    print(f"kafka-patch: {count} compiled into {out} ({', '.join(top)})")
    return OK


def _compile_error(files: list[Path], output: str) -> str:
    """The file javac's first error is in, with that line: `FILE does not compile: LINE`."""
    lines = output.strip().splitlines()
    first = next((line for line in lines if ": error:" in line), None)
    if first is None:
        first = next((line for line in lines if "error" in line), lines[0] if lines else "")
        return f"{' '.join(map(str, files))} does not compile: {first.strip()}"
    file = first.split(":", 1)[0]
    return f"{file} does not compile: {first.strip()}"
