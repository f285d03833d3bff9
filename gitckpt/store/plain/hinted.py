"""The plain-folder scan a trusted watcher makes cheap: the last walk's stat cache kept in
memory, and a walk of only the folders above what the watcher saw (see journal.py).

A walk through a watcher's journal leaves its cache entries (files and folders) and tree
here. The next such walk starts from them if nobody rewrote the cache file meanwhile and the
rules are the same: it lists the folders on the way to each path the watcher named, walks in
full below a path that is (or was) a folder, and takes every other folder's tree from the
cache unlisted. What events cannot show (writes through mmap or a hard link from outside) is
found by listing a rotating slice of the folders cached at the round's start, RECHECK_SAVES
slices to a round (a folder made since waits for the journal's full scans, every 60 s). A
changed `.gitignore` or `.ckptignore` needs the whole walk.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

#: Every cached folder is listed again within this many narrowed walks (as git's hinted.py).
RECHECK_SAVES = 10
_WHOLE = (".gitignore", ".ckptignore")  # changes the whole walk must follow

#: What changes when a process writes a file: (mtime, ctime, size, inode), in ns.
Stamp = tuple[int, int, int, int]
#: The .gitignore files that apply in a folder: (its folder, its stat key or None) each.
Chain = tuple[tuple[str, bytes | None], ...]
#: A folder's cache entry: (.gitignore chain, names left out, raw tree id or b"", entry count).
CachedDir = tuple[Chain, tuple[str, ...], bytes, int]


@dataclass
class Memo:
    """The cache a walk ended with, in memory (it may be ahead of the cache file): valid
    while the file keeps `stamp` and the walk runs under the rules `rules`."""

    stamp: Stamp | None  # None: never trusted
    rules: str
    files: dict[str, bytes]  # rel -> stat key + blob id + racy flag, as the cache file
    dirs: dict[str, CachedDir]  # "a/b/" -> (.gitignore chain, names left out, tree id, size)
    racy: set[str]  # files cached as modified within RACY_NS of their walk: read again
    slices: list[list[str]] = field(default_factory=list)  # the rotating re-check's round
    cursor: int = 0


@dataclass
class Plan:
    """What a narrowed walk lists: the folders in `hot` ("" is the root, "a/b/" a folder),
    everything below a folder in `deep`, and nothing else."""

    hot: set[str]
    deep: set[str]
    slices: list[list[str]]
    cursor: int

    def cold(self, key: str) -> bool:
        """Folder `key` ("a/b/") keeps its cached tree unlisted."""
        if key in self.hot:
            return False
        at = len(key) - 1
        while at > 0:  # the folder itself, then each one above it
            if key[:at + 1] in self.deep:
                return False
            at = key.rfind("/", 0, at)
        return True


_memos: dict[str, Memo] = {}
_lock = threading.Lock()


def stamp(path: os.PathLike[str] | str) -> Stamp | None:
    """What changes when a process writes the cache file (it is replaced by rename)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino


def recall(path: str, rules: str) -> Memo | None:
    """The memo of the last watched walk of the cache at `path`, if it still describes it."""
    with _lock:
        memo = _memos.get(path)
    # No cache file (a prune removed it, with objects the memo may name), or one replaced
    # during the walk that made the memo: the memo is not trusted.
    if memo is None or memo.stamp is None or memo.rules != rules or memo.stamp != stamp(path):
        return None
    return memo


def remember(path: str, memo: Memo) -> None:
    with _lock:
        _memos[path] = memo


def forget(path: str) -> None:
    """The files were read outside the journal (a held scan), or a walk failed half-way."""
    with _lock:
        _memos.pop(path, None)


def folder_of(rel: str) -> str:
    """The cache key of the folder holding workspace path `rel`: "" or "a/b/"."""
    head = rel.rpartition("/")[0]
    return head + "/" if head else ""


def _with_folders_above(hot: set[str], key: str) -> None:
    while key and key not in hot:
        hot.add(key)
        key = folder_of(key[:-1])
    hot.add("")


def plan(memo: Memo, changed: set[str]) -> Plan | None:
    """The narrowed walk for the workspace paths a trusted watcher saw since `memo` (files or
    folders), or None where only the whole walk will do."""
    if any(p.rsplit("/", 1)[-1] in _WHOLE for p in changed):
        return None
    hot: set[str] = {""}
    deep: set[str] = set()
    for path in changed:
        path = path.strip("/")
        if not path:
            return None  # the root itself
        _with_folders_above(hot, folder_of(path))
        deep.add(path + "/")  # a folder made, moved or deleted: everything below it
    for rel in memo.racy:  # modified too recently to trust its stat: listed again
        _with_folders_above(hot, folder_of(rel))
    slices, cursor = memo.slices, memo.cursor
    if not slices:  # a round starts: the cached folders, cut in turn
        keys = sorted(memo.dirs)
        slices = [part for part in (keys[i::RECHECK_SAVES] for i in range(RECHECK_SAVES))
                  if part]
        cursor = 0
    if slices:
        cursor %= len(slices)
        for key in slices[cursor]:
            _with_folders_above(hot, key)
        cursor += 1
    return Plan(hot, deep, slices, cursor)


def under(rel: str, reused: set[str]) -> bool:
    """Workspace path `rel` lies below a folder a walk took from the cache unlisted (what
    the walk before found there still stands; the rest it looked at again, or it is gone)."""
    key = folder_of(rel.rstrip("/"))
    while key and key not in reused:
        key = folder_of(key[:-1])
    return bool(key)
