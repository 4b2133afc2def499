"""Small builders for rule tests."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkarep.cli.main import main
from kafkarep.common.exit_codes import BAD_INPUT
from kafkarep.kafka.metadata import (
    BrokerRegistration,
    BrokerRegistry,
    ClusterMetadata,
    LeaderRecoveryState,
    PartitionRegistration,
    RuleOptions,
    TopicConfig,
    options_for_version,
)
from kafkarep.model.actions import successors
from kafkarep.model.config import ModelConfig
from kafkarep.model.initial import initial_state
from kafkarep.model.state import ClusterState
from kafkarep.properties.model_files import parse_model

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def prove(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`kafkarep prove --quiet ARGS` with its reports and summary in tmp_path: the exit code and
    the summary's first model."""
    summary = tmp_path / "prove.json"
    code = main(["prove", "--quiet", "--reports", str(tmp_path), "--json", str(summary), *args])
    return code, json.loads(summary.read_text())["models"][0]


def reg(
    replicas: tuple[int, ...] | list[int],
    isr: set[int] | list[int],
    leader: int,
    leader_epoch: int = 0,
    partition_epoch: int = 0,
    elr: set[int] | list[int] = (),  # type: ignore[assignment]
    last_known_elr: set[int] | list[int] = (),  # type: ignore[assignment]
    adding: set[int] | list[int] = (),  # type: ignore[assignment]
    removing: set[int] | list[int] = (),  # type: ignore[assignment]
    recovering: bool = False,
) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=tuple(replicas),
        isr=frozenset(isr),
        leader=leader,
        leader_epoch=leader_epoch,
        partition_epoch=partition_epoch,
        elr=frozenset(elr),
        last_known_elr=frozenset(last_known_elr),
        adding=frozenset(adding),
        removing=frozenset(removing),
        leader_recovery_state=(
            LeaderRecoveryState.RECOVERING if recovering else LeaderRecoveryState.RECOVERED
        ),
    )


def brokers(
    ids: range | list[int] = range(5),
    fenced: tuple[int, ...] = (),
    shutting_down: tuple[int, ...] = (),
    unregistered: tuple[int, ...] = (),
) -> BrokerRegistry:
    """Brokers with epoch 100 + id, as in ReplicationControlManagerTest."""
    return BrokerRegistry.of(
        {
            b: BrokerRegistration(
                registered=b not in unregistered,
                fenced=b in fenced,
                in_controlled_shutdown=b in shutting_down,
                epoch=100 + b,
            )
            for b in ids
        }
    )


def cluster(
    partition: PartitionRegistration,
    registry: BrokerRegistry | None = None,
    min_isr: int = 1,
    unclean: bool = False,
    release: str | None = None,
    **options: object,
) -> ClusterMetadata:
    """The metadata of one partition; the rule options of the newest release, or of `release`
    (metadata version 4.0), with `options` replaced."""
    base = RuleOptions() if release is None else options_for_version("4.0", False, release)
    return ClusterMetadata(
        partition,
        registry if registry is not None else brokers(),
        TopicConfig(min_isr=min_isr, unclean_leader_election=unclean),
        base._replace(**options),  # type: ignore[arg-type]
    )


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line of a command that exits 2 (bad input)."""
    capsys.readouterr()
    assert main(list(argv)) == BAD_INPUT
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def reachable(
    cfg: ModelConfig, walks: int, length: int, seed: int, levels: int = 3
) -> Iterator[ClusterState]:
    """States of the plain (unreduced) rules: the first levels breadth-first, then random walks
    that go deep, where responses go stale and brokers restart."""
    rng = random.Random(seed)
    start = initial_state(cfg)
    level = [start]
    for _ in range(levels):
        yield from level
        level = [t for s in level for _, t in successors(cfg, s)]
    for _ in range(walks):
        state = start
        for _ in range(length):
            options = list(successors(cfg, state))
            if not options:
                break
            _, state = rng.choice(options)
            yield state


def three_brokers(faults: dict[str, int], records: int = 1, **rules: Any) -> ModelConfig:
    """Brokers 1 to 3, all in the ISR under leader 1, MinISR 1: the shape the step-by-step
    tests drive by hand."""
    return parse_model(
        {
            "cluster": {
                "brokers": 3,
                "replicas": [1, 2, 3],
                "isr": [1, 2, 3],
                "leader": 1,
                "min_isr": 1,
                "records": records,
            },
            "rules": rules,
            "faults": faults,
        }
    )


def step(
    cfg: ModelConfig, state: ClusterState, name: str, actor: int, arg: Any = None
) -> ClusterState:
    """The successor by the named step (and argument, if given), which must be enabled."""
    for action, after in successors(cfg, state):
        if action.name == name and action.actor == actor and (arg is None or action.arg == arg):
            return after
    shown = ", ".join(f"{a.describe()}@{a.actor}" for a, _ in successors(cfg, state))
    raise AssertionError(f"{name} by {actor} is not enabled; enabled: {shown}")
