"""The reader of the instrumented broker's events (kafkarep/broker_trace/events.py) on small
hand-written files, no Kafka: a broker's two runs read in order, and each kind of malformed line
reported in one line naming its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkarep.broker_trace.events import (
    EventsError,
    kind_counts,
    of_kind,
    parse_events,
    read_events,
    runs,
)


def line(
    seq: int, kind: str, topic: str | None = None, partition: int | None = None, **more: object
) -> str:
    header = {"seq": seq, "ts_ms": 1_000 + seq, "node": 3, "event": kind}
    return json.dumps({**header, "topic": topic, "partition": partition, **more})


# Broker 3: started, made follower of t-0, appended from the leader; killed; restarted, its
# log recovered, and it appended again.
BROKER_3 = (
    "\n".join(
        [
            line(1, "agent_start", pid=100),
            line(2, "log_recovery", "t", 0, had_clean_shutdown=True, log_end_offset=0),
            line(3, "make_follower", "t", 0, leader=1, leader_epoch=0, isr=[], returned=True),
            line(4, "append_follower", "t", 0, first_offset=0, last_offset=99, offsets=100),
            line(5, "metadata_applied", offset=42, epoch=1, manifest="LOG_DELTA"),
            line(1, "agent_start", pid=200),
            line(2, "log_recovery", "t", 0, had_clean_shutdown=False, log_end_offset=100),
            line(3, "append_follower", "t", 0, first_offset=100, last_offset=199, offsets=100),
        ]
    )
    + "\n"
)


def test_a_broker_s_two_runs_are_read_in_order(tmp_path: Path) -> None:
    path = tmp_path / "events-3.jsonl"
    path.write_text(BROKER_3)
    events = read_events(path)
    assert [e.line for e in events] == list(range(1, 9))
    assert {e.node for e in events} == {3}
    first, second = runs(events)
    assert [e.seq for e in first] == [1, 2, 3, 4, 5] and [e.seq for e in second] == [1, 2, 3]
    (recovered,) = of_kind(second, "log_recovery")
    assert recovered.about("t") and not recovered.about("t", 1)
    assert recovered["had_clean_shutdown"] is False and recovered["log_end_offset"] == 100
    (metadata,) = of_kind(events, "metadata_applied")
    assert metadata.topic is None and metadata.partition is None and metadata["offset"] == 42
    assert metadata.get("no such field") is None
    assert kind_counts(events) == {
        "agent_start": 2,
        "log_recovery": 2,
        "append_follower": 2,
        "make_follower": 1,
        "metadata_applied": 1,
    }


def test_a_file_without_its_start_is_one_run() -> None:
    """A file whose first line is not agent_start (its head cut off) is still one run."""
    events = parse_events("\n".join(BROKER_3.splitlines()[2:5]))
    assert [len(r) for r in runs(events)] == [3]
    assert parse_events("") == [] and runs([]) == []


def malformed(text: str) -> str:
    with pytest.raises(EventsError) as caught:
        parse_events(text, "events-3.jsonl")
    message = str(caught.value)
    assert "\n" not in message
    return message


GOOD = BROKER_3.splitlines()


@pytest.mark.parametrize(
    ("lines", "reported"),
    [
        # a line cut short (a write torn in the middle)
        ([*GOOD[:3], GOOD[3][:40], *GOOD[4:]], "events-3.jsonl:4: not JSON"),
        (["[1, 2]"], "events-3.jsonl:1: not a JSON object but list"),
        ([GOOD[0], ""], "events-3.jsonl:2: not JSON"),
        ([GOOD[0], line(2, "truncate").replace('"seq": 2, ', "")], "events-3.jsonl:2: no 'seq'"),
        (
            [line(1, "agent_start", "t").replace('"partition": null', '"partition": "0"')],
            "events-3.jsonl:1: 'partition' is '0'",
        ),
        ([line(1, "agent_start").replace('"node": 3', '"node": true')], "'node' is True"),
        (
            [GOOD[0], line(2, "x").replace('"node": 3', '"node": 2')],
            ":2: node 2 in a file of node 3",
        ),
        (GOOD[:3] + [line(3, "hwm_moved")], "events-3.jsonl:4: seq 3 after 3 (line 3)"),
        (GOOD[:3] + [line(2, "agent_start")], "events-3.jsonl:4: agent_start with seq 2, not 1"),
    ],
)
def test_a_malformed_line_is_reported_with_its_file_and_line(
    lines: list[str], reported: str
) -> None:
    assert reported in malformed("\n".join(lines) + "\n")


def test_read_events_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events-1.jsonl"
    path.write_text(GOOD[0] + "\n{not json\n")
    with pytest.raises(EventsError, match=rf"^{path}:2: not JSON"):
        read_events(path)
