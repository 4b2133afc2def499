"""The step table: a counterexample a person can read, showing only what changed.

Each state is flattened into named fields (`ctl.isr`, `b2.hwm`, `true_hwm`, ...); a step shows the
actor, the action, its outcome (`model/replay.py`) and the fields that changed, old -> new. The
initial state is printed in full once. A lasso (a liveness counterexample) marks the steps of its
cycle with `↻` and says which state the last step returns to.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kafkarep.kafka.errors import Error
from kafkarep.model.config import ModelConfig
from kafkarep.model.metadata_cache import FENCED, alive_epoch
from kafkarep.model.replay import Trace
from kafkarep.model.state import ClusterState, Log, Role


def _set(ids: frozenset[int]) -> str:
    return "{" + ",".join(map(str, sorted(ids))) + "}"


def _log(log: Log) -> str:
    return "[" + " ".join(f"{value}@e{epoch}" for epoch, value in log) + "]"


def fields(cfg: ModelConfig, state: ClusterState) -> dict[str, str]:
    """The state as named, printable fields."""
    p = state.partition
    out = {
        "ctl.replicas": "[" + ",".join(map(str, p.replicas)) + "]",
        "ctl.leader": str(p.leader),
        "ctl.leader_epoch": str(p.leader_epoch),
        "ctl.partition_epoch": str(p.partition_epoch),
        "ctl.isr": _set(p.isr),
    }
    if cfg.options.elr_enabled:
        out["ctl.elr"] = _set(p.elr)
        out["ctl.last_known_elr"] = _set(p.last_known_elr)
    if p.adding or p.removing or cfg.targets:
        out["ctl.adding"] = _set(p.adding)
        out["ctl.removing"] = _set(p.removing)
    out["ctl.recovery"] = p.leader_recovery_state.name
    changes_min_isr = cfg.budget.min_isr_changes > 0
    if changes_min_isr:
        out["ctl.min_isr"] = str(state.controller.min_isr_now)
    registry = state.controller.brokers
    out["ctl.fenced"] = _set(frozenset(b for b, r in registry.entries if r.fenced))
    out["ctl.shutting_down"] = _set(
        frozenset(b for b, r in registry.entries if r.in_controlled_shutdown)
    )
    out["ctl.broker_epochs"] = " ".join(f"{b}:{r.epoch}" for b, r in registry.entries)
    if state.controller.lag:
        out["ctl.decides_from_pe"] = str(state.controller.decides_from.partition_epoch)
    for b, request in enumerate(state.controller.ap_requests, 1):
        if request is not None:
            out[f"ctl.inbox.b{b}"] = (
                f"AlterPartition isr={_set(frozenset(request.isr_ids))} "
                f"pe={request.partition_epoch}"
            )
    for b, broker in enumerate(state.brokers, 1):
        prefix = f"b{b}."
        out[prefix + "status"] = broker.status.name
        out[prefix + "epoch"] = str(broker.epoch)
        applied = broker.applied_epoch
        out[prefix + "metadata_pe"] = str(applied) + (
            "" if broker.initialised else " (catching up)"
        )
        r = broker.replica
        if r is None:
            continue
        out[prefix + "role"] = r.role.name
        out[prefix + "log"] = _log(r.log)
        out[prefix + "hwm"] = str(r.hwm)
        if r.view is not None:
            out[prefix + "view"] = (
                f"leader {r.view.leader} le {r.view.leader_epoch} pe {r.view.partition_epoch} "
                f"isr {_set(r.view.isr)}"
            )
        if r.role == Role.LEADER:
            out[prefix + "maximal_isr"] = _set(r.maximal_isr)
            out[prefix + "leso"] = str(r.leso)
            out[prefix + "followers"] = " ".join(
                f"{f}:{v.leo if v.leo >= 0 else '?'}{'*' if v.fetched_this_epoch else ''}"
                f"{'+' if v.caught_up else ''}"
                for f, v in enumerate(r.followers, 1)
                if f != b and f in r.view.replicas  # type: ignore[union-attr]
            )
            out[prefix + "cache"] = " ".join(
                f"{f}:{_eligibility(entry)}" for f, entry in enumerate(r.eligible, 1) if f != b
            )
            if changes_min_isr:
                out[prefix + "min_isr"] = str(r.min_isr)
            if r.pending is not None:
                out[prefix + "pending"] = (
                    f"isr {_set(r.pending.isr)} from pe {r.pending.partition_epoch}"
                )
        if broker.fetch_response is not None:
            f = broker.fetch_response
            body = (
                f"diverging e{f.diverging[0]}@{f.diverging[1]}" if f.diverging else _log(f.entries)
            )
            out[prefix + "fetch_response"] = (
                f"from {f.leader} le {f.leader_epoch} {body} hwm {f.hwm}"
            )
        if broker.delayed_fetch is not None:
            d = broker.delayed_fetch
            out[prefix + "delayed_fetch"] = (
                f"to {d.leader} le {d.leader_epoch} offset {d.fetch_offset} "
                f"broker epoch {d.broker_epoch}"
            )
        if broker.ap_response is not None:
            a = broker.ap_response
            out[prefix + "ap_response"] = (
                a.error.value
                if a.error != Error.NONE
                else f"ok isr {_set(a.isr)} pe {a.partition_epoch}"
            )
    g = state.ghost
    out["true_hwm"] = str(g.true_hwm)
    out["acked"] = _set(g.pos_acked)
    out["nacked"] = _set(g.neg_acked)
    for name, value in state.budget._asdict().items():
        out[f"budget.{name}"] = str(value)
    return out


def _eligibility(entry: int) -> str:
    """A leader's cache entry for a broker (model/metadata_cache.py): its alive broker epoch,
    `fenced`, or `shutdown@epoch`."""
    if entry >= 0:
        return str(entry)
    return "fenced" if entry == FENCED else f"shutdown@{alive_epoch(entry)}"


def changes(cfg: ModelConfig, before: ClusterState, after: ClusterState) -> list[str]:
    old, new = fields(cfg, before), fields(cfg, after)
    out = []
    for key in sorted(old.keys() | new.keys(), key=_field_order):
        if old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key, '-')} -> {new.get(key, '-')}")
    return out


def _field_order(key: str) -> tuple[int, str]:
    rank = (
        0
        if key.startswith("ctl.")
        else 1
        if key.startswith("b") and not key.startswith("budget")
        else 2
    )
    return rank, key


def render(
    trace: Trace,
    title: str,
    witness: str | None = None,
    console: Console | None = None,
    loop: int | None = None,
) -> None:
    console = console or Console(width=160)
    cfg = trace.cfg
    initial = fields(cfg, trace.initial)
    console.print(f"[bold]{title}[/bold]")
    console.print(
        "initial state: "
        + "; ".join(f"{k}={v}" for k, v in initial.items() if not k.startswith("budget."))
    )
    table = Table(show_lines=True)
    for column in ("step", "actor", "action", "outcome", "changed (old -> new)"):
        table.add_column(column, overflow="fold")
    for number, step in enumerate(trace.steps, 1):
        table.add_row(
            f"{number} ↻" if loop is not None and number > loop else str(number),
            step.action.actor_name(),
            step.action.describe(),
            step.outcome,
            "\n".join(changes(cfg, step.before, step.after)),
        )
    console.print(table)
    if loop is not None and loop == len(trace.steps):
        console.print(f"loop: the behaviour stays in state {loop} forever (no fair step enabled)")
    elif loop is not None:
        console.print(
            f"loop: step {len(trace.steps)} returns to state {loop}; steps {loop + 1}-"
            f"{len(trace.steps)} (↻) repeat forever"
        )
    if witness:
        console.print(f"[bold red]violated:[/bold red] {witness}")
