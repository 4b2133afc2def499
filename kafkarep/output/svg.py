"""A counterexample as a picture: an SVG timeline, one row per step, one lane per broker.

Time runs down. The first column names the step (actor, action, outcome); then the controller's
lane (leader, leader and partition epochs, ISR, ELR, fenced brokers, requests in its inbox, and in
grey the ghost truth the properties judge: the True HWM and the acked writes); then one lane per
broker: status and role, its log as one cell per offset coloured by the leader epoch that wrote
it with HWM and LEO marks, its ISR/ELR membership in the controller's metadata, the partition view
it acts on, and what it has in flight. A field a step changed has a yellow background (the fields
are those the text table lists as changed, `steps.fields`), a lane the step changed an orange
border, the acting lane a dark one; the violating last row is framed red. Plain SVG: no script,
no external font or image.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import NamedTuple

from kafkarep.kafka.errors import Error
from kafkarep.kafka.metadata import LeaderRecoveryState
from kafkarep.model.replay import Step, Trace
from kafkarep.model.state import Broker, ClusterState, Role, Status
from kafkarep.output.steps import fields

FONT = 11
CHAR_W = 6.63  # advance of an 11px monospace glyph (DejaVu Sans Mono, Menlo, Consolas)
LINE_H = 18
PAD = 8
STEP_W = 230
LANE_W = 262
ROW_H = PAD * 2 + LINE_H * 5
LEGEND_H = 30
HEAD_H = 26
MARGIN = 10
CELL = 18  # one log offset

EPOCH_COLOURS = (
    "#1c7ed6",
    "#e8590c",
    "#2f9e44",
    "#ae3ec9",
    "#f08c00",
    "#0c8599",
    "#d6336c",
    "#5c940d",
)
LANE_TINTS = ("#e7f5ff", "#ebfbee", "#fff4e6", "#fff0f6", "#e3fafc", "#f8f0fc", "#fff9db")
CONTROLLER_TINT = "#f3f0ff"
ROLE_COLOURS = {Role.LEADER: "#f59f00", Role.FOLLOWER: "#1c7ed6", Role.NONE: "#adb5bd"}
STATUS_WORDS = {
    Status.RUNNING: "up",
    Status.SHUTTING_DOWN: "stopping",
    Status.OFFLINE_CLEAN: "down (clean)",
    Status.OFFLINE_UNCLEAN: "DOWN (unclean)",
}
ROLE_WORDS = {Role.LEADER: "LEADER", Role.FOLLOWER: "follower", Role.NONE: "-"}

STYLE = f"""
.kt text {{ font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: {FONT}px;
  fill: #212529; white-space: pre; }}
.kt .b {{ font-weight: bold; }}
.kt .h {{ font-size: 13px; font-weight: bold; }}
.kt .dim {{ fill: #868e96; }}
.kt .ghost {{ fill: #5f3dc4; font-style: italic; }}
.kt .bad {{ fill: #c92a2a; font-weight: bold; }}
.kt .w {{ fill: #ffffff; font-size: 10px; font-weight: bold; }}
.kt .chg {{ fill: #ffe066; }}
.kt .cell {{ stroke: #ced4da; stroke-width: 1; }}
.kt .changed {{ stroke: #f08c00; stroke-width: 2.5; }}
.kt .actor {{ stroke: #212529; stroke-width: 3; }}
.kt .violated {{ fill: none; stroke: #e03131; stroke-width: 3; }}
"""


class Segment(NamedTuple):
    text: str
    changed: bool = False
    style: str = ""


Line = list[Segment]


def _set(ids: frozenset[int]) -> str:
    return "{" + ",".join(map(str, sorted(ids))) + "}"


def epoch_colour(epoch: int) -> str:
    return EPOCH_COLOURS[(epoch - 1) % len(EPOCH_COLOURS)] if epoch > 0 else "#868e96"


class _Svg:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def rect(self, x: float, y: float, w: float, h: float, **attrs: object) -> None:
        extra = "".join(
            f' {k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in attrs.items()
        )
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"{extra}/>')

    def text(self, x: float, y: float, text: str, style: str = "", anchor: str = "") -> None:
        cls = f' class="{style}"' if style else ""
        anchor_attr = f' text-anchor="{anchor}"' if anchor else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}"{cls}{anchor_attr}>{escape(text)}</text>')

    def line(self, x: float, y: float, width: float, segments: Line) -> None:
        """Segments left to right, cut with an ellipsis at the width (the full line then shows
        as a tooltip); a changed segment gets a yellow background."""
        budget = int(width // CHAR_W)
        full = "".join(s.text for s in segments)
        cut = len(full) > budget
        if cut:
            self.add(f"<g><title>{escape(full)}</title>")
        used = 0
        for segment in segments:
            room = budget - used - (1 if cut else 0)
            if room <= 0:
                break
            text = segment.text if len(segment.text) <= room else segment.text[:room]
            if segment.changed and text.strip():
                self.rect(
                    x + used * CHAR_W - 1, y - FONT, len(text) * CHAR_W + 2, FONT + 4, class_="chg"
                )
            style = " ".join(filter(None, [segment.style, "b" if segment.changed else ""]))
            self.text(x + used * CHAR_W, y, text, style)
            used += len(text)
        if cut:
            self.text(x + used * CHAR_W, y, "…")
            self.add("</g>")


def trace_svg(
    trace: Trace,
    violated: Sequence[str] = (),
    witness: str | None = None,
    ident: str = "trace",
    loop: int | None = None,
) -> str:
    """The trace as one self-contained `<svg>` element; `ident` prefixes its element ids
    (`<ident>-lane-b1`, `<ident>-step-3`), unique when a page holds several pictures. A lasso
    (`loop`: the state its last step returns to) has its cycle's rows framed, and a line saying
    where it loops (`<ident>-loop`)."""
    cfg = trace.cfg
    states = [trace.initial, *(step.after for step in trace.steps)]
    flat = [fields(cfg, s) for s in states]
    brokers = cfg.broker_ids
    width = MARGIN * 2 + STEP_W + LANE_W * (1 + len(brokers))
    top = MARGIN + LEGEND_H + HEAD_H
    height = top + ROW_H * len(states) + MARGIN + (LINE_H * 2 if witness else 0)
    height += LINE_H * 2 if loop is not None else 0
    svg = _Svg()
    label = f"counterexample: {', '.join(violated) or 'trace'} in {len(trace.steps)} steps"
    svg.add(
        '<svg xmlns="http://www.w3.org/2000/svg" class="kt" xml:space="preserve" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        'role="img" '
        f'aria-label="{escape(label)}">'
    )
    svg.add(f"<title>{escape(label)}</title><style>{STYLE}</style>")
    svg.rect(0, 0, width, height, fill="#ffffff")
    _legend(svg, states)

    lanes = [("controller", CONTROLLER_TINT)] + [
        (f"broker {b}", LANE_TINTS[(b - 1) % len(LANE_TINTS)]) for b in brokers
    ]
    lane_x = [MARGIN + STEP_W + LANE_W * i for i in range(len(lanes))]
    body_h = ROW_H * len(states)
    svg.text(MARGIN + PAD, top - 8, "step", "h")
    for (title, tint), x in zip(lanes, lane_x, strict=True):
        lane = "controller" if title == "controller" else "b" + title.split()[1]
        svg.add(f'<g id="{ident}-lane-{lane}" class="lane">')
        svg.rect(x + 2, top - HEAD_H + 2, LANE_W - 4, body_h + HEAD_H - 2, fill=tint, rx=6)
        svg.text(x + PAD, top - 8, title, "h")
        svg.add("</g>")

    for row, state in enumerate(states):
        y = top + ROW_H * row
        step = trace.steps[row - 1] if row else None
        before = flat[row - 1] if row else flat[0]
        changed = {k for k in before.keys() | flat[row].keys() if before.get(k) != flat[row].get(k)}
        old = states[row - 1] if row else state
        svg.add(f'<g class="row" id="{ident}-step-{row}">')
        _step_cell(svg, MARGIN, y, row, step, len(changed))
        actor = step.action.actor if step else -1
        _cell(svg, lane_x[0], y, any(k.startswith("ctl.") for k in changed), actor == 0)
        x0 = lane_x[0] + PAD
        for n, line in enumerate(_controller_lines(cfg.options.elr_enabled, state, changed)):
            svg.line(x0, y + PAD + LINE_H * (n + 1) - 4, LANE_W - 2 * PAD, line)
        for i, b in enumerate(brokers):
            x = lane_x[i + 1]
            lane_changed = any(k.startswith(f"b{b}.") for k in changed) or _membership(
                old, b
            ) != _membership(state, b)
            broker = state.broker(b)
            _cell(svg, x, y, lane_changed, actor == b, offline=not broker.status.running)
            _broker(svg, x + PAD, y, b, broker, state, old, changed, elr=cfg.options.elr_enabled)
        if violated and row == len(states) - 1 and loop is None:
            svg.rect(MARGIN - 4, y + 1, width - 2 * MARGIN + 8, ROW_H - 2, class_="violated", rx=6)
        if loop is not None and row >= loop:
            svg.rect(MARGIN - 4, y + 1, width - 2 * MARGIN + 8, ROW_H - 2, class_="violated", rx=6)
        svg.add("</g>")
    if loop is not None:
        y = top + body_h + LINE_H + 2 + (LINE_H * 2 if witness else 0)
        last = len(trace.steps)
        where = (
            f"the behaviour stays in state {loop} forever"
            if loop == last
            else f"step {last} returns to state {loop}: steps {loop + 1}-{last} repeat forever"
        )
        svg.add(f'<g id="{ident}-loop">')
        svg.line(
            MARGIN + PAD, y, width - 2 * MARGIN, [Segment("lasso: ", False, "bad"), Segment(where)]
        )
        svg.add("</g>")
    if witness:
        y = top + body_h + LINE_H + 2
        svg.line(
            MARGIN + PAD,
            y,
            width - 2 * MARGIN,
            [Segment("violated: ", False, "bad"), Segment(witness)],
        )
    svg.add("</svg>")
    return "\n".join(svg.parts)


def _legend(svg: _Svg, states: list[ClusterState]) -> None:
    epochs = sorted(
        {
            epoch
            for s in states
            for b in s.brokers
            if b.replica is not None
            for epoch, _ in b.replica.log
        }
    )
    x: float = MARGIN + PAD
    y = MARGIN + 18
    svg.text(x, y, "log cells by leader epoch:", "dim")
    x += 27 * CHAR_W
    if not epochs:
        svg.text(x, y, "(no records)", "dim")
        x += 13 * CHAR_W
    for epoch in epochs:
        svg.rect(x, y - 12, CELL - 2, 15, fill=epoch_colour(epoch), rx=2)
        svg.text(x + CELL + 2, y, f"e{epoch}")
        x += CELL + 2 + (len(str(epoch)) + 2) * CHAR_W
    x += 10
    svg.rect(x, y - 14, 2.5, 19, fill="#c92a2a")
    svg.text(x + 6, y, "HWM")
    x += 6 + 4 * CHAR_W
    svg.rect(x, y - 14, 2.5, 19, fill="#212529")
    svg.text(x + 6, y, "LEO")
    x += 6 + 6 * CHAR_W
    svg.rect(x - 1, y - FONT, 7 * CHAR_W + 2, FONT + 4, class_="chg")
    svg.text(x, y, "changed", "b")
    x += 9 * CHAR_W
    svg.rect(x, y - 13, 30, 17, fill="none", class_="changed", rx=4)
    svg.text(x + 36, y, "lane changed")
    x += 36 + 14 * CHAR_W
    svg.rect(x, y - 13, 30, 17, fill="none", class_="actor", rx=4)
    svg.text(x + 36, y, "acting")


def _cell(svg: _Svg, x: float, y: float, changed: bool, actor: bool, offline: bool = False) -> None:
    cls = "cell actor" if actor else "cell changed" if changed else "cell"
    fill = "#dee2e6" if offline else "#ffffff"
    svg.rect(x + 6, y + 3, LANE_W - 12, ROW_H - 6, class_=cls, fill=fill, fill_opacity=0.72, rx=5)


def _step_cell(svg: _Svg, x: float, y: float, row: int, step: Step | None, changes: int) -> None:
    inner = STEP_W - 2 * PAD
    base = y + PAD + LINE_H - 4
    if step is None:
        svg.text(x + PAD, base, "0  initial state", "h")
        return
    svg.line(
        x + PAD,
        base,
        inner,
        [Segment(f"{row}  ", False, "h"), Segment(step.action.actor_name(), False, "h")],
    )
    svg.line(x + PAD, base + LINE_H, inner, [Segment(step.action.describe(), False, "b")])
    words = step.outcome
    chunk = int(inner // CHAR_W)
    svg.line(x + PAD, base + 2 * LINE_H, inner, [Segment(words[:chunk])])
    if len(words) > chunk:
        svg.line(x + PAD, base + 3 * LINE_H, inner, [Segment(words[chunk:])])
    svg.text(x + PAD, base + 4 * LINE_H, f"{changes} field(s) changed", "dim")


def _controller_lines(elr: bool, state: ClusterState, changed: set[str]) -> list[Line]:
    p = state.partition
    registry = state.controller.brokers
    fenced = frozenset(b for b, r in registry.entries if r.fenced)
    shutting = frozenset(b for b, r in registry.entries if r.in_controlled_shutdown)
    leader = str(p.leader) if p.has_leader else "none"
    lines: list[Line] = [
        [
            Segment("leader "),
            Segment(leader, "ctl.leader" in changed, "b"),
            Segment(" LE "),
            Segment(str(p.leader_epoch), "ctl.leader_epoch" in changed),
            Segment(" PE "),
            Segment(str(p.partition_epoch), "ctl.partition_epoch" in changed),
        ]
    ]
    if p.leader_recovery_state == LeaderRecoveryState.RECOVERING or "ctl.recovery" in changed:
        lines[0].append(Segment(" " + p.leader_recovery_state.name, "ctl.recovery" in changed))
    isr: Line = [Segment("ISR "), Segment(_set(p.isr), "ctl.isr" in changed)]
    if elr:
        isr += [Segment(" ELR "), Segment(_set(p.elr), "ctl.elr" in changed)]
        if p.last_known_elr or "ctl.last_known_elr" in changed:
            isr += [
                Segment(" LKE "),
                Segment(_set(p.last_known_elr), "ctl.last_known_elr" in changed),
            ]
    lines.append(isr)
    status: Line = [Segment("fenced "), Segment(_set(fenced), "ctl.fenced" in changed)]
    if shutting or "ctl.shutting_down" in changed:
        status += [Segment(" stopping "), Segment(_set(shutting), "ctl.shutting_down" in changed)]
    epochs = " ".join(f"{b}:{r.epoch}" for b, r in registry.entries)
    status += [Segment(" epochs "), Segment(epochs, "ctl.broker_epochs" in changed)]
    lines.append(status)
    meta: Line = [
        Segment("replicas "),
        Segment("[" + ",".join(map(str, p.replicas)) + "]", "ctl.replicas" in changed),
    ]
    if p.adding or "ctl.adding" in changed:
        meta.append(Segment(f" +{_set(p.adding)}", "ctl.adding" in changed))
    if p.removing or "ctl.removing" in changed:
        meta.append(Segment(f" -{_set(p.removing)}", "ctl.removing" in changed))
    for b, request in enumerate(state.controller.ap_requests, 1):
        key = f"ctl.inbox.b{b}"
        if request is not None or key in changed:
            text = f" AP b{b}" + (f" isr{_set(frozenset(request.isr_ids))}" if request else " done")
            meta.append(Segment(text, key in changed))
    lines.append(meta)
    ghost = state.ghost
    lines.append(
        [
            Segment("truth: HWM ", False, "ghost"),
            Segment(str(ghost.true_hwm), "true_hwm" in changed, "ghost"),
            Segment(" acked ", False, "ghost"),
            Segment(_set(ghost.pos_acked), "acked" in changed, "ghost"),
        ]
    )
    return lines


def _membership(state: ClusterState, broker: int) -> tuple[bool, bool, bool, bool]:
    p = state.partition
    fenced = any(b == broker and r.fenced for b, r in state.controller.brokers.entries)
    return broker in p.isr, broker in p.elr, broker in p.last_known_elr, fenced


def _broker(
    svg: _Svg,
    x: float,
    y: float,
    b: int,
    broker: Broker,
    state: ClusterState,
    old: ClusterState,
    changed: set[str],
    elr: bool,
) -> None:
    inner = LANE_W - 2 * PAD
    key = f"b{b}."
    base = y + PAD + LINE_H - 4
    replica = broker.replica
    role = replica.role if replica is not None else Role.NONE
    svg.add(f'<circle cx="{x + 5:.1f}" cy="{base - 4:.1f}" r="5" fill="{ROLE_COLOURS[role]}"/>')
    status_style = "" if broker.status.running else "bad"
    svg.line(
        x + 14,
        base,
        inner - 14,
        [
            Segment(STATUS_WORDS[broker.status], key + "status" in changed, status_style),
            Segment(" "),
            Segment(ROLE_WORDS[role], key + "role" in changed, "b" if role == Role.LEADER else ""),
            Segment(" broker epoch "),
            Segment(str(broker.epoch), key + "epoch" in changed),
        ],
    )
    _log(svg, x, base + LINE_H, broker, key + "log" in changed, key + "hwm" in changed)
    _badges(svg, x, base + 2 * LINE_H, _membership(old, b), _membership(state, b), elr)
    view = replica.view if replica is not None else None
    seen = (
        f"L{view.leader if view.has_leader else '-'} LE{view.leader_epoch} "
        f"PE{view.partition_epoch} ISR{_set(view.isr)}"
        if view is not None
        else "none"
    )
    view_line = [Segment("view "), Segment(seen, key + "view" in changed)]
    if not broker.initialised:
        view_line.append(Segment(" (catching up)", key + "metadata_pe" in changed, "dim"))
    svg.line(x, base + 3 * LINE_H, inner, view_line)
    svg.line(x, base + 4 * LINE_H, inner, _in_flight(broker, key, changed))


def _log(
    svg: _Svg, x: float, y: float, broker: Broker, log_changed: bool, hwm_changed: bool
) -> None:
    replica = broker.replica
    log = replica.log if replica is not None else ()
    hwm = replica.hwm if replica is not None else 0
    top = y - 13
    if log_changed:
        svg.rect(x - 3, top - 3, max(len(log), 1) * CELL + 6, CELL + 4, class_="chg", rx=3)
    if not log:
        svg.rect(
            x, top, CELL - 2, CELL - 2, fill="#ffffff", stroke="#adb5bd", stroke_dasharray="3 2"
        )
    for offset, (epoch, value) in enumerate(log):
        cx = x + offset * CELL
        svg.add(f"<g><title>offset {offset}: value {value}, leader epoch {epoch}</title>")
        svg.rect(cx, top, CELL - 2, CELL - 2, fill=epoch_colour(epoch), rx=2)
        svg.text(cx + (CELL - 2) / 2, top + 12, str(value), "w", anchor="middle")
        svg.add("</g>")
    if replica is not None:
        svg.rect(x + hwm * CELL - 2, top - 4, 2.5, CELL + 6, fill="#c92a2a")
        svg.rect(x + len(log) * CELL - 2, top - 1, 2.5, CELL, fill="#212529")
    tx = x + max(len(log), 1) * CELL + 8
    text = [
        Segment("LEO "),
        Segment(str(len(log)), log_changed),
        Segment(" HWM "),
        Segment(str(hwm), hwm_changed),
    ]
    svg.line(tx, y, LANE_W - 2 * PAD - (tx - x), text)


BADGES = (("ISR", "#2f9e44"), ("ELR", "#7048e8"), ("LKE", "#9775fa"), ("fenced", "#e03131"))


def _badges(
    svg: _Svg,
    x: float,
    y: float,
    before: tuple[bool, ...],
    after: tuple[bool, ...],
    elr: bool,
) -> None:
    """ISR/ELR/LKE/fenced in the controller's metadata: filled when a member, struck through
    when it just left, outlined orange when the step changed it."""
    drawn = False
    for (name, colour), was, now in zip(BADGES, before, after, strict=True):
        if name in ("ELR", "LKE") and not elr:
            continue
        if not now and not was:
            continue
        w = len(name) * CHAR_W + 10
        stroke = "#f08c00" if was != now else colour
        width = 2.5 if was != now else 1
        fill = colour if now else "#ffffff"
        svg.rect(x, y - 12, w, 16, fill=fill, stroke=stroke, stroke_width=width, rx=8)
        svg.text(x + 5, y, name, "w" if now else "dim")
        if not now:
            svg.rect(x + 3, y - 5, w - 6, 1.5, fill="#868e96")
        x += w + 6
        drawn = True
    if not drawn:
        svg.text(x, y, "not in ISR", "dim")


def _in_flight(broker: Broker, key: str, changed: set[str]) -> Line:
    replica = broker.replica
    out: Line = []
    if replica is not None and replica.role == Role.LEADER:
        out.append(Segment(f"MaxISR{_set(replica.maximal_isr)}", key + "maximal_isr" in changed))
        out.append(Segment(f" LESO {replica.leso}", key + "leso" in changed))
        if replica.pending is not None or key + "pending" in changed:
            pending = replica.pending
            text = f" AP isr{_set(pending.isr)}" if pending is not None else " AP answered"
            out.append(Segment(text, key + "pending" in changed))
    response = broker.fetch_response
    if response is not None or key + "fetch_response" in changed:
        if response is None:
            text = "fetch: consumed"
        elif response.diverging:
            text = f"fetch<-{response.leader}: diverging e{response.diverging[0]}"
        else:
            text = f"fetch<-{response.leader}: {len(response.entries)} rec hwm {response.hwm}"
        out.append(Segment((" " if out else "") + text, key + "fetch_response" in changed))
    answer = broker.ap_response
    if answer is not None or key + "ap_response" in changed:
        if answer is None:
            text = "AP answer consumed"
        elif answer.error == Error.NONE:
            text = f"AP answer: ok isr{_set(answer.isr)}"
        else:
            text = f"AP answer: {answer.error.value}"
        out.append(Segment((" " if out else "") + text, key + "ap_response" in changed))
    if not out:
        out.append(Segment("nothing in flight" if broker.status.running else "", False, "dim"))
    return out
