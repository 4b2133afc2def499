"""Every case in tests/data/conformance runs through the rules of every supported Kafka release,
and meets that release's expectation (Kafka's own answer, `kafkarep conform --oracle`)."""

import json
from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.kafka.releases import RELEASES
from kafkarep.oracle.conformance import check_case, expectation, load_cases
from tests.helpers import DATA

CASE_FILES = sorted((DATA / "conformance").glob("*.json"))
CASES = [(path.name, case) for path in CASE_FILES for case in load_cases(path)]


def test_cases_are_there() -> None:
    assert len(CASES) >= 86


@pytest.mark.parametrize(("file", "case"), CASES, ids=[f"{f}:{c['id']}" for f, c in CASES])
def test_case(file: str, case: dict) -> None:
    for release in RELEASES:
        assert check_case(case, release) == (), release


def test_cli_all_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", *map(str, CASE_FILES)]) == 0
    skipped = sum(expectation(case) is None for _, case in CASES)
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        f"conformance: {len(CASES) - skipped} passed, 0 failed "
        f"({skipped} not expressible in the release)"
    )


def test_the_releases_differ_where_kafka_changed() -> None:
    """Some cases have another expectation at another release (KAFKA-19522, KAFKA-19975, ...):
    the rules of one release fail the other's."""
    differing = [case for _, case in CASES if case.get("expect_by_release")]
    assert len(differing) >= 8
    old = next(c for _, c in CASES if c["id"] == "ra-add-only-waits-for-every-target-replica")
    assert check_case(old, "4.2") == () and check_case(old, "4.3") == ()
    mixed = dict(old, expect_by_release={})  # 4.3's expectation for every release
    assert check_case(mixed, "4.2") != ()


def test_cli_reports_a_failing_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = json.loads((DATA / "conformance" / "alter_partition.json").read_text())[0]
    case["expect"]["after"]["partition_epoch"] = 9
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps([case]))
    assert main(["conform", str(path)]) == 1
    out = capsys.readouterr().out
    assert "ap-shrink-isr" in out and "partition_epoch" in out
    assert out.splitlines()[-1] == "conformance: 0 passed, 1 failed"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such case file"),
        ("[{", "malformed JSON"),
        ('{"id": 1}', "expected a JSON array"),
        (
            '[{"id": "x", "before": {}, "action": {"type": "nope"}, "expect": {}}]',
            "[0].before.replicas: missing",
        ),
    ],
)
def test_cli_bad_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, problem: str
) -> None:
    path = tmp_path / "cases.json"
    if content is not None:
        path.write_text(content)
    assert main(["conform", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert str(path) in err and problem in err
