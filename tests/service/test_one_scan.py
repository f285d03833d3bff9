"""One scan per MCP call: the boundary drift and the operation share one snapshot, taken
under one hold of the lock."""

from __future__ import annotations

import threading

import anyio
import pytest
from conftest import service
from mcp import Client

from gitckpt.core.errors import StoreBusy
from gitckpt.core.operations import SaveRequest
from gitckpt.mcp.server import build_server
from gitckpt.service.dispatch import perform
from gitckpt.service.workspace import open_workspace
from gitckpt.store.git.store import GitStore
from gitckpt.store.plain.store import DirStore

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")


@pytest.fixture
def scans(monkeypatch):
    """Every workspace scan of this process, counted (the real scan still runs)."""
    seen: list[str] = []
    for cls in (GitStore, DirStore):
        real = cls.scan

        def counted(self, scope, *, update_cache=True, progress=None, _real=real):
            seen.append(threading.current_thread().name)
            return _real(self, scope, update_cache=update_cache, progress=progress)

        monkeypatch.setattr(cls, "scan", counted)
    return seen


def calls(root, *steps):
    """Run tool calls in order in one in-memory client session; their results."""
    async def main():
        async with Client(build_server(str(root)), mode="legacy") as client:
            return [await client.call_tool(name, args) for name, args in steps]
    return anyio.run(main)


@pytest.fixture
def task(ws, monkeypatch):
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    service.init(ws.root, "scan once")
    return ws


def test_a_save_scans_once_with_or_without_changes(task, scans):
    (r,) = calls(task.root, ("ckpt_save", {"title": "nothing new"}))
    assert not r.is_error
    assert r.structured_content["changes"] == {
        "added": [], "modified": [], "deleted": []}
    assert len(scans) == 1
    scans.clear()
    (task.root / "new.txt").write_text("made by a shell command\n")
    (r,) = calls(task.root, ("ckpt_save", {"title": "a file"}))
    assert not r.is_error
    assert r.structured_content["step"] == 2
    assert len(scans) == 1
    # the boundary drift took the change, and the step has the same tree: nothing lost
    tl = service.open_timeline(task.root)
    tid = tl.resolve(None)
    head, (drift,) = tl.head(tid), tl.drifts(tid, 1)
    assert drift.note.trigger == "boundary"
    assert drift.tree == head.tree
    assert head.n == 2
    assert head.note.changes["added"] == ["new.txt"]


def test_a_restore_preview_and_its_apply_each_scan_once(task, scans):
    (task.root / "a.txt").write_text("one\n")
    service.save(task.root, "a")
    (task.root / "a.txt").write_text("two\n")
    scans.clear()
    (preview,) = calls(task.root, ("ckpt_restore", {"target": "1"}))
    assert not preview.is_error
    assert len(scans) == 1
    scans.clear()
    (done,) = calls(task.root, ("ckpt_restore", {"target": "1", "apply": True,
                                                  "expect": preview.structured_content[
                                                      "plan_id"]}))
    assert not done.is_error, done.content
    assert (task.root / "a.txt").read_text() == "one\n"
    assert len(scans) == 1  # the safety copy is the boundary's snapshot; none after writing
    # and the next call sees the restored file: the memo died with the call
    scans.clear()
    (r,) = calls(task.root, ("ckpt_save", {"title": "after the restore"}))
    assert not r.is_error
    assert len(scans) == 1


def test_the_memo_lives_only_while_one_call_holds_the_lock(task, scans):
    tl = service.open_timeline(task.root)
    meta = tl.meta(tl.resolve(None))
    with tl.store.one_scan():
        first = tl.live(meta)
        (task.root / "late.txt").write_text("x\n")
        assert tl.live(meta) is first  # the workspace stands still for one call
        tl.store.forget_scans()
        assert tl.live(meta).tree != first.tree
    assert len(scans) == 2
    assert tl.live(meta).tree != first.tree
    assert len(scans) == 3


def test_a_busy_store_skips_the_boundary_and_the_call_still_runs(task, scans, monkeypatch):
    monkeypatch.setenv("GITCKPT_LOCK_TIMEOUT", "0.2")
    holding, release = threading.Event(), threading.Event()

    def hold():  # another writer: a thread of this process is one, like another process
        with service.open_timeline(task.root).store.lock():
            holding.set()
            release.wait(20)

    t = threading.Thread(target=hold)
    t.start()
    assert holding.wait(10)
    try:
        ws = open_workspace(task.root)  # a front end's call: the workspace opened once
        with ws.boundary(lock_wait=0.1) as drift:
            assert drift is None
            with pytest.raises(StoreBusy):
                perform(ws, SaveRequest("blocked"))
    finally:
        release.set()
        t.join(10)
    assert not scans
    ws = open_workspace(task.root)
    with ws.boundary(lock_wait=2.0) as drift:
        assert drift is not None
        assert not drift.recorded
        assert perform(ws, SaveRequest("free again")).step == 1
    assert len(scans) == 1
