"""`kafkarep suite --prove`: each model's prove beside its check, in the table, the JUnit XML, the
HTML report and the summary JSON; a prove that does not meet the expectations exits 1, a model
prove does not encode is no failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkarep.cli.main import main
from tests.helpers import ROOT
from tests.test_suite import junit_cases

# small and fast, checked and proved: violated at depth 3 by BMC ([prove] depth = 3); the safety
# properties of a liveness model, proved by induction; a ZooKeeper-era model prove does not encode
HWM = ROOT / "models" / "mutations" / "hwm_below_min_isr.toml"
LIVENESS = ROOT / "models" / "liveness" / "elr_never_elected.toml"
ZOOKEEPER = ROOT / "models" / "zookeeper_unclean.toml"


def suite(tmp_path: Path, *args: str) -> int:
    reports = tmp_path / "reports"
    return main(["suite", "--prove", "--workers", "1", "--reports", str(reports), *args])


@pytest.mark.slow
def test_prove_verdicts_beside_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # short paths: each model's row on one line of the table
    models = Path("models")
    models.mkdir()
    for model in (HWM, LIVENESS, ZOOKEEPER):
        (models / model.name).write_text(model.read_text())
    capsys.readouterr()
    assert suite(Path("."), str(models)) == 0
    out = capsys.readouterr().out
    table = out[out.index("suite summary") :]
    assert "prove" in table.splitlines()[2]  # the column's header
    # the model column may wrap a path (".to" / "ml"): a row is found by its path's start
    rows = {line.split()[1]: line for line in table.splitlines() if "models/" in line}
    hwm = next(v for k, v in rows.items() if k.startswith("models/hwm_below_min_isr"))
    assert "met: 2 violated" in hwm
    live = next(v for k, v in rows.items() if k.startswith("models/elr_never_elected"))
    # under Kafka's makeLeader ("reset") both completeness proofs stop at apply_metadata, as the
    # model's [prove] notes say
    assert "met: 1 proved, 2 unknown" in live
    zk = next(v for k, v in rows.items() if k.startswith("models/zookeeper_unclean"))
    assert "not encoded" in zk

    reports = Path("reports")
    cases = junit_cases(reports / "junit.xml")
    by_model = {
        model.stem: {name: case for (s, name), case in cases.items() if s.endswith(model.stem)}
        for model in (HWM, LIVENESS, ZOOKEEPER)
    }
    hwm_cases = by_model[HWM.stem]
    assert {n for n in hwm_cases if n.startswith("prove")} == {
        "prove:leader_candidate_completeness",
        "prove:min_isr_commit",
    }
    for name in ("prove:leader_candidate_completeness", "prove:min_isr_commit"):
        case = hwm_cases[name]
        assert case.find("failure") is None and case.find("skipped") is None
        text = case.findtext("system-out") or ""
        assert "reproduce: kafkarep replay" in text and ".prove/" in text
        assert float(case.get("time", "0")) > 0
    assert "leader_completeness.committed_log" in hwm_cases  # the check's cases are still there
    live_cases = {n: c for n, c in by_model[LIVENESS.stem].items() if n.startswith("prove")}
    assert set(live_cases) == {
        "prove:leader_completeness",
        "prove:leader_candidate_completeness",
        "prove:min_isr_commit",
    }
    assert all(c.find("failure") is None for c in live_cases.values())
    assert live_cases["prove:min_isr_commit"].find("skipped") is None  # proved
    noted = live_cases["prove:leader_completeness"].find("skipped")  # unknown, as noted
    assert noted is not None and "unknown as noted" in noted.get("message", "")
    skipped = by_model[ZOOKEEPER.stem]["prove"].find("skipped")
    assert skipped is not None
    assert "prove does not encode this model" in skipped.get("message", "")

    document = json.loads((reports / "suite.json").read_text())
    by_file = {Path(m["model"]).name: m for m in document["models"]}
    assert by_file[HWM.name]["prove"]["outcome"] == "met"
    assert [r["status"] for r in by_file[HWM.name]["prove"]["results"]] == ["violated"] * 2
    assert by_file[ZOOKEEPER.name]["prove"]["outcome"] == "not encoded"
    page = (reports / "html" / "index.html").read_text()
    assert "<th>prove</th>" in page and "prove:min_isr_commit" in page


def test_a_prove_not_met_exits_1_and_fails_its_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check meets the expectations; prove does not: a note expects min_isr_commit unknown,
    and BMC finds it violated."""
    model = tmp_path / "noted.toml"
    note = 'unknown = { min_isr_commit = "min_isr_commit.hwm under fetch" }\n'
    model.write_text(HWM.read_text().replace("depth = 3\n", "depth = 3\n" + note))
    capsys.readouterr()
    assert suite(tmp_path, str(model)) == 1
    out = capsys.readouterr().out
    assert "NOT MET: 2 violated" in out
    assert "([prove] unknown: min_isr_commit.hwm under fetch) but violated: remove the note" in out
    cases = junit_cases(tmp_path / "reports" / "junit.xml")
    failed = {name for (_, name), case in cases.items() if case.find("failure") is not None}
    assert failed == {"prove:min_isr_commit"}
    failure = next(c for (_, n), c in cases.items() if n == "prove:min_isr_commit").find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith(
        "min_isr_commit is expected unknown ([prove] unknown: min_isr_commit.hwm under fetch) "
        "but violated"
    )
    document = json.loads((tmp_path / "reports" / "suite.json").read_text())
    assert document["suite"]["exit_code"] == 1
    [entry] = document["models"]
    assert entry["outcome"] == "met" and entry["prove"]["outcome"] == "not met"


@pytest.mark.slow
def test_a_slow_proof_is_skipped_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`[prove] slow = true`: the model is checked, its proof skipped (a skipped case, no
    failure); with --slow, or the file named, it is proved. A bad value is refused in one line."""
    models = tmp_path / "models"
    models.mkdir()
    slow = models / "slow_proof.toml"
    slow.write_text(HWM.read_text().replace("[prove]\n", "[prove]\nslow = true\n"))
    assert "slow = true" in slow.read_text()
    capsys.readouterr()
    assert suite(tmp_path, str(models)) == 0
    out = capsys.readouterr().out
    assert "prove skipped: slow ([prove] slow = true): run with --slow or name it" in out
    document = json.loads((tmp_path / "reports" / "suite.json").read_text())
    [entry] = document["models"]
    assert entry["outcome"] == "met" and entry["prove"]["outcome"] == "skipped"
    assert "results" not in entry["prove"]
    cases = junit_cases(tmp_path / "reports" / "junit.xml")
    case = next(c for (_, n), c in cases.items() if n == "prove")
    skipped = case.find("skipped")
    assert skipped is not None and "[prove] slow = true" in skipped.get("message", "")
    assert "leader_completeness.committed_log" in {n for _, n in cases}  # the check ran

    for asked in (["--slow", str(models)], [str(slow)]):
        assert suite(tmp_path, *asked) == 0
        document = json.loads((tmp_path / "reports" / "suite.json").read_text())
        [entry] = document["models"]
        assert entry["prove"]["outcome"] == "met"
        assert [r["status"] for r in entry["prove"]["results"]] == ["violated"] * 2

    slow.write_text(HWM.read_text().replace("[prove]\n", '[prove]\nslow = "yes"\n'))
    capsys.readouterr()
    assert suite(tmp_path, str(models)) == 2
    err = capsys.readouterr().err
    assert f"{slow}: [prove] slow must be true or false" in err


def test_a_prover_process_that_dies_is_that_models_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each model is proved in a process of its own: one that ends without an answer (killed,
    out of memory) is an error of that model (exit code 3), and the suite reports it and goes on."""
    import os

    from kafkarep.cli import suite_prove

    def dies(cfg: object, opts: object) -> None:
        os._exit(9)

    monkeypatch.setattr(suite_prove, "_prove", dies)
    capsys.readouterr()
    assert suite(tmp_path, str(HWM), str(LIVENESS)) == 3
    out = capsys.readouterr().out
    assert out.count("the prover's process ended with exit code 9") >= 2
    document = json.loads((tmp_path / "reports" / "suite.json").read_text())
    assert [m["prove"]["outcome"] for m in document["models"]] == ["error", "error"]
    assert [m["outcome"] for m in document["models"]] == ["met", "met"]
