"""Several writers at once, and writers killed at random points: the timeline stays whole."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import service

from gitckpt.core.errors import StoreBusy

SAVER = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from conftest import service
root, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(count):
    (root / f"{{who}}.txt").write_text(f"{{who}} {{i}}\\n")
    service.save(root, f"{{who}} step {{i}}", conclusion=f"{{who}} did {{i}}")
"""


def check_timeline(ws, task: str) -> list[dict]:
    """Every step reachable from head has its note and its steps/<n> ref; numbering is 0..n."""
    head = f"refs/checkpoints/{task}/head"
    assert ws.git("rev-list", "--merges", head) == ""  # linear
    out = ws.git("log", "--first-parent", "--notes=checkpoints", "--format=%H%x00%N%x01", head)
    rows = [r.strip("\n").split("\0") for r in out.split("\x01") if r.strip()]
    commits = [c for c, _ in rows]
    notes = [json.loads(n) for _, n in rows]
    assert [n["step"] for n in notes] == list(range(len(commits) - 1, -1, -1))
    refs = dict(line.split() for line in ws.git(
        "for-each-ref", "--format=%(refname) %(objectname)",
        f"refs/checkpoints/{task}/steps").splitlines())
    for commit, n in zip(commits, notes, strict=True):
        assert refs.get(f"refs/checkpoints/{task}/steps/{n['step']}", commit) == commit
    # No steps/<n> ref points outside the timeline.
    assert set(refs.values()) <= set(commits)
    return notes


def test_four_processes_saving_at_once(ws):
    task = service.init(ws.root, "busy").save.task
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, str(ws.root), f"w{k}", "10"],
                              stderr=subprocess.PIPE, text=True) for k in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    notes = check_timeline(ws, task)
    assert len(notes) == 41
    titles = {n["title"] for n in notes[:-1]}
    assert titles == {f"w{k} step {i}" for k in range(4) for i in range(10)}
    assert len(ws.git("for-each-ref", f"refs/checkpoints/{task}/steps").splitlines()) == 41
    ws.fsck()


def test_killed_writers_leave_whole_steps(ws):
    task = service.init(ws.root, "kill me").save.task
    rng = random.Random(7)
    for round_ in range(12):
        p = subprocess.Popen([sys.executable, "-c", SAVER, str(ws.root), f"r{round_}", "50"],
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.4, 1.2))  # python start-up takes ~0.3 s
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        ws.fsck()
        # Reads work right after a kill (head is the commit point).
        assert service.resume(ws.root).info.id == task
        check_timeline(ws, task)
    # The next save repairs whatever a kill left half-done and continues the numbering (a ref
    # lock a kill left behind is waited out: it could be git's own until it is 10 s old).
    deadline = time.monotonic() + 30
    while True:
        try:
            last = service.save(ws.root, "after the kills")
            break
        except StoreBusy:
            assert time.monotonic() < deadline
            time.sleep(1)
    notes = check_timeline(ws, task)
    assert notes[0]["step"] == last.step
    refs = ws.git("for-each-ref", f"refs/checkpoints/{task}/steps").splitlines()
    assert len(refs) == last.step + 1
    ws.fsck()
