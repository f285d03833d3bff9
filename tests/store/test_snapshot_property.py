"""Property: after any sequence of workspace edits, the incremental snapshot (stat cache,
pending changes, partial tree rewrites) equals what git computes from scratch."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from conftest import git, git_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.core.values import Changes
from gitckpt.safety.scope import Scope
from gitckpt.store.discover import open_store
from gitckpt.store.git import scan as git_scan
from gitckpt.store.git import split as git_split

NAMES = ["a", "b", "c.txt", "d"]
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
ops = st.lists(st.tuples(st.sampled_from(["write", "delete", "chmod", "symlink", "rmtree"]),
                         paths, st.binary(max_size=8)), min_size=1, max_size=6)


def git_changes(root: Path, old: str, new: str) -> Changes:
    """What `git diff-tree` reports, as added/modified/deleted paths (type changes split)."""
    out = git(root, "diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
    parts = out.split("\0")[:-1]
    found: dict[str, list[str]] = {"A": [], "M": [], "D": []}
    for status, path in zip(parts[::2], parts[1::2], strict=True):
        found["M" if status == "T" else status].append(path)
    return Changes(*(tuple(sorted(found[k])) for k in "AMD"))


def apply(root: Path, op: str, rel: str, data: bytes) -> None:
    target = root / rel
    if op == "rmtree":
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        return
    if op == "delete":
        if target.is_symlink() or target.is_file():
            target.unlink()
        return
    # make room: parents must be real directories, the target must not be a directory
    for parent in reversed(target.relative_to(root).parents[:-1]):
        p = root / parent
        if p.is_symlink() or p.is_file():
            p.unlink()
        p.mkdir(exist_ok=True)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    if op == "write":
        if target.is_symlink():
            target.unlink()
        target.write_bytes(data)
    elif op == "chmod":
        if target.is_file() and not target.is_symlink():
            os.chmod(target, target.stat().st_mode ^ 0o111)
        else:
            target.write_bytes(data)
    elif op == "symlink":
        if target.is_symlink() or target.exists():
            target.unlink()
        os.symlink(data.hex() or "x", target)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(ops, min_size=1, max_size=4), st.sampled_from([0, 2, 100]), st.booleans())
def test_incremental_snapshots_equal_git(batches, pending_max, two_threads):
    old, old_min, old_index = git_scan.PENDING_MAX, git_split.PARALLEL_MIN, \
        git_scan.PENDING_INDEX_MIN
    git_scan.PENDING_MAX = pending_max
    git_scan.PENDING_INDEX_MIN = 0 if pending_max else old_index  # pending in any index
    git_split.PARALLEL_MIN = 1 if two_threads else 10**9  # cut even tiny workspaces in two
    base = Path(tempfile.mkdtemp())
    try:
        root = base / "ws"
        root.mkdir()
        git(root, "init", "-q")
        store = open_store(root)
        previous = None
        for batch in batches:
            for op, rel, data in batch:
                apply(root, op, rel, data)
            with store.lock():
                snap = store.snapshot(Scope())
            assert snap.tree == git_tree(root), batch
            assert store.snapshot(Scope(), update_cache=False).tree == snap.tree
            if previous is not None:
                assert store.diff_trees(previous, snap.tree) == git_changes(
                    root, previous, snap.tree)
            previous = snap.tree
    finally:
        git_scan.PENDING_MAX, git_split.PARALLEL_MIN = old, old_min
        git_scan.PENDING_INDEX_MIN = old_index
        shutil.rmtree(base)
