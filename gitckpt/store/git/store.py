"""GitStore: checkpoints in the user's own repository, which is borrowed and never disturbed.

Only objects, `refs/checkpoints/*` and `refs/notes/checkpoints` are written, plus our own state
under `<git-dir>/gitckpt/`. HEAD, the index, branches, tags, stash, config and hooks are never
written, and no git command line is run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pygit2
from pygit2.enums import FilterMode, ObjectType, RepositoryOpenFlag

from gitckpt.core.errors import (
    RefMoved,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreNotWritable,
    WorkspaceError,
)
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import (
    EMPTY_TREE,
    Commit,
    TreeEntry,
    decode_commit,
    decode_tree,
    encode_commit,
    encode_tree,
    sha1,
)
from gitckpt.core.values import GitSince, GitState, Progress, Skipped, Snapshot
from gitckpt.safety.rules import IgnoreRules, disk_loader
from gitckpt.safety.scope import Scope
from gitckpt.store.base import STALE_LOCK_SECONDS, Store
from gitckpt.store.git.config import filters_possible, trust_exec
from gitckpt.store.git.loose import loose_problem, loose_size
from gitckpt.store.git.scan import Scanner
from gitckpt.store.lines import split_lines
from gitckpt.store.packs.write import PackWriter
from gitckpt.store.reflist import list_refs
from gitckpt.store.state import StateDir, unsafe

if TYPE_CHECKING:
    from gitckpt.store.staging import Held

FORMAT = 1  # of our state under <common-dir>/gitckpt/
_KIND = {ObjectType.BLOB: "blob", ObjectType.TREE: "tree", ObjectType.COMMIT: "commit"}


def open_git_store(root: Path) -> GitStore | None:
    """The GitStore for workspace `root`, or None when `root` is not inside a git work tree."""
    try:
        git_dir = pygit2.discover_repository(str(root))
    except pygit2.GitError:
        git_dir = None
    if git_dir is None:
        if (root / ".git").exists() or (root / ".git").is_symlink():
            raise WorkspaceError(f"{root / '.git'} is not a usable git repository.",
                                 "Repair it (`git status` says what is wrong) or move it away.")
        return None
    try:
        repo = pygit2.Repository(git_dir, RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError as e:
        raise WorkspaceError(f"Cannot open the git repository at {git_dir}: {e}.",
                             "Check it with `git status`.") from e
    if repo.is_bare or repo.workdir is None:
        raise WorkspaceError(f"{root} is inside the bare repository {git_dir}, which has no work "
                             "tree.", "Run gitckpt in a checkout of it.")
    workdir = Path(repo.workdir).resolve()
    gdir = Path(repo.path).resolve()
    if (root != workdir and workdir not in root.parents) or gdir == root or gdir in root.parents:
        # `root` is inside the git directory itself (or a bare repository's).
        raise WorkspaceError(f"{root} is inside a git directory, not a work tree.",
                             "Run gitckpt in the project folder, not in .git.")
    return GitStore(root, repo, workdir)



class GitStore(Store):
    kind = "git"

    @property
    def refs_folder(self) -> Path:
        return self.common_dir

    def __init__(self, root: Path, repo: pygit2.Repository, workdir: Path) -> None:
        self.repo = repo
        self.root = root
        self.workdir = workdir
        self.prefix = "" if root == workdir else root.relative_to(workdir).as_posix()
        self.workspace = self.prefix
        self.git_dir = Path(repo.path).resolve()
        common = self.git_dir / "commondir"
        self.common_dir = ((self.git_dir / common.read_text().strip()).resolve()
                           if common.exists() else self.git_dir)
        # One state folder per workspace (a monorepo may hold several) of this worktree.
        key = "root" if not self.prefix else sha1(self.prefix.encode()).hexdigest()[:12]
        self.state = StateDir(self.git_dir, "gitckpt", f"ws-{key}")
        self.state_dir = self.state.path
        self.shared = StateDir(self.common_dir, "gitckpt")
        self.location = self.common_dir
        self.objects_folder = self.common_dir / "objects"
        self.objects_dir = str(self.objects_folder)
        self.lock_path = self.shared.path / "lock"
        self._check_format()
        self._scanner = Scanner(repo, workdir, self.prefix, self.state, self.common_dir,
                                self.git_dir / "index")

    def _check_format(self) -> None:
        """Our state format (`<common-dir>/gitckpt/format`): a newer one is refused."""
        try:
            raw = self.shared.read("format")
        except (OSError, StoreCorrupt):
            return
        if raw is None:
            return
        try:
            found = int(raw.decode("ascii").strip())
        except (UnicodeDecodeError, ValueError) as e:
            raise StoreCorrupt(f"{self.shared.path / 'format'} is damaged",
                               f"It should hold the number {FORMAT}; write it back, or remove "
                               "the file.") from e
        if found > FORMAT:
            raise SchemaTooNew(f"The checkpoints of {self.common_dir}", found, FORMAT)

    def prepare(self) -> None:
        """Record our state format the first time a task is made in this repository."""
        if self.shared.read("format") is None:
            try:
                self.shared.write("format", f"{FORMAT}\n".encode())
            except OSError as e:
                raise StoreNotWritable(f"Cannot write {self.shared.path}: {e.strerror}.",
                                       "Check the permissions of the .git folder.") from e

    def own_folders(self) -> list[Path]:
        return sorted({self.shared.path, self.git_dir / "gitckpt",
                       self.common_dir / "refs" / "checkpoints"})

    def workspace_path(self, workspace: str) -> Path:
        return self.workdir / workspace if workspace else self.workdir

    # -- objects ---------------------------------------------------------------------------

    def _write(self, kind: ObjectType, body: bytes) -> ObjectId:
        try:
            return ObjectId(str(self.repo.odb.write(kind, body)))
        except pygit2.GitError as e:
            raise StoreNotWritable(f"Cannot write to the repository's objects: {e}.",
                                   "Check the permissions of the .git folder.") from e

    def loose_objects_dir(self) -> str | None:
        return self.objects_dir

    def _hold(self, held: Held) -> None:
        from gitckpt.store.staging import staging_odb

        self._odb = self.repo.odb
        self.repo.set_odb(staging_odb(held, self.objects_dir))
        self._scanner.hold = held

    def _release(self, held: Held, publish: bool) -> None:
        self.repo.set_odb(self._odb)
        self._scanner.hold = None
        if publish:  # many objects as one pack, as a scan writes them
            pack = PackWriter(self.objects_dir, lambda kind, body: str(self._write(
                {"blob": ObjectType.BLOB, "tree": ObjectType.TREE,
                 "commit": ObjectType.COMMIT}[kind], body)))
            for oid, (kind, body) in held.objects.items():
                if oid not in self.repo.odb:
                    pack.add(kind, body, oid)
            pack.close()

    @property
    def top(self) -> Path:
        return self.workdir

    @property
    def git(self) -> str:
        return "git"  # (the repository's own git reads its refs)

    def cleaned(self, path: str, data: bytes) -> bytes:
        # (as bytes: libgit2 takes a name that is not UTF-8 so, and refuses it as a str)
        name = f"{self.prefix}/{path}".lstrip("/").encode("utf-8", "surrogateescape")
        cleaning = self.repo.load_filter_list(name, FilterMode.TO_ODB)  # type: ignore[arg-type]
        return cleaning.apply_to_buffer(data) if cleaning is not None else data

    def trusts_mode(self) -> bool:
        return trust_exec(self.repo)

    def repository(self) -> pygit2.Repository:
        return self.repo

    def _check(self, oid: ObjectId) -> None:
        """StoreCorrupt if the loose file of `oid` would make libgit2 hang or overallocate;
        each object is checked once per process."""
        checked = self.__dict__.setdefault("_checked", set())
        if oid in checked:
            return
        problem = loose_problem(self.objects_dir, oid)
        if problem:
            raise StoreCorrupt(f"Object {oid} in {self.objects_dir} is corrupt ({problem})",
                               "Run `gitckpt doctor` and `git fsck`; nothing was changed.")
        checked.add(oid)

    def _read(self, oid: ObjectId, kind: ObjectType) -> bytes:
        self._check(oid)
        try:
            found, body = self.repo.odb.read(oid)
        except (KeyError, ValueError, pygit2.GitError, MemoryError) as e:
            raise StoreCorrupt(f"Object {oid} is missing or unreadable",
                               "Run `git fsck` to check the repository.") from e
        if found != kind:
            raise StoreCorrupt(f"Object {oid} is not a {_KIND[kind]}",
                               "Run `git fsck` to check the repository.")
        return body

    def write_blob(self, data: bytes) -> ObjectId:
        return self._write(ObjectType.BLOB, data)

    def read_blob(self, oid: ObjectId) -> bytes:
        return self._read(oid, ObjectType.BLOB)

    def write_tree(self, entries: list[TreeEntry]) -> ObjectId:
        return self._write(ObjectType.TREE, encode_tree(entries))

    def read_tree(self, oid: ObjectId) -> list[TreeEntry]:
        if oid == EMPTY_TREE:
            return []  # git knows it without storing it; libgit2's odb does not
        try:
            return decode_tree(self._read(oid, ObjectType.TREE))
        except ValueError as e:
            raise StoreCorrupt(f"Tree {oid} is malformed ({e})",
                               "Check the repository with `git fsck`.") from e

    def write_commit(self, tree: ObjectId, parents: list[ObjectId], message: str,
                     time: int) -> ObjectId:
        return self._write(ObjectType.COMMIT, encode_commit(tree, parents, time, message))

    def read_commit(self, oid: ObjectId) -> Commit:
        return decode_commit(oid, self._read(oid, ObjectType.COMMIT))

    def checkout_blob(self, oid: ObjectId, path: str) -> bytes:
        # Filters cost a thread per blob in pygit2, so they run only where they could apply.
        smudge = self.__dict__.get("_smudge")
        if smudge is None:
            smudge = self.__dict__["_smudge"] = filters_possible(
                self.repo, self.common_dir, self._scanner.cache.attributes())
        if not smudge:
            return self.read_blob(oid)
        self._check(oid)
        try:
            blob = cast(pygit2.Blob, self.repo[oid])  # a blob id by contract
            with pygit2.BlobIO(blob, as_path=f"{self.prefix}/{path}".lstrip("/")) as f:
                return f.read()
        except (KeyError, ValueError, pygit2.GitError) as e:
            raise StoreCorrupt(f"Blob {oid} is missing or unreadable",
                               "Run `git fsck` to check the repository.") from e

    def read_object(self, oid: ObjectId) -> tuple[str, bytes]:
        self._check(oid)
        try:
            kind, body = self.repo.odb.read(oid)
        except (KeyError, ValueError, pygit2.GitError, MemoryError) as e:
            raise StoreCorrupt(f"Object {oid} is missing or unreadable",
                               "Run `git fsck` to check the repository.") from e
        if kind not in _KIND:
            raise StoreCorrupt(f"Object {oid} is a tag, not part of a timeline",
                               "Run `gitckpt doctor`.")
        return _KIND[kind], body

    def write_object(self, kind: str, body: bytes) -> ObjectId:
        return self._write({"blob": ObjectType.BLOB, "tree": ObjectType.TREE,
                            "commit": ObjectType.COMMIT}[kind], body)

    def has_object(self, oid: ObjectId) -> bool:
        return oid in self.repo.odb

    def object_size(self, oid: ObjectId) -> int:
        try:  # a loose file is read here: libgit2 trusts its header (see store.loose)
            size = loose_size(os.path.join(self.objects_dir, oid[:2], oid[2:]))
            if size is None:
                size = self.repo.odb.read_header(oid)[1]
        except (KeyError, ValueError, pygit2.GitError) as e:
            raise StoreCorrupt(f"Object {oid} is missing or unreadable ({e})",
                               "Run `git fsck` to check the repository.") from e
        return size

    def object_problem(self, oid: ObjectId) -> str | None:
        if oid not in self.repo.odb:
            return "missing"
        return loose_problem(self.objects_dir, oid, verify=True)

    # -- refs --------------------------------------------------------------------------------

    def get_ref(self, name: str) -> ObjectId | None:
        try:
            ref = self.repo.references.get(name)
        except (pygit2.GitError, ValueError) as e:
            raise StoreCorrupt(f"Cannot read {name}: {e}",
                               "Check the repository with `git fsck`.") from e
        return None if ref is None else ObjectId(str(ref.target))

    def list_refs(self, prefix: str, damaged: list[str] | None = None) -> dict[str, ObjectId]:
        # read from the files, not libgit2's iterator: that one reads every ref of the
        # repository and passes over a loose ref it cannot parse
        out, broken = list_refs(self.common_dir, prefix)
        if broken and damaged is None:
            raise StoreCorrupt(f"The ref {broken[0]} cannot be read (damaged).",
                               "Check the repository with `git fsck`; `gitckpt doctor` names "
                               "the step it should hold.")
        if damaged is not None:
            damaged += broken
        return out

    def _clear_stale_lock(self, name: str) -> None:
        """Remove `<ref>.lock` left by a killed writer (we hold the store lock, so no gitckpt
        writer is live). A fresh one may be git's own (`pack-refs`, `git notes`): wait for it.
        """
        lock = self.common_dir / f"{name}.lock"
        deadline = time.monotonic() + 2
        while True:
            try:
                age = time.time() - lock.stat().st_mtime
            except FileNotFoundError:
                return
            if age > STALE_LOCK_SECONDS:
                lock.unlink(missing_ok=True)
                return
            if time.monotonic() > deadline:
                raise StoreBusy(str(lock), 2)
            time.sleep(0.05)

    def _check_ref_dirs(self, name: str) -> None:
        """StoreUnsafe if a folder on the way to ref `name` is a symlink: libgit2 would write
        the ref wherever it points."""
        checked = self.__dict__.setdefault("_ref_dirs", set())
        folder = (self.common_dir / name).parent
        while folder != self.common_dir and folder not in checked:
            if folder.is_symlink():
                raise unsafe(folder)
            checked.add(folder)
            folder = folder.parent

    def create_ref(self, name: str, oid: ObjectId) -> None:
        self._check_ref_dirs(name)
        self._clear_stale_lock(name)
        try:
            self.repo.references.create(name, oid, force=False)
        except pygit2.AlreadyExistsError as e:
            raise RefMoved(name, None, self.get_ref(name)) from e
        except pygit2.GitError as e:
            raise StoreNotWritable(f"Cannot write {name}: {e}.",
                                   "Check the permissions of the .git folder.") from e

    def delete_ref(self, name: str, old: ObjectId) -> None:
        current = self.get_ref(name)
        if current != old:
            raise RefMoved(name, old, current)
        self._clear_stale_lock(name)
        try:
            self.repo.references.delete(name)
        except (KeyError, pygit2.GitError) as e:
            raise StoreNotWritable(f"Cannot delete {name}: {e}.",
                                   "Check the permissions of the .git folder.") from e

    def cas_ref(self, name: str, new: ObjectId, old: ObjectId | None) -> None:
        current = self.get_ref(name)
        if current != old:
            raise RefMoved(name, old, current)
        if old is None:
            self.create_ref(name, new)
            return
        self._check_ref_dirs(name)
        self._clear_stale_lock(name)
        try:
            self.repo.references.create(name, new, force=True)
        except pygit2.GitError as e:
            raise StoreNotWritable(f"Cannot write {name}: {e}.",
                                   "Check the permissions of the .git folder.") from e

    # -- the workspace -----------------------------------------------------------------------

    takes_hints = True

    def estimate(self) -> int | None:
        """The cache's entries; for a first scan a walk of the folders (the user's index
        leaves the untracked files out), or the user's index (read, never written) where the
        walk takes too long: about the files a scan visits."""
        def entries(path: str) -> int:
            try:
                return len(pygit2.Index(path)) if os.path.exists(path) else 0
            except (pygit2.GitError, OSError, ValueError):
                return 0

        return entries(str(self._scanner.index_path)) or self.count_names(folders=False) \
            or entries(os.path.join(self.repo.path, "index")) or None

    def scan(self, scope: Scope, *, update_cache: bool = True,
             progress: Progress | None = None, changed: set[str] | None = None,
             skipped_before: tuple[Skipped, ...] = (), watched: bool = False) -> Snapshot:
        return self._scanner.snapshot(scope, update_cache=update_cache, progress=progress,
                                      changed=changed, skipped_before=skipped_before,
                                      watched=watched)

    def forget_hints(self, elsewhere: bool = False) -> None:
        self._scanner.cache.looked_elsewhere(elsewhere)

    def cache_problem(self) -> tuple[Path, str] | None:
        """Checked as git checks an index file: signature, version, trailing SHA-1."""
        path = self._scanner.index_path
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            return path, e.strerror or str(e)
        if (len(data) < 32 or data[:4] != b"DIRC"
                or int.from_bytes(data[4:8], "big") not in (2, 3, 4)):
            return path, "not an index file"
        if sha1(data[:-20]).digest() != data[-20:]:
            return path, "checksum mismatch"
        return None

    def prefer_low_memory(self) -> None:
        self._scanner.parallel = False

    def ignore_check(self) -> Callable[[str], bool]:
        ours = IgnoreRules(disk_loader(str(self.root)), [])

        def ignored(rel: str) -> bool:
            try:
                return self.repo.path_is_ignored(f"{self.prefix}/{rel}".lstrip("/"))
            except UnicodeEncodeError:
                return ours.left_out(rel)  # libgit2 takes UTF-8 paths only: git's rules, ours
            except pygit2.GitError:
                return True  # unknown: treat as left out, never overwrite it
        return ignored

    def git_since(self, then: str | None) -> GitSince | None:
        now = self.git_state()
        if then and now.head:
            if any(loose_problem(self.objects_dir, c) for c in (now.head, then)):
                return GitSince(now.head, now.branch)  # damaged: libgit2's walk would hang
            try:
                ahead, behind = self.repo.ahead_behind(now.head, then)
                return GitSince(now.head, now.branch, ahead, behind == 0)
            except (KeyError, ValueError, pygit2.GitError):
                return GitSince(now.head, now.branch, head_reachable=False)  # pruned
        return GitSince(now.head, now.branch)

    def user_commit(self, rev: str) -> tuple[str, str, ObjectId, ObjectId | None] | None:
        try:
            c = self.repo.revparse_single(rev).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        parent = ObjectId(str(c.parents[0].tree_id)) if c.parents else None
        return str(c.id), c.message.split("\n", 1)[0], ObjectId(str(c.tree_id)), parent

    def user_blame(self, path: str, commit: str) -> tuple[bytes, list[str]] | None:
        repo_path = f"{self.prefix}/{path}".lstrip("/")
        try:
            blob = self.repo.revparse_single(f"{commit}:{repo_path}")
            if not isinstance(blob, pygit2.Blob):
                return None
            blame = self.repo.blame(repo_path, newest_commit=commit)
            data = blob.data
            return data, [str(blame.for_line(i + 1).final_commit_id)
                          for i in range(len(split_lines(data)))]
        except (KeyError, ValueError, IndexError, pygit2.GitError):
            return None

    def git_state(self) -> GitState:
        repo = self.repo
        try:
            if repo.head_is_unborn:
                return GitState(None, None)
            branch = None if repo.head_is_detached else repo.head.shorthand
            return GitState(str(repo.head.target), branch)
        except pygit2.GitError:
            return GitState(None, None)
