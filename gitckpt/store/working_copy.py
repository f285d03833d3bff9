"""The working copy a store checkpoints: how its files become a tree (snapshot, through a
watcher's journal when one runs in the process), how a blob goes back to disk, and which
paths its own rules leave out; the half of the store interface that looks at the files."""

from __future__ import annotations

import os
import stat
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitckpt.core import progress as progressing
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode
from gitckpt.core.values import GitSince, GitState, Progress, Skipped, Snapshot
from gitckpt.safety.scope import Scope

if TYPE_CHECKING:
    from gitckpt.store import journal as journals
    from gitckpt.store.staging import Held

_JOURNALS = "gitckpt.store.journal"  # where a watcher of this process registers its journal

#: What `Store.one_scan` remembers of a scope: (its snapshot, whether it updated the stat
#: cache, whether it was exact).
_Scans = dict[Scope, tuple[Snapshot, bool, bool]]
#: Seconds the walk that estimates a first scan's files may take (see `estimate`).
ESTIMATE_BUDGET = 0.3


class WorkingCopy(ABC):
    """The workspace a backend checkpoints: how its files become a tree (snapshot), how a
    blob goes back to disk, which paths its own rules leave out, and the user's repository
    around it (git stores)."""

    #: The workspace root: an absolute, resolved directory.
    root: Path
    #: The workspace's folder inside the user's repository: "" at its top, and for stores
    #: that have no repository around them.
    prefix: str = ""

    @property
    def top(self) -> Path:
        """Where git runs for this workspace: the top of the user's work tree (where git
        resolves the relative remote URLs of its config), else the workspace itself."""
        return self.root
    #: Workspace-relative folders that belong to the store itself (never snapshotted, never
    #: restored into); `.git` and `.gitckpt` at any depth are always such folders.
    private: tuple[str, ...] = ()
    #: The backend's side, which a store brings (Backend): an object staging holds, if any.
    _held: Held | None = None

    @abstractmethod
    def read_blob(self, oid: ObjectId) -> bytes:
        """The content of blob `oid` (Backend.read_blob)."""

    def first_look_pending(self) -> bool:
        """Whether a watcher in this process watches the workspace and has not yet ended its
        first full scan: a snapshot now would wait for that scan (it holds the journal)."""
        running = sys.modules.get(_JOURNALS)
        journal: journals.Journal | None = running.for_root(str(self.root)) \
            if running is not None and self.takes_hints else None
        return journal is not None and not journal.looked

    def snapshot(self, scope: Scope, *, update_cache: bool = True,
                 progress: Progress | None = None, exact: bool = False,
                 exactly: tuple[str, ...] = ()) -> Snapshot:
        """Write the tree of the in-scope workspace now and return it.

        Left-out files are never read; those that exist and are sensitive, too large,
        unreadable or unsupported nested repositories are listed in `skipped`. With
        `update_cache=False` the stat cache is left as it is (for read-only callers, who hold no
        lock); objects may still be written. The caller holds the lock when `update_cache`.
        Inside `Store.one_scan()` a scope already scanned is not scanned again.

        `exact`: the snapshot a restore, revert or checkout plans against, or a push or export
        sends: a stat of every file, never narrowed to what a watcher saw (events miss writes
        through mmap or a hard link from outside), so its tree is the files as they are.
        `exactly`: workspace-relative paths (files or folders) read as they are, whatever a
        watcher saw, the rest as it last saw it (a restore of a few files plans on those).
        """
        memo: _Scans | None = self.__dict__.get("_scans")
        if memo is not None and not exactly:
            hit = memo.get(scope)
            if hit is not None and (hit[1] or not update_cache) and (hit[2] or not exact):
                return hit[0]  # a snapshot that left the cache stale cannot stand for one
        if progress is None and progressing.active():  # a front end shows long scans
            with progressing.Meter("Scanning files", "files", self.estimate) as meter:
                return self.snapshot(scope, update_cache=update_cache, progress=meter.tick,
                                     exact=exact, exactly=exactly)
        if self._held is not None:
            update_cache = False  # staging writes nothing, the stat cache included
            # and its scan may find what a watcher's cache in memory missed: that cache
            # can no longer stand for the files (in other processes too, once published)
            self.forget_hints()
            self.__dict__["_held_scan"] = True
        # A watcher in this process registers its journal in that module: where it was never
        # imported (a hook, a CLI command), none runs, and the module is not loaded for it.
        running = sys.modules.get(_JOURNALS)
        journal: journals.Journal | None = running.for_root(str(self.root)) \
            if running is not None and self.takes_hints and self._held is None \
            else None  # a held scan takes no hints
        if journal is None:
            snap = self.scan(scope, update_cache=update_cache, progress=progress)
            exact = True
        else:  # a watcher runs in this process: visit what it saw, if it can be trusted
            if exactly:  # as if it had seen them change: a visit re-reads each
                journal.saw(os.path.join(str(self.root), p) for p in exactly)
            grant = journal.begin(full=exact)
            try:
                snap = self.scan(scope, update_cache=update_cache, progress=progress,
                                 changed=grant.paths, skipped_before=grant.skipped,
                                 watched=True)
            except BaseException:
                journal.done(grant, False)
                raise
            journal.done(grant, True, snap.skipped)
            exact = grant.paths is None
        if memo is not None:
            memo[scope] = (snap, update_cache, exact)
        return snap

    #: True if `scan` can visit only the paths a watcher saw change (`changed`).
    takes_hints = False

    def forget_hints(self, elsewhere: bool = False) -> None:  # noqa: B027 (optional hook)
        """The files were read outside a watcher's journal, and nothing was cached (a held
        scan): what watched scans keep in memory in this process, and with `elsewhere` in
        other processes too (a write in the store's state), can no longer stand for them
        (stores that take hints). The caller holds the lock."""

    def estimate(self) -> int | None:
        """About how many files a scan visits, for progress (None: unknown). This store
        keeps no count, so the folders are walked (`count_names`)."""
        return self.count_names(folders=True)

    def count_names(self, folders: bool) -> int | None:
        """The names a scan would visit, by a walk of the folders that leaves out the store's
        own folders and those its ignore rules leave out (`folders`: count the folders too,
        as a scan that ticks them); None if the walk takes longer than ESTIMATE_BUDGET."""
        import time

        deadline = time.monotonic() + ESTIMATE_BUDGET
        left_out = self.ignore_check()
        own = {os.fsencode(p) for p in self.private}
        count, pending = 0, [b""]
        root = os.fsencode(self.root)
        while pending:
            if time.monotonic() > deadline:
                return None
            rel = pending.pop()
            try:
                with os.scandir(os.path.join(root, rel) if rel else root) as it:
                    for e in it:
                        name = rel + b"/" + e.name if rel else e.name
                        try:
                            folder = e.is_dir(follow_symlinks=False)
                        except OSError:
                            continue
                        if not folder:
                            count += 1
                        elif e.name not in (b".git", b".gitckpt") and name not in own \
                                and not left_out(os.fsdecode(name) + "/"):
                            count += folders
                            pending.append(name)
            except OSError:
                continue
        return count or None

    @abstractmethod
    def scan(self, scope: Scope, *, update_cache: bool = True,
             progress: Progress | None = None, changed: set[str] | None = None,
             skipped_before: tuple[Skipped, ...] = (), watched: bool = False) -> Snapshot:
        """`snapshot`, by looking at the workspace. Stores that take hints, when `watched`
        (a watcher's journal runs the scan), may visit only the workspace-relative paths
        `changed` (files or folders), re-read whatever their stat says; of the last scan's
        `skipped_before`, those not looked at again stay left out."""

    def forget_scans(self) -> None:
        """The workspace was written: inside `one_scan`, the next snapshot looks again."""
        memo = self.__dict__.get("_scans")
        if memo is not None:
            memo.clear()

    #: Ignore patterns the store's scanner applies on top of `.gitignore` files.
    builtin: tuple[str, ...] = ()

    def ignore_check(self) -> Callable[[str], bool]:
        """A function telling whether the store's ignore rules (not gitckpt's scope) leave a
        workspace path out of snapshots now; it may cache what it reads."""
        return lambda rel: False

    def git_state(self) -> GitState | None:
        """Where the user's repository stands now; None for stores without one."""
        return None

    def git_since(self, then: str | None) -> GitSince | None:
        """How the user's repository moved since its HEAD was `then`: `head`, `branch`,
        `commits_since` (on HEAD, not in `then`) and `head_reachable` (`then` is still in
        HEAD's history; False after a rebase or reset). None for stores without one."""
        return None

    def user_commit(self, rev: str) -> tuple[str, str, ObjectId, ObjectId | None] | None:
        """The user's commit `rev` names: (its id, subject, tree, first parent's tree or
        None); None where it names none, or the store has no repository around it."""
        return None

    def user_blame(self, path: str, commit: str) -> tuple[bytes, list[str]] | None:
        """The workspace file `path` in the user's commit `commit`, and for each of its
        lines the user's commit that last changed it (`git blame`); None for stores without
        a repository, or where the commit or the file is not there."""
        return None

    def blob_of(self, path: str) -> tuple[int, str] | None:
        """The (mode, blob id) a snapshot would record for the workspace file `path` now
        (nothing is written), or None where none is there (missing, a folder, unreadable)."""
        from gitckpt.core.objects import hash_object
        from gitckpt.store.files import read_regular

        full = os.path.join(self.root, path)
        try:
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                return int(Mode.SYMLINK), hash_object("blob", os.fsencode(os.readlink(full)))
            if not stat.S_ISREG(st.st_mode):
                return None
            data = self.cleaned(path, read_regular(full))
        except OSError:
            return None
        mode = Mode.EXECUTABLE if st.st_mode & 0o100 and self.trusts_mode() else Mode.FILE
        return int(mode), hash_object("blob", data)

    def cleaned(self, path: str, data: bytes) -> bytes:
        """A file's bytes as a snapshot stores them (a git store's content filters)."""
        return data

    def trusts_mode(self) -> bool:
        """Whether the executable bit on disk is recorded (git's core.fileMode)."""
        return True

    def checkout_blob(self, oid: ObjectId, path: str) -> bytes:
        """The bytes blob `oid` has on disk at workspace path `path`: the blob itself, or in
        a git store with content filters (line endings) as git would check it out."""
        return self.read_blob(oid)

    def workspace_path(self, workspace: str) -> Path:
        """The folder a task's recorded `workspace` names."""
        return Path(workspace)

    def cache_problem(self) -> tuple[Path, str] | None:
        """The stat cache file of this workspace and why it cannot be used, or None."""
        return None

    def prefer_low_memory(self) -> None:  # noqa: B027 (optional hook, not abstract)
        """For long-running processes (the watcher): trade snapshot speed for memory."""
