"""A real Apache Kafka KRaft cluster on 127.0.0.1, driven from Python (stdlib only).

One KRaft controller (node 0) and three brokers (nodes 1, 2, 3), each its own JVM running Kafka's
own classes from the Maven Central artifacts (nothing of Kafka is vendored here):

    with Cluster() as cluster:                    # fetch jars, format, start, wait unfenced
        cluster.create_topic("t", assignment=[1, 2, 3])
        cluster.produce("t", 1000)                # acks=all, each ack's offset and value kept
        cluster.kill_broker(3)
        cluster.start_broker(3)
        text = cluster.dump_metadata_log()        # DumpLogSegments --cluster-metadata-decoder
        logs = cluster.dump_partition_logs("t", [1, 2, 3])  # DumpLogSegments --print-data-log

`Cluster(agent=jar)` starts every broker with the kafkarep agent (`agent/build.sh` builds the
jar), which appends the broker's data-plane events to `<events_dir>/events-<id>.jsonl`
(docs/trace-validation.md; `kafkarep/broker_trace/events.py` reads them).

Every JVM runs in its own session (process group), asks Linux to kill it when this Python process
dies (PR_SET_PDEATHSIG) and is SIGKILLed by `Cluster.stop` (also run by `__exit__` and at exit).
Client-side work uses Kafka's command-line classes (`java -cp <lib>/* <MainClass> ...`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from kafkarep.kafka.jars import KAFKA_VERSION, fetch_kafka
from kafkarep.realcluster.data_plane import (
    SegmentDump,
    parse_dump_log_segments,
    parse_epoch_checkpoint,
    parse_offset_checkpoint,
    parse_verifiable_producer,
)

CONTROLLER_ID = 0
BROKER_IDS: tuple[int, ...] = (1, 2, 3)
# A fixed cluster id (the Uuid whose 16 bytes are b"kafkarep-cluster") so dumps differ less.
CLUSTER_ID = "a2Fma2FyZXAtY2x1c3Rlcg"

# Eligible Leader Replicas (KIP-966). Kafka 4.1.1's StorageTool maps its default release version
# 4.1-IV1 to eligible.leader.replicas.version=1 already (`StorageTool version-mapping`), but the
# feature is passed explicitly so the cluster has ELR even if a default changes; level 1 needs
# metadata.version >= 4.0-IV1, which 4.1-IV1 is. The dumps show it as a FeatureLevelRecord.
RELEASE_VERSION = "4.1-IV1"
FORMAT_FEATURES: tuple[str, ...] = ("eligible.leader.replicas.version=1",)

# Short timeouts so that fencing and ISR shrinks take seconds, yet long enough that a loaded
# 2-core machine does not fence healthy brokers.
BROKER_SESSION_TIMEOUT_MS = 4000
BROKER_HEARTBEAT_INTERVAL_MS = 500
REPLICA_LAG_TIME_MAX_MS = 5000
SNAPSHOT_INTERVAL_MS = 5000

SERVER_JVM_OPTS: tuple[str, ...] = (
    "-Xms64m",
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
)
TOOL_JVM_OPTS: tuple[str, ...] = (
    "-Xms32m",
    "-Xmx128m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
)

# Main classes of Kafka 4.1 (kafka_2.13 for the server and the Scala tools, kafka-tools else).
KAFKA_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
DUMP_LOG_SEGMENTS = "kafka.tools.DumpLogSegments"  # in the server jar, through 4.1.x
DUMP_LOG_SEGMENTS_TOOLS = "org.apache.kafka.tools.DumpLogSegments"  # in kafka-tools by 4.4.0
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
PRODUCER_PERFORMANCE = "org.apache.kafka.tools.ProducerPerformance"
VERIFIABLE_PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
# The producer running through a fault gives up on a record after 3 retries (the default of the
# console producer's --message-send-max-retries, which it replaced), so that a fault that lasts
# (an ISR below min.insync.replicas) fails sends rather than holding them until it ends.
BACKGROUND_RETRIES = 3
GET_OFFSET_SHELL = "org.apache.kafka.tools.GetOffsetShell"
REASSIGN_PARTITIONS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"

Log = Callable[[str], None]


def _stderr_log(message: str) -> None:
    print(f"[kraft {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Processes


def _die_with_parent() -> None:
    """`preexec_fn`: have Linux SIGKILL the child if this Python process dies (best effort)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def _spawn(
    cmd: Sequence[str],
    output: Path,
    *,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    stderr_output: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start `cmd` in a new session (its own process group) with output appended to `output`
    (stderr too, unless `stderr_output` names another file)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as files:
        out = files.enter_context(output.open("ab"))
        err: int | IO[bytes] = subprocess.STDOUT
        if stderr_output is not None:
            err = files.enter_context(stderr_output.open("ab"))
        return subprocess.Popen(
            list(cmd),
            stdin=stdin,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _kill_group(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """SIGKILL the process group of `proc` (a stopped JVM dies too) and reap it."""
    _signal_group(proc, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)


def _one_line(text: str) -> str:
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def wait_until(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll `check` every 0.2 s until it holds; a TimeoutError saying `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not {what} after {timeout}s")
        time.sleep(0.2)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"<no {path}>"


# --------------------------------------------------------------------------------------------
# What the cluster reports


@dataclass(frozen=True)
class PartitionState:
    """One partition as `kafka-topics --describe` prints it."""

    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]

    def __str__(self) -> str:
        text = (
            f"{self.topic}-{self.partition} leader={self.leader} replicas={list(self.replicas)} "
            f"isr={list(self.isr)} elr={list(self.elr)} lastKnownElr={list(self.last_known_elr)}"
        )
        if self.adding or self.removing:
            text += f" adding={list(self.adding)} removing={list(self.removing)}"
        return text


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def parse_describe(text: str) -> list[PartitionState]:
    """Parse the partition lines of TopicCommand's `--describe` output."""
    states = []
    for line in text.splitlines():
        fields: dict[str, str] = {}
        for part in line.strip().split("\t"):
            key, sep, value = part.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if "Partition" not in fields or "Leader" not in fields:
            continue
        leader = fields["Leader"]
        states.append(
            PartitionState(
                topic=fields["Topic"],
                partition=int(fields["Partition"]),
                leader=None if leader in ("none", "-1", "") else int(leader),
                replicas=_ids(fields.get("Replicas", "")),
                isr=_ids(fields.get("Isr", "")),
                elr=_ids(fields.get("Elr", "")),
                last_known_elr=_ids(fields.get("LastKnownElr", "")),
                adding=_ids(fields.get("Adding Replicas", "")),
                removing=_ids(fields.get("Removing Replicas", "")),
            )
        )
    return states


@dataclass(frozen=True)
class BrokerRegistration:
    """A broker as the controller sees it, from the records its log says it replayed."""

    broker_id: int
    registrations: int  # RegisterBrokerRecords replayed (1 + restarts)
    epoch: int
    fenced: bool
    in_controlled_shutdown: bool


_REPLAYED_REGISTER = re.compile(r"Replayed .*RegisterBrokerRecord\((.*)\)")
_REPLAYED_CHANGE = re.compile(r"Replayed .*BrokerRegistrationChangeRecord\((.*)\)")
_REPLAYED_FENCE = re.compile(r"Replayed .*\b(Fence|Unfence)BrokerRecord\((.*)\)")


def _field(text: str, name: str) -> str | None:
    match = re.search(rf"\b{name}=([^,)]*)", text)
    return match.group(1) if match else None


def parse_controller_log(text: str) -> dict[int, BrokerRegistration]:
    """Broker registrations from the controller's INFO lines `Replayed ...Record(...)`."""
    regs: dict[int, BrokerRegistration] = {}
    for line in text.splitlines():
        if "Replayed" not in line:
            continue
        if match := _REPLAYED_REGISTER.search(line):
            body = match.group(1)
            bid = int(_field(body, "brokerId") or -1)
            prev = regs.get(bid)
            regs[bid] = BrokerRegistration(
                broker_id=bid,
                registrations=(prev.registrations if prev else 0) + 1,
                epoch=int(_field(body, "brokerEpoch") or -1),
                fenced=_field(body, "fenced") == "true",
                in_controlled_shutdown=_field(body, "inControlledShutdown") == "true",
            )
        elif match := _REPLAYED_CHANGE.search(line):
            body = match.group(1)
            bid = int(_field(body, "brokerId") or -1)
            prev = regs.get(bid)
            if prev is None:
                continue
            fenced = int(_field(body, "fenced") or 0)
            shutdown = int(_field(body, "inControlledShutdown") or 0)
            regs[bid] = BrokerRegistration(
                broker_id=bid,
                registrations=prev.registrations,
                epoch=prev.epoch,
                fenced=prev.fenced if fenced == 0 else fenced > 0,
                in_controlled_shutdown=(
                    prev.in_controlled_shutdown if shutdown == 0 else shutdown > 0
                ),
            )
        elif match := _REPLAYED_FENCE.search(line):
            body = match.group(2)
            bid = int(_field(body, "id") or -1)
            prev = regs.get(bid)
            if prev is not None:
                regs[bid] = BrokerRegistration(
                    bid, prev.registrations, prev.epoch, match.group(1) == "Fence", False
                )
    return regs


@dataclass(frozen=True)
class ProduceResult:
    """What one producer run did. `acked` is exact: VerifiableProducer prints one line per
    acknowledged record (with its offset and value, kept in `acked_records`); ProducerPerformance
    counts a record in its final "N records sent" only when its send callback saw no exception,
    and prints that total after closing its producer (every send answered)."""

    tool: str  # "VerifiableProducer" or "ProducerPerformance"
    sent: int
    acked: int
    errors: int
    seconds: float
    output: str
    error_kinds: dict[str, int] = field(default_factory=dict)  # exception class -> count
    acked_records: tuple[tuple[int, int, str], ...] = ()  # (partition, offset, value)
    complete: bool = True  # the tool closed its producer: every send it made was answered

    def as_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "sent": self.sent,
            "acked": self.acked,
            "offsets_known": len(self.acked_records) == self.acked,
            "errors": self.errors,
            "error_kinds": self.error_kinds,
            "complete": self.complete,
            "seconds": round(self.seconds, 1),
        }


def _stack_trace_kinds(text: str) -> dict[str, int]:
    """Count the exception classes heading the stack traces in a tool's stderr."""
    kinds: dict[str, int] = {}
    for match in re.finditer(r"^(?:[\w$]+\.)*([A-Z][\w$]*(?:Exception|Error))\b", text, re.M):
        kinds[match.group(1)] = kinds.get(match.group(1), 0) + 1
    return kinds


def _verifiable_result(output: str, seconds: float) -> ProduceResult:
    report = parse_verifiable_producer(output)
    return ProduceResult(
        tool="VerifiableProducer",
        sent=report.sent,
        acked=len(report.acked),
        errors=report.errors,
        seconds=seconds,
        output=output,
        error_kinds=report.error_kinds,
        acked_records=report.acked,
        complete=report.complete,
    )


# --------------------------------------------------------------------------------------------
# The cluster


@dataclass
class _Node:
    node_id: int
    role: str  # "controller" or "broker"
    port: int
    home: Path
    proc: subprocess.Popen[bytes] | None = None
    paused: bool = False

    @property
    def config(self) -> Path:
        return self.home / "server.properties"

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def server_log(self) -> Path:
        return self.home / "logs" / "server.log"

    @property
    def console(self) -> Path:
        return self.home / "logs" / "console.log"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class BackgroundProducer:
    """Kafka's VerifiableProducer (acks=all, idempotent, retrying) sending about `rate` records
    a second until `stop()`, so that records are produced throughout a fault. It prints every
    acknowledgement (partition, offset, value) and, on SIGTERM, closes its producer (which waits
    for every send to be answered) before it exits."""

    def __init__(self, cluster: Cluster, topic: str, rate: float, value_prefix: int) -> None:
        self.topic = topic
        self.rate = rate
        self._cluster = cluster
        tools = cluster.work_dir / "tools"
        self._output = tools / f"verifiable-producer-{topic}-{value_prefix}.json"
        self._errors = tools / f"verifiable-producer-{topic}-{value_prefix}.log"
        args = cluster._verifiable_args(
            topic, value_prefix, throughput=max(1, round(rate)), retries=BACKGROUND_RETRIES
        )
        self._proc = cluster._spawn_tool(
            VERIFIABLE_PRODUCER, args, self._output, stderr_output=self._errors
        )
        self._started = time.monotonic()

    def stop(self, timeout: float = 90.0) -> ProduceResult:
        """SIGTERM the tool: it stops sending, closes its producer (delivery.timeout.ms bounds
        the wait for the sends in flight) and prints its summary; then report."""
        self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(self._proc)
        with contextlib.suppress(ValueError):
            self._cluster._tools.remove(self._proc)
        result = _verifiable_result(
            self._output.read_text(errors="replace"), time.monotonic() - self._started
        )
        self._cluster._record(self.topic, result)
        return result


class Cluster:
    """One KRaft controller and `brokers` brokers on 127.0.0.1, each a JVM of its own.

    Use as a context manager: `__enter__` fetches Kafka, writes configs, formats, starts and
    waits until every broker is registered and unfenced; `__exit__` SIGKILLs every process group
    it started and removes the work directory unless `keep=True`, a `work_dir` was given, or the
    block raised (then the logs stay for a post-mortem).

    With `agent` (the kafkarep agent's jar) every broker JVM runs with
    `-javaagent:<jar>=out=<events_dir>/events-<id>.jsonl,node=<id>`; `events_dir` defaults to
    `<work_dir>/events` (removed with the work directory: give one outside it to keep the events).
    """

    def __init__(
        self,
        *,
        version: str = KAFKA_VERSION,
        work_dir: Path | None = None,
        keep: bool = False,
        brokers: Sequence[int] = BROKER_IDS,
        java: str = "java",
        cache_root: Path | None = None,
        log: Log = _stderr_log,
        startup_timeout: float = 180.0,
        agent: Path | None = None,
        events_dir: Path | None = None,
        broker_props: dict[str, str] | None = None,
        gate_dir: Path | None = None,
    ) -> None:
        self.version = version
        self.java = java
        self.log = log
        self.keep = keep or work_dir is not None
        self.work_dir = work_dir or Path(tempfile.mkdtemp(prefix="kafkarep-kraft-"))
        self.cache_root = cache_root
        self.startup_timeout = startup_timeout
        self.agent = agent
        self.events_dir = events_dir or self.work_dir / "events"
        self.broker_props = dict(broker_props or {})  # over the harness's broker settings
        self.gate_dir = gate_dir  # the agent's gate=DIR (docs/trace-validation.md), or None
        self.producer_overrides: dict[str, str] = {}  # over `producer_props`
        self.startup_seconds: float | None = None
        self.lib: Path | None = None
        self.controller = _Node(CONTROLLER_ID, "controller", 0, self.work_dir / "controller-0")
        self.brokers: dict[int, _Node] = {
            b: _Node(b, "broker", 0, self.work_dir / f"broker-{b}") for b in brokers
        }
        self._tools: list[subprocess.Popen[bytes]] = []
        self._stopped = False
        # Every producer run per topic, in order: what the data-plane checks hold the log to.
        self.produced: dict[str, list[ProduceResult]] = {}
        self._value_prefixes: dict[str, int] = {}

    # -- context manager --------------------------------------------------------------------

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            name = exc_type.__name__ if exc_type else "error"
            self.log(f"failing with {name}; logs kept in {self.work_dir}")
            self.keep = True
        self.stop()

    # -- set-up -----------------------------------------------------------------------------

    @property
    def classpath(self) -> str:
        assert self.lib is not None, "start() first"
        return str(self.lib / "*")

    def start(self) -> None:
        if self.lib is not None:
            raise RuntimeError("a Cluster starts once; make a new one")
        began = time.monotonic()
        self.lib = fetch_kafka(self.version, self.cache_root, log=self.log)
        self._kill_stale()
        atexit.register(self.stop)
        self.controller.port = _free_port()
        for node in self.brokers.values():
            node.port = _free_port()
        for node in self.nodes():
            node.home.mkdir(parents=True, exist_ok=True)
            (node.home / "logs").mkdir(exist_ok=True)
            node.config.write_text(self._server_properties(node))
            (node.home / "log4j2.properties").write_text(_server_log4j(node.server_log))
        self._write_tool_configs()
        self._format()
        self._start_node(self.controller)
        for node in self.brokers.values():
            self._start_node(node)
        self.wait_brokers_unfenced(timeout=self.startup_timeout)
        self.startup_seconds = time.monotonic() - began
        self.log(f"cluster up in {self.startup_seconds:.1f}s ({self.work_dir})")

    def nodes(self) -> list[_Node]:
        return [self.controller, *self.brokers.values()]

    def _voters(self) -> str:
        return f"{CONTROLLER_ID}@127.0.0.1:{self.controller.port}"

    def _server_properties(self, node: _Node) -> str:
        common = {
            "node.id": str(node.node_id),
            "controller.quorum.voters": self._voters(),
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(node.data),
            "broker.heartbeat.interval.ms": str(BROKER_HEARTBEAT_INTERVAL_MS),
            "broker.session.timeout.ms": str(BROKER_SESSION_TIMEOUT_MS),
            # No NoOpRecord every 500 ms (KIP-835): they would fill the dumps and change nothing
            # of the replication state.
            "metadata.max.idle.interval.ms": "0",
            "num.network.threads": "1",
            "num.io.threads": "2",
            "background.threads": "2",
            "auto.leader.rebalance.enable": "false",
            "unclean.leader.election.enable": "false",
            # Also on the controller: with ELR the active controller writes its own value as the
            # cluster-wide default (a ConfigRecord for resource type BROKER, name "").
            "min.insync.replicas": "2",
        }
        if node.role == "controller":
            props = {
                **common,
                "process.roles": "controller",
                "listeners": f"CONTROLLER://127.0.0.1:{node.port}",
                # A snapshot every few seconds, so the log directory has some (validate-log
                # reads them where segments were cleaned; they change no record).
                "metadata.log.max.snapshot.interval.ms": str(SNAPSHOT_INTERVAL_MS),
            }
        else:
            props = {
                **common,
                "process.roles": "broker",
                "listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
                "inter.broker.listener.name": "PLAINTEXT",
                "replica.lag.time.max.ms": str(REPLICA_LAG_TIME_MAX_MS),
                "num.replica.fetchers": "1",
                "num.partitions": "1",
                "default.replication.factor": "3",
                "offsets.topic.replication.factor": "3",
                "transaction.state.log.replication.factor": "3",
                "transaction.state.log.min.isr": "2",
                "auto.create.topics.enable": "false",
                "group.initial.rebalance.delay.ms": "0",
                "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
                **self.broker_props,
            }
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def _write_tool_configs(self) -> None:
        tools = self.work_dir / "tools"
        tools.mkdir(parents=True, exist_ok=True)
        (tools / "log4j2.properties").write_text(_TOOLS_LOG4J)
        # Short client timeouts: a SIGSTOPped broker accepts connections but never answers.
        (tools / "admin.properties").write_text(
            "request.timeout.ms=5000\ndefault.api.timeout.ms=30000\n"
        )

    def _java(self, main: str, jvm_opts: Iterable[str], *extra_props: str) -> list[str]:
        return [self.java, *jvm_opts, *extra_props, "-cp", self.classpath, main]

    def _format(self) -> None:
        procs = []
        for node in self.nodes():
            cmd = self._java(
                STORAGE_TOOL,
                TOOL_JVM_OPTS,
                f"-Dlog4j2.configurationFile={self.work_dir / 'tools' / 'log4j2.properties'}",
            )
            cmd += ["format", "--cluster-id", CLUSTER_ID, "--config", str(node.config)]
            cmd += ["--release-version", RELEASE_VERSION]
            for feature in FORMAT_FEATURES:
                cmd += ["--feature", feature]
            out = node.home / "logs" / "format.log"
            procs.append((node, out, _spawn(cmd, out)))
            self._tools.append(procs[-1][2])
        for node, out, proc in procs:
            try:
                code = proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                code = -1
            if code != 0:
                raise RuntimeError(f"formatting node {node.node_id} failed:\n{_tail(out)}")
        self.log("storage formatted: " + _tail(self.controller.home / "logs" / "format.log", 3))

    def events_file(self, broker_id: int) -> Path:
        """Where the agent appends the broker's events (when the cluster runs one)."""
        return self.events_dir / f"events-{broker_id}.jsonl"

    def _agent_opts(self, node: _Node) -> list[str]:
        if self.agent is None or node.role != "broker":
            return []
        self.events_dir.mkdir(parents=True, exist_ok=True)
        out = self.events_file(node.node_id)
        if "," in str(out):
            raise ValueError(f"the agent's out= path cannot hold a comma: {out}")
        argument = f"out={out},node={node.node_id}"
        if self.gate_dir is not None:
            if "," in str(self.gate_dir):
                raise ValueError(f"the agent's gate= path cannot hold a comma: {self.gate_dir}")
            argument += f",gate={self.gate_dir}"
        return [f"-javaagent:{self.agent}={argument}"]

    def _start_node(self, node: _Node) -> None:
        if node.alive():
            raise RuntimeError(f"node {node.node_id} is already running")
        cmd = self._java(
            KAFKA_MAIN,
            SERVER_JVM_OPTS,
            f"-Dlog4j2.configurationFile={node.home / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={node.home / 'logs'}",
            *self._agent_opts(node),
        )
        cmd.append(str(node.config))
        node.proc = _spawn(cmd, node.console)
        node.paused = False
        with (self.work_dir / "pids").open("a") as pids:
            pids.write(f"{node.proc.pid}\n")

    def _kill_stale(self) -> None:
        """SIGKILL JVMs that an earlier run left in this same work directory."""
        pids = self.work_dir / "pids"
        if not pids.is_file():
            return
        for line in pids.read_text().split():
            pid = int(line)
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if str(self.work_dir).encode() in cmdline:
                self.log(f"killing stale process {pid}")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        pids.unlink()

    # -- tear-down --------------------------------------------------------------------------

    def stop(self) -> None:
        """SIGKILL every process group this cluster started and reap them (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        for proc in self._tools:
            if proc.poll() is None:
                _kill_group(proc)
        for node in self.nodes():
            if node.proc is not None and node.proc.poll() is None:
                _kill_group(node.proc)
        if not self.keep:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    # -- client tools -----------------------------------------------------------------------

    def bootstrap_servers(self, exclude: Iterable[int] = ()) -> str:
        """Brokers that run and are not paused (all brokers if none is)."""
        skip = set(exclude)
        live = [n for b, n in self.brokers.items() if b not in skip and n.alive() and not n.paused]
        chosen = live or list(self.brokers.values())
        return ",".join(f"127.0.0.1:{n.port}" for n in chosen)

    def producer_props(self) -> dict[str, str]:
        return {
            "bootstrap.servers": self.bootstrap_servers(),
            "acks": "all",
            "linger.ms": "5",
            "request.timeout.ms": "10000",
            "delivery.timeout.ms": "60000",
            "max.block.ms": "60000",
            **self.producer_overrides,
        }

    def _tool_cmd(self, main: str) -> list[str]:
        return self._java(
            main,
            TOOL_JVM_OPTS,
            f"-Dlog4j2.configurationFile={self.work_dir / 'tools' / 'log4j2.properties'}",
        )

    def _spawn_tool(
        self,
        main: str,
        args: Sequence[str],
        output: Path,
        *,
        stdin: bool = False,
        stderr_output: Path | None = None,
    ) -> subprocess.Popen[bytes]:
        proc = _spawn(
            [*self._tool_cmd(main), *args],
            output,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stderr_output=stderr_output,
        )
        self._tools.append(proc)
        return proc

    def run_tool(
        self, main: str, args: Sequence[str], *, timeout: float = 120.0, check: bool = True
    ) -> str:
        """Run one of Kafka's command-line classes; return its stdout (stderr on failure)."""
        return self.run_tool_streams(main, args, timeout=timeout, check=check)[0]

    def run_tool_streams(
        self, main: str, args: Sequence[str], *, timeout: float = 120.0, check: bool = True
    ) -> tuple[str, str]:
        """Run one of Kafka's command-line classes; return its stdout and stderr."""
        proc = subprocess.Popen(
            [*self._tool_cmd(main), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self._tools.append(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise TimeoutError(f"{main} {' '.join(args)} ran over {timeout}s") from None
        finally:
            self._tools.remove(proc)
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"{main} {' '.join(args)} exited {proc.returncode}:\n{stdout[-3000:]}"
                f"\n{stderr[-3000:]}"
            )
        return stdout, stderr

    def _admin_config(self) -> str:
        return str(self.work_dir / "tools" / "admin.properties")

    def create_topic(
        self,
        topic: str,
        *,
        partitions: int = 1,
        replication_factor: int = 3,
        min_insync_replicas: int = 2,
        assignment: Sequence[int] | None = None,
    ) -> None:
        """Create a topic; `assignment` fixes partition 0's replicas (the first is preferred)."""
        args = ["--bootstrap-server", self.bootstrap_servers(), "--create", "--topic", topic]
        args += ["--command-config", self._admin_config()]
        if assignment is not None:
            args += ["--replica-assignment", ":".join(str(b) for b in assignment)]
        else:
            args += ["--partitions", str(partitions)]
            args += ["--replication-factor", str(replication_factor)]
        args += ["--config", f"min.insync.replicas={min_insync_replicas}"]
        self.run_tool(TOPIC_COMMAND, args)
        self.wait_partition(
            topic, lambda s: s.leader is not None and len(s.isr) == len(s.replicas), "online"
        )

    def describe_topic_text(self, topic: str) -> str:
        args = ["--bootstrap-server", self.bootstrap_servers(), "--describe", "--topic", topic]
        args += ["--command-config", self._admin_config()]
        return self.run_tool(TOPIC_COMMAND, args, timeout=60)

    def describe_topic(self, topic: str) -> list[PartitionState]:
        return parse_describe(self.describe_topic_text(topic))

    def partition(self, topic: str, partition: int = 0) -> PartitionState:
        for state in self.describe_topic(topic):
            if state.partition == partition:
                return state
        raise KeyError(f"{topic}-{partition}")

    def wait_partition(
        self,
        topic: str,
        predicate: Callable[[PartitionState], bool],
        what: str,
        *,
        partition: int = 0,
        timeout: float = 90.0,
    ) -> PartitionState:
        """Poll `--describe` until `predicate` holds for the partition."""
        deadline = time.monotonic() + timeout
        last: PartitionState | str = "no answer"
        while True:
            self._check_alive()
            try:
                state = self.partition(topic, partition)
                last = state
                if predicate(state):
                    self.log(f"{what}: {state}")
                    return state
            except (RuntimeError, TimeoutError, KeyError) as error:
                last = f"{type(error).__name__}: {str(error)[-300:]}"
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}-{partition} not {what} after {timeout}s: {last}")
            time.sleep(0.5)

    def wait_isr(
        self, topic: str, isr: Iterable[int], *, partition: int = 0, timeout: float = 90.0
    ) -> PartitionState:
        want = set(isr)
        return self.wait_partition(
            topic,
            lambda s: set(s.isr) == want and s.leader is not None,
            f"isr={sorted(want)}",
            partition=partition,
            timeout=timeout,
        )

    def _record(self, topic: str, result: ProduceResult) -> None:
        self.produced.setdefault(topic, []).append(result)

    def _next_value_prefix(self, topic: str) -> int:
        """VerifiableProducer values are `<prefix>.<n>`; a prefix per run keeps them unique."""
        prefix = self._value_prefixes.get(topic, 0) + 1
        self._value_prefixes[topic] = prefix
        return prefix

    def _verifiable_args(
        self,
        topic: str,
        value_prefix: int,
        *,
        throughput: int,
        retries: int = 2147483647,
        acks: int = -1,
    ) -> list[str]:
        props = {k: v for k, v in self.producer_props().items() if k != "bootstrap.servers"}
        # VerifiableProducer sets retries=0 unless its config file says otherwise (which would
        # also switch idempotence off): say how often to retry, and stay idempotent.
        props |= {"retries": str(retries), "enable.idempotence": str(acks == -1).lower()}
        props["acks"] = "all" if acks == -1 else str(acks)
        config = self.work_dir / "tools" / f"verifiable-producer-{topic}-{value_prefix}.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        args = ["--bootstrap-server", self.bootstrap_servers(), "--topic", topic]
        args += ["--acks", str(acks), "--value-prefix", str(value_prefix)]
        args += ["--throughput", str(throughput), "--producer.config", str(config)]
        return args

    def produce(self, topic: str, records: int, *, acks: int = -1) -> ProduceResult:
        """Send `records` records with acks=all (or `acks` 1 or 0) through Kafka's
        VerifiableProducer, which reports the offset and value of every acknowledged record."""
        began = time.monotonic()
        prefix = self._next_value_prefix(topic)
        args = self._verifiable_args(topic, prefix, throughput=-1, acks=acks)
        args += ["--max-messages", str(records)]
        out = self.run_tool(VERIFIABLE_PRODUCER, args, timeout=300)
        result = _verifiable_result(out, time.monotonic() - began)
        self._record(topic, result)
        return result

    def produce_perf(
        self, topic: str, records: int, *, record_size: int = 100, throughput: int = -1
    ) -> ProduceResult:
        """Send `records` records of `record_size` bytes with acks=all through Kafka's
        ProducerPerformance (bulk data; it reports how many were acknowledged, not which)."""
        began = time.monotonic()
        args = ["--topic", topic, "--num-records", str(records)]
        args += ["--record-size", str(record_size), "--throughput", str(throughput)]
        args += ["--producer-props", *(f"{k}={v}" for k, v in self.producer_props().items())]
        out, err = self.run_tool_streams(PRODUCER_PERFORMANCE, args, timeout=300)
        summary = [line for line in out.splitlines() if "records sent" in line]
        if not summary:
            raise RuntimeError(f"ProducerPerformance printed no total:\n{out[-2000:]}")
        acked = int(summary[-1].split()[0])  # the total, printed after close()
        kinds = _stack_trace_kinds(err)
        result = ProduceResult(
            tool="ProducerPerformance",
            sent=records,
            acked=acked,
            errors=sum(kinds.values()),
            seconds=time.monotonic() - began,
            output=out,
            error_kinds=kinds,
        )
        self._record(topic, result)
        return result

    def start_producer(self, topic: str, rate: float = 50.0) -> BackgroundProducer:
        """Produce about `rate` records a second with acks=all until the handle's `stop()`."""
        return BackgroundProducer(self, topic, rate, self._next_value_prefix(topic))

    def end_offset(self, topic: str, partition: int = 0) -> int:
        """The partition's high watermark (GetOffsetShell, latest offset)."""
        args = ["--bootstrap-server", self.bootstrap_servers(), "--topic", topic]
        args += ["--partitions", str(partition), "--command-config", self._admin_config()]
        out = self.run_tool(GET_OFFSET_SHELL, args, timeout=60)
        for line in out.splitlines():
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[0] == topic and parts[1] == str(partition):
                return int(parts[2])
        raise RuntimeError(f"no offset for {topic}-{partition} in {out!r}")

    def _reassignment_file(self, topic: str, partition: int, replicas: Sequence[int]) -> str:
        plan = {
            "version": 1,
            "partitions": [{"topic": topic, "partition": partition, "replicas": list(replicas)}],
        }
        name = f"reassign-{topic}-{partition}-{'-'.join(map(str, replicas))}.json"
        path = self.work_dir / "tools" / name
        path.write_text(json.dumps(plan))
        return str(path)

    def _reassign(
        self, action: str, topic: str, partition: int, replicas: Sequence[int], *more: str
    ) -> str:
        args = ["--bootstrap-server", self.bootstrap_servers(), "--command-config"]
        args += [self._admin_config(), "--reassignment-json-file"]
        args += [self._reassignment_file(topic, partition, replicas), action, *more]
        out = self.run_tool(REASSIGN_PARTITIONS, args)
        self.log(f"reassign {action} {topic}-{partition} -> {list(replicas)}: {_one_line(out)}")
        return out

    def reassign(
        self,
        topic: str,
        replicas: Sequence[int],
        *,
        partition: int = 0,
        throttle_bytes_per_second: int | None = None,
    ) -> str:
        """`kafka-reassign-partitions --execute` of one partition to `replicas`."""
        more = [] if throttle_bytes_per_second is None else ["--throttle"]
        more += [] if throttle_bytes_per_second is None else [str(throttle_bytes_per_second)]
        return self._reassign("--execute", topic, partition, replicas, *more)

    def verify_reassignment(
        self, topic: str, replicas: Sequence[int], *, partition: int = 0
    ) -> str:
        """`--verify` (which also clears the throttles of a finished reassignment)."""
        return self._reassign("--verify", topic, partition, replicas)

    def cancel_reassignment(
        self, topic: str, replicas: Sequence[int], *, partition: int = 0
    ) -> str:
        """`--cancel` the reassignment of the partition to `replicas`."""
        return self._reassign("--cancel", topic, partition, replicas)

    def elect_preferred(self, topic: str, partition: int = 0) -> str:
        """`kafka-leader-election --election-type PREFERRED` for one partition."""
        args = ["--bootstrap-server", self.bootstrap_servers(), "--admin.config"]
        args += [self._admin_config(), "--election-type", "PREFERRED"]
        args += ["--topic", topic, "--partition", str(partition)]
        out = self.run_tool(LEADER_ELECTION, args)
        self.log(f"preferred election {topic}-{partition}: {_one_line(out)}")
        return out

    # -- faults -----------------------------------------------------------------------------

    def _broker(self, broker_id: int) -> _Node:
        node = self.brokers[broker_id]
        if node.proc is None:
            raise RuntimeError(f"broker {broker_id} was never started")
        return node

    def kill_broker(self, broker_id: int) -> None:
        """kill -9 the broker's JVM (an unclean shutdown)."""
        node = self._broker(broker_id)
        assert node.proc is not None
        _kill_group(node.proc)
        node.paused = False
        self.log(f"broker {broker_id} killed (SIGKILL)")

    def terminate_broker(self, broker_id: int, timeout: float = 90.0) -> float:
        """SIGTERM the broker (controlled shutdown) and wait for it to exit; return seconds."""
        node = self._broker(broker_id)
        assert node.proc is not None
        began = time.monotonic()
        node.proc.send_signal(signal.SIGTERM)
        try:
            node.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(node.proc)
            raise TimeoutError(f"broker {broker_id} ignored SIGTERM for {timeout}s") from None
        seconds = time.monotonic() - began
        code = node.proc.returncode
        self.log(f"broker {broker_id} shut down (SIGTERM) in {seconds:.1f}s, exit {code}")
        return seconds

    def start_broker(self, broker_id: int, *, timeout: float = 120.0) -> None:
        """(Re)start a broker and wait until the controller registered and unfenced it."""
        node = self.brokers[broker_id]
        before = self.broker_registrations().get(broker_id)
        self._start_node(node)
        want = (before.registrations if before else 0) + 1
        self.wait_broker(
            broker_id,
            lambda r: r.registrations >= want and not r.fenced,
            "registered again and unfenced",
            timeout=timeout,
        )

    def pause_broker(self, broker_id: int) -> None:
        """SIGSTOP the broker's JVM."""
        node = self._broker(broker_id)
        assert node.proc is not None
        _signal_group(node.proc, signal.SIGSTOP)
        node.paused = True
        self.log(f"broker {broker_id} paused (SIGSTOP)")

    def resume_broker(self, broker_id: int) -> None:
        """SIGCONT the broker's JVM."""
        node = self._broker(broker_id)
        assert node.proc is not None
        _signal_group(node.proc, signal.SIGCONT)
        node.paused = False
        self.log(f"broker {broker_id} resumed (SIGCONT)")

    def pause_until_fenced(self, broker_id: int, *, timeout: float = 60.0) -> float:
        """SIGSTOP the broker until the controller fences it (session timeout), then SIGCONT.
        Returns the seconds it was stopped."""
        began = time.monotonic()
        self.pause_broker(broker_id)
        try:
            self.wait_broker(broker_id, lambda r: r.fenced, "fenced", timeout=timeout)
        finally:
            self.resume_broker(broker_id)
        return time.monotonic() - began

    # -- broker registrations ---------------------------------------------------------------

    def broker_registrations(self) -> dict[int, BrokerRegistration]:
        """What the controller replayed, from its log."""
        try:
            text = self.controller.server_log.read_text(errors="replace")
        except OSError:
            return {}
        return parse_controller_log(text)

    def wait_broker(
        self,
        broker_id: int,
        predicate: Callable[[BrokerRegistration], bool],
        what: str,
        *,
        timeout: float = 60.0,
    ) -> BrokerRegistration:
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            reg = self.broker_registrations().get(broker_id)
            if reg is not None and predicate(reg):
                self.log(f"broker {broker_id} {what} (epoch {reg.epoch})")
                return reg
            if time.monotonic() > deadline:
                raise TimeoutError(f"broker {broker_id} not {what} after {timeout}s: {reg}")
            time.sleep(0.2)

    def wait_brokers_unfenced(self, *, timeout: float = 120.0) -> None:
        """Wait until every broker is registered with the controller and unfenced."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            regs = self.broker_registrations()
            if all(b in regs and not regs[b].fenced for b in self.brokers):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"brokers not all unfenced after {timeout}s: {regs}")
            time.sleep(0.2)

    def _check_alive(self) -> None:
        """Fail fast if the controller died (brokers may be down on purpose)."""
        node = self.controller
        if node.proc is not None and node.proc.poll() is not None:
            raise RuntimeError(
                f"controller exited {node.proc.returncode}:\n{_tail(node.console)}\n"
                f"{_tail(node.server_log)}"
            )

    # -- the metadata log -------------------------------------------------------------------

    def metadata_log_segments(self) -> list[Path]:
        """The controller's `__cluster_metadata-0` segments, oldest first."""
        return sorted((self.controller.data / "__cluster_metadata-0").glob("*.log"))

    def copy_metadata_log(self, to: Path) -> None:
        """Copy the controller's metadata log segments and snapshots into `to/`."""
        source = self.controller.data / "__cluster_metadata-0"
        shutil.rmtree(to, ignore_errors=True)
        to.mkdir(parents=True)
        for file in sorted([*source.glob("*.log"), *source.glob("*.checkpoint")]):
            shutil.copyfile(file, to / file.name)

    def dump_log_segments(self) -> str:
        """DumpLogSegments' main class in this release's jars: Kafka moved it from the server
        jar (`kafka.tools`, 4.1.1) to kafka-tools (`org.apache.kafka.tools`, 4.4.0)."""
        assert self.lib is not None, "the cluster was not started"
        for jar in self.lib.glob("kafka_*.jar"):
            with zipfile.ZipFile(jar) as archive:
                if "kafka/tools/DumpLogSegments.class" in archive.namelist():
                    return DUMP_LOG_SEGMENTS
        return DUMP_LOG_SEGMENTS_TOOLS

    def dump_metadata_log(self) -> str:
        """`DumpLogSegments --cluster-metadata-decoder` of every segment, in order."""
        segments = self.metadata_log_segments()
        if not segments:
            raise RuntimeError("no __cluster_metadata segments")
        files = ",".join(str(s) for s in segments)
        args = ["--cluster-metadata-decoder", "--files", files]
        return self.run_tool(self.dump_log_segments(), args, timeout=120)

    # -- a partition's replicas on disk (the data plane) ------------------------------------

    def partition_dir(self, broker_id: int, topic: str, partition: int = 0) -> Path:
        return self.brokers[broker_id].data / f"{topic}-{partition}"

    def hwm_checkpoint(self, broker_id: int, topic: str, partition: int = 0) -> int | None:
        """The HWM in the broker's `replication-offset-checkpoint` (written every
        replica.high.watermark.checkpoint.interval.ms, 5 s, and at a clean shutdown)."""
        path = self.brokers[broker_id].data / "replication-offset-checkpoint"
        try:
            text = path.read_text()
        except OSError:
            return None
        return parse_offset_checkpoint(text).get((topic, partition))

    def epoch_checkpoint(
        self, broker_id: int, topic: str, partition: int = 0
    ) -> tuple[tuple[int, int], ...] | None:
        """The partition's `leader-epoch-checkpoint` on the broker: (epoch, start offset)."""
        path = self.partition_dir(broker_id, topic, partition) / "leader-epoch-checkpoint"
        try:
            text = path.read_text()
        except OSError:
            return None
        return parse_epoch_checkpoint(text)

    def dump_partition_logs(
        self, topic: str, brokers: Iterable[int], partition: int = 0, *, print_data: bool = True
    ) -> dict[int, list[SegmentDump]]:
        """`DumpLogSegments [--print-data-log] --files` over the partition's segments on each of
        `brokers` (one JVM for all), split by broker; a broker without the partition's
        directory is left out. Reads the files of running brokers (the OS serves what they
        wrote; no lock is taken)."""
        owner: dict[str, int] = {}
        for broker in brokers:
            for segment in sorted(self.partition_dir(broker, topic, partition).glob("*.log")):
                owner[str(segment)] = broker
        if not owner:
            return {}
        args = ["--print-data-log"] if print_data else []
        args += ["--files", ",".join(owner)]
        out = self.run_tool(self.dump_log_segments(), args, timeout=300)
        dumps: dict[int, list[SegmentDump]] = {}
        for dump in parse_dump_log_segments(out):
            if dump.path not in owner:
                raise RuntimeError(f"DumpLogSegments dumped {dump.path}, not asked for")
            dumps.setdefault(owner[dump.path], []).append(dump)
        missing = set(owner) - {d.path for ds in dumps.values() for d in ds}
        if missing:
            raise RuntimeError(f"DumpLogSegments did not dump {sorted(missing)}")
        return dumps


def _server_log4j(path: Path) -> str:
    return f"""status = warn
name = kafkarep-kraft-node
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
"""


_TOOLS_LOG4J = """status = warn
name = kafkarep-kraft-tools
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
"""
