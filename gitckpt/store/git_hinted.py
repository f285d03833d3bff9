"""The git-store scan a trusted watcher makes cheap: the last scan's stat cache kept in memory,
and a visit of only the paths the watcher saw (see journal.py).

A scan through a watcher's journal leaves its index (with the changes it did not write to
disk) and tree here. The next such scan starts from them, if nobody replaced the index file
or its side state meanwhile, so it parses no index and walks no tree: it looks at each path
the watcher named, and runs libgit2's diff only under folders that were made, moved or
deleted. Whatever would need the whole diff (an ignore or attributes file changed) says so.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from gitckpt.store.git_pass import ScanPass, lstat
from gitckpt.store.libgit2 import path_at
from gitckpt.values import Progress

if TYPE_CHECKING:
    from gitckpt.store.git_scan import Scanner

_WHOLE = (".gitignore", ".gitattributes")  # changes that the whole diff must follow
#: Every cached file is re-checked (its stat) within this many narrowed scans.
RECHECK_SAVES = 10


@dataclass
class Memo:
    """The cache a scan ended with: `index` (in memory, maybe ahead of the file) is `tree`.
    Valid while the index file keeps `stamp` and the side state names `state_index`,
    `state_tree` and `state_scanned` (a scan in another process that found another tree
    writes its own: the cache here may then hold what that scan saw was no longer so).
    `cursor` is where the next slice of `recheck` starts."""

    stamp: tuple | None
    state_index: list | None
    state_tree: str | None
    state_scanned: str | None
    index: pygit2.Index
    tree: str
    racy: set[str]
    cursor: int = 0


_memos: dict[str, Memo] = {}
_lock = threading.Lock()


def recall(index_path: Path, opened: tuple | None, state: dict) -> Memo | None:
    """The memo of the last watched scan of this cache, if it still describes it."""
    with _lock:
        memo = _memos.get(str(index_path))
    if memo is None or memo.stamp != opened or memo.state_index != state.get("index") \
            or memo.state_tree != state.get("tree") \
            or memo.state_scanned != state.get("scanned"):
        return None
    return memo


def remember(index_path: Path, memo: Memo) -> None:
    with _lock:
        _memos[str(index_path)] = memo


def forget(index_path: Path) -> None:
    """A scan that used the memo failed half-way: its index is no longer its tree."""
    with _lock:
        _memos.pop(str(index_path), None)


def visit(scanner: Scanner, p: ScanPass, changed: list[str], flags: int,
          progress: Progress | None) -> bool:
    """Bring `p.index` up to date for the work-tree paths a trusted watcher saw (files or
    folders); False, with nothing done, if one of them needs the whole diff."""
    if any(path.rsplit("/", 1)[-1] in _WHOLE for path in changed):
        return False
    repo, index = scanner.repo, p.index
    folders: list[str] = []
    for path in changed:
        if any(path == g or path.startswith(g + "/") for g in p.gitlinks):
            continue  # a nested repository: the scan's gitlink check follows its HEAD
        st = lstat(os.path.join(scanner.workdir, path))
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        if path in index:
            if is_dir:  # a file became a folder
                p.remove(path)
                folders.append(path)
            else:
                scanner._take(p, path, scanner._rel(path))
        elif st is None or is_dir:
            folders.append(path)  # a folder made, moved or deleted, or a file never cached
        elif not repo.path_is_ignored(path):
            scanner._take(p, path, scanner._rel(path))
        if progress:
            progress(scanner._rel(path))
    done: list[str] = []
    for folder in sorted(folders):
        if any(folder.startswith(d + "/") for d in done):
            continue  # already under one diffed
        done.append(folder)
        for delta in scanner.differ.under(p, folder):
            scanner._visit(p, delta, progress)
    return True


def recheck(scanner: Scanner, p: ScanPass, cursor: int, progress: Progress | None) -> int:
    """Re-check the stat of the cached entries from position `cursor` on, one in
    RECHECK_SAVES of them, wrapping around; the position the next scan starts from.

    Events are not complete (a write through mmap or through a hard link from outside the
    workspace raises none), so each narrowed scan also asks libgit2 about a slice of the
    rest: a change no event named is found within RECHECK_SAVES scans."""
    n = len(p.index)
    if n == 0:
        return 0
    size = -(-n // RECHECK_SAVES)
    start = cursor % n
    positions = [(start + i) % n for i in range(min(size, n))]
    paths = sorted({path_at(p.index, i) for i in positions})
    for delta in scanner.differ.under(p, paths):
        scanner._visit(p, delta, progress)
    return (start + size) % n
