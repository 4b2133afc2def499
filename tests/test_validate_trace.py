"""`kafkarep validate-trace` on traces that real Kafka 4.1.1 brokers recorded with the kafkarep
agent in the real-cluster scenarios (tests/data/broker-traces/, recorded by `python -m
tests.kraft.scenarios --agent JAR --records 30`): every event is a step the model allows; a guard
of the model switched off, or an event changed to one Kafka would not take, is reported on the
event it is about, with the guard or rule."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from kafkarep.broker_trace.validate import validate
from kafkarep.cli.main import main
from tests.helpers import ROOT

TRACES = ROOT / "tests" / "data" / "broker-traces"
# Each recording's events, pinned: a change in what the checker explains shows here.
EVENTS = {
    "acks1_sigterm_leader": 2429,
    "kill9_follower": 1424,
    "kill9_leader": 1690,
    "kill9_leader_diverging": 2203,
    "lagging_follower": 902,
    "reassign": 1657,
}
KIP_841 = ("isr_join.alive_in_leader_metadata", "isr_join.broker_epoch_in_leader_metadata")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["validate-trace", *args])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip().splitlines()


def guards_off(*names: str) -> list[str]:
    return [arg for name in names for arg in ("--disable-guard", name)]


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_every_recorded_event_is_explained(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(capsys, str(TRACES / name))
    assert lines == [f"validate-trace: {EVENTS[name]:,} events explained, 0 not"]
    assert code == 0


def test_every_recording_is_tested_and_every_event_kind_occurs() -> None:
    assert {p.name for p in TRACES.iterdir() if p.is_dir()} == set(EVENTS)
    kinds = set()
    for path in TRACES.glob("*/events-*.jsonl.gz"):
        kinds |= {
            json.loads(line)["event"]
            for line in gzip.decompress(path.read_bytes()).split(b"\n")
            if line
        }
    assert kinds == {
        "agent_start", "instrumented", "log_recovery", "metadata_applied", "make_leader",
        "make_follower", "append_leader", "fetch_handled", "hwm_moved", "isr_expand_proposed",
        "isr_shrink_proposed", "alter_partition_answer", "fetch_response", "append_follower",
        "truncate", "shutdown",
    }  # fmt: skip


def test_a_follower_proposed_from_behind_the_hwm_is_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Seeded: without `isr_join.fetch_offset_at_hwm` the model's leader proposes broker 3 for
    the ISR at its first fetch after its pause (offset 69, the HWM at 128); Kafka waited until
    it had caught up."""
    code, lines = run(
        capsys, str(TRACES / "lagging_follower"), *guards_off("isr_join.fetch_offset_at_hwm")
    )
    assert code == 1
    assert lines[0].startswith(
        "events-1.jsonl.gz:260: fetch_handled lagging-follower-0 (broker 3 at offset 69): the "
        "model proposes it for the ISR here"
    )
    assert "hwm 128" in lines[0]
    assert lines[-1] == "validate-trace: 900 events explained, 2 not"


def test_the_hwm_waiting_for_a_fenced_follower_is_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Seeded: without KIP-841's checks the model's HWM waits for broker 3, killed and fenced
    but caught up within the lag time, where Kafka's moved on over the ISR [1, 2]."""
    code, lines = run(capsys, str(TRACES / "kill9_follower"), *guards_off(*KIP_841))
    assert code == 1
    assert lines[0].startswith(
        "events-1.jsonl.gz:45: hwm_moved kill9-follower-0 (30 -> 41): the model's HWM stops at 30"
    )
    assert all("hwm_moved" in line for line in lines[:-1])


def edited(tmp_path: Path, trace: str, file: str, line: int, **fields: object) -> Path:
    """A copy of a recorded trace with one event's fields changed."""
    copy = tmp_path / trace
    shutil.copytree(TRACES / trace, copy)
    path = copy / file
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    event = json.loads(lines[line - 1])
    event.update(fields)
    lines[line - 1] = json.dumps(event)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return copy


def only_problem(trace: Path) -> str:
    result = validate(trace)
    assert len(result.unexplained) == 1, [u.line() for u in result.unexplained]
    return result.unexplained[0].line()


def test_a_follower_taking_a_high_watermark_beyond_its_log_is_found(tmp_path: Path) -> None:
    """Broker 2's response at offset 70 (line 46) taken with the HWM of 72, past its log."""
    trace = edited(tmp_path, "kill9_follower", "events-2.jsonl.gz", 46, high_watermark=72)
    problem = only_problem(trace)
    assert problem.startswith(
        "events-2.jsonl.gz:46: fetch_response kill9-follower-0 (fetched at 70"
    )
    assert "the model's follower ends at 71 with HWM 70" in problem


def test_a_response_of_another_leader_epoch_is_found(tmp_path: Path) -> None:
    """KAFKA-18991's check: a response fetched in leader epoch 1 taken in epoch 0."""
    trace = edited(tmp_path, "kill9_follower", "events-2.jsonl.gz", 46, fetch_leader_epoch=1)
    assert "guard fetch_response.leader_epoch_matches drops this response" in only_problem(trace)


def test_a_high_watermark_past_every_follower_is_found(tmp_path: Path) -> None:
    """The leader's HWM moved to 79 (line 103) recorded as 90, past what any follower fetched."""
    trace = edited(tmp_path, "kill9_follower", "events-1.jsonl.gz", 103, new_hwm=90)
    problem = only_problem(trace)
    assert problem.startswith("events-1.jsonl.gz:103: hwm_moved kill9-follower-0 (78 -> 90): ")
    assert "the model's HWM stops at 79" in problem


def test_a_truncation_past_the_divergence_is_found(tmp_path: Path) -> None:
    """The old leader, restarted, truncated its two unreplicated records to 54 on the new
    leader's diverging epoch (epoch 0 ends at 54): recorded as 53, the model's follower cuts at
    54 (KIP-279's search)."""
    trace = edited(tmp_path, "kill9_leader_diverging", "events-1.jsonl.gz", 135, offset=53)
    problem = only_problem(trace)
    assert problem.startswith("events-1.jsonl.gz:135: truncate t-0 (to 53): the model's follower ")
    assert "truncates to 54 (epoch 0 ends at 54)" in problem


def test_writes_and_hwm_below_min_isr_are_found(tmp_path: Path) -> None:
    """The topic's MinISR recorded as 3 in the metadata log: every acks=all write taken, and
    every HWM move, while broker 3 was out of the ISR are what the model refuses."""
    copy = tmp_path / "trace"
    shutil.copytree(TRACES / "kill9_follower", copy)
    log = (copy / "metadata.txt").read_text()
    config = '"resourceType":2,"resourceName":"kill9-follower","name":"min.insync.replicas"'
    assert log.count(config + ',"value":"2"') == 1
    (copy / "metadata.txt").write_text(
        log.replace(config + ',"value":"2"', config + ',"value":"3"')
    )
    problems = [u.line() for u in validate(copy).unexplained]
    writes = [p for p in problems if "append_leader" in p]
    assert writes and all("is below MinISR 3" in p for p in writes)
    moves = [p for p in problems if "hwm_moved" in p]
    assert moves and all("guard hwm.isr_at_min_isr" in p for p in moves)
    assert len(writes) + len(moves) == len(problems)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "trace: not a directory"),
        ("empty", "trace: no events-<broker>.jsonl (or .jsonl.gz) files"),
        ("not_json", "events-2.jsonl:3: not JSON"),
        ("not_gzip", "events-2.jsonl.gz: not gzip"),
        ("bad_manifest", "trace.json: not JSON"),
        ("bad_min_isr", "trace.json: min_insync_replicas is 'two', not a count"),
        ("no_metadata", "trace: no metadata.txt"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    trace = tmp_path / "trace"
    if setup != "missing":
        trace.mkdir()
    if setup not in ("missing", "empty"):
        for file in (TRACES / "kill9_follower").iterdir():
            shutil.copyfile(file, trace / file.name)
    if setup == "not_json":
        text = gzip.decompress((trace / "events-2.jsonl.gz").read_bytes()).decode()
        lines = text.splitlines()
        lines[2] = lines[2][:40]
        (trace / "events-2.jsonl.gz").unlink()
        (trace / "events-2.jsonl").write_text("\n".join(lines) + "\n")
    elif setup == "not_gzip":
        (trace / "events-2.jsonl.gz").write_text("{}\n")
    elif setup == "bad_manifest":
        (trace / "trace.json").write_text("{")
    elif setup == "bad_min_isr":
        (trace / "trace.json").write_text('{"min_insync_replicas": "two"}')
    elif setup == "no_metadata":
        (trace / "metadata.txt").unlink()
    code, lines = run(capsys, str(trace))
    assert code == 2
    assert len(lines) == 1 and message in lines[0], lines


def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(TRACES / "kill9_follower")
    for args in (["--kafka", "9.9"], ["--disable-guard", "isr_join.nothing"], ["--min-isr", "-1"]):
        code, lines = run(capsys, trace, *args)
        assert code == 2 and len(lines) == 1, (args, lines)


def doc_runs() -> list[tuple[list[str], list[str]]]:
    """Each `$ kafkarep validate-trace ...` of docs/trace-validation.md's text blocks, with the
    lines the doc shows for it (`...` elides)."""
    runs: list[tuple[list[str], list[str]]] = []
    for block in (ROOT / "docs" / "trace-validation.md").read_text().split("```text\n")[1:]:
        lines = block.split("```")[0].splitlines()
        if lines and lines[0].startswith("$ kafkarep validate-trace "):
            shown = [line for line in lines[1:] if line != "..."]
            runs.append((lines[0].split()[3:], shown))
    return runs


def test_the_doc_s_runs_print_what_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    runs = doc_runs()
    assert len(runs) == 2
    for args, shown in runs:
        _, lines = run(capsys, *args)
        assert [line for line in lines if line in shown] == shown, args
