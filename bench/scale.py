"""How gitckpt's cost grows with a task's steps and a workspace's files, beside git's."""

# Usage: python bench/scale.py [--steps 10,100,1000,10000] [--files 1000,10000,100000]
#        [--repeat 5] [--quick] [--json FILE] [--skip steps|files] [--keep]
#
# Steps axis: a ~1,000-file workspace, `gitckpt init`, then one task of N steps written in one
# batch with Timeline.create_task (src/hot.py gains a line at each step; notes with a title,
# a conclusion, files, a decision every 5th step and a command every 3rd); the CLI's read
# commands beside git's on a plain repository of the same N commits (git fast-import).
# Files axis: a nested tree of N files (and ignored node_modules/ and dist/), the first save
# (`gitckpt init`), a no-change save served by the per-user service with its watcher on (a
# session-start hook starts the watcher), the saves after a `touch` of every file and a
# one-file restore, beside git's plumbing with a private index and `git restore`.
# Every figure is a median of --repeat runs of a whole process: wall and CPU (user + system of
# the children, plus the service process's own CPU for gitckpt's commands), in ms; k is the
# slope of a least-squares fit of log(CPU) on log(size) (k = 1: linear). gitckpt and git run
# in turn (A B A B ...), except after a touch: gitckpt's two saves, the watcher's quiet period,
# then git's two (git's private index does not see gitckpt's saves). The service's CPU is read
# from /proc in clock ticks (10 ms), the children's from getrusage. Every process runs
# with HOME, XDG_* and GITCKPT_RUNTIME_DIR in a temporary folder, so the service is this
# run's own; it is stopped at the end.

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ENV, du  # bench.py also compiles gitckpt to bytecode, as an install does

GITCKPT = str(Path(sys.executable).parent / "gitckpt")
QUIET = 2.0  # the watcher's default quiet period (GITCKPT_QUIET), s
STEP_FILES = 1000  # the steps axis' workspace
HOT = "src/hot.py"
TICK = os.sysconf("SC_CLK_TCK")
Cmd = list[str]

# -- the workspace -----------------------------------------------------------------------------

TOP = ["src", "lib", "pkg", "tests", "tools", "docs"]
NAMES = ("core util api model view io net db auth cache parse render sched store cli proto event "
         "plugin config metrics queue worker index codec").split()
BRANCHING = [len(TOP), 2, 3, 3, 3, 4, 4, 5]  # names per level: shared prefixes, then spread
EXTS = [".py", ".ts", ".go", ".rs", ".c", ".h", ".md", ".json", ".txt", ".yaml"]
KB, MB = 1024, 1024 * 1024


def source_lines(rng: random.Random, n: int = 4096) -> list[bytes]:
    """A pool of source-like lines (code, comments, blank lines) that files are cut from,
    given twice over so that any `n` lines from any start are one slice."""
    words = [*NAMES, "value", "result", "count", "items", "path", "data", "self", "key"]
    out = []
    for i in range(n):
        a, b, c = rng.choice(words), rng.choice(words), rng.choice(words)
        out.append(rng.choice((
            f"def {a}_{b}({c}, {a}=None):\n", f"    {a} = {b}.{c}({rng.randint(0, 999)})\n",
            f"    if {a} is not None and {b} > {rng.randint(0, 99)}:\n",
            f"        return {a}_{c}[{i % 17}] + {b}\n", f"# {a} {b}: keep the {c} in order\n",
            f"class {a.title()}{b.title()}({c.title()}):\n", "\n",
            f"import {a}.{b} as {c}_{i % 7}\n", f'    log.info("{a} %s {b}", {c})\n',
        )).encode())
    return out + out


def text_file(rng: random.Random, pool: list[bytes], header: str, size: int) -> bytes:
    """About `size` bytes: a header naming the file (so no two are alike), then lines of the
    pool from a random start."""
    half = len(pool) // 2
    start, need = rng.randrange(half), size // 20 + 1
    body = b"".join(pool[start:start + min(need, half)])
    if need > half:
        body *= need // half + 1
    return (f"# {header}\n".encode() + body)[: max(size, 64) - 1] + b"\n"


def folders(rng: random.Random, n_files: int) -> list[str]:
    """Folders 5-8 deep that files go in, prefixes shared: at 10,000 files about 190 of
    them, 570 folders in all."""
    out: set[str] = set()
    for _ in range(max(6, n_files // 50)):
        depth = rng.randint(5, 8)
        parts = [rng.choice(TOP)] + [rng.choice(NAMES[:BRANCHING[level]])
                                     for level in range(1, depth)]
        out.add("/".join(parts))
    return sorted(out)


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def ignored_tree(root: Path, top: str, n: int, rng: random.Random, pool: list[bytes]) -> None:
    for i in range(n):
        pkg = f"pkg{i // 40:03d}"
        rel = (f"{top}/{pkg}/lib/{rng.choice(NAMES)}/{i}.js" if top == "node_modules"
               else f"{top}/assets/chunk{i // 60:03d}/{i}.js")
        write(root / rel, text_file(rng, pool, rel, int(200 * 40 ** rng.random())))


def make_tree(root: Path, n_files: int, seed: int) -> list[Path]:
    """`n_files` files in folders 5-8 deep (most 200 B-8 KB of source-like text, 1% 50-200 KB,
    a handful of 1-5 MB random bytes), src/hot.py, and ignored node_modules/ and dist/ (10%
    as many files each), committed once in a new git repository. The same for a seed."""
    rng = random.Random(seed)
    pool = source_lines(rng)
    dirs = folders(rng, n_files)
    binary = set(rng.sample(range(n_files), max(2, min(8, n_files // 2000))))
    files = []
    for i in range(n_files):
        d = rng.choice(dirs)
        if i in binary:
            path, data = root / d / f"blob_{i}.bin", rng.randbytes(rng.randint(MB, 5 * MB))
        else:
            path = root / d / f"{rng.choice(NAMES)}_{i}{rng.choice(EXTS)}"
            size = (rng.randint(50 * KB, 200 * KB) if rng.random() < 0.01
                    else int(200 * 40 ** rng.random()))  # log-uniform, 200 B to 8 KB
            data = text_file(rng, pool, f"{d}/{path.name}", size)
        write(path, data)
        files.append(path)
    write(root / HOT, b"".join(pool[:20]))
    files.append(root / HOT)
    (root / ".gitignore").write_text("node_modules/\ndist/\n*.log\n")
    ignored_tree(root, "node_modules", n_files // 10, rng, pool)
    ignored_tree(root, "dist", n_files // 10, rng, pool)
    run(["git", "init", "-q", "-b", "main"], root)
    run(["git", "add", "-A"], root)
    run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c",
         "gc.auto=0", "commit", "-q", "-m", "first"], root)
    run(["git", "config", "gc.auto", "0"], root)  # no background gc during the timings
    return files


def hot_line(n: int) -> bytes:
    return f"step_{n} = {n * 7 % 1000}\n".encode()


# -- running and timing ------------------------------------------------------------------------


def run(cmd: Cmd, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
        ) -> str:
    """Run `cmd`; its stdout. A failure stops the bench with the command and its stderr."""
    p = subprocess.run(cmd, cwd=cwd, env=env or ENV, input=stdin, capture_output=True,
                       text=True, errors="replace")
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)} in {cwd}\n"
                         f"{p.stderr}{p.stdout[-2000:]}")
    return p.stdout


def service_cpu(pid: int | None) -> float:
    """CPU seconds of the service process so far (all its threads and reaped children)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / TICK


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def med(self) -> tuple[float, float]:
        return statistics.median(self.wall), statistics.median(self.cpu)


@dataclass
class Bench:
    """The environment of every process, the service's pid, and the samples by axis."""

    env: dict[str, str]
    pid: int | None = None
    results: dict[str, dict[str, dict[int, Samples]]] = field(default_factory=dict)
    disk: dict[str, int] = field(default_factory=dict)

    def timed(self, axis: str, op: str, size: int, cmds: list[Cmd], cwd: Path,
              env: dict[str, str] | None = None, stdin: str | None = None,
              service: bool = False) -> str:
        """Run `cmds` in turn as one sample of `op`; the last one's stdout. `service`: the
        service's CPU meanwhile is the command's too (it served it, or its watcher saw it)."""
        pid = self.pid if service else None
        c0, s0 = children_cpu(), service_cpu(pid)
        start = time.perf_counter()
        out = ""
        for cmd in cmds:
            out = run(cmd, cwd, env or self.env, stdin)
        wall = (time.perf_counter() - start) * 1000
        cpu = (children_cpu() - c0 + service_cpu(pid) - s0) * 1000
        s = self.results.setdefault(axis, {}).setdefault(op, {}).setdefault(size, Samples())
        s.wall.append(wall)
        s.cpu.append(cpu)
        return out

    def ck(self, *args: str) -> Cmd:
        return [GITCKPT, *args]


def fit(points: list[tuple[int, float]]) -> float | None:
    """The slope of log(y) on log(x), least squares; None under two sizes."""
    pts = [(math.log(x), math.log(max(y, 1e-3))) for x, y in points]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


# -- the service -------------------------------------------------------------------------------


def service_status(b: Bench) -> tuple[int | None, int]:
    """(pid, requests served) of the running service, or (None, 0)."""
    p = subprocess.run([GITCKPT, "service", "status"], env=b.env, capture_output=True,
                       text=True, cwd=b.env["HOME"])
    pid = re.search(r"pid (\d+)", p.stdout)
    served = re.search(r"(\d+) request\(s\) served", p.stdout)
    if p.returncode != 0 or pid is None:
        return None, 0
    return int(pid.group(1)), int(served.group(1)) if served else 0


def hook(b: Bench, root: Path) -> None:
    """A session-start hook, as an agent host sends it: the service starts watching root."""
    payload = json.dumps({"session_id": "scale", "cwd": str(root),
                          "hook_event_name": "SessionStart", "source": "startup"})
    run(b.ck("hook", "session-start"), root, b.env, payload)


def start_service(b: Bench) -> None:
    hook(b, Path(b.env["HOME"]))  # no service runs: this client starts one
    for _ in range(300):
        b.pid, _ = service_status(b)
        if b.pid is not None:
            return
        time.sleep(0.05)
    raise SystemExit("the gitckpt service did not start")


def watch(b: Bench, root: Path) -> None:
    """The service's watcher on root, its first full scan done."""
    hook(b, root)
    for _ in range(200):
        p = run(b.ck("service", "status"), root, b.env)
        if str(root) in p:
            break
        time.sleep(0.05)
    else:
        raise SystemExit(f"the service does not watch {root}:\n{p}")
    settle(b, 0.5)


def settle(b: Bench, wait: float = QUIET + 0.5) -> None:
    """Sleep `wait` (past the watcher's quiet period), then until the service's CPU stands
    still for half a second: its watcher has done what the last writes asked of it."""
    time.sleep(wait)
    last, still = service_cpu(b.pid), 0
    for _ in range(1200):
        time.sleep(0.1)
        now = service_cpu(b.pid)
        still = still + 1 if now == last else 0
        last = now
        if still >= 5:
            return


# -- the steps axis ----------------------------------------------------------------------------


def stamp(n: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_796_000_000 + 60 * n))


def step_note(n: int, tree: str) -> Any:
    from gitckpt.engine.notes import Note

    noun = NAMES[n % len(NAMES)]
    return Note(
        kind="step", task="x", step=n, created_at=stamp(n),
        title=f"Step {n}: move the {noun} lookups behind the cache",
        conclusion=f"the {noun} path now reads through the cache; {n % 13} call sites left",
        next=f"switch the {NAMES[(n + 1) % len(NAMES)]} callers",
        decisions=[f"keep the {noun} cache per process, not shared ({n // 5})"]
        if n % 5 == 0 else [],
        commands=[{"command": f"pytest tests/test_{noun}.py -q", "exit_code": 0 if n % 4 else 1,
                   "tree": tree}] if n % 3 == 0 else [],
        files=[{"path": HOT, "note": f"step_{n} added, read by the {noun} path"}])


def build_task(root: Path, steps: int) -> tuple[str, str]:
    """A task of `steps` steps in one batch, src/hot.py a line longer at each; the work tree
    left as the last step. (task id, its name)"""
    from gitckpt.core.objects import Mode, apply_changes
    from gitckpt.engine.notes import Note
    from gitckpt.service.workspace import open_workspace

    tl = open_workspace(root).timeline
    store = tl.store
    base = tl.head(tl.resolve(None)).tree
    text = bytearray((root / HOT).read_bytes())
    history = []
    for n in range(1, steps + 1):
        text += hot_line(n)
        blob = store.write_blob(bytes(text))
        tree = apply_changes(store.read_tree, store.write_tree, base,
                             {HOT.encode(): (int(Mode.FILE), blob)})
        history.append((tree, step_note(n, tree)))
    name = f"scale task of {steps} steps"
    meta = Note(kind="init", task="x", step=0, name=name, title=name, created_at=stamp(0),
                goal="move every lookup behind the cache without a behaviour change")
    task = tl.create_task(meta, history, activate=True)
    (root / HOT).write_bytes(bytes(text))
    return str(task), name


def plain_history(repo: Path, steps: int) -> None:
    """`steps` commits on main, each a line more in src/hot.py, written by git fast-import."""
    head = run(["git", "rev-parse", "HEAD"], repo).strip()
    text = bytearray(run(["git", "show", f"HEAD:{HOT}"], repo).encode())
    p = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, env=ENV,
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdin is not None
    for n in range(1, steps + 1):
        text += hot_line(n)
        msg = f"Step {n}".encode()
        p.stdin.write(b"commit refs/heads/main\ncommitter bench <bench@example.com> %d +0000\n"
                      b"data %d\n%s\n" % (1_796_000_000 + 60 * n, len(msg), msg))
        if n == 1:
            p.stdin.write(b"from %s\n" % head.encode())
        p.stdin.write(b"M 100644 inline %s\ndata %d\n%s\n" % (HOT.encode(), len(text), text))
    p.stdin.close()
    if p.wait() != 0:
        raise SystemExit(f"git fast-import failed: {p.stderr.read().decode() if p.stderr else ''}")


def objects(repo: Path) -> dict[str, int]:
    out = run(["git", "count-objects", "-v"], repo)
    return {k: int(v) for k, v in (line.split(": ") for line in out.splitlines())}


def disk(root: Path, plain: Path, without: int) -> dict[str, int]:
    """The workspace's .git with the task and without it; the plain repository's history as
    N commits would leave it (its fast-import pack unpacked: loose) and after `git gc`."""
    out = {"git_without": without, "git_with_task": du(root / ".git"),
           "gitckpt_loose_objects": objects(root)["count"]}
    packs = plain / ".git" / "objects" / "pack"
    for pack in sorted(packs.glob("*.pack")):
        aside = pack.parent.parent.parent / pack.name
        pack.rename(aside)
        pack.with_suffix(".idx").unlink()
        with open(aside, "rb") as f:
            p = subprocess.run(["git", "unpack-objects", "-q"], cwd=plain, env=ENV, stdin=f,
                               capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"git unpack-objects failed in {plain}: {p.stderr}")
        aside.unlink()
    out["plain_loose"] = du(plain / ".git")
    out["plain_loose_objects"] = objects(plain)["count"]
    run(["git", "gc", "-q"], plain)
    out["plain_gc"] = du(plain / ".git")
    return out


STEP_OPS = {  # name: (gitckpt's arguments, git's arguments, served)
    "resume": (["resume"], ["log", "-1"], True),
    "report": (["report"], ["log"], False),
    "why src/hot.py:1": (["why", f"{HOT}:1"], ["blame", "-L1,1", "HEAD", "--", HOT], True),
    "log --limit 20": (["log", "--limit", "20"], ["log", "-20"], True),
    "tasks": (["tasks"], ["for-each-ref", "refs/heads"], False),
}


def check_step_output(op: str, out: str, steps: int, name: str, task: str) -> None:
    wanted = {"resume": [f"# Task: {name}", f"active, step {steps}\n", f"Step {steps}:"],
              "report": [name, f"**Steps** ({steps})", f"Step {steps}:"],
              "why src/hot.py:1": [f"{HOT}:1 ", f"{steps + 1} checkpoints read"],
              "log --limit 20": [f"Step {steps}:", f"Step {max(1, steps - 19)}:"],
              "tasks": [task, "active"]}[op]
    missing = [w for w in wanted if w not in out]
    if op == "log --limit 20" and steps > 20 and f"Step {steps - 20}:" in out:
        missing.append(f"no Step {steps - 20}")
    if missing:
        raise SystemExit(f"`gitckpt {op}` at {steps} steps lacks {missing}:\n{out[:3000]}")


def steps_size(b: Bench, base: Path, steps: int, repeat: int, at_disk: bool) -> None:
    root, plain = base / f"steps-{steps}", base / f"steps-{steps}-git"
    make_tree(root, STEP_FILES, seed=11)
    shutil.copytree(root / ".git", plain / ".git")
    without = du(root / ".git")
    run(b.ck("init", "scale setup", "--goal", "the task the long one suspends"), root, b.env)
    c0, t0 = time.process_time(), time.perf_counter()
    task, name = build_task(root, steps)
    built = Samples([(time.perf_counter() - t0) * 1000], [(time.process_time() - c0) * 1000])
    b.results.setdefault("steps", {}).setdefault("create_task (in process, 1 run)", {})[
        steps] = built
    plain_history(plain, steps)
    if at_disk:
        b.disk = {"steps": steps, **disk(root, plain, without)}
    else:
        run(["git", "gc", "-q"], plain)
    watch(b, root)
    for op, (ours, theirs, served) in STEP_OPS.items():
        check_step_output(op, run(b.ck(*ours), root, b.env), steps, name, task)  # warm-up
        run(["git", *theirs], plain)
        for _ in range(repeat):
            out = b.timed("steps", f"gitckpt {op}", steps, [b.ck(*ours)], root,
                          service=served)
            check_step_output(op, out, steps, name, task)
            out = b.timed("steps", f"git {' '.join(theirs)}", steps, [["git", *theirs]], plain)
            assert out.strip(), f"git {theirs} printed nothing"
    last = run(["git", "blame", "-L1,1", "HEAD", "--", HOT], plain)
    assert (root / HOT).read_text().splitlines()[0] in last, last
    if at_disk:
        run(["git", "gc", "-q"], root)
        b.disk["git_with_task_gc"] = du(root / ".git")
    shutil.rmtree(root)
    shutil.rmtree(plain)


# -- the files axis ----------------------------------------------------------------------------


def forget(root: Path) -> None:
    """The workspace as before `gitckpt init`: no refs, notes or state of gitckpt's."""
    refs = run(["git", "for-each-ref", "--format=delete %(refname)", "refs/checkpoints",
                "refs/notes/checkpoints"], root)
    run(["git", "update-ref", "--stdin"], root, stdin=refs)
    shutil.rmtree(root / ".git" / "gitckpt", ignore_errors=True)


def every_file(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames.remove(".git")
        for f in filenames:
            yield Path(dirpath, f)


def saved_step(out: str) -> int:
    return int(json.loads(out)["step"])


FIRST, NOCHANGE, RESTORE = "gitckpt first save (init)", "gitckpt no-change save", \
    "gitckpt restore of one file --apply"
TOUCHED = {k: f"gitckpt save after touch, {k}" for k in ("first", "second")}
FILE_PAIRS = {  # gitckpt's row: git's
    FIRST: "git add -A + write-tree, empty index",
    NOCHANGE: "git add -A + write-tree, warm index",
    **{v: f"git add -A + write-tree after touch, {k}" for k, v in TOUCHED.items()},
    RESTORE: "git restore --source=HEAD~ -- file",
}


class Files:
    """One files-axis size: its workspace, git's private index, the bench."""

    def __init__(self, b: Bench, root: Path, n: int, files: list[Path]) -> None:
        self.b, self.root, self.n, self.files = b, root, n, files
        self.index = root.parent / f"index-{n}"
        self.genv = {**b.env, "GIT_INDEX_FILE": str(self.index)}
        self.plumbing = [["git", "add", "-A"], ["git", "write-tree"]]

    def time(self, op: str, cmds: list[Cmd], env: dict[str, str] | None = None) -> str:
        return self.b.timed("files", op, self.n, cmds, self.root, env,
                            service=op.startswith("gitckpt"))

    def first(self, repeat: int) -> None:
        for r in range(repeat):
            if r:
                forget(self.root)
            self.time(FIRST, [self.b.ck("init", f"files {self.n} {r}")])
            self.index.unlink(missing_ok=True)
            tree = self.time(FILE_PAIRS[FIRST], self.plumbing, self.genv)
            assert re.fullmatch(r"[0-9a-f]{40}\n", tree), tree

    def nochange(self, repeat: int) -> None:
        _, before = service_status(self.b)
        for r in range(repeat):
            out = self.time(NOCHANGE, [self.b.ck("save", f"no change {r}")])
            assert "step" in out.lower(), out
            self.time(FILE_PAIRS[NOCHANGE], self.plumbing, self.genv)
        _, after = service_status(self.b)
        assert after - before >= repeat, f"the saves were not served ({before} -> {after})"

    def touched(self, repeat: int) -> None:
        """Each round: touch every file; two saves; the watcher settles; git twice."""
        for r in range(repeat):
            now = time.time()
            for f in every_file(self.root):
                os.utime(f, (now, now))
            # past the racy window of both (gitckpt re-reads a file changed within 2 s of
            # the scan that cached it; git one as new as its index): the steady state
            time.sleep(2.5)
            for k, op in TOUCHED.items():
                self.time(op, [self.b.ck("save", f"touched {r} {k}")])
            settle(self.b)
            for op in TOUCHED.values():
                self.time(FILE_PAIRS[op], self.plumbing, self.genv)

    def restore(self, repeat: int) -> None:
        """A file edited and saved, restored from the step before; `git restore` of another
        file from HEAD~ (a commit that changed it)."""
        f, g = [p for p in self.files if p.suffix in (".py", ".txt", ".md")][:2]
        rel_f, rel_g = str(f.relative_to(self.root)), str(g.relative_to(self.root))
        original, old_g = f.read_bytes(), g.read_bytes()
        g.write_bytes(old_g + b"edited for git restore\n")
        run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit",
             "-q", "-m", "edit", "--", rel_g], self.root)
        settle(self.b)
        for r in range(repeat):
            before = saved_step(run(self.b.ck("--json", "save", f"before restore {r}"),
                                    self.root, self.b.env))
            f.write_bytes(original + f"edit {r}\n".encode())
            time.sleep(0.15)  # not a half-written file
            after = saved_step(run(self.b.ck("--json", "save", f"edited {r}"), self.root,
                                   self.b.env))
            assert after == before + 1, (before, after)
            self.time(RESTORE, [self.b.ck("restore", str(before), "--apply", "--yes", "--",
                                          rel_f)])
            assert f.read_bytes() == original, f"{rel_f} was not restored"
            self.time(FILE_PAIRS[RESTORE], [["git", "restore", "--source=HEAD~", "--", rel_g]])
            assert g.read_bytes() == old_g, f"{rel_g} was not restored by git"
            g.write_bytes(old_g + b"edited for git restore\n")
            settle(self.b)


def files_size(b: Bench, base: Path, n: int, repeat: int) -> None:
    root = base / f"files-{n}"
    t = time.perf_counter()
    files = make_tree(root, n, seed=7)
    dirs = len({p.parent for p in every_file(root)})
    print(f"[files {n:,}] tree of {dirs:,} folders, {du(root, {'.git'}) / MB:.0f} MiB, built in "
          f"{time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    time.sleep(2.5)  # older than any racy-timestamp window: a settled workspace
    x = Files(b, root, n, files)
    x.first(repeat if n < 100_000 else min(repeat, 3))
    watch(b, root)  # the session's watcher, its first full scan
    run(b.ck("save", "warm"), root, b.env)
    settle(b)
    x.nochange(repeat)
    x.touched(repeat)
    x.restore(repeat)
    shutil.rmtree(root)
    x.index.unlink(missing_ok=True)


# -- the tables --------------------------------------------------------------------------------


def table(b: Bench, axis: str, unit: str, repeat: int) -> str:
    rows = b.results.get(axis, {})
    sizes = sorted({s for by in rows.values() for s in by})
    ours = [op for op in rows if not op.startswith("git ")]
    pair = FILE_PAIRS if axis == "files" else {
        f"gitckpt {op}": f"git {' '.join(t)}" for op, (_, t, _) in STEP_OPS.items()}
    head = " | ".join(f"{s:,} {unit}" for s in sizes)
    one = unit.rstrip("s")
    out = [f"### {unit}: medians of {repeat}, wall ms (CPU ms); k from CPU; marginal: CPU "
           f"per {one} between the two largest sizes", "",
           f"| operation | {head} | git at {sizes[-1]:,} | ratio | k | git k | marginal |",
           "|---|" + "---:|" * (len(sizes) + 5)]
    for op in ours:
        by = rows[op]
        cells = [cell(by[s]) if s in by else "-" for s in sizes]
        k = fit([(s, by[s].med()[1]) for s in by])
        git = rows.get(pair.get(op, ""), {})
        gk = fit([(s, git[s].med()[1]) for s in git]) if git else None
        top = max(by)
        gcell = ratio = "-"
        if top in git:
            gcell = f"{cell(git[top])} `{pair[op]}`"
            ratio = f"{by[top].med()[0] / git[top].med()[0]:.1f}"
        out.append(f"| {op} | {' | '.join(cells)} | {gcell} | {ratio} | {show(k)} | {show(gk)} "
                   f"| {marginal(by, one)} |")
    return "\n".join(out)


def cell(s: Samples) -> str:
    wall, cpu = s.med()
    return f"{wall:.0f} ({cpu:.0f})"


def marginal(by: dict[int, Samples], one: str) -> str:
    """CPU added per step (or file) between the two largest sizes, in µs."""
    if len(by) < 2:
        return "-"
    small, large = sorted(by)[-2:]
    us = (by[large].med()[1] - by[small].med()[1]) / (large - small) * 1000
    return f"{us:,.0f} µs/{one}"


def show(k: float | None) -> str:
    return "-" if k is None else f"{k:.2f}"


def disk_table(d: dict[str, int]) -> str:
    def mib(v: int) -> str:
        return f"{v / MB:.1f} MiB"

    return "\n".join([
        f"### disk at {d['steps']:,} steps (workspace of {STEP_FILES:,} files)", "",
        "| | size | loose objects |", "|---|---:|---:|",
        f"| .git before gitckpt | {mib(d['git_without'])} | |",
        f"| .git with the task | {mib(d['git_with_task'])} | {d['gitckpt_loose_objects']:,} |",
        f"| .git with the task, after `git gc` | {mib(d['git_with_task_gc'])} | |",
        f"| plain git, same history, loose | {mib(d['plain_loose'])} "
        f"| {d['plain_loose_objects']:,} |",
        f"| plain git, after `git gc` | {mib(d['plain_gc'])} | |"])


def dump(b: Bench) -> dict[str, Any]:
    out: dict[str, Any] = {"disk": b.disk}
    for axis in ("steps", "files"):
        out[axis] = {op: {str(s): {"wall_ms": v.wall, "cpu_ms": v.cpu,
                                   "median_wall_ms": v.med()[0], "median_cpu_ms": v.med()[1]}
                          for s, v in by.items()}
                     for op, by in b.results.get(axis, {}).items()}
        out[f"{axis}_k"] = {op: {"k_cpu": fit([(s, v.med()[1]) for s, v in by.items()]),
                                 "k_wall": fit([(s, v.med()[0]) for s, v in by.items()])}
                            for op, by in b.results.get(axis, {}).items()}
    return out


# -- main --------------------------------------------------------------------------------------


def sizes(text: str) -> list[int]:
    return sorted(int(s.replace("_", "")) for s in text.split(",") if s.strip())


def private_env(tmp: Path) -> dict[str, str]:
    """Every folder a gitckpt process reads or writes outside the workspace, in `tmp`."""
    run_dir = Path(tempfile.mkdtemp(prefix="gs", dir=tmp))  # 0700: the service's sockets
    home = tmp / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(run_dir),
            "XDG_STATE_HOME": str(tmp / "state"), "XDG_CONFIG_HOME": str(tmp / "config"),
            "XDG_CACHE_HOME": str(tmp / "cache"), "GITCKPT_RUNTIME_DIR": str(run_dir),
            "GITCKPT_SERVICE_IDLE": "3600"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", default="10,100,1000,10000", help="task lengths")
    ap.add_argument("--files", default="1000,10000,100000", help="workspace sizes")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="steps 10,100; files 1000,3000; repeat 2 (a few minutes at most)")
    ap.add_argument("--json", metavar="FILE", help="also write the raw numbers here")
    ap.add_argument("--skip", choices=("steps", "files"), action="append", default=[],
                    help="leave out an axis (repeatable)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary folder (the service's log is in state/gitckpt/)")
    a = ap.parse_args()
    if a.quick:
        a.steps, a.files, a.repeat = "10,100", "1000,3000", 2
    step_sizes, file_sizes = sizes(a.steps), sizes(a.files)
    tmp = Path(tempfile.mkdtemp(prefix="gitckpt-scale-", dir="/tmp"))  # short socket paths
    ENV.update(private_env(tmp))  # git's processes too: no user's config
    for k in ("GITCKPT_SERVICE", "GITCKPT_WATCH"):
        ENV.pop(k, None)  # the defaults: a service, and its watcher
    b = Bench(dict(ENV))
    os.environ.update(b.env)  # create_task, in this process, reads the same settings
    started = time.perf_counter()
    try:
        start_service(b)
        if "steps" not in a.skip:
            disk_at = 1000 if 1000 in step_sizes else step_sizes[-1]
            for steps in step_sizes:
                steps_size(b, tmp, steps, a.repeat, steps == disk_at)
                print(f"[steps {steps:,}] done at {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
        if "files" not in a.skip:
            for n in file_sizes:
                files_size(b, tmp, n, a.repeat)
                print(f"[files {n:,}] done at {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
        pid, _ = service_status(b)
        assert pid == b.pid, f"the service changed during the run ({b.pid} -> {pid})"
    finally:
        p = subprocess.run([GITCKPT, "service", "stop"], env=b.env, capture_output=True,
                           text=True, cwd=b.env["HOME"])
        if p.returncode != 0:
            print(f"gitckpt service stop: {p.returncode} {p.stderr}", file=sys.stderr)
        if a.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    parts = [table(b, axis, unit, a.repeat) for axis, unit in (("steps", "steps"),
                                                              ("files", "files"))
             if b.results.get(axis)]
    if b.disk:
        parts.append(disk_table(b.disk))
    print("\n\n".join(parts))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(dump(b), indent=1) + "\n")


if __name__ == "__main__":
    main()
