"""A patched Kafka controller as the oracle (`kafkarep kafka-patch`, `Oracle(kafka_classes=...,
kafka_jar=...)`): the release's source is extracted, a seeded edit of it compiles into a classes
directory, and the oracle on those classes answers a conformance case as the edit says. Bad input
is one line and exit 2 (or one `OracleError`). Needs Java and Maven; the tests say so and skip
where they are missing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.oracle import harness
from kafkarep.oracle.conformance import load_cases
from tests.helpers import DATA

MISSING = harness.missing() or (None if shutil.which("javac") else "javac is not installed")
needs_java = pytest.mark.skipif(MISSING is not None, reason=f"no oracle: {MISSING}")

RELEASE = "4.1.0"
BUILDER = "org.apache.kafka.controller.PartitionChangeBuilder"
# KAFKA-19522 (4.1.0): the last known leader is elected only if acceptable. The seeded edit skips
# that check, so a fenced last known leader is elected as 4.0 did.
GUARD = "if (!isAcceptableLeader.test(partition.lastKnownElr[0])) {"
SKIPPED = "if (false && !isAcceptableLeader.test(partition.lastKnownElr[0])) {"
CASE = "release-fenced-last-known-leader-builder"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("kafkarep kafka-patch: error: ")
    return err[0]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PartitionChangeBuilder.java of the release, as `--source` writes it."""
    out = tmp_path_factory.mktemp("sources")
    assert main(["kafka-patch", "--source", BUILDER, "--kafka", RELEASE, "--out", str(out)]) == 0
    return out / "PartitionChangeBuilder.java"


@needs_java
def test_source_writes_the_release_source(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = source.read_text()
    assert "public class PartitionChangeBuilder" in text
    assert text.count(GUARD) == 1
    # never over an edited copy
    out = str(source.parent)
    assert (
        main(
            ["kafka-patch", "--source", "PartitionChangeBuilder", "--kafka", RELEASE, "--out", out]
        )
        == 2
    )
    assert "exists" in one_error_line(capsys)


@needs_java
def test_a_seeded_edit_changes_kafkas_answer(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = tmp_path / "PartitionChangeBuilder.java"
    edited.write_text(source.read_text().replace(GUARD, SKIPPED))
    classes = tmp_path / "classes"
    assert main(["kafka-patch", str(edited), "--kafka", RELEASE, "--out", str(classes)]) == 0
    class_file = "org/apache/kafka/controller/PartitionChangeBuilder.class"
    assert (classes / class_file).is_file()
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == f"kafka-patch: 1 source compiled into {classes} ({class_file})"

    case = next(c for c in load_cases(DATA / "conformance" / "releases.json") if c["id"] == CASE)
    with harness.Oracle(RELEASE) as kafka:
        assert harness.answer(kafka.ask(case)) == {"outcome": "unchanged", "error": None}
    with harness.Oracle(RELEASE, kafka_classes=classes) as patched:
        assert patched.label == f"Kafka {RELEASE} with classes from {classes}"
        got = harness.answer(patched.ask(case))
    assert got is not None and got["outcome"] == "changed"
    assert got["after"]["leader"] == 1 and got["after"]["leader_recovery_state"] == "RECOVERING"


@needs_java
def test_a_kafka_metadata_jar_replaces_the_releases(tmp_path: Path) -> None:
    """The release's own jar, copied: the same answer, through another classpath."""
    jar = tmp_path / "kafka-metadata-branch.jar"
    shutil.copy(_release_jar("kafka-metadata"), jar)
    case = next(c for c in load_cases(DATA / "conformance" / "releases.json") if c["id"] == CASE)
    with harness.Oracle(RELEASE, kafka_jar=jar) as kafka:
        assert kafka.label == f"kafka-metadata jar {jar}"
        assert harness.answer(kafka.ask(case)) == {"outcome": "unchanged", "error": None}
    run = harness.runner(RELEASE, kafka_jar=jar)
    classpath = (run.parent / "classpath.txt").read_text().strip().split(os.pathsep)
    assert str(jar.resolve()) in classpath
    assert not any(Path(e).name == f"kafka-metadata-{RELEASE}.jar" for e in classpath)


@needs_java
def test_a_source_that_does_not_compile(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "PartitionChangeBuilder.java"
    broken.write_text(source.read_text().replace(GUARD, GUARD + " int"))
    out = tmp_path / "classes"
    assert main(["kafka-patch", str(broken), "--kafka", RELEASE, "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert f"{broken} does not compile: {broken}:" in line and ": error: " in line
    assert not out.exists()


@needs_java
def test_a_jar_of_another_artifact_is_refused() -> None:
    clients = _release_jar("kafka-clients")
    with pytest.raises(harness.OracleError) as refused:
        harness.Oracle(RELEASE, kafka_jar=clients)
    assert str(refused.value) == (
        f"{clients} is not a kafka-metadata jar: it has no "
        "org/apache/kafka/controller/PartitionChangeBuilder.class"
    )


def test_bad_files_and_releases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not Java\n")
    for argv, says in [
        ([str(tmp_path / "missing.java")], "missing.java does not exist"),
        ([str(notes)], "notes.txt is not a Java source (.java)"),
        ([str(tmp_path)], "is not a file"),
        ([], "no FILE.java to compile"),
    ]:
        assert main(["kafka-patch", *argv, "--kafka", RELEASE]) == 2
        assert says in one_error_line(capsys)
    assert main(["kafka-patch", str(notes), "--kafka", "9.9"]) == 2
    assert "--kafka: unknown kafka_version '9.9'" in one_error_line(capsys)


def test_bad_patches_are_one_oracle_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    not_a_jar = tmp_path / "kafka-metadata.jar"
    not_a_jar.write_text("text\n")
    for jar, classes, says in [
        (tmp_path / "gone.jar", None, f"kafka-metadata jar {tmp_path}/gone.jar does not exist"),
        (not_a_jar, None, f"{not_a_jar} is not a kafka-metadata jar: it is not a jar"),
        (None, tmp_path / "gone", f"classes directory {tmp_path}/gone does not exist"),
        (None, empty, f"classes directory {empty} has no .class file"),
    ]:
        with pytest.raises(harness.OracleError) as refused:
            harness.runner(RELEASE, kafka_jar=jar, kafka_classes=classes)
        assert says in str(refused.value)
        assert "\n" not in str(refused.value)


def test_the_label_says_which_controller_answers() -> None:
    jar, classes = Path("kafka-metadata-4.2.0-SNAPSHOT.jar"), Path("patched")
    assert harness.kafka_source_label("4.1.0") == "Kafka 4.1.0's classes"
    assert (
        harness.kafka_source_label("4.1", None, classes) == "Kafka 4.1.2 with classes from patched"
    )
    assert harness.kafka_source_label("4.1.0", jar) == f"kafka-metadata jar {jar}"
    assert harness.kafka_source_label("4.1.0", jar, classes) == (
        f"kafka-metadata jar {jar} with classes from patched"
    )


def _release_jar(artifact: str) -> Path:
    """A jar of the release's runtime classpath (in Maven's local repository)."""
    run = harness.runner(RELEASE)
    entries = (run.parent / "classpath.txt").read_text().strip().split(os.pathsep)
    return next(Path(e) for e in entries if Path(e).name == f"{artifact}-{RELEASE}.jar")
