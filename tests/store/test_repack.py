"""The store packs its own loose objects and refs: past a threshold at the end of a write, and
by `compress`; only what the checkpoints reach moves (the user's loose objects and refs stay
as they are), everything reads the same after, and a kill -9 at any point of the packing
loses nothing (fsck clean)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RepoGuard, fsck, git, make_repo, run_cli, service

from gitckpt.store.discover import open_store
from gitckpt.store.packs import repack


def _loose(objects: Path) -> set[str]:
    return repack.loose_ids(str(objects))


def _many_steps(root: Path, steps: int) -> str:
    task = service.init(root, "packing").save.task
    for i in range(steps):
        (root / "f.txt").write_text(f"version {i}\n" * (i + 1))
        service.save(root, f"step {i}", decisions=[f"d{i}"])
    return task


def _everything(root: Path) -> list[str]:
    """What git reads of the checkpoints: every object the refs reach, every ref, the notes."""
    objs = git(root, "rev-list", "--objects", "--glob=refs/checkpoints",
               "refs/notes/checkpoints")
    refs = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    notes = git(root, "log", "--format=%N", "--notes=checkpoints", "--glob=refs/checkpoints")
    return [objs, refs, notes]


def test_packing_moves_only_the_checkpoints_own(tmp_path, monkeypatch):
    """The user's loose objects (an unreachable blob, a branch's commit) and loose refs stay;
    the checkpoints' loose objects and refs move; everything reads the same; fsck clean."""
    monkeypatch.setattr(repack, "AUTO", 10**9)  # no packing by itself here
    root = make_repo(tmp_path / "repo")
    stray = git(root, "hash-object", "-w", "--stdin", input="the user's stray blob\n").strip()
    git(root, "branch", "mine")
    guard = RepoGuard(root)
    _many_steps(root, 12)
    objects = root / ".git" / "objects"
    before, read = _loose(objects), _everything(root)
    def reached(*tips: str) -> set[str]:
        return {line.split()[0] for line in
                git(root, "rev-list", "--objects", *tips).splitlines()}

    theirs = reached("--branches", "--tags") - reached("--glob=refs/checkpoints",
                                                       "refs/notes/checkpoints")
    user_loose = before & {stray, *theirs}
    assert user_loose
    store = open_store(root)
    with store.lock():
        moved, refs = repack.pack(store)
    after = _loose(objects)
    assert moved > 12 * 4
    assert refs >= 12
    assert stray in after
    assert user_loose <= after
    assert (root / ".git" / "refs" / "heads" / "mine").is_file()  # the user's ref, loose
    assert _everything(root) == read
    assert len(after) <= len(before) - moved
    guard.check(status_changes=True)
    fsck(root)
    resumed = run_cli("resume", cwd=root)
    assert resumed.code == 0
    assert "step 11" in resumed.out


def test_a_long_task_packs_itself_and_compress_packs_the_rest(ws, monkeypatch):
    """Past the threshold a save leaves far fewer loose objects than it made; `compress`
    packs what is left and says so; `doctor` counts them; on either store."""
    monkeypatch.setattr(repack, "AUTO", 128)
    objects = Path(open_store(ws.root).loose_objects_dir() or "")
    users = _loose(objects)
    _many_steps(ws.root, 40)
    assert len(_loose(objects)) < 40 * 6  # each step writes about 8
    monkeypatch.setattr(repack, "AUTO", 10**9)  # what the next saves write stays loose
    for i in range(3):
        (ws.root / "g.txt").write_text(f"after {i}\n")
        service.save(ws.root, f"after {i}")
    assert _loose(objects) - users
    out = run_cli("compress", cwd=ws.root, env={"GITCKPT_SERVICE": "off"})
    assert out.code == 0, out.err
    assert "Packed " in out.out
    assert _loose(objects) <= users
    doctor = run_cli("doctor", cwd=ws.root, env={"GITCKPT_SERVICE": "off"})
    assert "Objects: " in doctor.out
    assert "No problems found." in doctor.out
    resumed = run_cli("resume", cwd=ws.root, env={"GITCKPT_SERVICE": "off"})
    assert "step 39" in resumed.out


KILLER = r"""
import os, signal, sys
from gitckpt.store.discover import open_store
from gitckpt.store.packs import repack
point, n = sys.argv[2], int(sys.argv[3])
count = [0]
def die_after(fn):
    def wrapped(*a, **kw):
        count[0] += 1
        if count[0] > n:
            os.kill(os.getpid(), signal.SIGKILL)
        return fn(*a, **kw)
    return wrapped
if point == "read":
    repack._read = die_after(repack._read)
elif point == "synced":
    repack._sync_folder = die_after(repack._sync_folder)
elif point == "unlink":
    os.unlink = die_after(os.unlink)
elif point == "refs":
    import pathlib
    pathlib.Path.unlink = die_after(pathlib.Path.unlink)
store = open_store(sys.argv[1])
with store.lock():
    repack.pack(store)
"""


@pytest.mark.parametrize(("point", "after"), [("read", 0), ("read", 30), ("synced", 0),
                                              ("unlink", 0), ("unlink", 25), ("refs", 0),
                                              ("refs", 5)])
def test_a_kill_at_any_point_of_packing_loses_nothing(tmp_path, point, after):
    """Killed while reading what to pack, once the pack is written but before it is made
    durable, while removing loose files or loose refs: every checkpoint object and ref reads
    as before, fsck is clean, and the next packing finishes the work."""
    root = make_repo(tmp_path / "repo")
    _many_steps(root, 15)
    read = _everything(root)
    killed = subprocess.run([sys.executable, "-c", KILLER, str(root), point, str(after)],
                            capture_output=True, text=True, env={**os.environ,
                                                                 "GITCKPT_SERVICE": "off"})
    assert killed.returncode == -9, killed.stderr
    assert _everything(root) == read
    fsck(root)
    store = open_store(root)
    with store.lock():
        repack.pack(store)
    assert _everything(root) == read
    assert len(_loose(root / ".git" / "objects")) < 15
    fsck(root)


def test_the_users_own_loose_objects_do_not_make_every_save_pack(tmp_path, monkeypatch):
    """A repository holding thousands of the user's loose objects: saves do not pack until
    the checkpoints' own loose objects grew by the threshold (counted runs)."""
    monkeypatch.setattr(repack, "AUTO", 128)
    root = make_repo(tmp_path / "repo")
    for i in range(1500):
        (root / "many" / f"d{i % 30}").mkdir(parents=True, exist_ok=True)
        (root / "many" / f"d{i % 30}" / f"f{i}.txt").write_text(f"{i}\n")
    git(root, "add", "-A")  # 1,500 loose blobs of the user's, staged
    runs: list[int] = []
    real = repack.pack

    def counted(store):
        runs.append(1)
        return real(store)

    monkeypatch.setattr(repack, "pack", counted)
    service.init(root, "many loose")
    for i in range(3):
        (root / "f.txt").write_text(f"{i}\n")
        service.save(root, f"step {i}")
    assert runs == []
    _many_steps(root, 25)  # about 200 loose objects of the checkpoints' own
    assert runs
    fsck(root)
