"""Kafka's own controller as the oracle: the harness of the repository's `oracle/` folder.

`oracle/build.sh VERSION` builds a small Java program against a Kafka release's jars from Maven
Central (`kafka-metadata`, `kafka-server-common`, `kafka-clients`); it runs Kafka's
`PartitionChangeBuilder`, `ReplicationControlManager` and `ClusterControlManager` on cases in the
conformance format, read as JSON lines on stdin, and writes Kafka's outcome per case on stdout
(`oracle/README.md`). `Oracle` starts it once and asks it cases; `answer` turns its reply into the
vocabulary of `conformance.answer`, so the two compare field by field.

A patched controller (docs/oracle.md, "A patched controller"): `kafka_classes` puts a directory of
classes (`kafkarep kafka-patch`) before the release's jars, and `kafka_jar` puts a `kafka-metadata`
jar (one built from a Kafka branch) in place of the release's. The harness is still the one built
for the release, and the release's other jars stay.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from kafkarep.kafka.releases import resolve

HOME = Path(__file__).resolve().parents[2] / "oracle"


class OracleError(Exception):
    """The oracle cannot run here (no Java or Maven, no `oracle/` folder, a failed build), or
    stopped: one line for the user."""


def missing() -> str | None:
    """Why the oracle cannot run on this machine, or None."""
    if not (HOME / "build.sh").exists():
        return f"no oracle harness at {HOME} (the oracle needs a clone of the repository)"
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (the oracle needs Java 17 and Maven)"
    return None


def runner(
    release: str,
    log: Callable[[str], None] | None = None,
    *,
    kafka_jar: Path | None = None,
    kafka_classes: Path | None = None,
) -> Path:
    """The harness for a release, built first if needed (Maven caches Kafka's jars). With
    `kafka_classes` or `kafka_jar`, a `run` that starts it on the patched controller
    (`patched_runner`)."""
    release = resolve(release)
    jar = None if kafka_jar is None else check_kafka_jar(kafka_jar)
    classes = None if kafka_classes is None else check_kafka_classes(kafka_classes)
    reason = missing()
    if reason is not None:
        raise OracleError(reason)
    run = _built(release, log)
    if jar is None and classes is None:
        return run
    return patched_runner(run, release, jar, classes)


def _built(release: str, log: Callable[[str], None] | None) -> Path:
    """`oracle/target/RELEASE/run`, built unless it is newer than every source of the harness.
    One build at a time per release, across processes (parallel tests, two commands)."""
    target = HOME / "target" / release
    target.mkdir(parents=True, exist_ok=True)
    run = target / "run"
    sources = list((HOME / "src").rglob("*.java")) + [HOME / "pom.xml", HOME / "build.sh"]
    with (target / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run.exists() and all(s.stat().st_mtime <= run.stat().st_mtime for s in sources):
            return run
        if log is not None:
            log(f"building the oracle for Kafka {release} (oracle/build.sh {release})")
        done = subprocess.run(
            ["bash", str(HOME / "build.sh"), release], capture_output=True, text=True, check=False
        )
    if done.returncode != 0 or not run.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise OracleError(f"oracle/build.sh {release} failed: {last}")
    return run


# The class a kafka-metadata jar has (the builder every partition change goes through).
BUILDER_CLASS = "org/apache/kafka/controller/PartitionChangeBuilder.class"


def check_kafka_jar(path: Path) -> Path:
    """A kafka-metadata jar (absolute), or an `OracleError` saying in one line what it is not."""
    if not path.exists():
        raise OracleError(f"kafka-metadata jar {path} does not exist")
    if not path.is_file():
        raise OracleError(f"{path} is not a kafka-metadata jar: it is not a file")
    try:
        with zipfile.ZipFile(path) as jar:
            names = set(jar.namelist())
    except (zipfile.BadZipFile, OSError):
        raise OracleError(f"{path} is not a kafka-metadata jar: it is not a jar") from None
    if BUILDER_CLASS not in names:
        raise OracleError(f"{path} is not a kafka-metadata jar: it has no {BUILDER_CLASS}")
    return path.resolve()


def check_kafka_classes(path: Path) -> Path:
    """A directory of compiled classes (absolute), or an `OracleError` in one line."""
    if not path.exists():
        raise OracleError(f"classes directory {path} does not exist")
    if not path.is_dir():
        raise OracleError(f"{path} is not a classes directory: it is not a directory")
    if next(path.rglob("*.class"), None) is None:
        raise OracleError(f"classes directory {path} has no .class file")
    return path.resolve()


def patched_runner(run: Path, release: str, jar: Path | None, classes: Path | None) -> Path:
    """A `run` for the release's harness on a patched controller: the folder
    `oracle/target/RELEASE/patched-<hash of the paths>/` holds a `classpath.txt` that is the
    release's with `classes` first and `jar` in place of `kafka-metadata-RELEASE.jar`, and links
    `run` and `classes` to the release's (`run` reads the classpath.txt beside it, so it is the
    same command with another classpath). `patch.txt` names the jar and the classes; a folder
    whose jar or classes are gone is removed."""
    target = run.parent
    entries = (target / "classpath.txt").read_text().strip().split(os.pathsep)
    if jar is not None:
        name = f"kafka-metadata-{release}.jar"
        if not any(Path(e).name == name for e in entries):
            raise OracleError(f"{target / 'classpath.txt'} has no {name} to replace")
        entries = [str(jar) if Path(e).name == name else e for e in entries]
    if classes is not None:
        entries = [str(classes), *entries]
    patch = [str(p) for p in (jar, classes) if p is not None]
    for old in target.glob("patched-*/patch.txt"):
        if not all(Path(line).exists() for line in old.read_text().splitlines()):
            shutil.rmtree(old.parent, ignore_errors=True)
    folder = target / f"patched-{hashlib.sha256(repr(patch).encode()).hexdigest()[:12]}"
    folder.mkdir(exist_ok=True)
    for link in ("run", "classes"):
        if not (folder / link).is_symlink():
            with contextlib.suppress(FileExistsError):  # another process made it
                (folder / link).symlink_to(Path("..") / link)
    for file, text in (
        ("classpath.txt", os.pathsep.join(entries)),
        ("patch.txt", "\n".join(patch)),
    ):
        partial = folder / f"{file}.{os.getpid()}"
        partial.write_text(text + "\n")
        partial.replace(folder / file)
    return folder / "run"


def kafka_source_label(
    release: str, kafka_jar: Path | None = None, kafka_classes: Path | None = None
) -> str:
    """Which controller answers, for a summary: "Kafka 4.1.0's classes", "Kafka 4.1.0 with
    classes from DIR", "kafka-metadata jar PATH" (with "with classes from DIR" when both)."""
    release = resolve(release)
    if kafka_jar is None:
        if kafka_classes is None:
            return f"Kafka {release}'s classes"
        return f"Kafka {release} with classes from {kafka_classes}"
    if kafka_classes is None:
        return f"kafka-metadata jar {kafka_jar}"
    return f"kafka-metadata jar {kafka_jar} with classes from {kafka_classes}"


class Oracle:
    """One running harness for a release; `ask` many cases, in order. `kafka_jar` and
    `kafka_classes` patch its controller (`runner`); `label` says which controller answers."""

    def __init__(
        self,
        release: str,
        log: Callable[[str], None] | None = None,
        *,
        kafka_jar: Path | None = None,
        kafka_classes: Path | None = None,
    ) -> None:
        self.release = resolve(release)
        self.label = kafka_source_label(self.release, kafka_jar, kafka_classes)
        patched = kafka_jar is not None or kafka_classes is not None
        self.who = self.label if patched else f"Kafka {self.release}"
        run = runner(self.release, log, kafka_jar=kafka_jar, kafka_classes=kafka_classes)
        self.process = subprocess.Popen(
            [str(run)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def ask(self, case: dict[str, Any]) -> dict[str, Any]:
        """Kafka's reply to one case (raw: see `answer`)."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        _write(stdin, [case])
        return self._read(stdout, case)

    def _read(self, stdout: IO[str], case: dict[str, Any]) -> dict[str, Any]:
        line = stdout.readline()
        if not line:
            raise OracleError(f"the oracle for {self.who} stopped")
        reply: dict[str, Any] = json.loads(line)
        if reply.get("id") != case.get("id"):
            raise OracleError(f"the oracle answered {reply.get('id')!r} to {case.get('id')!r}")
        return reply

    def ask_many(self, cases: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Kafka's replies, in order; the cases are written while the replies are read."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        cases = list(cases)
        writer = threading.Thread(target=_write, args=(stdin, cases), daemon=True)
        writer.start()
        for case in cases:
            yield self._read(stdout, case)
        writer.join()


def _write(stdin: IO[str], cases: list[dict[str, Any]]) -> None:
    for case in cases:
        stdin.write(json.dumps(case, separators=(",", ":")) + "\n")
    stdin.flush()


def answer(reply: dict[str, Any]) -> dict[str, Any] | None:
    """Kafka's reply in the vocabulary of `conformance.answer` (None: Kafka cannot express the
    case at this release). A harness error is an `OracleError`."""
    if "harness_error" in reply:
        raise OracleError(f"case {reply.get('id')!r}: the oracle failed: {reply['harness_error']}")
    if "unsupported" in reply:
        return None
    out: dict[str, Any] = {"outcome": reply["outcome"], "error": reply.get("error")}
    if reply["outcome"] == "changed":
        out["after"] = reply["after"]
    brokers = _brokers(reply.get("records", ()))
    if brokers:
        out["brokers"] = brokers
    return out


def _brokers(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the broker records of a reply say of each broker: a registration
    (RegisterBrokerRecord) or a change (BrokerRegistrationChangeRecord: fenced 1 / -1 / 0 for
    fenced / unfenced / unchanged, inControlledShutdown 1 / 0)."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        kind = record.get("type")
        if kind == "RegisterBrokerRecord":
            out[str(record["brokerId"])] = {
                "fenced": bool(record["fenced"]),
                "shutting_down": bool(record["inControlledShutdown"]),
                "epoch": int(record["brokerEpoch"]),
                "incarnation": incarnation(str(record["incarnationId"])),
            }
        elif kind == "BrokerRegistrationChangeRecord":
            entry = out.setdefault(str(record["brokerId"]), {})
            fenced = int(record.get("fenced", 0))
            if fenced:
                entry["fenced"] = fenced > 0
            if int(record.get("inControlledShutdown", 0)):
                entry["shutting_down"] = True
    return out


def incarnation(uuid: str) -> int:
    """The harness's incarnation id n: the UUID's low 64 bits are n + 1 (`oracle/README.md`)."""
    raw = base64.urlsafe_b64decode(uuid + "=" * (-len(uuid) % 4))
    return int.from_bytes(raw[8:], "big") - 1
