"""Which followers outside the Maximal ISR the leader's HWM waits for, by release
(`[rules] hwm_waits_for_caught_up_followers`, `kafkarep/model/hwm.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkarep.model.config import ModelConfig, ModelError, load_model
from kafkarep.model.domain import CONCRETE
from kafkarep.model.hwm import hwm_offset
from kafkarep.model.metadata_cache import FENCED
from kafkarep.model.state import FollowerView, Replica, Role
from tests.helpers import reg

MODEL = """
[cluster]
brokers = 3
replicas = [1, 2, 3]
isr = [1, 2]
min_isr = 1
[rules]
metadata_version = "4.0"
"""


def _cfg(tmp_path: Path, waits: str | None) -> ModelConfig:
    text = MODEL + (f"hwm_waits_for_caught_up_followers = {waits}\n" if waits else "")
    path = tmp_path / "m.toml"
    path.write_text(text)
    return load_model(str(path))


def _leader(follower_3_epoch: int) -> Replica:
    """Leader 1 of ISR {1,2} holds two records, 2 has both; 3 is outside the ISR, caught up at
    offset 1, and its cache entry in the leader's metadata is `follower_3_epoch`."""
    return Replica(
        log=((1, 1), (1, 2)),
        role=Role.LEADER,
        view=reg([1, 2, 3], [1, 2], leader=1),
        maximal_isr=frozenset({1, 2}),
        followers=(FollowerView(), FollowerView(2, 1, True, True), FollowerView(1, 1, True, True)),
        eligible=(1, 1, follower_3_epoch),
    )


@pytest.mark.parametrize(
    ("waits", "eligible_3", "fenced_3"),
    [
        (None, 1, 2),  # the default: Kafka 3.6.0 and later
        ('"eligible"', 1, 2),
        ("true", 1, 2),  # the value "eligible" had before the option named the releases
        ('"caught-up"', 1, 1),  # 0.10.2.0 to 3.5.x: a fenced follower holds the HWM back too
        ('"none"', 2, 2),  # 0.10.1 and older: the ISR alone
        ("false", 2, 2),
    ],
)
def test_the_hwm_waits_for_the_followers_of_its_release(
    tmp_path: Path, waits: str | None, eligible_3: int, fenced_3: int
) -> None:
    cfg = _cfg(tmp_path, waits)
    for epoch, expected in ((1, eligible_3), (FENCED, fenced_3)):
        assert hwm_offset(CONCRETE, cfg, _leader(epoch), 1) == expected


def test_an_unknown_value_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match='must be "eligible", "caught-up", "none"'):
        _cfg(tmp_path, '"always"')
