"""Kafka's own controller as the oracle: the harness of the repository's `oracle/` folder.

`oracle/build.sh VERSION` builds a small Java program against a Kafka release's jars from Maven
Central (`kafka-metadata`, `kafka-server-common`, `kafka-clients`); it runs Kafka's
`PartitionChangeBuilder`, `ReplicationControlManager` and `ClusterControlManager` on cases in the
conformance format, read as JSON lines on stdin, and writes Kafka's outcome per case on stdout
(`oracle/README.md`). `Oracle` starts it once and asks it cases; `answer` turns its reply into the
vocabulary of `conformance.answer`, so the two compare field by field.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
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


def runner(release: str, log: Callable[[str], None] | None = None) -> Path:
    """The harness for a release, built first if needed (Maven caches Kafka's jars)."""
    release = resolve(release)
    reason = missing()
    if reason is not None:
        raise OracleError(reason)
    run = HOME / "target" / release / "run"
    sources = list((HOME / "src").rglob("*.java")) + [HOME / "pom.xml", HOME / "build.sh"]
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


class Oracle:
    """One running harness for a release; `ask` many cases, in order."""

    def __init__(self, release: str, log: Callable[[str], None] | None = None) -> None:
        self.release = resolve(release)
        run = runner(self.release, log)
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
            raise OracleError(f"the oracle for Kafka {self.release} stopped")
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
