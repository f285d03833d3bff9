"""The invariant every path that writes a checkpoint keeps, on both stores and through every
writer: each new step and drift tree is the files as they are (a snapshot git itself computes
in a throwaway index), and every operation that changes workspace files names a safety copy
that brings the files before it back, byte for byte.

The edits include those a watcher's events cannot show (writes through mmap and through a hard
link from outside), same-size rewrites with the mtime put back, mode-only changes, file/folder
swaps, renames over, symlink retargets and edits racing the writer. In a git repository a real
watcher runs in the process, so in-process writers take its fast path: this harness is what a
new fast path must pass. It knows the product only through its front doors (service, the MCP
tools, the hook entry, the CLI), never through module paths of the engine.
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from conftest import RepoGuard, git, git_tree, make_plain, make_repo, service
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from gitckpt.engine.watch import Settings
from gitckpt.hooks import run as hooks
from gitckpt.mcp.server import build_server
from gitckpt.store import journal as journals

pytestmark = [pytest.mark.slow, pytest.mark.settling, pytest.mark.usefixtures("full_mcp_results")]

QUIET = Settings(quiet=3600.0, max_wait=3600.0, poll=3600.0)  # the harness takes every capture
NAMES = ["a.txt", "b.txt", "c.py", "d/e.txt", "d/f.txt", "g/h/i.txt"]
EDITS = ["write", "same_size_mtime", "chmod", "hardlink", "mmap", "delete", "rename_over",
         "swap", "symlink"]
WRITERS = ["cli_save", "mcp_save", "hook", "watch", "save", "restore", "revert", "checkout",
           "fetch"]
RACING = {"cli_save", "mcp_save", "hook", "watch", "save"}  # writers an edit may race
# Writers that scan through the watcher's journal when one runs in the process: an edit no
# event shows (mmap, a hard link from outside) may be missing from their trees for at most
# RECHECK_SAVES of their scans. Every other writer stats every file.
FAST = {"mcp_save", "hook", "watch", "save"}
RECHECK_SAVES = 10  # the bound docs/concepts.md states
TOKEN = re.compile(rb"(?:(v\d{5}\|)\1*)?")  # a racing writer's file: one version, whole


@dataclass
class Bench:
    """One workspace under test: its kind, root, the folder outside it, and what is known."""

    kind: str
    root: Path
    outside: Path
    remote: str
    counter: itertools.count = field(default_factory=itertools.count)
    known: set[str] = field(default_factory=set)  # commits seen so far (all refs)
    guard: RepoGuard | None = None
    watched: bool = False
    unseen: set[str] = field(default_factory=set)  # paths edited where no event shows it

    def git_dir(self) -> Path:
        return self.root / (".git" if self.kind == "git" else ".gitckpt")


def files_tree(b: Bench) -> str:
    """What git itself computes for the in-scope files now (a throwaway index)."""
    if b.kind == "git":
        return git_tree(b.root)
    scratch = b.outside / "scratch.git"
    if not scratch.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(scratch)], check=True)
    index = b.outside / "scratch-index"
    env = {**os.environ, "GIT_DIR": str(scratch), "GIT_WORK_TREE": str(b.root),
           "GIT_INDEX_FILE": str(index)}
    try:
        subprocess.run(["git", "-C", str(b.root), "add", "-A", "--", ".", ":(exclude).gitckpt"],
                       env=env, check=True, capture_output=True)
        return subprocess.run(["git", "-C", str(b.root), "write-tree"], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
    finally:
        index.unlink(missing_ok=True)


def new_commits(b: Bench) -> list[tuple[str, dict, str]]:
    """Commits reachable from the checkpoint refs that were not there before: (id, note,
    tree), oldest first; they become known."""
    store = service.open_timeline(b.root).store
    tips = store.list_refs("refs/checkpoints/")
    found: dict[str, tuple[dict, str]] = {}
    stack = [oid for name, oid in tips.items() if not name.endswith("/card")]
    order: list[str] = []
    while stack:
        oid = stack.pop()
        if oid in b.known or oid in found:
            continue
        commit = store.read_commit(oid)
        note = json.loads(store.read_note(oid) or "{}")
        found[oid] = (note, commit.tree)
        order.append(oid)
        stack.extend(commit.parents)
    b.known.update(found)
    return [(oid, *found[oid]) for oid in reversed(order)]


# -- edits --------------------------------------------------------------------------------------

def regular_files(root: Path) -> list[Path]:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".gitckpt")]
        out += [Path(folder, n) for n in names if Path(folder, n).is_file()
                and not Path(folder, n).is_symlink()]
    return sorted(out)


def edit(b: Bench, kind: str, pick: int, data: bytes) -> None:  # noqa: C901 (baseline)
    """Apply one edit of `kind` to a file chosen by `pick` (new content from `data`)."""
    files = [f for f in regular_files(b.root) if f.name not in (".gitignore",)]
    target = files[pick % len(files)] if files else b.root / "a.txt"
    data = data or b"x"
    if kind == "write" or not files:
        name = b.root / NAMES[pick % len(NAMES)]
        if name.is_dir():
            shutil.rmtree(name)
        for folder in reversed(name.relative_to(b.root).parents[:-1]):
            if (b.root / folder).is_file() or (b.root / folder).is_symlink():
                (b.root / folder).unlink()  # a swap made this folder a file: undo it
        name.parent.mkdir(parents=True, exist_ok=True)
        name.write_bytes(data)
    elif kind == "same_size_mtime":
        st_before = target.stat()
        old = target.read_bytes()
        new = bytes((c + 1) % 256 for c in old) if old else b""
        target.write_bytes(new)
        os.utime(target, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    elif kind == "chmod":
        os.chmod(target, target.stat().st_mode ^ 0o100)
    elif kind == "hardlink":
        # a link made from outside long ago (set up before the watcher started), written now
        for link in sorted(b.outside.glob("link-*")):
            if link.stat().st_ino == target.stat().st_ino:
                with open(link, "r+b") as f:
                    f.write(data)
                b.unseen.add(target.relative_to(b.root).as_posix())
                return
        with open(target, "ab") as f:  # no old link to this file: an ordinary edit
            f.write(data)
    elif kind == "mmap":
        if target.stat().st_size == 0:
            target.write_bytes(b"mapped")
            return
        with open(target, "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
            n = min(len(m), len(data))
            m[:n] = bytes((c ^ 0x55) | 1 for c in data[:n])
            m.flush()
        b.unseen.add(target.relative_to(b.root).as_posix())
    elif kind == "delete":
        target.unlink()
    elif kind == "rename_over":
        other = files[(pick + 1) % len(files)]
        if other != target:
            os.replace(target, other)
    elif kind == "swap":
        if target.parent != b.root and len(list(target.parent.iterdir())) == 1:
            folder = target.parent
            shutil.rmtree(folder)
            folder.write_bytes(data)  # the folder became a file
        else:
            target.unlink()
            target.mkdir()
            (target / "inside.txt").write_bytes(data)  # the file became a folder
    elif kind == "symlink":
        link = b.root / "ln"
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            shutil.rmtree(link)
        os.symlink(data.hex()[:40] or "x", link)
    else:
        raise AssertionError(kind)


class Racer:
    """Rewrites one file, whole versions one after another, while a writer runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for n in itertools.count():
            if self.stop.is_set():
                return
            with open(self.path, "wb") as f:
                f.write(f"v{n:05d}|".encode() * (50 + n % 40))

    def __enter__(self) -> Racer:
        if self.path.is_dir() and not self.path.is_symlink():
            shutil.rmtree(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


# -- writers ------------------------------------------------------------------------------------

def mcp(where: Path, tool: str, **args) -> dict:
    async def main():
        async with Client(build_server(str(where)), mode="legacy") as client:
            r = await client.call_tool(tool, args)
            assert not r.is_error, r.content
            return r.structured_content

    return anyio.run(main)


def write(b: Bench, writer: str) -> object:
    """Run one writer; what it returned (a restore's result names its safety copy)."""
    n = next(b.counter)
    root = b.root
    if writer == "cli_save":
        p = subprocess.run([sys.executable, "-m", "gitckpt", "save", f"cli {n}"], cwd=root,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return None
    if writer == "mcp_save":
        return mcp(root, "ckpt_save", title=f"mcp {n}", root=str(root))
    if writer == "save":
        return service.save(root, f"save {n}")
    if writer == "hook":
        event = {"session_id": "s", "transcript_path": "/nonexistent", "cwd": str(root),
                 "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": f"edit {n}"}}
        out = hooks.run("claude", "post-tool", json.dumps(event), str(root))
        assert "internal error" not in out.log, out.log
        return None
    if writer == "watch":
        return service.capture(root, trigger="watch")
    if writer == "restore":
        tl = service.open_timeline(root)
        tid = tl.resolve(None)
        return service.restore(root, str(n % (tl.head(tid).n + 1)), apply=True, confirm=True)
    if writer == "revert":
        tl = service.open_timeline(root)
        tid = tl.resolve(None)
        newest = tl.head(tid).n
        if newest == 0:
            return None
        return service.revert(root, str(1 + n % newest), apply=True, conflicts="theirs",
                              confirm=True)
    if writer == "checkout":
        pkg = b.outside / f"pkg-{n}"
        service.export(root, pkg)
        return service.import_(root, pkg, as_id=f"copy-{n}", checkout=True,
                               confirm=True).checkout
    if writer == "fetch":
        tl = service.open_timeline(root)
        tid = str(tl.resolve(None))
        service.push(root, b.remote, task=tid, as_id=f"sent-{n}", confirm=True)
        return service.fetch(root, b.remote, task=f"sent-{n}", as_id=f"back-{n}")
    raise AssertionError(writer)


def check(b: Bench, writer: str, before: str, result: object, racing: Path | None) -> None:
    """The invariant after one writer ran (`before`: git's tree of the files before it)."""
    after = files_tree(b)
    made = new_commits(b)
    if writer == "fetch":
        assert after == before, "a fetch changed the workspace"
        return
    copies = writer == "checkout"  # the package's history comes along as it was
    for oid, note, tree in made:
        kind, trigger = note.get("kind"), note.get("trigger")
        if copies and kind != "restore" and trigger != "pre_restore":
            continue
        want = before if trigger in ("pre_restore", "boundary") else after
        # what the tree may lack: what no event showed, on a journal's scan, for a while
        allowed = {*(b.unseen if b.watched and writer in FAST else ()),
                   *([racing.relative_to(b.root).as_posix()] if racing else [])}
        changed = differing(b, tree, want)
        # the racing path may be caught in any of its states, a folder among them (a swap)
        raced = racing.relative_to(b.root).as_posix() + "/" if racing else None
        changed = [c for c in changed if not (raced and c.startswith(raced))]
        assert set(changed) <= with_parents(allowed), (writer, kind, trigger, oid, changed)
        if racing is not None:
            rel = racing.relative_to(b.root).as_posix()
            blob = git(b.root, f"--git-dir={b.git_dir()}", "ls-tree", tree, "--", rel).split()
            if blob and blob[1] == "blob":
                body = subprocess.run(["git", f"--git-dir={b.git_dir()}", "cat-file", "blob",
                                       blob[2]], capture_output=True, check=True).stdout
                assert TOKEN.fullmatch(body), "a torn mix of two versions was stored"
    safety = getattr(result, "safety", None)
    if after != before:  # the workspace changed: a safety copy holds what was there
        assert writer in ("restore", "revert", "checkout"), f"{writer} changed files"
        assert safety is not None, f"{writer} changed files without a safety copy"
    if safety is not None:
        store = service.open_timeline(b.root).store
        assert store.read_commit(safety).tree == before, "the safety copy is not the files"
    if b.guard is not None:
        b.guard.check(status_changes=True, fsck_too=False)
    scanned_all = writer == "cli_save" or (writer not in FAST and result is not None)
    if (made and made[-1][2] == after) or scanned_all:
        b.unseen.clear()  # the files were stat'ed whole: nothing is owed any more
    elif made:
        b.unseen &= set(differing(b, made[-1][2], after))


def with_parents(paths: set[str]) -> set[str]:
    return {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 2)}


def differing(b: Bench, old: str, new: str) -> list[str]:
    """The paths (files and folders) whose entries differ between two trees."""
    if old == new:
        return []
    scratch = b.outside / "scratch.git" / "objects"  # where a plain folder's are written
    env = {**os.environ, "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(scratch)}
    out = git(b.root, f"--git-dir={b.git_dir()}", "diff-tree", "-r", "-t", "--name-only",
              old, new, env=env)
    return out.split("\n")[:-1]


def undo(b: Bench, result: object) -> None:
    """Restore a safety copy and find the files as they were, byte for byte."""
    safety = getattr(result, "safety", None)
    if safety is None:
        return
    store = service.open_timeline(b.root).store
    want = store.read_commit(safety).tree
    before = files_tree(b)
    out = service.restore(b.root, safety[:12], apply=True, confirm=True)
    assert files_tree(b) == want
    check(b, "restore", before, out, None)


# -- the harness --------------------------------------------------------------------------------

def bench(kind: str, base: Path, home: Path) -> Bench:
    outside = base / "outside"
    outside.mkdir(parents=True)
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    root = make_repo(base / "repo") if kind == "git" else make_plain(home / f"plain-{base.name}")
    for i, name in enumerate(NAMES):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(f"line {i}\n".encode() * (i + 1))
        os.link(root / name, outside / f"link-{i}")
    for f in regular_files(root):  # old enough that only a stat change says they moved
        os.utime(f, (f.stat().st_atime - 3600, f.stat().st_mtime - 3600))
    b = Bench(kind, root, outside, remote.as_uri(),
              guard=RepoGuard(root) if kind == "git" else None)
    service.init(root, "invariants")
    new_commits(b)
    return b


ops = st.lists(st.tuples(st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 50),
                                            st.binary(min_size=1, max_size=12)),
                                  max_size=3),
                         st.sampled_from(WRITERS), st.booleans()),
               min_size=1, max_size=5)
_EXAMPLE = itertools.count()


@pytest.mark.parametrize("kind", ["git", "dir"])
@settings(max_examples=int(os.environ.get("GITCKPT_INVARIANT_EXAMPLES", "12")),
          deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=ops)
# each way a fast path was once wrong, always tried, before the random ones
@example(steps=[([("chmod", 1, b"x")], "save", False)])
@example(steps=[([("hardlink", 1, b"zz")], "restore", False)])
@example(steps=[([("mmap", 2, b"zz")], "revert", False)])
@example(steps=[([("hardlink", 3, b"q")], "cli_save", False), ([], "save", False)])
@example(steps=[([("mmap", 0, b"a")], "hook", False)])
@example(steps=[([("same_size_mtime", 2, b"x"), ("swap", 4, b"y"), ("rename_over", 0, b"z"),
                  ("symlink", 1, b"s")], "mcp_save", True)])
@example(steps=[([("write", 1, b"new"), ("chmod", 2, b"x")], "checkout", True)])
@example(steps=[([], "fetch", False), ([("delete", 2, b"x"), ("mmap", 1, b"m")], "watch", True)])
# the harness's own bug once (a write under a folder a swap had made a file)
@example(steps=[([("swap", 40, b"\x00"), ("write", 5, b"\x00")], "cli_save", False)])
@example(steps=[([], "cli_save", True), ([("swap", 21, b"\x00")], "mcp_save", False),
                ([], "mcp_save", True)])
def test_every_tree_is_the_files_and_every_change_has_a_safety_copy(kind, steps, tmp_path,
                                                                     hermetic, monkeypatch):
    monkeypatch.setenv("GITCKPT_WATCH", "off")  # the harness's own watcher is the only one
    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)  # a loaded machine: still hinted
    base = tmp_path / f"ex{next(_EXAMPLE)}"
    b = bench(kind, base, hermetic)
    session = service.watch(b.root, settings=QUIET) if kind == "git" else None
    try:
        if session is not None:
            b.watched = session.watcher.mode == "events"
            service.capture(b.root)  # the full scan that makes the journal trusted
            new_commits(b)
        for batch, writer, race in steps:
            for kind_, pick, data in batch:
                edit(b, kind_, pick, data)
            before = files_tree(b)
            racing = b.root / "race.txt" if race and writer in RACING else None
            if racing is None:
                result = write(b, writer)
            else:
                with Racer(racing):
                    result = write(b, writer)
                before = files_tree(b)  # the race is over: what the files settled on
            check(b, writer, before, result, racing)
            if writer in ("restore", "revert", "checkout") and race:
                undo(b, result)
        # and what no event showed is in a tree within RECHECK_SAVES scans of the journal
        for _ in range(RECHECK_SAVES if b.unseen else 1):
            before = files_tree(b)
            write(b, "save")
            check(b, "save", before, None, None)
        assert not b.unseen, f"still not in a tree after {RECHECK_SAVES} saves: {b.unseen}"
    finally:
        if session is not None:
            session.watcher.source.stop()
    if kind == "git":
        git(b.root, "fsck", "--strict", "--no-dangling")
