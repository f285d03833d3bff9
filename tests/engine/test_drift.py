"""Drifts: capture, the watcher (fake clock and events, then real ones), resume and log."""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import git, run_cli, service

from gitckpt.core.decode import plan_entry
from gitckpt.core.errors import InvalidArgument, StoreBusy
from gitckpt.engine.notes import PlanItem
from gitckpt.engine.timeline import Timeline, drift_ref
from gitckpt.engine.watch import Debouncer, Settings, Source, WatchdogSource, Watcher, ignored
from gitckpt.store.discover import open_store


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeSource(Source):
    """Events on demand; `fail` makes start() fail as inotify does at its limits."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.hint = None
        self.running = False

    def start(self, hint) -> None:
        if self.fail:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        self.hint, self.running = hint, True

    def alive(self) -> bool:
        return self.running

    def stop(self) -> None:
        self.running = False


def start(ws) -> str:
    return service.init(ws.root, "drift test").save.task


def note(ws, rev: str) -> dict:
    return json.loads(ws.git("notes", "--ref=checkpoints", "show", rev))


def test_capture_records_a_drift_only_when_files_changed(ws):
    task = start(ws)
    nothing = service.capture(ws.root)
    assert not nothing.recorded
    assert ws.git("for-each-ref", drift_ref(task, 0)) == ""
    for i in range(5):
        (ws.root / f"gen{i}.py").write_text(f"x = {i}\n")
    first = service.capture(ws.root)
    assert first.recorded
    assert first.after_step == 0
    assert first.trigger == "capture"
    n = note(ws, first.commit)
    assert n["kind"] == "drift"
    assert n["trigger"] == "capture"
    assert n["changes"]["added"] == [f"gen{i}.py" for i in range(5)]
    subject = ws.git("log", "-1", "--format=%s", first.commit).strip()
    assert subject == "drift: 5 files (gen0.py, gen1.py, gen2.py, ...)"
    (ws.root / "gen0.py").unlink()
    second = service.capture(ws.root)
    assert ws.git("rev-parse", f"{second.commit}^").strip() == first.commit
    assert ws.git("rev-parse", drift_ref(task, 0)).strip() == second.commit
    r = run_cli("-C", str(ws.root), "capture")
    assert r.code == 0
    assert "nothing recorded" in r.out


def test_the_next_step_chains_from_the_step_and_holds_every_pending_change(ws):
    task = start(ws)
    step0 = ws.git("rev-parse", f"refs/checkpoints/{task}/head").strip()
    (ws.root / "a.txt").write_text("a\n")
    service.capture(ws.root)
    (ws.root / "b.txt").write_text("b\n")  # pending: not captured
    saved = service.save(ws.root, "one")
    assert ws.git("rev-parse", f"{saved.commit}^@").split() == [step0]
    assert set(saved.changes.added) == {"a.txt", "b.txt"}
    assert service.capture(ws.root).recorded is False  # the step is the tip now
    log = service.log(ws.root)
    kinds = [(e.note.kind, e.note.step) for e in log.timeline()]
    assert kinds == [("init", 0), ("drift", 0), ("step", 1)]
    assert [s.n for s in service.log(ws.root, steps_only=True).timeline()] == [0, 1]
    drift = log.after[0][0].commit
    assert service.restore(ws.root, drift[:9]).plan.target.commit == drift
    out = run_cli("-C", str(ws.root), "log").out
    assert "drift (capture): 1 file(s) (a.txt)" in out
    assert "drift (" not in run_cli("-C", str(ws.root), "log", "--steps").out


def test_debouncer_quiet_period_and_max_wait():
    d = Debouncer(quiet=2, max_wait=30)
    assert d.due() is None
    assert d.take(100) is None
    d.hint(0)
    assert d.take(1.9) is None
    assert d.take(2.0) is False
    for t in range(0, 31):  # an event every second: never quiet
        d.hint(t)
        if t < 30:
            assert d.take(t) is None
    assert d.take(30) is True  # max wait reached while files were still changing


def test_watcher_captures_after_a_quiet_period_with_a_fake_clock(ws):
    task = start(ws)
    tl = Timeline(open_store(ws.root))
    clock, source = FakeClock(), FakeSource()
    calls = []

    def capture(partial):
        calls.append(partial)
        return tl.capture("watch", partial=partial)

    w = Watcher(capture, Settings(quiet=2, max_wait=30, poll=15), clock)
    w.start(source)
    assert w.mode == "events"
    assert w.step() is None
    assert calls == []
    (ws.root / "edited.txt").write_text("by a shell command\n")
    source.hint()
    clock.t += 1.5
    assert w.step() is None
    assert calls == []
    clock.t += 0.5
    result = w.step()
    assert result.recorded
    assert calls == [False]
    assert note(ws, result.commit)["trigger"] == "watch"
    # a continuous burst: partial after the max wait
    for _ in range(31):
        (ws.root / "edited.txt").write_text(f"{clock.t}\n")
        source.hint()
        clock.t += 1
        w.step()
    assert calls[-1] is True
    assert note(ws, ws.git("rev-parse", drift_ref(task, 0)).strip())["partial"] is True


def test_a_save_during_the_quiet_period_leaves_the_watcher_nothing(ws):
    start(ws)
    tl = Timeline(open_store(ws.root))
    clock, source = FakeClock(), FakeSource()
    w = Watcher(lambda partial: tl.capture("watch", partial=partial), Settings(), clock)
    w.start(source)
    (ws.root / "x.txt").write_text("x\n")
    source.hint()
    saved = service.save(ws.root, "saved while the watcher waited")
    assert "x.txt" in saved.changes.added
    clock.t += 5
    assert w.step().recorded is False


def test_falls_back_to_polling_when_events_are_unavailable(ws, caplog):
    start(ws)
    clock = FakeClock()
    polled = FakeSource()
    w = Watcher(lambda partial: None, Settings(poll=15), clock, fallback=lambda: polled)
    with caplog.at_level(logging.WARNING, logger="gitckpt.engine.watch"):
        w.start(FakeSource(fail=True))
    assert w.mode == "polling"
    assert polled.running
    assert [r.message for r in caplog.records if "polling" in r.message] == [
        "file events unavailable (inotify watch limit reached); polling every 15s instead"]


def test_an_event_source_that_dies_is_replaced_by_polling(ws):
    start(ws)
    events, polled = FakeSource(), FakeSource()
    w = Watcher(lambda partial: None, Settings(quiet=0.01, poll=0.05), fallback=lambda: polled)
    w.start(events)
    events.running = False  # as when inotify gives up
    t = threading.Thread(target=w.run)
    t.start()
    deadline = time.monotonic() + 10
    while w.mode != "polling" and time.monotonic() < deadline:
        time.sleep(0.01)
    w.stop()
    t.join(10)
    assert w.mode == "polling"
    assert not t.is_alive()


def test_a_busy_store_retries_after_the_next_quiet_period(ws):
    start(ws)
    clock, source = FakeClock(), FakeSource()
    attempts = []

    def capture(partial):
        attempts.append(clock.t)
        if len(attempts) == 1:
            raise StoreBusy("lock", 1)
        return "done"

    w = Watcher(capture, Settings(quiet=2), clock)
    w.start(source)
    source.hint()
    clock.t += 2
    assert w.step() is None
    assert w.debounce.due() == clock.t + 2
    clock.t += 2
    assert w.step() == "done"


def test_overflow_warnings_become_hints(ws):
    start(ws)
    source = WatchdogSource(str(ws.root))
    hints = []
    source.start(lambda: hints.append(1))
    try:
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost")
        assert hints
    finally:
        source.stop()


def test_our_own_folders_are_not_hints(tmp_path):
    root = str(tmp_path)
    assert ignored(f"{root}/.git/index", root, ())
    assert ignored(f"{root}/sub/.git/HEAD", root, ())
    assert ignored(f"{root}/.gitckpt/objects/ab/cd", root, ())
    assert ignored(f"{root}/ckpts/lock", root, ("ckpts",))
    assert ignored("/elsewhere/file", root, ())
    assert not ignored(f"{root}/src/app.py", root, ("ckpts",))


def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("GITCKPT_QUIET", "0.5")
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    s = Settings.from_env()
    assert s.quiet == 0.5
    assert s.max_wait == 30
    assert s.poll == 15
    assert not s.enabled
    monkeypatch.setenv("GITCKPT_MAX_WAIT", "soon")
    with pytest.raises(InvalidArgument, match="GITCKPT_MAX_WAIT"):
        Settings.from_env()


def test_real_events_end_to_end(ws, monkeypatch):
    task = start(ws)
    monkeypatch.setenv("GITCKPT_QUIET", "0.3")
    drifts = []
    session = service.watch(ws.root, on_drift=drifts.append)
    if session.watcher.mode != "events":
        session.stop()
        pytest.skip("no file events on this machine (inotify limits); polling is tested above")
    t = threading.Thread(target=session.run)
    t.start()
    try:
        time.sleep(0.5)
        assert drifts == []  # our own start-up wrote nothing that counts
        (ws.root / "src" / "made_by_shell.py").write_text("print('hi')\n")
        deadline = time.monotonic() + 15
        while not drifts and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        session.stop()
        t.join(10)
    assert len(drifts) == 1
    assert drifts[0].changes.added == ("src/made_by_shell.py",)
    assert ws.git("rev-parse", drift_ref(task, 0)).strip() == drifts[0].commit


def test_the_first_capture_runs_at_start_so_the_first_hook_is_not_behind_it(ws, monkeypatch):
    """A watcher's first capture is the full scan that lets the events be trusted: it runs as
    the watcher starts (a change made while nothing watched is recorded at once, long before
    the quiet period), and the capture after it takes the hinted path."""
    task = start(ws)
    made = ws.root / "src" / "while_nobody_watched.py"
    made.write_text("x = 1\n")
    os.utime(made, (time.time() - 600, time.time() - 600))  # long before the watcher
    monkeypatch.setenv("GITCKPT_QUIET", "60")  # no event-driven capture within the test
    drifts = []
    session = service.watch(ws.root, on_drift=drifts.append)
    if session.watcher.mode != "events":
        session.stop()
        pytest.skip("no file events on this machine (inotify limits)")
    t = threading.Thread(target=session.run)
    t.start()
    try:
        deadline = time.monotonic() + 10
        while not drifts and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [d.changes.added for d in drifts] == [("src/while_nobody_watched.py",)]
        counts = session.watcher.source.journal.counts
        full = counts["full"]  # 1 in a repository; the plain store does not count them
        (ws.root / "src" / "by_a_tool.py").write_text("y = 2\n")
        after = service.capture(ws.root, trigger="boundary")
        assert after.changes.added == ("src/by_a_tool.py",)
        if ws.kind == "git":
            assert (full, counts) == (1, {"hinted": 1, "full": 1})
    finally:
        session.stop()
        t.join(10)
    assert ws.git("rev-parse", drift_ref(task, 0) + "~1").strip() == drifts[0].commit


@pytest.mark.parametrize("hooked", [True, False])
def test_the_first_capture_leaves_a_change_being_written_to_its_hook(ws, monkeypatch, hooked):
    """A tool call that writes while the session's watcher starts: the watcher's first capture
    leaves the fresh change alone, so the tool's hook records it with its attribution; with no
    hook, the watcher records it after the quiet period."""
    from gitckpt.core.inputs import ToolCall

    task = start(ws)
    monkeypatch.setenv("GITCKPT_QUIET", "1")
    (ws.root / "src" / "by_the_tool.py").write_text("y = 2\n")  # just now
    drifts = []
    session = service.watch(ws.root, on_drift=drifts.append)
    t = threading.Thread(target=session.run)
    t.start()
    try:
        tl = service.open_timeline(ws.root)
        if hooked:
            made = tl.capture("tool", tool=ToolCall(name="Write", command="write it"))
            assert made.recorded
            assert made.changes.added == ("src/by_the_tool.py",)
        deadline = time.monotonic() + 15
        while not hooked and not drifts and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.5 if hooked else 0)  # a quiet period: the watcher's second look
    finally:
        session.stop()
        t.join(10)
    tl = service.open_timeline(ws.root)
    notes = [d.note for d in tl.drifts(tl.resolve(task), tl.head(tl.resolve(task)).n)]
    assert [(n.trigger, n.tool["name"] if n.tool else None) for n in notes] == \
        ([("tool", "Write")] if hooked else [("watch", None)])


def test_resume_reports_drifts_unsaved_and_the_watcher_switch(ws, monkeypatch):
    start(ws)
    service.save(ws.root, "one", conclusion="c", next="n")
    (ws.root / "a.txt").write_text("captured\n")
    service.capture(ws.root)
    (ws.root / "b.txt").write_text("not captured\n")
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    r = service.resume(ws.root)
    d = r.to_dict()
    assert [x["trigger"] for x in d["drifts"]] == ["capture"]
    assert d["unsaved"]["added"] == ["b.txt"]
    assert d["since_step"]["added"] == ["a.txt", "b.txt"]
    assert d["watch"] == "off"
    assert "Captured since step 1: 1 drift(s)" in r.text
    assert "Changed after step 1, re-read before editing: 2 added" in r.text
    assert "not captured by a drift yet: 1 added" in r.text
    assert "Watcher: off" in r.text


def test_a_resume_does_not_wait_for_the_watchers_first_look(ws, monkeypatch):
    """The first call of a session starts the watcher, whose first look at the files is a
    full scan: a resume meanwhile answers from the notes without scanning (it would wait for
    that scan, which holds the journal), says the changes come once the look is done, and
    the resume after it has them, through the watcher's journal."""
    start(ws)
    service.save(ws.root, "one", conclusion="c", next="n")
    (ws.root / "a.txt").write_text("while nothing watched\n")
    monkeypatch.setenv("GITCKPT_QUIET", "60")  # no event-driven capture within the test
    session = service.watch(ws.root)  # its first look is session.run's first capture
    try:
        if session.watcher.mode != "events":
            pytest.skip("no file events on this machine (inotify limits)")
        journal = session.watcher.source.journal
        answered, held = threading.Event(), threading.Event()

        def look() -> None:  # as if that look were under way: a scan now waits for it
            with journal.scan_lock:
                held.set()
                answered.wait(60)  # (a resume that waits would be let go, and fail below)

        looking = threading.Thread(target=look)
        looking.start()
        held.wait()
        try:
            r = service.resume(ws.root)
        finally:
            answered.set()
            looking.join()
        assert journal.counts == {"hinted": 0, "full": 0}  # nothing scanned
        assert "taking its first look at the files" in r.text
        assert r.to_dict()["unsaved"] is None
        assert "Captured since step 1" not in r.text
        service.capture(ws.root)  # the first look (a full scan through the journal)
        assert journal.counts["full"] == 1
        r = service.resume(ws.root)
        assert "first look" not in r.text
        assert r.to_dict()["since_step"]["added"] == ["a.txt"]
    finally:
        session.stop()


@pytest.mark.user_git
def test_resume_reports_commits_since_and_a_rewritten_history(repo):
    service.init(repo, "git moves")
    service.save(repo, "one")
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo, "commit", "-q", "--allow-empty", "-m", "three")
    r = service.resume(repo)
    assert r.git.commits_since == 2
    assert r.git.head_reachable is True
    assert "2 commit(s) since step 1" in r.text
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    git(repo, "commit", "-q", "--allow-empty", "-m", "rewritten")
    service.save(repo, "two")
    git(repo, "commit", "-q", "--amend", "--allow-empty", "-m", "rewritten again")
    r = service.resume(repo)
    assert r.git.head_reachable is False
    assert "no longer in the branch's history" in r.text


def test_the_handoff_of_a_long_task_fits_one_screen(ws):
    start(ws)
    long = "a long conclusion with many details " * 20
    for i in range(30):
        (ws.root / f"f{i}.txt").write_text(str(i))
        service.save(ws.root, f"step number {i} " + "title " * 20, conclusion=long,
                     next=long, verified=[long] * 3, open_questions=[long] * 6,
                     decisions=[long] * 6, plan=[PlanItem(f"item {j}", "done") for j in range(20)])
    text = service.resume(ws.root).text
    assert len(text) < 2500
    assert "30. step number 29" in text
    assert "Conclusion: a long conclusion" in text


def stop_watch(proc) -> tuple[str, str]:
    """SIGTERM to a `gitckpt watch`, its output; one that does not stop within 10 s gets
    SIGABRT (its threads' stacks are in stderr: PYTHONFAULTHANDLER) and the test fails."""
    import signal
    import subprocess

    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _out, err = proc.communicate(timeout=10)
        pytest.fail(f"gitckpt watch ignored SIGTERM for 10 s; its stderr:\n{err}")


def test_watch_command_records_drifts_and_stops_on_sigterm(ws):
    import subprocess
    import sys

    start(ws)
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "-C", str(ws.root), "watch"],
                            env={**os.environ, "GITCKPT_QUIET": "0.3",
                                 "PYTHONFAULTHANDLER": "1"}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        started = proc.stderr.readline()
        if "(polling)" in started:
            pytest.skip("no file events on this machine (inotify limits)")
        assert "(events); Ctrl-C stops" in started
        (ws.root / "by_user.txt").write_text("typed in an editor\n")
        line = proc.stdout.readline()
        assert line.startswith("Recorded drift ")
        assert "1 added" in line
    finally:
        _out, err = stop_watch(proc)
    assert proc.returncode == 0
    assert "Stopped watching" in err
    r = run_cli("-C", str(ws.root), "watch", env={"GITCKPT_POLL": "-1"})
    assert r.code == 1
    assert "GITCKPT_POLL" in r.err


def test_a_watch_whose_output_cannot_be_written_stops_with_that_code(ws):
    """`gitckpt watch | head -1`: once the reader has gone, the next drift is recorded, then the
    watch ends with git's 141 and no traceback (it once logged "capture crashed" at each drift
    and watched on). An output that cannot be written ends it with its one error line and 1."""
    import subprocess
    import sys

    start(ws)
    env = {**os.environ, "GITCKPT_QUIET": "0.3"}
    read, write = os.pipe()
    with open("/dev/full", "w") if os.path.exists("/dev/full") else open(os.devnull) as full:
        runs = [(write, 141, "")] + ([(full, 1, "cannot write to standard output")]
                                     if full.name == "/dev/full" else [])
        for n, (out, code, says) in enumerate(runs):
            proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "-C", str(ws.root),
                                     "watch"], env=env, text=True, stdout=out,
                                    stderr=subprocess.PIPE)
            try:
                started = proc.stderr.readline()
                if "(polling)" in started:
                    pytest.skip("no file events on this machine (inotify limits)")
                if out == write:
                    os.close(write)
                    os.close(read)  # head has read its line and gone
                (ws.root / f"unread{n}.txt").write_text("x\n")
                _out, err = proc.communicate(timeout=20)
            finally:
                if proc.poll() is None:
                    stop_watch(proc)
            assert proc.returncode == code, err
            assert says in err, err
            assert "Traceback" not in err, err
            assert "crashed" not in err, err
    r = run_cli("--json", "log", cwd=ws.root)
    drifts = [d for d in json.loads(r.out)["drifts"] if d["trigger"] == "watch"]
    assert len(drifts) == len(runs), r.out  # each recorded before its output failed


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_no_thread_of_a_watcher_takes_sigterm_asynchronously(ws):
    # A process signal taken by a thread only sets a flag that the main thread reads when its
    # current wait ends (up to GITCKPT_POLL seconds): CI once saw SIGTERM ignored for 15 s.
    # So every thread blocks SIGINT and SIGTERM and the main thread takes them with sigwait
    # (which unblocks them for the wait: /proc shows the main thread's mask without them).
    import signal
    import subprocess
    import sys

    start(ws)
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "-C", str(ws.root), "watch"],
                            env={**os.environ, "PYTHONFAULTHANDLER": "1"}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert "Ctrl-C stops" in proc.stderr.readline()
        blocked = {}
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            status = Path(f"/proc/{proc.pid}/task/{tid}/status").read_text()
            mask = int(next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1],
                       16)
            blocked[int(tid)] = all(mask >> (s - 1) & 1 for s in (signal.SIGINT, signal.SIGTERM))
        helpers = {t: b for t, b in blocked.items() if t != proc.pid}
        assert len(helpers) >= 2, blocked  # the main one: in sigwait
        assert all(helpers.values()), blocked
    finally:
        _out, err = stop_watch(proc)
    assert proc.returncode == 0, err
    assert "Stopped watching" in err, err


def test_names_starting_with_two_dots_are_inside_the_workspace(tmp_path):
    root = str(tmp_path)
    assert not ignored(f"{root}/..notes", root, ())
    assert not ignored(f"{root}/...x/y", root, ())
    assert ignored(f"{tmp_path.parent}/sibling", root, ())


def test_the_handoff_never_calls_an_open_plan_item_done(ws):
    items = [f"item {i}" for i in range(20)] + ["finished=done"]
    service.init(ws.root, "big plan", plan=[plan_entry(t) for t in items])
    text = service.resume(ws.root).text
    assert "more done" not in text
    assert "more (" in text
    assert "pending" in text.split("more (")[1]
