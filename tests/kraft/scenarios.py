"""Scripted fault scenarios on a real Kafka KRaft cluster; each leaves a text dump of the
controller's metadata log (`__cluster_metadata`), for `kafkarep validate-log` to replay, and has
its partition's replicas checked against the model's safety properties (data_plane.py).

    python -m tests.kraft.scenarios [--out DIR] [--keep] [--agent JAR] [--records N] [--rate R]
        [--kafka VERSION] [NAME ...]

Every scenario runs on a fresh cluster (one controller, brokers 1, 2, 3; see cluster.py), so that
each dump is self-contained (bootstrap features, the three registrations, one topic) and small,
and a failed scenario cannot disturb the next. Each creates one topic named after it, with
replicas [1, 2, 3] (broker 1 preferred), replication factor 3 and min.insync.replicas 2, produces
1,000 records with acks=all before the fault, keeps a producer (acks=all, 20 records a second)
running throughout the fault, and produces 1,000 more after it; all three are Kafka's
VerifiableProducer, which reports the offset and value of every acknowledged record.

After the metadata log is dumped, the data plane: with no producer left, once the partition has
a leader and its full ISR and every ISR member's HWM checkpoint has caught up with the leader's
HWM (ListOffsets), each replica's log (DumpLogSegments --print-data-log), leader epoch cache and
HWM are read from the running brokers, read again to make sure nothing moved, and checked
(`data_plane.check`): a violated clause fails the scenario.

With `--agent` (the kafkarep agent's jar, `agent/build.sh`) every broker runs it, and
DIR/NAME.trace/ is a trace directory for `kafkarep validate-trace`: the brokers' events, the
metadata log's dump and the cluster's settings (docs/trace-validation.md). `--records` sets how
many records the producers before and after the fault send (the recordings in
tests/data/broker-traces/ use 30), `--rate` the producer's rate during the fault.

Output, per scenario NAME: DIR/NAME.txt, the raw `DumpLogSegments --cluster-metadata-decoder`
text with the temporary work directory replaced by `$WORK`; and DIR/scenarios.json, what each
scenario did (the steps logged), its final partition state, what the producers sent and had
acknowledged, each replica's final state in brief, the data-plane verdict, and timings.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from kafkarep.realcluster import data_plane
from kafkarep.realcluster.cluster import (
    KAFKA_VERSION,
    REPLICA_LAG_TIME_MAX_MS,
    Cluster,
    PartitionState,
    ProduceResult,
)
from kafkarep.realcluster.data_plane import AckedWrites, Partition, ReplicaState, Verdict

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "metadata-logs"
ASSIGNMENT = (1, 2, 3)
PRELOAD_RECORDS = 1000
PRODUCE_RATE = 20.0  # records a second from the background producer
HWM_CHECKPOINT_WAIT = 30.0  # seconds for the ISR's HWM checkpoints to reach the leader's HWM
READ_ATTEMPTS = 3  # reads of the data plane until two agree
SHORT_LAG_MS = 1500  # below broker.session.timeout.ms: the leader shrinks before a fence
LAG_PAUSE_SECONDS = 3.0  # past SHORT_LAG_MS and its check (every half of it), within a session
MIN_ISR = 2  # the harness's min.insync.replicas (cluster.py)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    body: Callable[[Cluster, str], None]
    ends_with_full_isr: bool = True  # the data plane is read once the ISR is full again
    broker_props: tuple[tuple[str, str], ...] = ()  # over the harness's broker settings


def kill9_follower(c: Cluster, topic: str) -> None:
    """kill -9 follower 3, wait until fenced and out of the ISR, restart it, wait for the ISR."""
    c.kill_broker(3)
    c.wait_broker(3, lambda r: r.fenced, "fenced")
    c.wait_isr(topic, [1, 2])
    c.start_broker(3)
    c.wait_isr(topic, [1, 2, 3])


def kill9_leader(c: Cluster, topic: str) -> None:
    """kill -9 leader 1; a new leader is elected when 1 is fenced; restart 1 (no election)."""
    c.kill_broker(1)
    c.wait_broker(1, lambda r: r.fenced, "fenced")
    c.wait_partition(topic, lambda s: s.leader in (2, 3) and 1 not in s.isr, "led by 2 or 3")
    c.start_broker(1)
    c.wait_isr(topic, [1, 2, 3])


def sigterm_leader(c: Cluster, topic: str) -> None:
    """SIGTERM leader 1 (controlled shutdown moves leadership), restart it."""
    c.terminate_broker(1)
    c.wait_partition(topic, lambda s: s.leader in (2, 3) and 1 not in s.isr, "led by 2 or 3")
    c.start_broker(1)
    c.wait_isr(topic, [1, 2, 3])


def sigstop_leader(c: Cluster, topic: str) -> None:
    """SIGSTOP leader 1 until the controller fences it (session timeout), SIGCONT; 1 comes back
    as a follower."""
    c.pause_until_fenced(1)
    c.wait_partition(topic, lambda s: s.leader in (2, 3), "led by 2 or 3")
    c.wait_broker(1, lambda r: not r.fenced, "unfenced")
    c.wait_isr(topic, [1, 2, 3])


def sigstop_follower(c: Cluster, topic: str) -> None:
    """SIGSTOP follower 3 until fenced (or shrunk out of the ISR by the leader, whichever comes
    first: broker.session.timeout.ms < replica.lag.time.max.ms), SIGCONT, wait for the ISR."""
    c.pause_until_fenced(3)
    c.wait_broker(3, lambda r: not r.fenced, "unfenced")
    c.wait_isr(topic, [1, 2, 3])


def lagging_follower(c: Cluster, topic: str) -> None:
    """SIGSTOP follower 3 for 3 s: past replica.lag.time.max.ms (1.5 s here) but not past its
    session (4 s), so the leader shrinks the ISR (`Partition.maybeShrinkIsr`) and the controller
    does not fence it; SIGCONT, it fetches from behind the HWM, catches up and the leader
    expands the ISR again."""
    time.sleep(LAG_PAUSE_SECONDS)  # the producer is writing: the leader's log end moves on
    c.pause_broker(3)
    try:
        time.sleep(LAG_PAUSE_SECONDS)
    finally:
        c.resume_broker(3)
    c.wait_isr(topic, [1, 2, 3])


def acks1_sigterm_leader(c: Cluster, topic: str) -> None:
    """acks=1 writes before and after a controlled shutdown (SIGTERM) of leader 1, beside the
    acks=all producer; 1 restarts and a preferred election makes it leader again."""
    c.produce(topic, 200, acks=1)
    c.terminate_broker(1)
    c.wait_partition(topic, lambda s: s.leader in (2, 3), "led by 2 or 3")
    c.produce(topic, 200, acks=1)
    c.start_broker(1)
    c.wait_isr(topic, [1, 2, 3])
    c.elect_preferred(topic)
    c.wait_partition(topic, lambda s: s.leader == 1, "led by 1")


def uncontrolled_sigterm_leader(c: Cluster, topic: str) -> None:
    """SIGTERM leader 1 with controlled.shutdown.enable=false: it shuts down cleanly without
    asking the controller (`BrokerServer.shutdown` at 4.1.1 skips the controlled shutdown), so
    its partitions move only when the controller fences it (session timeout); restart it. A
    controlled shutdown the controller never approves ends the same way after its timeout,
    `KafkaBroker.shutdown()`'s five minutes, too long for a scenario."""
    c.terminate_broker(1)
    c.wait_partition(topic, lambda s: s.leader in (2, 3), "led by 2 or 3")
    c.start_broker(1)
    c.wait_isr(topic, [1, 2, 3])


def reassign(c: Cluster, topic: str) -> None:
    """kafka-reassign-partitions: [1,2,3] -> [2,3] (drops the leader), then -> [2,3,1]."""
    c.reassign(topic, [2, 3])
    c.wait_partition(
        topic,
        lambda s: s.replicas == (2, 3) and not s.adding and not s.removing and s.leader in (2, 3),
        "reassigned to [2, 3]",
    )
    c.verify_reassignment(topic, [2, 3])
    c.reassign(topic, [2, 3, 1])
    c.wait_partition(
        topic,
        lambda s: s.replicas == (2, 3, 1) and not s.adding and set(s.isr) == {1, 2, 3},
        "reassigned to [2, 3, 1]",
    )
    c.verify_reassignment(topic, [2, 3, 1])


def reassign_cancel(c: Cluster, topic: str) -> None:
    """[1,2,3] -> [1,2]; ~5 MB more; -> [1,2,3] throttled to 1 byte/s so broker 3 cannot catch
    up; cancel while 3 is still an adding replica; the partition returns to [1,2]."""
    c.reassign(topic, [1, 2])
    c.wait_partition(
        topic,
        lambda s: s.replicas == (1, 2) and not s.adding and not s.removing,
        "reassigned to [1, 2]",
    )
    c.verify_reassignment(topic, [1, 2])
    c.produce_perf(topic, 5000, record_size=1000)
    c.reassign(topic, [1, 2, 3], throttle_bytes_per_second=1)
    c.wait_partition(topic, lambda s: s.adding == (3,), "adding 3")
    time.sleep(2.0)
    state = c.partition(topic)
    if 3 in state.isr or not state.adding:
        raise RuntimeError(f"the throttled reassignment finished before the cancel: {state}")
    c.cancel_reassignment(topic, [1, 2, 3])
    c.wait_partition(
        topic,
        lambda s: s.replicas == (1, 2) and not s.adding and not s.removing,
        "back to [1, 2]",
    )


def preferred_election(c: Cluster, topic: str) -> None:
    """kill -9 leader 1 (leadership moves), restart it, wait for the ISR, then
    kafka-leader-election --election-type PREFERRED puts 1 back."""
    c.kill_broker(1)
    c.wait_broker(1, lambda r: r.fenced, "fenced")
    c.wait_partition(topic, lambda s: s.leader in (2, 3), "led by 2 or 3")
    c.start_broker(1)
    c.wait_isr(topic, [1, 2, 3])
    if c.partition(topic).leader == 1:
        raise RuntimeError("leader already back on 1 (auto.leader.rebalance.enable is off)")
    c.elect_preferred(topic)
    c.wait_partition(topic, lambda s: s.leader == 1, "led by preferred 1")


def elr_controlled_shutdowns(c: Cluster, topic: str) -> None:
    """SIGTERM 3, 2, then leader 1: the ISR falls below min.insync.replicas, so 2 and then 1
    move to the ELR (KIP-966) and the partition is left leaderless; restart 2 first, which the
    controller elects from the ELR; then 1 and 3 rejoin."""
    c.terminate_broker(3)
    c.wait_isr(topic, [1, 2])
    c.terminate_broker(2)
    c.wait_partition(topic, lambda s: s.isr == (1,), "isr=[1]")
    c.terminate_broker(1)
    c.wait_broker(1, lambda r: r.fenced, "fenced")
    c.start_broker(2)
    c.wait_partition(topic, lambda s: s.leader == 2, "led by 2 (from the ELR)")
    c.start_broker(1)
    c.start_broker(3)
    c.wait_isr(topic, [1, 2, 3])


def _kill_both_followers(c: Cluster, topic: str) -> None:
    """kill -9 followers 3 then 2, each until fenced: the ISR shrinks to [1], below
    min.insync.replicas, so 2 goes to the ELR."""
    for broker, isr in ((3, [1, 2]), (2, [1])):
        c.kill_broker(broker)
        c.wait_broker(broker, lambda r: r.fenced, "fenced")
        c.wait_isr(topic, isr)


def kill9_both_followers(c: Cluster, topic: str) -> None:
    """kill -9 followers 3 then 2 (2 goes to the ELR); restart both (unclean restarts) and wait
    for the ISR."""
    _kill_both_followers(c, topic)
    c.start_broker(2)
    c.start_broker(3)
    c.wait_isr(topic, [1, 2, 3])


def elr_kill9_all(c: Cluster, topic: str) -> None:
    """kill -9 followers 3 and 2 (2 goes to the ELR), then leader 1: the partition is left
    leaderless with an empty ISR. Restart 2 and 3 (unclean: a killed broker has no clean-shutdown
    marker), then 1, and wait for a leader and the full ISR: which broker the controller elects,
    and when, is what the dump records (KIP-966 ELR / last-known-ELR rules of Kafka 4.1)."""
    _kill_both_followers(c, topic)
    c.kill_broker(1)
    c.wait_broker(1, lambda r: r.fenced, "fenced")
    c.start_broker(2)
    c.start_broker(3)
    c.log(f"with 2 and 3 back: {c.partition(topic)}")
    c.start_broker(1)
    c.wait_partition(topic, lambda s: s.leader is not None, "led again", timeout=120)
    c.wait_isr(topic, [1, 2, 3], timeout=120)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("kill9_follower", "(a) kill -9 a follower, restart it", kill9_follower),
        Scenario("sigterm_leader", "(b) SIGTERM the leader, restart it", sigterm_leader),
        Scenario("sigstop_leader", "(c) SIGSTOP the leader until fenced, SIGCONT", sigstop_leader),
        Scenario("reassign", "(d) reassignment [1,2,3] -> [2,3] -> [2,3,1]", reassign),
        Scenario("reassign_cancel", "(e) throttled reassignment, cancelled", reassign_cancel),
        Scenario("preferred_election", "(f) preferred election after a move", preferred_election),
        Scenario("kill9_leader", "kill -9 the leader, restart it", kill9_leader),
        Scenario("sigstop_follower", "SIGSTOP a follower until fenced", sigstop_follower),
        Scenario("elr_controlled_shutdowns", "all three SIGTERMed", elr_controlled_shutdowns),
        Scenario("kill9_both_followers", "kill -9 both followers", kill9_both_followers),
        Scenario("elr_kill9_all", "kill -9 all three, restart", elr_kill9_all),
        Scenario(
            "lagging_follower",
            "SIGSTOP a follower past its lag time: the leader shrinks the ISR",
            lagging_follower,
            broker_props=(("replica.lag.time.max.ms", str(SHORT_LAG_MS)),),
        ),
        Scenario("acks1_sigterm_leader", "acks=1 writes, SIGTERM the leader", acks1_sigterm_leader),
        Scenario(
            "uncontrolled_sigterm_leader",
            "SIGTERM the leader, controlled shutdown disabled",
            uncontrolled_sigterm_leader,
            broker_props=(("controlled.shutdown.enable", "false"),),
        ),
    )
}


def _partition(state: PartitionState) -> Partition:
    return Partition(state.leader, state.replicas, state.isr, state.elr)


@dataclass
class DataPlaneRead:
    """What `read_data_plane` read, and how."""

    partition: Partition
    replicas: dict[int, ReplicaState]
    leader_hwm: int  # ListOffsets (latest, read_uncommitted) answered by the leader
    hwm_checkpoints: dict[int, int | None]
    attempts: int
    missing: list[int]  # replicas whose partition directory or epoch cache was not there
    elsewhere: dict[int, list[str]]  # other brokers: their directories of the partition, if any

    def as_json(self) -> dict[str, object]:
        current = all(self.hwm_checkpoints.get(b) == self.leader_hwm for b in self.partition.isr)
        return {
            "read_from": "running brokers, quiet (no producer, leader and ISR stable), read twice",
            "attempts": self.attempts,
            "leader_hwm_list_offsets": self.leader_hwm,
            "hwm_checkpoints": {str(b): v for b, v in sorted(self.hwm_checkpoints.items())},
            "isr_hwm_checkpoints_current": current,
            "missing": self.missing,
            "not_replicas": {str(b): dirs for b, dirs in sorted(self.elsewhere.items())},
        }


def read_data_plane(c: Cluster, topic: str, *, full_isr: bool) -> DataPlaneRead:
    """Read the partition's replicas from the running brokers once they keep still: a leader
    (and the full ISR when `full_isr`), every ISR member's HWM checkpoint equal to the leader's
    HWM from ListOffsets (or 30 s passed), then each replica's epoch cache and log; then the
    partition state, the leader's HWM, the checkpoints and the epoch caches once more, and read
    it all again if any of them moved."""

    def quiet(s: PartitionState) -> bool:
        return s.leader is not None and (not full_isr or set(s.isr) == set(s.replicas))

    what = "quiet: a leader" + (" and the full ISR" if full_isr else "")
    for attempt in range(1, READ_ATTEMPTS + 1):
        state = c.wait_partition(topic, quiet, what)
        hwm = c.end_offset(topic)
        deadline = time.monotonic() + HWM_CHECKPOINT_WAIT
        while True:
            checkpoints = {b: c.hwm_checkpoint(b, topic) for b in state.replicas}
            if all(checkpoints[b] == hwm for b in state.isr) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        caches = {b: c.epoch_checkpoint(b, topic) for b in state.replicas}
        dumps = c.dump_partition_logs(topic, state.replicas)
        again = (
            c.partition(topic),
            c.end_offset(topic),
            {b: c.hwm_checkpoint(b, topic) for b in state.replicas},
            {b: c.epoch_checkpoint(b, topic) for b in state.replicas},
        )
        if again == (state, hwm, checkpoints, caches):
            break
        c.log(f"the partition moved while its replicas were read (read {attempt}); again")
    else:
        raise RuntimeError(f"{topic}-0 did not keep still over {READ_ATTEMPTS} reads")
    c.log(f"data plane read: HWM {hwm} (ListOffsets), HWM checkpoints {checkpoints}")
    replicas: dict[int, ReplicaState] = {}
    missing = []
    for b in state.replicas:
        cache = caches[b]
        if b not in dumps or cache is None:
            missing.append(b)
            continue
        if b == state.leader:
            replica_hwm, source = hwm, "ListOffsets (leader)"
        elif checkpoints[b] is not None:
            replica_hwm, source = checkpoints[b] or 0, "replication-offset-checkpoint"
        else:
            replica_hwm, source = 0, "none (no checkpoint entry)"
        replicas[b] = data_plane.replica_from_segments(
            b, dumps[b], high_watermark=replica_hwm, epoch_cache=cache, hwm_source=source
        )
    elsewhere = {
        b: sorted(p.name for p in node.data.glob(f"{topic}-0*"))
        for b, node in c.brokers.items()
        if b not in state.replicas
    }
    return DataPlaneRead(_partition(state), replicas, hwm, checkpoints, attempt, missing, elsewhere)


def acked_writes(results: list[ProduceResult]) -> AckedWrites:
    """Every write the producers had acknowledged (one partition: all of them go to 0)."""
    identified = tuple((o, v) for r in results for p, o, v in r.acked_records if p == 0)
    anonymous = sum(r.acked - len(r.acked_records) for r in results)
    return AckedWrites(identified, anonymous)


@dataclass
class Outcome:
    name: str
    ok: bool
    startup_seconds: float
    scenario_seconds: float
    dump_seconds: float
    dump: Path | None
    dump_bytes: int
    steps: list[str]
    final: str
    produced: dict[str, object]
    error: str | None = None
    data_plane_seconds: float = 0.0
    data_plane: dict[str, object] | None = None
    verdict: Verdict | None = None
    kafka_version: str = KAFKA_VERSION

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "ok": self.ok,
            "kafka_version": self.kafka_version,
            "startup_seconds": round(self.startup_seconds, 1),
            "scenario_seconds": round(self.scenario_seconds, 1),
            "dump_seconds": round(self.dump_seconds, 1),
            "data_plane_seconds": round(self.data_plane_seconds, 1),
            "dump": self.dump.name if self.dump else None,
            "dump_bytes": self.dump_bytes,
            "steps": self.steps,
            "final_partition_state": self.final,
            "produced": self.produced,
            "data_plane": self.data_plane,
            "error": self.error,
        }


def _counts(result: ProduceResult) -> str:
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(result.error_kinds.items()))
    text = f"{result.sent} sent, {result.acked} acknowledged, {result.errors} send errors"
    text += f" ({kinds})" if kinds else ""
    return text + ("" if result.complete else " (killed before it answered every send)")


def _verdict_line(verdict: Verdict) -> str:
    f = verdict.facts
    numbers = (
        f"leader {f.get('leader')} LEO {f.get('leader_leo')} HWM {f.get('leader_hwm')}, "
        f"ISR {f.get('isr')}, {f.get('acked')} acknowledged writes"
    )
    if verdict.ok:
        return f"data plane ok ({numbers}): all {len(verdict.clauses)} clauses hold"
    return f"data plane VIOLATED ({numbers}): " + "; ".join(str(v) for v in verdict.violations)


def run(
    scenario: Scenario,
    out_dir: Path,
    *,
    keep: bool = False,
    segments: bool = False,
    agent: Path | None = None,
    records: int = PRELOAD_RECORDS,
    rate: float = PRODUCE_RATE,
    version: str = KAFKA_VERSION,
) -> Outcome:
    steps: list[str] = []
    began = time.monotonic()

    def log(message: str) -> None:
        stamp = time.monotonic() - began
        steps.append(f"{stamp:6.1f}s {message}")
        print(f"  [{scenario.name} {stamp:6.1f}s] {message}", flush=True)

    topic = scenario.name.replace("_", "-")
    outcome = Outcome(scenario.name, False, 0.0, 0.0, 0.0, None, 0, steps, "", {})
    outcome.kafka_version = version
    events = out_dir / f"{scenario.name}.trace"
    if agent is not None:
        shutil.rmtree(events, ignore_errors=True)
    props = dict(scenario.broker_props)
    cluster = Cluster(
        version=version,
        log=log,
        keep=keep,
        agent=agent,
        events_dir=events,
        broker_props=props,
    )
    try:
        with cluster:
            outcome.startup_seconds = cluster.startup_seconds or 0.0
            steps.clear()
            started = time.monotonic()
            log(f"scenario {scenario.name}: {scenario.summary}")
            cluster.create_topic(topic, assignment=ASSIGNMENT)
            before = cluster.produce(topic, records)
            log(f"VerifiableProducer (acks=all) before the fault: {_counts(before)}")
            producer = cluster.start_producer(topic, rate)
            try:
                scenario.body(cluster, topic)
            finally:
                during = producer.stop()
                log(
                    f"VerifiableProducer (acks=all, {rate:g} records/s) during the "
                    f"fault: {_counts(during)}"
                )
            after = cluster.produce(topic, records)
            log(f"VerifiableProducer (acks=all) after the fault: {_counts(after)}")
            final = cluster.partition(topic)
            end = cluster.end_offset(topic)
            log(f"final {final}; high watermark {end}")
            outcome.scenario_seconds = time.monotonic() - started
            outcome.final = str(final)
            ledger = cluster.produced.get(topic, [])
            phases = (before, during, after)
            outcome.produced = {
                "before": before.as_json(),
                "during": during.as_json(),
                "after": after.as_json(),
                "in_scenario": [
                    r.as_json() for r in ledger if all(r is not phase for phase in phases)
                ],
                "acked": sum(r.acked for r in ledger),
                "acked_exact": all(r.complete for r in ledger),
                "high_watermark": end,
            }
            dump_began = time.monotonic()
            text = cluster.dump_metadata_log().replace(str(cluster.work_dir), "$WORK")
            outcome.dump_seconds = time.monotonic() - dump_began
            out_dir.mkdir(parents=True, exist_ok=True)
            outcome.dump = out_dir / f"{scenario.name}.txt"
            outcome.dump.write_text(text)
            outcome.dump_bytes = len(text.encode())
            if segments:
                cluster.copy_metadata_log(out_dir / f"{scenario.name}.segments")
            if agent is not None:
                write_trace(events, text, scenario, cluster.version)
            plane_began = time.monotonic()
            read = read_data_plane(cluster, topic, full_isr=scenario.ends_with_full_isr)
            acked = acked_writes(ledger)
            verdict = data_plane.check(read.partition, read.replicas, acked)
            outcome.data_plane_seconds = time.monotonic() - plane_began
            outcome.verdict = verdict
            outcome.data_plane = {
                **verdict.as_json(),
                "read": read.as_json(),
                "replicas": [data_plane.replica_json(r) for _, r in sorted(read.replicas.items())],
            }
            log(_verdict_line(verdict))
            outcome.ok = verdict.ok
            if not verdict.ok:
                outcome.error = f"data plane: {len(verdict.violations)} violation(s)"
    except Exception as error:  # report and go on with the next scenario
        outcome.error = f"{type(error).__name__}: {error}"
        log(f"FAILED: {outcome.error}")
    return outcome


def write_trace(directory: Path, metadata: str, scenario: Scenario, version: str) -> None:
    """Complete the agent's events into a trace directory for `kafkarep validate-trace`: the
    metadata log's dump and the settings the events do not carry (docs/trace-validation.md)."""
    (directory / "metadata.txt").write_text(metadata)
    lag = dict(scenario.broker_props).get("replica.lag.time.max.ms", REPLICA_LAG_TIME_MAX_MS)
    manifest = {
        "scenario": scenario.name,
        "kafka": ".".join(version.split(".")[:2]),
        "kafka_release": version,
        "min_insync_replicas": MIN_ISR,
        "replica_lag_time_max_ms": int(lag),
    }
    (directory / "trace.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through Cluster.__exit__, which kills the JVMs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.kraft.scenarios", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME", help="scenarios to run (all if none)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    parser.add_argument("--keep", action="store_true", help="keep the clusters' work dirs")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument(
        "--segments",
        action="store_true",
        help="also copy the metadata log files (segments, snapshots) to NAME.segments/",
    )
    parser.add_argument(
        "--agent",
        type=Path,
        default=None,
        metavar="JAR",
        help="run the brokers with the kafkarep agent; its trace goes to NAME.trace/",
    )
    parser.add_argument(
        "--records",
        type=int,
        default=PRELOAD_RECORDS,
        help=f"records produced before and after the fault (default {PRELOAD_RECORDS})",
    )
    parser.add_argument(
        "--kafka",
        default=KAFKA_VERSION,
        metavar="VERSION",
        help=f"the brokers' and controller's Kafka release (default {KAFKA_VERSION})",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=PRODUCE_RATE,
        help=f"records a second from the producer during the fault (default {PRODUCE_RATE:g})",
    )
    args = parser.parse_args(argv)
    if args.list:
        for s in SCENARIOS.values():
            print(f"{s.name:26} {s.summary}")
        return 0
    unknown = [n for n in args.names if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}")
    signal.signal(signal.SIGTERM, _on_sigterm)
    chosen = [SCENARIOS[n] for n in args.names] or list(SCENARIOS.values())
    outcomes = []
    for scenario in chosen:
        print(f"== {scenario.name}: {scenario.summary}", flush=True)
        outcome = run(
            scenario,
            args.out,
            keep=args.keep,
            segments=args.segments,
            agent=args.agent,
            records=args.records,
            rate=args.rate,
            version=args.kafka,
        )
        outcomes.append(outcome)
        print(
            f"== {scenario.name}: {'ok' if outcome.ok else 'FAILED'}; cluster start-up "
            f"{outcome.startup_seconds:.1f}s, scenario {outcome.scenario_seconds:.1f}s, dump "
            f"{outcome.dump_seconds:.1f}s, {outcome.dump_bytes} bytes, data plane "
            f"{outcome.data_plane_seconds:.1f}s",
            flush=True,
        )
    summary_path = args.out / "scenarios.json"
    previous: dict[str, object] = {}
    if summary_path.is_file():
        previous = {s["name"]: s for s in json.loads(summary_path.read_text())["scenarios"]}
    for outcome in outcomes:
        previous[outcome.name] = outcome.as_json()
    ordered = [previous[n] for n in SCENARIOS if n in previous]
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"kafka_version": args.kafka, "scenarios": ordered}
    summary_path.write_text(json.dumps(summary, indent=1) + "\n")
    print("\nscenario                   start-up  scenario  dump   bytes  data plane  result")
    for o in outcomes:
        print(
            f"{o.name:26} {o.startup_seconds:7.1f}s {o.scenario_seconds:8.1f}s "
            f"{o.dump_seconds:5.1f}s {o.dump_bytes:7d} {o.data_plane_seconds:9.1f}s  "
            f"{'ok' if o.ok else o.error}"
        )
        if o.verdict is not None:
            print(f"    {_verdict_line(o.verdict)}")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
