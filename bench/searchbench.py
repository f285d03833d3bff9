"""Search across tasks: `gitckpt search` at 1,000 tasks of 50 steps against `git log
--notes=checkpoints --grep` over the same refs (both whole processes); the index's first build;
what keeping the index adds to a save (a 1,000-file workspace, with and without an index,
interleaved); and a save that answers a question at 1,000 steps against a plain one.

Usage: python bench/searchbench.py [--tasks 1000] [--steps 50] [--repeat 5]

The history is written with `git fast-import` (the tasks' commits, their step refs and one
notes commit holding every note): the notes are gitckpt's own format, as saves write them.
Every figure is a median of --repeat runs, in milliseconds. The bars are issue 28's: search
latency as a ratio to git's, and at most 5% added to a save.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ENV, make_workspace

WORDS = ("retry timeout cache parser config upload schema token index worker queue socket "
         "render export import locale stream buffer flush signal").split()


def history(repo: Path, tasks: int, steps: int) -> None:
    """`tasks` tasks of `steps` steps each, with prose in every field and the word
    `needle<t>` in one decision of each task."""
    rng = random.Random(5)
    out: list[bytes] = []
    mark = 0
    notes: list[tuple[int, str]] = []
    empty = "4b825dc642cb6eb9a060ae96ffb1c4f6b6ed3bcd"

    def data(text: str) -> bytes:
        raw = text.encode()
        return b"data %d\n" % len(raw) + raw + b"\n"

    for t in range(tasks):
        task = f"task-{t:04d}"
        parent = None
        for n in range(steps + 1):
            mark += 1
            note: dict = {"schema": 1, "kind": "init" if n == 0 else "step", "task": task,
                          "step": n, "created_at": f"2026-11-{1 + n % 28:02d}T10:00:00Z",
                          "title": " ".join(rng.choice(WORDS) for _ in range(5))}
            if n == 0:
                note.update(name=f"task {t}", goal=" ".join(rng.sample(WORDS, 8)),
                            workspace="/bench")
            else:
                note.update(conclusion=" ".join(rng.choice(WORDS) for _ in range(14)),
                            decisions=[" ".join(rng.sample(WORDS, 6))
                                       + (f" needle{t}" if n == steps // 2 else "")],
                            commands=[{"command": f"pytest -k {rng.choice(WORDS)}",
                                       "exit_code": rng.choice((0, 0, 1)), "tree": empty}])
            notes.append((mark, json.dumps(note)))
            message = f"{'step ' + str(n) if n else 'init'}: {note['title']}\n\nTask: {task}\n"
            out.append(b"commit refs/checkpoints/%s/head\nmark :%d\n" % (task.encode(), mark))
            out.append(b"committer gitckpt <gitckpt@localhost> 1764000000 +0000\n")
            out.append(data(message))
            if parent:
                out.append(b"from :%d\n" % parent)
            out.append(b"deleteall\n")
            out.append(b"reset refs/checkpoints/%s/steps/%d\nfrom :%d\n\n"
                       % (task.encode(), n, mark))
            parent = mark
    out.append(b"commit refs/notes/checkpoints\n")
    out.append(b"committer gitckpt <gitckpt@localhost> 1764000000 +0000\n")
    out.append(data("Notes added by gitckpt\n"))
    for m, text in notes:
        out.append(b"N inline :%d\n" % m + data(text))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(out),
                   check=True, env=ENV)


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, env=ENV, text=True)
    return (time.perf_counter() - start) * 1000, p.stdout


def save_cost(base: Path, repeat: int) -> tuple[float, float]:
    """Saves of a 1,000-file workspace, one file changed: without an index, and with one (the
    save adds its step to it), interleaved; medians."""
    from ops import service

    from gitckpt.engine import search

    root = base / "saves"
    files = make_workspace(root, 1000)
    service.init(root, "save bench", goal="the index's cost to a save")
    service.search(root, "index")  # the index exists from here
    store = service.open_timeline(root).store
    db = search.path(store)
    aside = db.with_name("search.aside")
    out: dict[bool, list[float]] = {False: [], True: []}
    inside: list[float] = []  # the index update's own time, timed directly (steadier)
    real = search.saved

    def timed_saved(*args, **kw):
        start = time.perf_counter()
        real(*args, **kw)
        inside.append((time.perf_counter() - start) * 1000)

    search.saved = timed_saved
    for i in range(repeat * 2):
        indexed = i % 2 == 1
        if indexed:
            os.replace(aside, db)
        else:
            os.replace(db, aside)
        with open(files[i % len(files)], "a") as f:
            f.write(f"save {i}\n")
        start = time.perf_counter()
        service.save(root, f"step {i} of the bench", conclusion="timed",
                     decisions=[f"decision {i}"])
        out[indexed].append((time.perf_counter() - start) * 1000)
    search.saved = real
    assert service.search(root, "bench").hits  # what the saves added is found
    SAVED.append(statistics.median(inside[1::2]))  # the saves that had an index
    return statistics.median(out[False]), statistics.median(out[True])


SAVED: list[float] = []


def answered_cost(base: Path, steps: int, repeat: int) -> tuple[float, float]:
    """Saves of a task of `steps` steps (each opened a question), one file changed: plain,
    and answering one of the open questions, interleaved; medians. The first answered save
    folds every step into the kept open items; it is made before the timing."""
    from ops import service

    from gitckpt.engine.notes import Note

    root = base / "answers"
    files = make_workspace(root, 100)
    service.init(root, "answer bench")
    tl = service.open_timeline(root)
    tree = tl.head(tl.resolve(None)).tree
    task = tl.create_task(
        Note(kind="init", task="x", step=0, name="long task", created_at="2026-12-01T09:00:00Z"),
        [(tree, Note(kind="step", task="x", step=n, title=f"step {n}",
                     open_questions=[f"question {n}"], created_at="2026-12-01T10:00:00Z"))
         for n in range(1, steps + 1)], activate=True)
    service.save(root, "warm", answered=["question 1"])
    out: dict[bool, list[float]] = {False: [], True: []}
    for i in range(repeat * 2):
        answering = i % 2 == 1
        with open(files[i % len(files)], "a") as f:
            f.write(f"save {i}\n")
        start = time.perf_counter()
        service.save(root, f"step {i}", task=str(task),
                     answered=[f"question {i + 2}"] if answering else [])
        out[answering].append((time.perf_counter() - start) * 1000)
    return statistics.median(out[False]), statistics.median(out[True])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitckpt-searchbench-") as tmp:
        base = Path(tmp)
        ENV["HOME"] = str(base)
        os.environ["HOME"] = str(base)
        repo = base / "repo"
        make_workspace(repo, 10)
        start = time.perf_counter()
        history(repo, a.tasks, a.steps)
        made = time.perf_counter() - start
        gitckpt = shutil.which("gitckpt") or "gitckpt"
        build, first = timed([gitckpt, "--json", "search", "needle7"], repo)
        assert json.loads(first)["rebuilt"], first
        ours, theirs = [], []
        for i in range(a.repeat):
            word = f"needle{(i * 37) % a.tasks}"
            took, out = timed([gitckpt, "--json", "search", word], repo)
            hits = json.loads(out)["hits"]
            assert [h["task"] for h in hits] == [f"task-{(i * 37) % a.tasks:04d}"], out
            ours.append(took)
            took, out = timed(["git", "log", "--notes=checkpoints", f"--grep={word}\\b",
                               "--format=%H", "--glob=refs/checkpoints/*/head"], repo)
            assert len(out.split()) == 1, out
            theirs.append(took)
        plain, indexed = save_cost(base, max(a.repeat, 9))
        unanswering, answering = answered_cost(base, 1000, max(a.repeat, 9))
    size = a.tasks * (a.steps + 1)
    print(f"## search at {a.tasks:,} tasks x {a.steps} steps ({size:,} checkpoints), "
          f"medians of {a.repeat} (ms)\n")
    print(f"history written by fast-import in {made:.1f} s")
    print(f"first search, building the index: {build:.0f} ms")
    print(f"`gitckpt search WORD`: {statistics.median(ours):.0f} ms; `git log "
          f"--notes=checkpoints --grep`: {statistics.median(theirs):.0f} ms; ratio "
          f"{statistics.median(ours) / statistics.median(theirs):.3f}")
    print(f"a save of 1,000 files: {plain:.1f} ms without an index, {indexed:.1f} ms with one "
          f"({(indexed / plain - 1) * 100:+.1f}%); the index update itself, timed inside the "
          f"save: {SAVED[0]:.2f} ms ({SAVED[0] / plain * 100:.1f}% of a save)")
    print(f"a save at 1,000 steps: {unanswering:.1f} ms; one that answers a question: "
          f"{answering:.1f} ms (ratio {answering / unanswering:.2f})")


if __name__ == "__main__":
    main()
