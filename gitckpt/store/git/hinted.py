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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from gitckpt.core.values import Progress
from gitckpt.safety.scope import MAX_DEPTH
from gitckpt.store.git.config import Stamp
from gitckpt.store.git.libgit2 import entry_path, stat_moved
from gitckpt.store.git.scanpass import ScanPass, lstat
from gitckpt.store.git.split import lower_bound

if TYPE_CHECKING:
    from gitckpt.store.git.scan import Scanner

_WHOLE = (".gitignore", ".gitattributes")  # changes that the whole diff must follow
#: Every cached file is re-checked (its stat) within this many narrowed scans.
RECHECK_SAVES = 10


@dataclass
class Rotation:
    """Where the rotating re-check stands: the ranges of this round (`slices`: the first
    path of each range of cached entries, the last range running to the end), the next one's
    position, and a repository of its own kept warm for the scans that use one."""

    slices: list[bytes] = field(default_factory=list)
    cursor: int = 0
    repo: pygit2.Repository | None = None


@dataclass
class Memo:
    """The cache a scan ended with: `index` (in memory, maybe ahead of the file) is `tree`.
    Valid while the index file keeps `stamp`, the side state names `state_index`,
    `state_tree`, `state_scanned` and `state_by` (a scan in another process writes its own
    `by`: the cache here may then hold what that scan saw was no longer so), and the scan
    runs under the same rules."""

    stamp: Stamp | None
    state_index: list[int] | None
    state_tree: str | None
    state_scanned: str | None
    state_by: str | None
    ignores: str  # the rules it was made under (a task's excludes among them)
    index: pygit2.Index
    tree: str
    racy: set[str]
    rotation: Rotation = field(default_factory=Rotation)


_memos: dict[str, Memo] = {}
_lock = threading.Lock()


def recall(index_path: Path, opened: Stamp | None, state: dict[str, Any], ignores: str
           ) -> Memo | None:
    """The memo of the last watched scan of this cache, if it still describes it."""
    with _lock:
        memo = _memos.get(str(index_path))
    if memo is None or memo.stamp != opened or memo.state_index != state.get("index") \
            or memo.state_tree != state.get("tree") \
            or memo.state_scanned != state.get("scanned") \
            or memo.state_by != state.get("by") or memo.ignores != ignores:
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
    above = _Above(scanner.workdir, scanner.prefix)
    for path in changed:
        if any(path == g or path.startswith(g + "/") for g in p.gitlinks):
            continue  # a nested repository: the scan's gitlink check follows its HEAD
        # a folder above that is no longer a folder (a link, a file, gone, unreadable) is
        # what changed: nothing is ever read through it
        path = above.first_not_a_folder(path) or path
        deep = too_deep_folder(path)
        if deep is not None:
            p.skip(scanner._rel(deep), "too_deep")  # as a full scan leaves it out
            continue
        try:
            st = lstat(os.path.join(scanner.workdir, path))
        except PermissionError:
            folders.append(path.rpartition("/")[0])  # its folder: libgit2 says unreadable
            continue
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        if is_dir and too_deep_folder(path, True):
            p.skip(scanner._rel(path), "too_deep")
            continue
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
        _diff_folder(scanner, p, folder, progress)
    return True


def _diff_folder(scanner: Scanner, p: ScanPass, folder: str, progress: Progress | None) -> None:
    deltas = scanner.differ.under(p, folder)
    for delta in deltas:
        scanner._visit(p, delta, progress)
    # libgit2 passes in silence over a folder it cannot enter: its cached files are said by
    # `_visit` (deleted behind a locked folder); a folder with none, which yields no delta,
    # is said here (one opendir, only for a folder where nothing was found)
    if not deltas and not _enterable(os.path.join(scanner.workdir, folder)):
        p.skip(scanner._rel(folder) or ".", "unreadable")


def _enterable(full: str) -> bool:
    """Whether a folder's entries can be listed now (True for what is no folder, or gone)."""
    try:
        with os.scandir(full):
            return True
    except PermissionError:
        return False
    except OSError:
        return True


class _Above:
    """Which folders on the way to a work-tree path are real folders now (one lstat each per
    scan)."""

    def __init__(self, workdir: Path, prefix: str) -> None:
        self.workdir = workdir
        self.floor = prefix.count("/") + 1 if prefix else 0  # the workspace's own depth
        self.known: dict[str, bool] = {}

    def first_not_a_folder(self, path: str) -> str | None:
        """The topmost folder above `path`, inside the workspace, that is not a folder."""
        parts = path.split("/")
        for i in range(self.floor + 1, len(parts)):
            folder = "/".join(parts[:i])
            if folder not in self.known:
                try:
                    st = os.lstat(os.path.join(self.workdir, folder))
                    self.known[folder] = stat.S_ISDIR(st.st_mode)
                except OSError:
                    self.known[folder] = False
            if not self.known[folder]:
                return folder
        return None


def too_deep_folder(path: str, is_dir: bool = False) -> str | None:
    """The folder libgit2 will not enter (one of more than MAX_DEPTH levels, as the full
    scan finds them: git_deep.too_deep) that holds `path`, or is it, or None."""
    parts = path.split("/")
    if len(parts) > MAX_DEPTH + 1 or (is_dir and len(parts) == MAX_DEPTH + 1):
        return "/".join(parts[:MAX_DEPTH + 1])
    return None


def recheck(scanner: Scanner, p: ScanPass, memo: Memo, progress: Progress | None
            ) -> Rotation:
    """Re-check the stat of the next of RECHECK_SAVES ranges of the cached entries; where the
    next scan goes on from.

    Events are not complete (a write through mmap or through a hard link from outside the
    workspace raises none, though the file's stat moves), so each narrowed scan also compares
    one range of the cached entries with their files' stat, in turn, and takes again those
    that moved. The ranges are cut by path once a round and kept (entries added or removed
    meanwhile move no boundary): a change no event named is found within RECHECK_SAVES
    narrowed scans in a file the cache held, and by the next full scan (journal.VERIFY_EVERY)
    in one made since. A range costs a stat per entry in it, whatever the tree's shape."""
    was, index = memo.rotation, p.index
    keys, cursor = was.slices, was.cursor
    if not keys:
        n = len(index)
        if not n:
            return Rotation([], 0, was.repo)
        keys = sorted({b"", *(entry_path(index, k * n // RECHECK_SAVES)
                              for k in range(1, RECHECK_SAVES))})
        cursor = 0
    cursor %= len(keys)
    lo = lower_bound(index, keys[cursor])
    hi = lower_bound(index, keys[cursor + 1]) if cursor + 1 < len(keys) else len(index)
    workdir = os.fsencode(scanner.workdir)
    moved = [os.fsdecode(path) for path, stale in
             (stat_moved(index, i, workdir) for i in range(lo, hi)) if stale]
    for path in moved:
        if path in p.changes or path in p.racy:
            continue  # taken in this scan already, or re-read at its end
        scanner._take(p, path, scanner._rel(path))
        if progress:
            progress(scanner._rel(path))
    return Rotation(keys, cursor + 1, was.repo)
