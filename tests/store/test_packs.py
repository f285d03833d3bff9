"""Packs, not loose-object storms: a large save writes its new objects as one pack that git
itself reads."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from conftest import RepoGuard, git, git_tree, make_repo, service

from gitckpt.store.git.trees import index_trees
from gitckpt.store.packs.write import PackWriter, object_id


def loose_count(git_dir: Path) -> int:
    return sum(len(names) for d, _, names in os.walk(git_dir / "objects")
               if len(os.path.basename(d)) == 2)


def packs(git_dir: Path) -> list[str]:
    folder = git_dir / "objects" / "pack"
    return sorted(n for n in os.listdir(folder)) if folder.is_dir() else []


def many_files(root: Path, n: int) -> None:
    for i in range(n):
        d = root / "gen" / f"d{i // 40:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:05d}.txt").write_text(f"file {i}\n" * (1 + i % 30))
    (root / "gen" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "gen" / "run.sh").chmod(0o755)
    (root / "gen" / "link").symlink_to("run.sh")


@pytest.mark.slow  # thousands of files or steps: not the fast loop's
def test_a_large_first_save_writes_one_pack_git_reads(tmp_path):
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    many_files(root, 1200)
    before_loose, before_packs = loose_count(root / ".git"), packs(root / ".git")
    result = service.init(root, "big first save")
    guard.check(status_changes=True)
    new_packs = [n for n in packs(root / ".git") if n not in before_packs]
    assert len(new_packs) == 2
    assert {Path(n).suffix for n in new_packs} == {".pack", ".idx"}
    assert loose_count(root / ".git") - before_loose < 20  # commit, note, notes tree, ...
    idx = next(n for n in new_packs if n.endswith(".idx"))
    verify = git(root, "verify-pack", "-v", f".git/objects/pack/{idx}")
    assert "non delta: " in verify
    assert f"objects/pack/{idx[:-4]}.pack: ok" in verify
    # the tree is what git itself computes, trees and blobs readable by git from the pack
    assert result.save.tree == git_tree(root)
    shown = git(root, "cat-file", "-p", f"{result.save.tree}:gen/d007/f00301.txt")
    assert shown.rstrip("\n") == (root / "gen/d007/f00301.txt").read_text().rstrip("\n")
    p = subprocess.run(["git", "-C", str(root), "fsck", "--strict", "--no-dangling"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # a restore reads its blobs back from the pack
    target = root / "gen" / "d000" / "f00001.txt"
    target.write_text("changed\n")
    service.restore(root, "0", apply=True, paths=["gen/d000/f00001.txt"])
    assert target.read_text() == "file 1\n" * 2
    guard.check(status_changes=True)


def test_a_small_save_stays_loose(tmp_path):
    root = make_repo(tmp_path / "repo")
    many_files(root, 20)
    before = packs(root / ".git")
    service.init(root, "small")
    assert packs(root / ".git") == before


def test_the_computed_trees_are_libgit2s(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "scratch"))
    index = pygit2.Index()
    blob = repo.create_blob(b"x\n")
    for path, mode in [("a.txt", pygit2.enums.FileMode.BLOB), ("b/c/d.txt", 0o100644),
                       ("b/run", pygit2.enums.FileMode.BLOB_EXECUTABLE), ("b-c", 0o100644),
                       ("b.c", 0o100644), ("link", pygit2.enums.FileMode.LINK),
                       ("z/\u00e9t\u00e9.md", 0o100644)]:
        index.add(pygit2.IndexEntry(path, blob, mode))
    bodies = index_trees(index)
    assert object_id("tree", bodies[-1]) == str(index.write_tree(repo))


def test_pack_writer_below_and_above_its_threshold(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "scratch"), bare=True)
    objects = os.path.join(repo.path, "objects")
    written = []

    def loose(kind, data):
        written.append(data)
        return str(repo.odb.write(pygit2.enums.ObjectType.BLOB, data))

    w = PackWriter(objects, loose, threshold=3)
    ids = [w.add("blob", b"one"), w.add("blob", b"two"), w.add("blob", b"one")]
    assert ids[0] == ids[2]
    assert not w.streaming
    w.close()
    assert written == [b"one", b"two"]
    assert not os.listdir(os.path.join(objects, "pack"))
    w = PackWriter(objects, loose, threshold=1000, spill=10)  # 10 bytes held: then a pack
    big = w.add("blob", b"a" * 20)
    assert w.streaming
    small = w.add("blob", b"b")
    w.close()
    assert repo[big].data == b"a" * 20
    assert repo[small].data == b"b"
    assert all(n.endswith((".pack", ".idx")) and n.startswith("pack-")
               for n in os.listdir(os.path.join(objects, "pack")))


def test_a_killed_writers_temporary_pack_is_swept(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "scratch"), bare=True)
    folder = Path(repo.path) / "objects" / "pack"
    folder.mkdir(parents=True, exist_ok=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = folder / f"tmp_gitckpt_{dead.pid}_00000000.pack"
    stale.write_bytes(b"PACK half written")
    mine = folder / f"tmp_gitckpt_{os.getpid()}_11111111.pack"  # a live writer's: kept
    mine.write_bytes(b"PACK")
    w = PackWriter(str(folder.parent), lambda k, d: "", threshold=1)
    w.add("blob", b"x")
    w.close()
    assert not stale.exists()
    assert mine.exists()


def test_an_aborted_scan_publishes_nothing(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "scratch"), bare=True)
    folder = Path(repo.path) / "objects" / "pack"
    w = PackWriter(str(folder.parent), lambda k, d: "", threshold=1)
    w.add("blob", b"x")
    w.abort()
    assert not list(folder.iterdir())


@pytest.mark.slow
def test_ten_thousand_new_files_do_not_trip_gc_auto(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for i in range(10_000):
        d = root / f"d{i // 50:03d}"
        if i % 50 == 0:
            d.mkdir()
        (d / f"f{i}.txt").write_text(f"{i}\n")
    service.init(root, "ten thousand")
    assert loose_count(root / ".git") < 100
    p = subprocess.run(["git", "-C", str(root), "-c", "gc.auto=6700", "gc", "--auto"],
                       capture_output=True, text=True)
    assert "Auto packing" not in p.stderr + p.stdout


@pytest.mark.slow  # thousands of files or steps: not the fast loop's
def test_a_plain_folders_large_first_save_is_a_pack_and_git_gc_on_it_is_safe(hermetic):
    root = hermetic / "plain"
    root.mkdir()
    many_files(root, 800)
    store = root / ".gitckpt"
    first = service.init(root, "plain and big")
    assert loose_count(store) < 20
    assert any(n.endswith(".pack") for n in packs(store))
    p = subprocess.run(["git", f"--git-dir={store}", "fsck", "--strict", "--no-dangling"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    (root / "gen" / "d001" / "f00041.txt").write_text("edited\n")
    service.save(root, "one edit")
    # git gc rewrites everything into a pack of deltas and packs the refs: still readable
    git(root, f"--git-dir={store}", "gc", "-q", "--aggressive", "--prune=now")
    assert loose_count(store) == 0
    assert (store / "packed-refs").exists()
    assert "one edit" in service.resume(root).text
    assert len(service.log(root).steps) >= 2
    (root / "gen" / "d001" / "f00041.txt").write_text("lost\n")
    service.restore(root, "0", apply=True, paths=["gen/d001/f00041.txt"])
    assert (root / "gen" / "d001" / "f00041.txt").read_text() == "file 41\n" * 12
    assert [f.to_dict()["path"] for f in service.diff(root, "0", "1").files] == [
        "gen/d001/f00041.txt"]
    # a handoff package of a packed store is loose objects only, and imports elsewhere
    out = service.export(root, hermetic / "pkg")
    other = hermetic / "other"
    other.mkdir()
    imported = service.import_(other, out.path)
    assert imported.source_task == first.save.task
    assert imported.objects > 800
    assert not packs(Path(out.path) / "checkpoints.git")
