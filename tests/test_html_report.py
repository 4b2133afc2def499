"""The HTML report and its trace pictures: self-contained, one lane per broker with what each
step changed highlighted, and (when chromium is installed) loaded in a real headless browser
with no console error, no network request and the lanes visibly drawn in the screenshot.

Set KAFKAREP_UPDATE_DOCS=1 to write the screenshot of the Last Replica Standing picture to
docs/trace-picture.png.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import select
import shutil
import struct
import subprocess
import time
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafkarep.cli.main import main
from kafkarep.model.replay import replay_path
from kafkarep.output.svg import CONTROLLER_TINT, LANE_TINTS, epoch_colour, trace_svg
from kafkarep.properties.model_files import load_model
from tests.helpers import ROOT

LRS = ROOT / "models" / "history" / "v35_last_replica_standing.toml"
SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite of the Last Replica Standing model and a copy that expects it to hold."""
    root = tmp_path_factory.mktemp("report")
    models = root / "models"
    models.mkdir()
    text = LRS.read_text()
    (models / "lrs.toml").write_text(text)
    flipped = re.sub(r"(?m)^violates = .*$", "", text.replace('"violates"', '"holds"'))
    (models / "flipped.toml").write_text(flipped + "\n[check]\nmax_depth = 7\n")
    code = main(["suite", "--workers", "1", "--reports", str(root / "reports"), str(models)])
    assert code == 1  # the flipped copy
    return root / "reports" / "html"


def lrs_svg() -> ET.Element:
    cfg = load_model(LRS)
    path = _lrs_path()
    return ET.fromstring(trace_svg(replay_path(cfg, path), ["leader_completeness.committed_log"]))


def _lrs_path() -> tuple[int, ...]:
    from kafkarep import properties
    from kafkarep.engines.explorer import Explorer
    from kafkarep.engines.results import Limits

    cfg = load_model(LRS)
    found = Explorer(cfg, properties.ALL, Limits(max_depth=7)).run().violations
    return found["leader_completeness.committed_log"].path


def texts(node: ET.Element) -> str:
    return " ".join("".join(t.itertext()) for t in node.iter(f"{SVG}text"))


def test_picture_has_a_lane_per_broker_and_highlights_changes() -> None:
    svg = lrs_svg()
    lanes = [g.get("id") for g in svg.iter(f"{SVG}g") if g.get("class") == "lane"]
    assert lanes == ["trace-lane-controller", "trace-lane-b1", "trace-lane-b2", "trace-lane-b3"]
    rows = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "row"]
    assert len(rows) == 8  # the initial state and 7 steps
    highlighted = [
        len([r for r in row.iter(f"{SVG}rect") if r.get("class") == "chg"]) for row in rows
    ]
    assert highlighted[0] == 0 and all(highlighted[1:]), highlighted
    # The story of the Last Replica Standing, as drawn: the leader writes in epoch 1 (a log
    # cell of epoch 1's colour), broker 1 goes down unclean, loses its log, and is elected.
    first = rows[1]
    assert any(r.get("fill") == epoch_colour(1) for r in first.iter(f"{SVG}rect"))
    assert "crash_lossy" in texts(rows[4]) and "DOWN (unclean)" in texts(rows[4])
    assert "unfence(1)" in texts(rows[7])
    assert any(r.get("class") == "violated" for r in rows[7].iter(f"{SVG}rect"))
    assert not any(r.get("class") == "violated" for r in rows[6].iter(f"{SVG}rect"))
    # The acting lane is outlined: the controller at step 2 (fence), broker 1 at step 4.
    actors = [
        [r for r in row.iter(f"{SVG}rect") if "actor" in (r.get("class") or "").split()]
        for row in rows
    ]
    assert [len(a) for a in actors] == [0, 1, 1, 1, 1, 1, 1, 1]


def test_report_is_self_contained(report: Path) -> None:
    page = (report / "index.html").read_text()
    assert "<script" not in page.lower()
    outside = re.findall(r"(?:src|href)\s*=\s*['\"]([^'\"#][^'\"]*)", page)
    for link in outside:
        assert link.startswith("data:") or not re.match(r"[a-z]+:", link), link
        if not link.startswith("data:"):
            assert (report / link).exists(), link  # the SVG and ITF files it links
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", page)
    assert "EXPECTATIONS NOT MET" in page and "expectations met" in page
    assert page.count("<svg") == 4  # two counterexamples in each model
    for file in (report / "svg").rglob("*.svg"):
        ET.parse(file)  # well-formed standalone SVG


# --- a real browser -----------------------------------------------------------------------------


class Browser:
    """Headless chromium driven over the DevTools protocol on a pipe (fds 3 and 4): no
    websocket, no driver, no Python dependency."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        answer: dict[str, Any] = json.loads(message)
        return answer

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive(timeout)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def wait_for(self, event: str, timeout: float = 30) -> None:
        if any(e.get("method") == event for e in self.events):
            return
        while True:
            answer = self._receive(timeout)
            self.events.append(answer)
            if answer.get("method") == event:
                return

    def drain(self, seconds: float) -> None:
        with_deadline = time.monotonic() + seconds
        while (left := with_deadline - time.monotonic()) > 0:
            try:
                self.events.append(self._receive(left))
            except TimeoutError:
                return

    def close(self) -> None:
        with contextlib.suppress(TimeoutError, EOFError, RuntimeError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    session = Browser(CHROMIUM, tmp_path / "profile")
    try:
        target = session.call("Target.createTarget", url="about:blank")["targetId"]
        session.session = session.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        yield session
    finally:
        session.close()


def decode_png(data: bytes) -> np.ndarray:
    """RGB(A) pixels of an 8-bit, non-interlaced PNG, as an (height, width, channels) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0 and colour in (2, 6), (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    raw = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.int64)
    previous = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum per channel
            row = line.reshape(width, bpp).cumsum(axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            row = (line + previous) % 256
        else:  # Average, Paeth: byte by byte
            values, above = line.tolist(), previous.tolist()
            for i in range(stride):
                left = values[i - bpp] if i >= bpp else 0
                if kind == 3:
                    values[i] = (values[i] + (left + above[i]) // 2) % 256
                else:
                    corner = above[i - bpp] if i >= bpp else 0
                    p = left + above[i] - corner
                    pa, pb, pc = abs(p - left), abs(p - above[i]), abs(p - corner)
                    guess = left if pa <= pb and pa <= pc else above[i] if pb <= pc else corner
                    values[i] = (values[i] + guess) % 256
            row = np.array(values, dtype=np.int64)
        out[y] = row
        previous = row
    return out.reshape(height, width, bpp).astype(np.uint8)


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def count(pixels: np.ndarray, colour: str) -> int:
    return int(np.all(pixels[:, :, :3] == np.array(rgb(colour)), axis=2).sum())


FIGURE = """JSON.stringify((() => {
  const svg = [...document.querySelectorAll('figure svg')]
    .find(s => s.getAttribute('aria-label').includes('leader_completeness.committed_log'));
  svg.scrollIntoView();
  const box = svg.getBoundingClientRect();
  const lanes = [...svg.querySelectorAll('g.lane')].map(g => {
    const r = g.getBoundingClientRect();
    return {id: g.id, x: r.left - box.left, y: r.top - box.top, w: r.width, h: r.height};
  });
  return {x: box.left + window.scrollX, y: box.top + window.scrollY, w: box.width,
          h: box.height, lanes, scripts: document.scripts.length,
          title: document.title};
})())"""


def test_report_in_headless_chromium(browser: Browser, report: Path, tmp_path: Path) -> None:
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.call(f"{domain}.enable")
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        width=1400,
        height=1000,
        deviceScaleFactor=1,
        mobile=False,
    )
    browser.call("Page.navigate", url=(report / "index.html").resolve().as_uri())
    browser.wait_for("Page.loadEventFired")
    browser.drain(0.5)
    figure = json.loads(browser.call("Runtime.evaluate", expression=FIGURE)["result"]["value"])
    assert figure["scripts"] == 0 and figure["title"] == "kafkarep suite report"

    problems = [
        e["params"]
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert not problems, problems
    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests

    shot = browser.call(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={
            "x": figure["x"],
            "y": figure["y"],
            "width": figure["w"],
            "height": figure["h"],
            "scale": 1,
        },
    )
    png = base64.b64decode(shot["data"])
    (tmp_path / "trace-picture.png").write_bytes(png)
    if os.environ.get("KAFKAREP_UPDATE_DOCS"):
        (ROOT / "docs").mkdir(exist_ok=True)
        (ROOT / "docs" / "trace-picture.png").write_bytes(png)
    pixels = decode_png(png)
    assert abs(pixels.shape[1] - figure["w"]) <= 2 and abs(pixels.shape[0] - figure["h"]) <= 2

    lanes = {lane["id"].split("-lane-")[1]: lane for lane in figure["lanes"]}
    assert list(lanes) == ["controller", "b1", "b2", "b3"]
    tints = {"controller": CONTROLLER_TINT, **{f"b{b}": LANE_TINTS[b - 1] for b in (1, 2, 3)}}
    for name, lane in lanes.items():
        x, y, w, h = (int(lane[k]) for k in ("x", "y", "w", "h"))
        assert w > 200 and h > 600, (name, lane)
        area = pixels[y + 4 : y + h - 4, x + 4 : x + w - 4]
        drawn = np.any(area[:, :, :3] < 245, axis=2).mean()
        assert drawn > 0.05, (name, drawn)  # text, cells, badges: not a blank lane
        assert count(area, tints[name]) > 2000, name  # the lane's own colour
    b1 = lanes["b1"]
    area = pixels[int(b1["y"]) : int(b1["y"] + b1["h"]), int(b1["x"]) : int(b1["x"] + b1["w"])]
    assert count(area, epoch_colour(1)) > 100  # broker 1's log cell, written in epoch 1
    assert count(pixels, "#ffe066") > 500  # changed fields highlighted
    assert count(pixels, "#e03131") > 200  # the violating step framed red
