"""`gitckpt report --html` in a real headless Chromium (Debian's `chromium`; CI installs it):
driven over the DevTools protocol on a pipe (stdlib only), the page loads with no console
error and no network request, shows every step title, opens a diff, and its screenshots at
1280 and 390 pixels wide are not blank (the side panel goes below the steps on a phone)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import run_cli, service

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)")


class Browser:
    """Chromium with --remote-debugging-pipe: commands on fd 3, answers and events on fd 4,
    each message JSON ended by a NUL."""

    def __init__(self, profile: Path) -> None:
        self.to_r, self.to_w = os.pipe()
        self.from_r, self.from_w = os.pipe()

        def fds() -> None:
            os.dup2(self.to_r, 3)
            os.dup2(self.from_w, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={profile}",
             "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(self.to_r)
        os.close(self.from_w)
        self.buffer = b""
        self.events: list[dict] = []
        self.next = 0
        self.session: str | None = None

    def send(self, method: str, params: dict | None = None, session: bool = True) -> dict:
        self.next += 1
        message = {"id": self.next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_w, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next:
                assert "error" not in reply, (method, reply)
                return reply["result"]
            self.events.append(reply)

    def wait(self, method: str) -> dict:
        for e in self.events:
            if e.get("method") == method:
                self.events.remove(e)
                return e
        while True:
            e = self._read()
            if e.get("method") == method:
                return e
            self.events.append(e)

    def _read(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_r, 1 << 16)
            assert chunk, "chromium closed its pipe"
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)


def _distinct(png: bytes) -> int:
    """How many different byte values the image's pixel data holds (a blank page: a few)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data = 8, b""
    while at < len(png):
        size, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IDAT":
            data += png[at + 8:at + 8 + size]
        at += 12 + size
    return len(set(zlib.decompress(data)))


def test_the_page_in_a_real_chromium(ws, tmp_path):
    service.init(ws.root, "Page task", goal="see it in a browser")
    titles = []
    for n in range(1, 6):
        (ws.root / f"m{n}.py").write_text(f"def f{n}():\n    return '{n}'  # step {n}\n")
        title = f"Step number {n} <ok>"
        service.save(ws.root, title, conclusion=f"conclusion {n}",
                     decisions=[f"decision {n}"],
                     commands=[{"command": "pytest -q", "exit_code": n % 2}])
        titles.append(title)
    page = tmp_path / "report.html"
    p = run_cli("report", "--html", "-o", str(page), cwd=ws.root)
    assert p.code == 0, p.err
    b = Browser(tmp_path / "profile")
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
        b.session = b.send("Target.attachToTarget", {"targetId": target["targetId"],
                                                      "flatten": True}, session=False
                           )["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.send(f"{domain}.enable")
        b.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900,
                                                       "deviceScaleFactor": 1,
                                                       "mobile": False})
        url = page.as_uri()
        b.send("Page.navigate", {"url": url})
        b.wait("Page.loadEventFired")

        def js(expression: str):
            return b.send("Runtime.evaluate", {"expression": expression,
                                               "returnByValue": True})["result"].get("value")

        shown = js("Array.from(document.querySelectorAll('li.step h2'))"
                   ".map(e => e.textContent)")
        assert shown == [f"{n}. {t}" for n, t in enumerate(titles, 1)]
        assert js("document.querySelectorAll('.badge.bad').length") == 3  # exit 1 at 1, 3, 5
        opened = js("(() => { const d = document.querySelector('details');"
                    " d.querySelector('summary').click();"
                    " return [d.open, d.querySelector('pre').getBoundingClientRect().height,"
                    " d.querySelector('pre').textContent]; })()")
        assert opened[0] is True
        assert opened[1] > 20
        assert "return '1'" in opened[2]
        wide = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"})["data"])
        b.send("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844,
                                                       "deviceScaleFactor": 2,
                                                       "mobile": True})
        assert js("getComputedStyle(document.querySelector('main')).display") == "block"
        assert js("document.documentElement.scrollWidth <= 390 + 1")
        narrow = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"})["data"])
        (tmp_path / "wide.png").write_bytes(wide)
        (tmp_path / "narrow.png").write_bytes(narrow)
        for shot in (wide, narrow):
            assert _distinct(shot) > 30
        errors = [e for e in b.events
                  if e.get("method") == "Runtime.exceptionThrown"
                  or (e.get("method") == "Runtime.consoleAPICalled"
                      and e["params"].get("type") == "error")
                  or (e.get("method") == "Log.entryAdded"
                      and e["params"]["entry"].get("level") == "error")]
        assert errors == []
        fetched = [e["params"]["request"]["url"] for e in b.events
                   if e.get("method") == "Network.requestWillBeSent"]
        assert fetched == [url]  # the page itself, nothing else
    finally:
        b.close()
