"""Progress on long work: MCP progress notifications for a client that sent a progress token,
click's bar on a terminal's stderr, and nothing at all elsewhere."""

from __future__ import annotations

import itertools
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import read_terminal
from mcp import Client

from gitckpt.core import progress
from gitckpt.mcp.server import build_server


def many_files(root: Path, n: int) -> None:
    for i in range(n):
        d = root / f"d{i // 100:03d}"
        d.mkdir(exist_ok=True)
        (d / f"f{i:05d}.txt").write_text(f"file {i}\n")


@pytest.mark.slow  # thousands of files or steps: not the fast loop's
def test_progress_notifications_during_a_first_save_of_5000_files(ws, monkeypatch):
    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", "0")  # the 1 s threshold, made 0 for a test
    many_files(ws.root, 5000)
    server = build_server(str(ws.root))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async def body(c):
        return await c.call_tool("ckpt_init", {"name": "big"}, progress_callback=on_progress)

    async def main():
        async with Client(server) as c:
            return await body(c)

    try:
        r = anyio.run(main)
    finally:
        server.workspaces.close()
    assert not r.is_error, r.content
    scans = [s for s in seen if s[2] and s[2].startswith("Scanning files")]
    assert len(scans) >= 2, seen[:5]
    counts = [s[0] for s in scans]
    assert counts == sorted(counts)
    assert counts[-1] >= 5000
    assert "files" in scans[0][2]
    # a first save has no cache to count: the estimate is a walk of the folders, so a client
    # draws a bar (a total), not a counter
    assert all(s[1] is not None and 5000 <= s[1] <= 5060 for s in scans), scans


def test_no_notifications_without_a_token(ws, monkeypatch):
    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", "0")
    many_files(ws.root, 300)
    server = build_server(str(ws.root))

    async def main():
        async with Client(server) as c:
            return await c.call_tool("ckpt_init", {"name": "quiet"})

    try:
        r = anyio.run(main)
    finally:
        server.workspaces.close()
    assert not r.is_error


@pytest.mark.parametrize("after", ["3600", "0"])
def test_a_scan_estimates_its_total_only_once_it_shows_progress(ws, monkeypatch, after):
    """The estimate (the cache's or the user's index read, or a walk: 5 ms at 10,000 files)
    is paid only by a scan that shows progress, never by a save that ends within its second,
    even for a client that asked for progress."""
    from gitckpt.store.git.store import GitStore
    from gitckpt.store.working_copy import WorkingCopy

    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", after)
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    many_files(ws.root, 300)
    estimates: list[int | None] = []
    for cls in (GitStore, WorkingCopy):  # a plain folder's store has WorkingCopy's
        def counted(self, real=cls.estimate):
            estimates.append(real(self))
            return estimates[-1]

        monkeypatch.setattr(cls, "estimate", counted)
    server = build_server(str(ws.root))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async def main():
        async with Client(server) as c:
            for name, args in (("ckpt_init", {"name": "estimated"}),
                               ("ckpt_save", {"title": "no change"})):
                r = await c.call_tool(name, args, progress_callback=on_progress)
                assert not r.is_error, r.content

    try:
        anyio.run(main)
    finally:
        server.workspaces.close()
    scans = [s for s in seen if s[2] and s[2].startswith("Scanning files")]
    if after == "0":
        # one estimate per scan that showed progress (a git no-change save visits nothing)
        assert scans
        assert estimates
        assert all(e is not None and e >= 300 for e in estimates), estimates
        assert all(s[1] is not None for s in scans), scans
    else:
        assert (scans, estimates) == ([], [])


def test_a_meter_is_silent_before_its_second_and_ends_once(monkeypatch):
    heard: list[progress.Report] = []
    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", "3600")
    with progress.reporting(heard.append), progress.Meter("Quick", "files", 10) as m:
        for _ in range(10):
            m.advance()
    assert heard == []  # short work shows nothing, not even an end
    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", "0")
    with progress.reporting(heard.append), progress.Meter("Slow", "bytes", 2_000_000) as m:
        m.advance(1_000_000)
    assert heard[0].message() == "Slow: 1.0 MB of 2.0 MB"
    assert heard[-1].final
    assert sum(r.final for r in heard) == 1
    heard.clear()
    m = progress.Meter("Nobody listens", "files")
    m.advance(5)
    m.close()
    assert heard == []


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal; returns (code, stdout, terminal text)."""
    master, slave = pty.openpty()
    env = {**os.environ, "GITCKPT_PROGRESS_AFTER": "0", "COLUMNS": "100"}
    p = subprocess.Popen([sys.executable, "-m", "gitckpt", *args], cwd=cwd, stdout=subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = read_terminal(master)
    out = p.stdout.read().decode()
    code = p.wait(30)
    os.close(master)
    return code, out, chunks


@pytest.mark.parametrize("how", ["terminal", "json", "pipe"])
def test_a_bar_on_a_terminal_and_none_with_json_or_a_pipe(ws, how):
    many_files(ws.root, 2000)
    args = (["--json"] if how == "json" else []) + ["init", "bar"]
    if how == "pipe":
        p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=ws.root,
                           capture_output=True, text=True,
                           env={**os.environ, "GITCKPT_PROGRESS_AFTER": "0"})
        code, out, term = p.returncode, p.stdout, p.stderr
    else:
        code, out, term = _on_a_terminal(args, ws.root)
    assert code == 0, term
    if how == "terminal":
        assert "Scanning files" in term, term
        assert re.search(r"\[[#-]+\]\s+\d+/20\d\d", term), term  # a bar, of ~2,000 files
    else:
        assert "Scanning" not in term
    assert out.startswith("{") == (how == "json")


@pytest.mark.slow  # thousands of files or steps: not the fast loop's
def test_progress_only_rises_across_the_phases_of_an_export(ws, monkeypatch, tmp_path):
    """An export scans, then writes its objects, each phase on a meter counting from 0: the
    MCP progress continues from phase to phase (the spec: it MUST increase)."""
    monkeypatch.setenv("GITCKPT_PROGRESS_AFTER", "0")
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    monkeypatch.setenv("GITCKPT_EXPORT_DIR", str(tmp_path))
    many_files(ws.root, 1500)
    server = build_server(str(ws.root))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        seen.append((done, total, message))

    async def main():
        async with Client(server) as c:
            r = await c.call_tool("ckpt_init", {"name": "exported"})
            assert not r.is_error, r.content
            return await c.call_tool("ckpt_export", {"to": str(tmp_path / "pkg")},
                                     progress_callback=on_progress)

    try:
        r = anyio.run(main)
    finally:
        server.workspaces.close()
    assert not r.is_error, r.content
    phases = {m.split(":")[0] for _, _, m in seen if m}
    assert len(phases) >= 2, phases  # more than one meter took part
    values = [done for done, _, _ in seen]
    assert all(b > a for a, b in itertools.pairwise(values)), values
