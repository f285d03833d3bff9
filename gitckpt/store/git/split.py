"""Cutting a work-tree scan in two, so that libgit2 stats files on both cores at once.

A scan is one lstat per file; git spreads them over threads, libgit2 does not. The workspace
is cut into two lists of literal paths holding about half the cached entries each (counted in
the sorted private index by binary search). Every name met at every level visited goes to
exactly one side, so the two diffs together report exactly what one diff would.
"""

from __future__ import annotations

import functools
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pygit2

from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.objects import Mode, decode_tree
from gitckpt.store.git.config import Stamp, stamp
from gitckpt.store.git.libgit2 import bind, entry_path, index_diff, open_index, thread_reads
from gitckpt.store.git.loose import loose_problem

PARALLEL_MIN = 4000  # below this many cached entries a second thread does not pay
_MAX_DEPTH = 6


def lower_bound(index: pygit2.Index, key: bytes) -> int:
    """The position of the first index entry whose path is >= `key` (bytewise, as git sorts)."""
    lo, hi = 0, len(index)
    while lo < hi:
        mid = (lo + hi) // 2
        if entry_path(index, mid) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _weight(index: pygit2.Index, path: bytes) -> int:
    """How many cached entries are `path` itself or lie under `path/`."""
    own = lower_bound(index, path + b"\0") - lower_bound(index, path)
    return own + lower_bound(index, path + b"0") - lower_bound(index, path + b"/")


def _children(repo: pygit2.Repository, tree: str, workdir: Path, folder: bytes
              ) -> tuple[list[bytes], dict[bytes, str]]:
    """Names in `folder`, on disk or in the cached tree, and the cached subtrees by name."""
    names: set[bytes] = set()
    subtrees: dict[bytes, str] = {}
    for e in decode_tree(read_checked(repo, tree)):
        names.add(e.name)
        if e.mode == Mode.TREE:
            subtrees[e.name] = e.id
    try:
        with os.scandir(os.path.join(os.fsencode(workdir), folder)) as it:
            names.update(e.name for e in it)
    except OSError:
        pass
    names.discard(b".git")
    return sorted(names), subtrees


def _real_dir(workdir: Path, path: bytes) -> bool:
    """A folder on disk now (not a file or link in its place): only then can its contents be
    listed one by one instead of naming the path itself."""
    try:
        return stat.S_ISDIR(os.lstat(os.path.join(os.fsencode(workdir), path)).st_mode)
    except OSError:
        return False


def split(repo: pygit2.Repository, index: pygit2.Index, tree: str, workdir: Path,
          prefix: str) -> tuple[list[bytes], list[bytes]] | None:
    """Two lists of literal work-tree paths that cover the workspace `prefix` between them.

    `tree` is the workspace tree of exactly what `index` holds. None when no even cut exists.
    """
    half = len(index) // 2
    sides: tuple[list[bytes], list[bytes]] = ([], [])
    folder = os.fsencode(prefix)
    left = 0  # cached entries already on the first side
    for _ in range(_MAX_DEPTH):
        names, subtrees = _children(repo, tree, workdir, folder)
        base = folder + b"/" if folder else b""
        for i, name in enumerate(names):
            weight = _weight(index, base + name)
            if left + weight <= half:
                sides[0].append(base + name)
                left += weight
                continue
            sides[1].extend(base + n for n in names[i + 1:])
            if name in subtrees and weight > half // 5 and _real_dir(workdir, base + name):
                folder, tree = base + name, subtrees[name]  # cut inside this big folder
                break
            sides[0 if left + weight - half < half - left else 1].append(base + name)
            return sides if sides[0] and sides[1] else None
        else:
            return None
    return None


def scan_deltas(repo: pygit2.Repository, index: pygit2.Index, index_path: Path,
                opened: Stamp | None, tree: str | None, workdir: Path, prefix: str, flags: int,
                parallel: bool = True, reads: list[int] | None = None
                ) -> list[pygit2.DiffDelta]:
    """What changed between the cache and the work tree: one libgit2 diff, or for a large
    workspace two halves at once (this thread on `index`, a second on its own objects, since
    libgit2 objects are not shared between threads; cffi releases the GIL during the calls).

    `opened` is the stat of the index file `index` was read from; `tree` its workspace tree.
    The second half holds a second copy of the index: `parallel=False` saves that memory.
    `reads` gets the bytes each thread read during its diff (thread_reads), where known.
    """
    big = tree is not None and len(index) >= PARALLEL_MIN and (os.cpu_count() or 1) > 1
    sides = split(repo, index, tree, workdir, prefix) \
        if parallel and big and tree is not None else None  # (`big` says it is not None)
    if sides is None:
        return _counted(reads, lambda: list(index_diff(repo, index, flags, prefix).deltas))

    def other_half() -> list[pygit2.DiffDelta] | None:
        own_repo = pygit2.Repository(repo.path)
        own = open_index(str(index_path))
        if stamp(index_path) != opened:
            return None  # the file was replaced after we read it: not the same cache
        return _counted(reads, lambda: list(index_diff(own_repo, bind(own, own_repo), flags,
                                                       sides[1]).deltas))

    # a plain thread, not concurrent.futures: that module and the logging it imports cost a
    # hook's start 3 ms
    got: dict[str, object] = {}

    def half() -> None:
        try:
            got["deltas"] = other_half()
        except BaseException as e:  # raised in this thread once the other joined
            got["error"] = e

    worker = threading.Thread(target=half, name="gitckpt-diff-half", daemon=True)
    worker.start()
    try:
        mine = _counted(reads, lambda: list(index_diff(repo, index, flags, sides[0]).deltas))
    finally:
        worker.join()
    if "error" in got:
        raise cast(BaseException, got["error"])
    rest = cast("list[pygit2.DiffDelta] | None", got["deltas"])
    if rest is None:
        rest = _counted(reads, lambda: list(index_diff(repo, index, flags, sides[1]).deltas))
    return mine + rest


def _counted(reads: list[int] | None, diff: Callable[[], list[pygit2.DiffDelta]]
             ) -> list[pygit2.DiffDelta]:
    """`diff()`, with the bytes this thread read meanwhile added to `reads`."""
    before = thread_reads() if reads is not None else None
    out = diff()
    after = thread_reads() if before is not None else None
    if reads is not None and before is not None and after is not None:
        reads.append(after - before)
    return out


@functools.lru_cache(maxsize=16)
def objects_dir(git_dir: str) -> str:
    """The object folder of the repository at `git_dir` (a worktree's is its common dir's)."""
    common = Path(git_dir, "commondir")
    base = (Path(git_dir) / common.read_text().strip()).resolve() if common.is_file() else \
        Path(git_dir)
    return str(base / "objects")


def read_checked(repo: pygit2.Repository, oid: str) -> bytes:
    """The body of object `oid`, its loose file checked first (see `loose`): StoreCorrupt
    instead of a libgit2 read that never returns."""
    problem = loose_problem(objects_dir(repo.path), oid)
    if problem is None:
        try:
            return repo.odb.read(oid)[1]
        except (KeyError, ValueError, MemoryError, pygit2.GitError) as e:
            problem = str(e)
    raise StoreCorrupt(f"Object {oid} is corrupt ({problem})",
                       "Run `gitckpt doctor` and `git fsck`; nothing was changed.")
