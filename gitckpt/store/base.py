"""The store interface: a Backend (objects, refs, notes, lock, state) and, from
working_copy.py, the WorkingCopy it checkpoints, joined as the Store every store implements;
the docstrings are the contract tests/store/test_contract.py checks on each store."""

from __future__ import annotations

import math
import os
import shlex
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitckpt.core.errors import (
    InvalidArgument,
    StoreBusy,
    StoreCorrupt,
    StoreNotWritable,
)
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Commit, TreeEntry, diff_entries
from gitckpt.core.values import Changes
from gitckpt.store.notes import Notes
from gitckpt.store.working_copy import WorkingCopy

if TYPE_CHECKING:
    import pygit2

    from gitckpt.store.merge import Merge
    from gitckpt.store.staging import Held

from gitckpt.store import flock
from gitckpt.store.state import StateDir, lock_unusable, not_a_file, unsafe

DEFAULT_LOCK_TIMEOUT = 30.0
STALE_LOCK_SECONDS = 10  # git holds a ref lock for milliseconds: an older one was left behind


def lock_timeout() -> float:
    value = os.environ.get("GITCKPT_LOCK_TIMEOUT")
    try:
        timeout = float(value) if value else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT
    return timeout if math.isfinite(timeout) and timeout >= 0 else DEFAULT_LOCK_TIMEOUT


class Backend(Notes, ABC):
    """Where checkpoints are kept: objects, refs with compare-and-swap, notes, the lock, and
    the small state files of its workspaces.

    Reads never take the lock and may run concurrently with a writer. Every write of refs or
    notes happens inside `with store.lock():`; objects may be written without it (they are
    immutable and content-addressed, so writing one twice is harmless).
    """

    kind: str
    #: How tasks record which workspace of the store they belong to.
    workspace: str
    #: Private state of this workspace in this store (active task, stat cache, restore marker,
    #: logs), written only through it; created on demand. `state_dir` is its path.
    state: StateDir
    state_dir: Path
    #: The store's own state folder, shared by its workspaces: it holds the lock file.
    shared: StateDir
    #: The lock file shared by every workspace of this store.
    lock_path: Path
    #: The folder that holds the store's objects and refs (a plain store's folder, the git
    #: common dir): nothing of gitckpt's output (packages) may be written inside it.
    location: Path
    #: The folder holding the store's objects (what git calls GIT_OBJECT_DIRECTORY).
    objects_folder: Path

    @property
    def aliases(self) -> tuple[str, ...]:
        """Earlier `workspace` values of this workspace (a plain folder moved or copied and
        then adopted): tasks recorded under them are this workspace's tasks."""
        return ()

    @contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the store's write lock, or raise StoreBusy after `timeout` seconds (default:
        GITCKPT_LOCK_TIMEOUT). Re-entrant within a thread, across the Store objects of one
        store too (one lock object per lock file in this process), so a call that holds it
        may open the workspace again; other threads wait like other processes."""
        lock = self.__dict__.get("_lock")
        if lock is None:
            try:
                self.shared.ensure()
                if self.lock_path.is_symlink():
                    raise unsafe(self.lock_path)
            except OSError as e:
                raise StoreNotWritable(
                    f"Cannot create {self.lock_path.parent}: {e.strerror}.",
                    "gitckpt needs write access to the store; check its permissions.",
                ) from e
            lock = self.__dict__["_lock"] = flock.FileLock.shared(str(self.lock_path))
        timeout = lock_timeout() if timeout is None else timeout
        try:
            lock.acquire(timeout=timeout)
        except flock.Timeout as e:
            raise StoreBusy(str(self.lock_path), timeout) from e
        except OSError as e:
            what = not_a_file(self.lock_path)
            if what is not None:
                raise lock_unusable(self.lock_path, what) from e
            raise StoreNotWritable(
                f"Cannot take the store lock {self.lock_path}: {e.strerror}.",
                "gitckpt needs write access to the store; check its permissions.",
            ) from e
        try:
            yield
            if lock.level() == 1:  # the outermost hold: what it wrote is done
                self._tidy()
        finally:
            lock.release()

    def loose_objects_dir(self) -> str | None:
        """The folder of this store's loose objects that `_tidy` may pack, or None (a store
        whose objects must stay loose, or that has none)."""
        return None

    def _tidy(self) -> None:
        """Past a threshold of loose objects, pack the checkpoints' own (packs/repack.py)."""
        if self.loose_objects_dir() is not None:
            from gitckpt.store.packs import repack

            repack.tidy(self)

    @contextmanager
    def staging(self) -> Iterator[Callable[[], None]]:
        """Hold every object written inside in memory, readable through this store, its
        scans and its merges (`repository()`), and write no stat cache; the `publish()` it
        yields writes the held objects to the store (before any ref may name them). Leaving
        without `publish()` writes nothing: an apply refused once its plan is computed leaves
        the store as it was. The caller holds the lock; not re-entrant."""
        from gitckpt.store.staging import Held

        held = self._held = Held()
        self._hold(held)
        done = False

        def publish() -> None:
            nonlocal done
            self._held = None
            self._release(held, publish=True)
            held.objects.clear()  # written: a large file's bytes go now, not with `publish`
            done = True
            if self.__dict__.pop("_held_scan", False):
                self.forget_hints(elsewhere=True)  # its snapshot now stands for the files

        try:
            yield publish
        finally:
            if not done:
                self.__dict__.pop("_held_scan", None)
                self._held = None
                self._release(held, publish=False)
                self.forget_scans()  # a snapshot of the held objects is gone with them

    #: The objects held while staging (see `staging`), else None.
    _held: Held | None = None

    if TYPE_CHECKING:  # the working copy's side, which a store brings (WorkingCopy)
        def forget_hints(self, elsewhere: bool = False) -> None: ...

        def forget_scans(self) -> None: ...

    def _hold(self, held: Held) -> None:
        """Start sending object writes to `held`, beyond what `_held` does (a store whose
        writes all pass a method that looks at `_held` needs nothing more)."""

    def _release(self, held: Held, publish: bool) -> None:
        """Stop holding; with `publish`, write what `held` holds to the store."""
        for _, (kind, body) in held.objects.items() if publish else ():
            self.write_object(kind, body)

    def merge_trees(self, base: ObjectId, ours: ObjectId, theirs: ObjectId, *,
                    renames: bool) -> Merge:
        """The three-way merge of trees `ours` and `theirs` from `base` (`renames`: found by
        similarity, as git finds them); its objects go where this store's go, held while
        staging."""
        from gitckpt.store.merge import merge_trees

        return merge_trees(self.repository(), base, ours, theirs, renames, self._held)

    def repository(self) -> pygit2.Repository:
        """A libgit2 repository over the store's objects (for merges): its writes go where
        this store's go, held while staging. Raises NotImplementedError where none exists."""
        raise NotImplementedError

    def own_folders(self) -> list[Path]:
        """The folders that hold only gitckpt's files (no symlink belongs in them)."""
        return [self.shared.path, self.state.path]

    def adopt(self) -> list[str]:
        """Record this workspace as the store's own after the folder was moved or copied
        (the tasks of its earlier path become its tasks); the earlier paths. InvalidArgument
        for a store that has nothing to adopt (a git repository, a store shared through a
        pointer file). The caller holds the lock."""
        raise InvalidArgument(f"{self.location} has no .gitckpt store of its own to adopt.",
                              "adopt is for a plain folder whose .gitckpt was made elsewhere "
                              "(a moved or copied folder); git repositories need nothing.")

    def prune(self, reachable: Callable[[], set[ObjectId]]) -> int | None:
        """Delete the objects outside `reachable()` (called only by a store that prunes), and
        anything derived from them (stat caches naming a deleted blob); the bytes freed, or
        None for a store that leaves its garbage to its own tools (`git gc`). The caller
        holds the lock."""
        return None

    def stale_locks(self, older_than: float) -> list[Path]:
        """Ref lock files of the checkpoint refs that no writer has held for `older_than`
        seconds (left by a killed process); removing them is safe."""
        now = time.time()
        found = []
        for folder, _, files in os.walk(self.refs_folder / "refs" / "checkpoints"):
            for name in files:
                path = Path(folder) / name
                try:
                    old = now - path.stat().st_mtime > older_than
                except OSError:
                    continue  # gone meanwhile: nobody's left-over
                if name.endswith(".lock") and old:
                    found.append(path)
        return sorted(found)

    @property
    @abstractmethod
    def refs_folder(self) -> Path:
        """The folder holding the store's loose refs (`refs/...`)."""

    def flush(self) -> None:
        """Make every object written so far durable and readable by git (a no-op where
        objects are written in place)."""

    def lock_held_elsewhere(self) -> bool:
        """True if another writer holds the lock right now (a probe that never waits)."""
        if flock.FileLock.shared(str(self.lock_path)).is_locked:
            return False  # this thread holds it
        probe = flock.FileLock(str(self.lock_path))
        try:
            probe.acquire(timeout=0)
        except flock.Timeout:
            return True
        except OSError:
            return False  # no lock file can be taken here: nobody else holds one either
        probe.release()
        return False

    # -- objects: immutable, content-addressed, written idempotently -------------------------

    @abstractmethod
    def write_blob(self, data: bytes) -> ObjectId:
        """Store `data` as a blob and return its git id; writing an existing blob is a no-op."""

    @abstractmethod
    def read_blob(self, oid: ObjectId) -> bytes:
        """The bytes of blob `oid`; StoreCorrupt if it is missing or not a blob."""

    @abstractmethod
    def write_tree(self, entries: list[TreeEntry]) -> ObjectId:
        """Store a tree of `entries` (any order) and return its git id."""

    @abstractmethod
    def read_tree(self, oid: ObjectId) -> list[TreeEntry]:
        """The entries of tree `oid` in git order; StoreCorrupt if missing or not a tree."""

    @abstractmethod
    def write_commit(self, tree: ObjectId, parents: list[ObjectId], message: str,
                     time: int) -> ObjectId:
        """Store a commit by `gitckpt <gitckpt@localhost>` at `time` (UTC); updates no ref."""

    @abstractmethod
    def read_commit(self, oid: ObjectId) -> Commit:
        """Commit `oid`; StoreCorrupt if it is missing or not a commit."""

    @abstractmethod
    def read_object(self, oid: ObjectId) -> tuple[str, bytes]:
        """(kind, body) of any object: for copying objects between stores as they are."""

    @abstractmethod
    def write_object(self, kind: str, body: bytes) -> ObjectId:
        """Store an object of `kind` (blob, tree, commit) as it is; returns its id."""

    @abstractmethod
    def has_object(self, oid: ObjectId) -> bool:
        """True if object `oid` exists."""

    @abstractmethod
    def object_size(self, oid: ObjectId) -> int:
        """The size of object `oid`'s body as its header says, found without reading the
        body (a blob of any size costs a few bytes); StoreCorrupt if it is missing or its
        header is damaged."""

    def object_problem(self, oid: ObjectId) -> str | None:
        """Why object `oid` cannot be read ("missing", "truncated", "hash mismatch", ...), or
        None; reads it whole, so it costs what a read costs (for doctor)."""
        try:
            self.read_object(oid)
        except StoreCorrupt as e:
            return e.message
        return None

    # -- refs: ours only, under refs/checkpoints/ -------------------------------------------

    @abstractmethod
    def get_ref(self, name: str) -> ObjectId | None:
        """The id `name` points at, or None if it does not exist."""

    @abstractmethod
    def list_refs(self, prefix: str, damaged: list[str] | None = None) -> dict[str, ObjectId]:
        """All refs whose name starts with `prefix`, with their targets. A ref that cannot be
        read raises StoreCorrupt, or with `damaged` is added to that list instead."""

    @abstractmethod
    def create_ref(self, name: str, oid: ObjectId) -> None:
        """Create `name` at `oid`; RefMoved if it exists already (refs are never overwritten)."""

    @abstractmethod
    def cas_ref(self, name: str, new: ObjectId, old: ObjectId | None) -> None:
        """Point `name` at `new` only if it still points at `old` (None: does not exist).

        Raises RefMoved otherwise and changes nothing. The caller holds the lock.
        """

    @abstractmethod
    def delete_ref(self, name: str, old: ObjectId) -> None:
        """Delete `name` only if it still points at `old` (else RefMoved). The caller holds
        the lock."""

    def diff_trees(self, old: ObjectId, new: ObjectId) -> Changes:
        """Paths added, modified (content, mode or type) and deleted from tree `old` to `new`.

        Identical subtrees are skipped, so the cost follows the changes, not the tree size.
        """
        added: list[str] = []
        modified: list[str] = []
        deleted: list[str] = []
        for path, x, y in diff_entries(self.read_tree, old, new):
            (added if x is None else deleted if y is None else modified).append(
                os.fsdecode(path))
        return Changes(tuple(sorted(added)), tuple(sorted(modified)), tuple(sorted(deleted)))

    def prepare(self) -> None:
        """Create what the store needs before its first write (a no-op where it exists)."""


class Store(Backend, WorkingCopy):
    """One workspace's checkpoints: a backend with the working copy it records. Modules
    above `store/` use only this interface; none of them tests which kind of store it is
    or reaches into its files."""

    @property
    def git(self) -> str:
        """The git command line that reads this store's refs from its workspace: a plain
        folder's store named with --git-dir (relative where it lies inside the workspace);
        a repository's own store says `git` (GitStore)."""
        where = self.location
        try:
            where = where.relative_to(self.top)
        except ValueError:
            pass
        return f"git --git-dir={shlex.quote(str(where))}"

    @contextmanager
    def one_scan(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the lock; inside, every snapshot of a scope after the first is that first one.

        One front-end call (a boundary drift, then the operation) thereby scans the workspace
        once: no writer of ours can change it while the lock is held, and a change made by
        someone else meanwhile is no different from one made just after the call. Whoever
        writes the workspace inside calls `forget_scans()`. StoreBusy after `timeout`."""
        with self.lock(timeout):
            outer = self.__dict__.get("_scans")
            if outer is not None:
                yield  # already inside one
                return
            self.__dict__["_scans"] = {}
            try:
                yield
            finally:
                del self.__dict__["_scans"]
