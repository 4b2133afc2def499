"""Model files: every mistake is a one-line ModelError naming the key and the fix."""

from pathlib import Path

import pytest

from kafkarep.cli.main import main
from kafkarep.model.config import ModelError
from kafkarep.properties.model_files import load_model, parse_model

GOOD = {
    "cluster": {"brokers": 3, "replicas": [1, 2, 3], "isr": [1, 2], "min_isr": 2, "records": 1},
    "rules": {"metadata_version": "4.0", "elr": True},
    "faults": {"fences": 1},
    "expect": {"result": "holds"},
}


def variant(section: str, **values: object) -> dict:
    raw: dict = {k: dict(v) for k, v in GOOD.items()}  # type: ignore[call-overload]
    raw.setdefault(section, {}).update(values)
    return raw


def test_good_model() -> None:
    cfg = parse_model(GOOD)
    assert cfg.leader == 1 and cfg.options.elr_enabled and cfg.budget.fences == 1
    assert cfg.options.leader_epoch_bump_on_isr_shrink is False


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (variant("cluster", replicas=[1, 2, 7]), "unknown broker id 7"),
        (variant("cluster", isr=[1, 4]), "unknown broker id 4"),
        (variant("cluster", leader=3), "leader 3 is not in the isr"),
        (variant("cluster", colour="red"), "unknown key 'colour'"),
        (variant("faults", fences="one"), "fences must be an integer"),
        (variant("rules", metadata_version="9.9"), "metadata_version '9.9' is unknown"),
        (variant("rules", metadata_version="3.5"), "elr needs metadata_version 4.0"),
        (variant("rules", disable_guards=["no.such"]), "unknown guard 'no.such'"),
        (variant("expect", result="violates"), "needs [expect] violates"),
        (variant("expect", reached=["nope"]), "unknown property 'nope'"),
        ({"clusters": {}}, "unknown section [clusters]"),
        (variant("rules", truncation="lazy"), 'truncation must be "leader-epoch", "kip-101"'),
        (variant("rules", current_leader_epoch_in_fetch="no"), "must be true or false"),
        (variant("rules", epochs_ahead_answer="zombie"), 'must be "not-controller" or "fenced"'),
        (variant("rules", hwm_isr="isr"), 'hwm_isr must be "maximal" or "committed"'),
        (variant("rules", leader_counts_diverging_fetch="yes"), "must be true or false"),
        (variant("faults", min_isr_changes=-1), "min_isr_changes"),
    ],
)
def test_bad_models(raw: dict, message: str) -> None:
    with pytest.raises(ModelError, match=None) as error:
        parse_model(raw)
    assert message in str(error.value)


def test_cli_bad_model_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[cluster]\nreplicas = [1, 2, 9]\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.toml" in err and "unknown broker id 9" in err
    assert main(["check", str(tmp_path / "missing.toml")]) == 2
    assert "no such model file" in capsys.readouterr().err
    (tmp_path / "broken.toml").write_text("[cluster\n")
    assert main(["check", str(tmp_path / "broken.toml")]) == 2
    assert "malformed TOML" in capsys.readouterr().err


def test_every_bundled_model_loads() -> None:
    for path in sorted(Path("models").rglob("*.toml")):
        load_model(path)
