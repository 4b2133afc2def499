"""A trace taken step by step on a real cluster (`kafkarep reproduce`): each step driven
(`steps.DRIVERS`), the fields it changed in the model compared with the cluster's records
(`projection`), a step that is not ready deferred past one that commutes with it (`order`), and
the violated clause checked on the cluster at the end (`verdicts`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from kafkarep.model.actions import Action
from kafkarep.model.config import ModelConfig
from kafkarep.model.replay import Trace
from kafkarep.model.state import ClusterState
from kafkarep.realcluster.cluster import Cluster
from kafkarep.reproduce import order, setup, steps
from kafkarep.reproduce.projection import changed, differences, model_view
from kafkarep.reproduce.recorded import Recorded
from kafkarep.reproduce.verdicts import VERDICTS

CHECK_SECONDS = 30.0  # how long the cluster's records may take to show a step's effect


class Row(NamedTuple):
    number: int  # the step's number in the trace
    who: str
    step: str
    reached: bool
    kafka: str  # what Kafka did, or why it did not take the step


class Reproduction(NamedTuple):
    rows: list[Row]
    clause: str
    witness: str | None  # the clause's violation on the cluster; None: not reached


class CannotReproduce(Exception):
    """The trace asks for what the driver cannot do: one line saying what."""


def label(action: Action) -> tuple[str, str]:
    who = "controller" if action.actor == 0 else f"broker {action.actor}"
    arg = "" if action.arg is None else f"({action.arg})"
    return who, f"{action.name}{arg}"


def check_drivable(cfg: ModelConfig, trace: Trace, clause: str) -> None:
    """Refuse, before any cluster starts, a trace the driver cannot take."""
    if clause not in VERDICTS:
        raise CannotReproduce(
            f"no check on a real cluster for {clause}; there is for {', '.join(sorted(VERDICTS))}"
        )
    undriven = sorted({s.action.name for s in trace.steps} - set(steps.DRIVERS))
    if undriven:
        raise CannotReproduce(
            f"no driver for the step(s) {', '.join(undriven)}; the driver takes "
            f"{', '.join(sorted(steps.DRIVERS))}"
        )
    try:
        setup.check_initial(cfg, trace.initial)
    except setup.CannotSetUp as error:
        raise CannotReproduce(f"the initial state: {error}") from None


def reproduce(
    cfg: ModelConfig,
    trace: Trace,
    clause: str,
    *,
    version: str,
    agent: Path,
    scratch: Path,
    show: Callable[[Row], None],
    log: Callable[[str], None],
) -> Reproduction:
    gate_dir = scratch / "gate"
    with Cluster(
        version=version,
        agent=agent,
        events_dir=scratch / "events",
        gate_dir=gate_dir,
        broker_props=setup.BROKER_PROPS,
        log=log,
    ) as cluster:
        recorded = setup.set_up(cluster, gate_dir, cfg, trace.initial)
        driving = steps.Driving(cluster, gate_dir, recorded, acks=-1 if cfg.acks == "all" else 1)
        rows = _take(cfg, trace, driving, show)
        reached = all(row.reached for row in rows)
        witness = VERDICTS[clause](recorded) if reached else None
        for thread in driving.producers:
            thread.join(timeout=0)
    return Reproduction(rows, clause, witness)


def _take(
    cfg: ModelConfig, trace: Trace, driving: steps.Driving, show: Callable[[Row], None]
) -> list[Row]:
    states = [trace.initial] + [s.after for s in trace.steps[:-1]]
    queue = order.pending_steps(states, [s.action for s in trace.steps])
    swapped: set[tuple[int, int]] = set()
    state = trace.initial
    rows: list[Row] = []
    while queue:
        step = queue[0]
        taken = order.enabled(cfg, state, step)
        if taken is None:
            raise CannotReproduce(f"step {step.number} is not enabled in the order taken")
        action, after = taken
        who, name = label(action)
        try:
            did = steps.DRIVERS[action.name](driving, action, state, after)
        except steps.NotReady as why:
            if (
                len(queue) > 1
                and (step.number, queue[1].number) not in swapped
                and order.may_go_first(cfg, state, step, queue[1])
            ):
                swapped |= {(step.number, queue[1].number), (queue[1].number, step.number)}
                queue[0], queue[1] = queue[1], queue[0]
                continue
            rows.append(Row(step.number, who, name, False, f"Kafka did not take this step: {why}"))
            show(rows[-1])
            return rows
        except steps.NotTaken as why:
            rows.append(Row(step.number, who, name, False, f"Kafka did not take this step: {why}"))
            show(rows[-1])
            return rows
        wrong = _compare(cfg, driving.recorded, state, after)
        if wrong:
            did = f"Kafka did not take this step: {did}, but {'; '.join(wrong)}"
        rows.append(Row(step.number, who, name, not wrong, did if wrong else f"reached: {did}"))
        show(rows[-1])
        if wrong:
            return rows
        state = after
        queue.pop(0)
    return rows


def _compare(
    cfg: ModelConfig, recorded: Recorded, before: ClusterState, after: ClusterState
) -> list[str]:
    """What of the step's changes the cluster's records lack, after waiting for them."""
    expected = changed(model_view(cfg, before), model_view(cfg, after))
    controller = any(k.startswith("controller.") for k in expected)
    deadline = time.monotonic() + CHECK_SECONDS
    while True:
        wrong = differences(expected, recorded.view(controller=controller))
        if not wrong or time.monotonic() > deadline:
            return wrong
        time.sleep(1.0)
