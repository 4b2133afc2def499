"""The makeLeader finding across releases (docs/mutations-and-findings.md, "Findings"): its
trace needs neither ELR nor a 4.1 controller, and Kafka's older brokers reach it a few steps
later. Each variant is the finding's model with the release's options; the shortest depth is
pinned so that a change in the rules that moves it is seen."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from kafkarep import properties
from kafkarep.engines.explorer import Explorer
from kafkarep.engines.results import Limits
from kafkarep.properties.model_files import parse_model
from tests.helpers import ROOT

FINDING = ROOT / "models" / "findings" / "make_leader_resets_pending_isr.toml"

# (rules the variant sets, the depth the violation is found at)
VARIANTS: dict[str, tuple[dict[str, Any], int]] = {
    "kafka 3.9, ELR on": ({"kafka_version": "3.9"}, 15),
    "kafka 4.0.0, ELR on": ({"kafka_version": "4.0.0"}, 15),
    "kafka 3.9, ELR off": (
        {"kafka_version": "3.9", "metadata_version": "3.9", "elr": False},
        15,
    ),
    "kafka 4.0.0, ELR off": ({"kafka_version": "4.0.0", "elr": False}, 15),
    "kafka 3.6's broker, ELR off": (
        {
            "elr": False,
            "metadata_version": "3.6",
            "hwm_requires_min_isr": False,
            "hwm_waits_for_caught_up_followers": "eligible",
        },
        17,
    ),
    "kafka 3.5's broker, ELR off": (
        {
            "elr": False,
            "metadata_version": "3.5",
            "hwm_requires_min_isr": False,
            "hwm_waits_for_caught_up_followers": "caught-up",
        },
        18,
    ),
}


def variant(rules: dict[str, Any]) -> Any:
    raw = tomllib.loads(FINDING.read_text())
    raw["rules"].update(rules)
    raw.pop("expect")
    raw.pop("prove")
    return parse_model(raw, str(FINDING))


@pytest.mark.slow
@pytest.mark.parametrize("name", VARIANTS)
def test_the_finding_at_other_releases(name: str) -> None:
    rules, depth = VARIANTS[name]
    result = Explorer(variant(rules), properties.ALL, Limits(max_depth=depth)).run()
    found = {n: d.depth for n, d in result.violations.items()}
    assert found.get("leader_candidate_completeness.isr") == depth, found
    assert min(found.values()) == depth  # nothing shallower
