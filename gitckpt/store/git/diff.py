"""libgit2's index-to-work-tree diffs as a GitStore scan runs them: folders deeper than libgit2
enters are left out as `too_deep`, and a file that changes while libgit2 hashes it costs a
retry, never the scan.

libgit2 hashes a cached file whose stat moved but whose size did not (or whose cached size is
0, a smudged entry) to tell a real change from a touch; a writer that truncates the file
meanwhile makes the whole diff fail ("error reading file for hashing"). The diff is retried;
if the race goes on, the files that changed recently are taken out of the cache first, so
libgit2 reports them as new and the scan reads them itself (dir_files.read_regular, which
leaves a file that keeps changing out as `changing`).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from gitckpt.core.errors import WorkspaceChanging
from gitckpt.store.files import READ_TRIES
from gitckpt.store.git.deep import cover, too_deep
from gitckpt.store.git.libgit2 import bind, index_diff
from gitckpt.store.git.scanpass import ScanPass, lstat

#: Files whose ctime is this recent are taken out of libgit2's hashing after repeated races.
RECENT_NS = 5_000_000_000

Deltas = list[pygit2.DiffDelta]


def too_deep_error(e: pygit2.GitError) -> bool:
    return "nesting too deep" in str(e)


def read_race(e: pygit2.GitError) -> bool:
    """True if libgit2 failed to read a file it hashed: it changed or went away while it read
    it, or it cannot be read (a file made unreadable since it was cached)."""
    text = str(e).lower()
    return any(s in text for s in ("reading file", "failed to open", "could not find",
                                   "no such file", "could not open", "could not read",
                                   "permission denied"))


class Differ:
    """The diffs of one scan of the work tree `workdir` (the workspace is `prefix` in it)."""

    def __init__(self, repo: pygit2.Repository, workdir: Path, prefix: str, flags: int,
                 rel: Callable[[str], str]) -> None:
        self.repo = repo
        self.workdir = workdir
        self.prefix = prefix
        self.flags = flags
        self.rel = rel

    def whole(self, p: ScanPass, run: Callable[[bool], Deltas]) -> Deltas:
        """Everything that changed in the workspace: `run(first)` is the scan's own diff (it
        may cut the work tree in two on the first attempt only, since a retry diffs the index
        in memory, which may no longer be the file's)."""
        for attempt in range(READ_TRIES):
            try:
                return run(attempt == 0)
            except pygit2.GitError as e:
                if too_deep_error(e):
                    return self._shallow(p)
                if not read_race(e):
                    raise
                time.sleep(0.01 * (attempt + 1))
        self._unhash(p, self.prefix)
        return self._final(lambda: list(index_diff(self.repo, p.index, self.flags,
                                                   self.prefix).deltas))

    def under(self, p: ScanPass, under: str | list[bytes],
              repo: pygit2.Repository | None = None) -> Deltas:
        """What changed under a work-tree folder (or a list of literal work-tree paths);
        `repo`, another opening of the same repository, may run the diff."""
        repo = repo or self.repo
        for attempt in range(READ_TRIES):
            try:
                return list(index_diff(repo, p.index, self.flags, under).deltas)
            except pygit2.GitError as e:
                if too_deep_error(e):
                    return self._shallow(p, under) if isinstance(under, str) \
                        else self._each(p, under, repo)
                if not read_race(e):
                    raise
                time.sleep(0.01 * (attempt + 1))
        self._unhash(p, under)
        return self._final(lambda: list(index_diff(self.repo, p.index, self.flags,
                                                   under).deltas))

    def new_files(self, p: ScanPass, under: str) -> list[str]:
        """The work-tree paths git would add under folder `under` (a diff against an empty
        index, so nothing is hashed); folders too deep are left out as `too_deep`."""
        empty = bind(pygit2.Index(), self.repo)
        try:
            deltas = list(index_diff(self.repo, empty, self.flags, under).deltas)
        except pygit2.GitError as e:
            if not too_deep_error(e):
                raise
            deep = self._deep(p, under)
            paths = cover(self.workdir, under, deep, [])
            deltas = list(index_diff(self.repo, empty, self.flags, paths).deltas) if paths \
                else []
        return [os.fsdecode(d.new_file.raw_path).rstrip("/") for d in deltas]

    def _shallow(self, p: ScanPass, under: str | None = None) -> Deltas:
        """The diff of everything under `under` (default: the workspace) except the folders
        libgit2 refuses to enter, which are left out as `too_deep`."""
        under = self.prefix if under is None else under
        deep = self._deep(p, under)
        prefix = under + "/" if under else ""
        cached = [e.path for e in p.index if e.path.startswith(prefix)]
        paths = cover(self.workdir, under, deep, cached)
        return self.under(p, paths) if paths else []

    def _each(self, p: ScanPass, paths: list[bytes], repo: pygit2.Repository) -> Deltas:
        """A diff of literal paths one of whose folders is too deep: each folder on its own
        (`_shallow` leaves its deep part out), the other paths together."""
        root = os.fsencode(self.workdir)
        folders = [q for q in paths if os.path.isdir(os.path.join(root, q))
                   and not os.path.islink(os.path.join(root, q))]
        rest = [q for q in paths if q not in folders]
        out = self.under(p, rest, repo) if rest else []
        for q in folders:
            out += self.under(p, os.fsdecode(q), repo)
        return out

    def _deep(self, p: ScanPass, under: str) -> list[str]:
        deep = too_deep(self.workdir, under, self.repo.path_is_ignored)
        for path in deep:
            p.skip(self.rel(path), "too_deep")
        return deep

    def _unhash(self, p: ScanPass, under: str | list[bytes]) -> None:
        """Take the cached files under `under` that changed recently (or are smudged) out of
        the cache: the diff then reports them as new, without hashing them."""
        if isinstance(under, str):
            prefix = under + "/" if under else ""
            paths = [e.path for e in p.index if e.path.startswith(prefix)]
        else:
            wanted = [os.fsdecode(b) for b in under]
            paths = [e.path for e in p.index
                     if any(e.path == w or e.path.startswith(w + "/") for w in wanted)]
        since = time.time_ns() - RECENT_NS
        for path in paths:
            full = os.path.join(self.workdir, path)
            try:
                st = lstat(full)
            except PermissionError:  # a folder above it cannot be entered now: the diff
                p.remove(path)       # will not see it, so it is said to be left out here
                p.skip(self.rel(path), "unreadable")
                continue
            if path in p.racy or st is None or st.st_ctime_ns >= since \
                    or st.st_mtime_ns >= since or not _readable(full, st):
                p.remove(path)

    @staticmethod
    def _final(run: Callable[[], Deltas]) -> Deltas:
        try:
            return run()
        except pygit2.GitError as e:
            if read_race(e):
                raise WorkspaceChanging(str(e)) from e
            raise


def _readable(full: str, st: os.stat_result) -> bool:
    """Whether a cached file can be opened for reading now (a link always: it is not read)."""
    if not stat.S_ISREG(st.st_mode):
        return True
    try:
        os.close(os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError:
        return False
    return True
