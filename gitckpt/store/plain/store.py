"""DirStore: the git model in a plain directory, written with the standard library only.

The store is a bare git repository that stock git can read (`git --git-dir=STORE log`, `fsck`):
loose zlib objects, refs as files, notes as a notes commit with a two-level fan-out tree. Our
own state lives under `STORE/gitckpt/`. Objects are written as `tmp_obj_*` files (which git
ignores), made durable together, then renamed into place before any ref points at them; refs
are replaced by fsync-and-rename under the store lock. Files are 0600, folders 0700.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gitckpt.core import json_input
from gitckpt.core.errors import CHECK_STORE, SchemaTooNew, StoreCorrupt, StoreNotWritable
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import (
    EMPTY_TREE,
    Commit,
    TreeEntry,
    decode_commit,
    decode_tree,
    encode_commit,
    encode_tree,
    hash_object,
    sha1,
)
from gitckpt.core.values import DESCRIPTION, POINTER, Progress, Skipped, Snapshot
from gitckpt.safety.rules import IgnoreRules, disk_loader
from gitckpt.safety.scope import Scope
from gitckpt.store.base import Store
from gitckpt.store.files import fsync_dir, make_dir, read_loose, syncfs, write_file
from gitckpt.store.git.loose import loose_size
from gitckpt.store.packs.read import Packs
from gitckpt.store.packs.write import PackWriter
from gitckpt.store.plain import hinted
from gitckpt.store.plain.refs import RefFiles
from gitckpt.store.plain.scan import DirScanner, builtin_ignore
from gitckpt.store.state import StateDir, unsafe

if TYPE_CHECKING:
    import pygit2

FORMAT = 1
POINTER_PREFIX = "gitckpt-store: "
CONFIG_TEXT = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
               "[gc]\n\tauto = 0\n")  # git reads it: nothing else belongs there
WORKSPACES = "workspaces"  # in STORE/gitckpt/: the workspaces the store was made for


def _state_name(root: Path) -> str:
    """The state folder of workspace `root` inside a store."""
    return "ws-" + sha1(os.fsencode(str(root))).hexdigest()[:12]


def _uses(folder: Path, store: Path) -> bool:
    """True if `folder` still reaches `store` through its own `.gitckpt` or pointer file."""
    marker = folder / POINTER
    try:
        if marker.is_dir() and not marker.is_symlink():
            return marker.resolve() == store.resolve()
        return marker.is_file() and read_pointer(marker).resolve() == store.resolve()
    except (OSError, StoreCorrupt):
        return False


def read_pointer(path: Path) -> Path:
    """The store named by pointer file `path`."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise StoreCorrupt(f"Cannot read the store pointer {path}: {e}",
                           "It should hold one line: gitckpt-store: /path/to/store") from e
    if not text.startswith(POINTER_PREFIX):
        raise StoreCorrupt(f"{path} is not a gitckpt store pointer",
                           "It should hold one line: gitckpt-store: /path/to/store")
    return Path(text[len(POINTER_PREFIX):])  # a relative path is refused by the caller


class DirStore(Store):
    kind = "dir"

    @property
    def refs_folder(self) -> Path:
        return self.path

    def prune(self, reachable: Callable[[], set[ObjectId]]) -> int:
        """Loose objects no ref reaches are deleted (this store has no gc); the stat caches,
        which may name a deleted blob, go too, so the next snapshot reads the files again."""
        self.flush()  # objects written but not yet in place are pruned like the others
        keep = reachable()
        freed = 0
        for oid, path in self.loose_objects().items():
            if oid not in keep:
                freed += path.stat().st_size
                path.unlink()
        if freed:
            for cache in self.path.glob("gitckpt/ws-*/cache"):
                cache.unlink(missing_ok=True)
                hinted.forget(str(cache))  # a watcher's cache in memory may name them too
            self._scanner.forget_hints(False)
        return freed

    def __init__(self, root: Path, path: Path, *, bare: bool = False) -> None:
        self.root = root
        self.path = path
        self.bare = bare  # a handoff package's repository: no workspace, no pointer file
        self.workspace = str(root)
        self.state = StateDir(path, "gitckpt", _state_name(root))
        self.state_dir = self.state.path
        self.shared = StateDir(path, "gitckpt")
        self.location = path
        self.lock_path = self.shared.path / "lock"
        self._pending: dict[ObjectId, Path] = {}  # written, not yet durable and in place
        self._checked: set[Path] = set()  # folders verified to be real folders (make_dir)
        self.refs = RefFiles(self.path, self.flush, self._checked)
        # Many new objects (a first save) become one pack at `flush`, as in a git store;
        # packs are read too, so `git gc` on the store is safe.
        self.objects_folder = path / "objects"
        self._packs = Packs(str(path / "objects"))
        self._packer = self._new_packer()
        if self.exists():
            self._check_format()
        skip = set()
        real = path.resolve()
        if root in real.parents:  # a store inside the workspace is never snapshotted
            skip.add(real.relative_to(root).as_posix())
        self.private = tuple(sorted(skip))
        self.builtin = builtin_ignore()
        self._scanner = DirScanner(root, self.state, skip, self.has_object,
                                   self._write_object, self.flush)

    # -- layout ------------------------------------------------------------------------------

    def exists(self) -> bool:
        return (self.path / "gitckpt" / "format").exists() or (self.path / "HEAD").exists()

    def _check_format(self) -> None:
        try:
            found = int((self.path / "gitckpt" / "format").read_text().strip())
        except (OSError, ValueError) as e:
            raise StoreCorrupt(f"{self.path} is not a readable gitckpt store (no format file)",
                               "Point GITCKPT_STORE at a gitckpt store, or move this folder "
                               "away.") from e
        if found > FORMAT:
            raise SchemaTooNew(f"The store {self.path}", found, FORMAT)

    def prepare(self) -> None:
        """Lay out an empty store (idempotent): a bare repository git can read, and, when the
        store is not the workspace's own `.gitckpt` folder, a pointer file naming it."""
        pointer = self.root / POINTER
        if self.path != pointer and not self.bare:
            if pointer.is_dir():
                raise StoreCorrupt(f"{pointer} is a store folder, but the store is {self.path}",
                                   "Unset GITCKPT_STORE (or --store) to use the workspace's "
                                   "own store.")
            if not pointer.exists() or read_pointer(pointer) != self.path:
                try:
                    write_file(pointer, f"{POINTER_PREFIX}{self.path}\n".encode())
                except OSError as e:
                    raise StoreNotWritable(f"Cannot write {pointer}: {e.strerror}.",
                                           "Check the workspace's permissions.") from e
        if self.path.is_symlink():
            raise unsafe(self.path)
        if (self.path.exists() and not self.exists()
                and any(p.name != "gitckpt" for p in self.path.iterdir())):
            raise StoreNotWritable(f"{self.path} holds other files; it is not a gitckpt store.",
                                   "Choose an empty or new folder for the store.")
        try:
            if not self.path.is_dir():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.mkdir(self.path, 0o700)
                fsync_dir(self.path.parent)
            for d in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "gitckpt"):
                make_dir(self.path / d, self.path, self._checked)
            for name, text in (("HEAD", "ref: refs/heads/main\n"),
                               ("config", CONFIG_TEXT),
                               ("description", DESCRIPTION),
                               (".gitignore", "*\n"),
                               ("gitckpt/format", f"{FORMAT}\n")):
                if not (self.path / name).exists():
                    write_file(self.path / name, text.encode())
            if not self.bare:
                self._record(self.workspace)
        except OSError as e:
            raise StoreNotWritable(f"Cannot create the store {self.path}: {e.strerror}.",
                                   "Check the folder's permissions, or set GITCKPT_STORE.") from e

    def own_folders(self) -> list[Path]:
        return [self.path]

    # -- which workspaces the store was made for ---------------------------------------------

    def recorded(self) -> dict[str, list[str]] | None:
        """The workspaces this store was made for (absolute paths), each with the earlier
        paths it was adopted from; None for a store from before this record existed."""
        try:
            raw = self.shared.read(WORKSPACES)
            data = json_input.loads(raw) if raw is not None else None
        except (OSError, ValueError) as e:
            raise StoreCorrupt(f"{self.shared.path / WORKSPACES} is damaged ({e})",
                               "Run `gitckpt adopt` in the workspace to write it again.") from e
        if data is None:
            return None
        if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, list) for k, v in data.items()):
            raise StoreCorrupt(f"{self.shared.path / WORKSPACES} is damaged",
                               "Run `gitckpt adopt` in the workspace to write it again.")
        return data

    def made_for(self, folder: Path) -> bool:
        """True if `folder` is a recorded workspace of this store. A store from before the
        record counts as made for a folder that has a state folder in it (it was used there),
        or for the folder whose own `.gitckpt` it is."""
        found = self.recorded()
        if found is not None:
            return str(folder) in found
        return (self.path == folder / POINTER
                or (self.path / "gitckpt" / _state_name(folder)).is_dir())

    def recorded_text(self) -> str:
        found = self.recorded() or {}
        return ", ".join(sorted(found)) or "another folder"

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple((self.recorded() or {}).get(self.workspace, ()))

    def _record(self, workspace: str, aliases: tuple[str, ...] = ()) -> None:
        found = self.recorded() or {}
        now = sorted({*found.get(workspace, ()), *aliases})
        if workspace in found and found[workspace] == now:
            return
        found[workspace] = now
        self.shared.write(WORKSPACES, (json.dumps(found, indent=1, sort_keys=True) + "\n")
                          .encode())

    def adopt(self) -> list[str]:
        """Record this folder as a workspace of the store (after the folder was moved or
        copied here): tasks of recorded workspaces that no longer use this store become
        tasks of this one. Returns those earlier paths. The caller holds the lock."""
        if self.path != self.root / POINTER:
            return super().adopt()  # shared through a pointer: not this folder's own
        found = self.recorded() or {}
        # The folder this store came from: gone (moved), or holding a store folder of its
        # own (copied). A folder that shares the store through a pointer is another
        # workspace, not an earlier name of this one.
        old = [w for w in found if w != self.workspace and not _uses(Path(w), self.path)
               and (not Path(w).exists() or (Path(w) / POINTER).is_dir())]
        if not found and self.path == self.root / POINTER:
            old = []  # a store from before the record: its tasks name their own path
        self._record(self.workspace, tuple(old))
        for w in old:  # the active task carries over
            active = StateDir(self.path, "gitckpt", _state_name(Path(w))).read("active")
            if active and not self.state.exists("active"):
                self.state.write("active", active)
        return old

    # -- objects -----------------------------------------------------------------------------

    def _object_path(self, oid: ObjectId) -> Path:
        return self.path / "objects" / oid[:2] / oid[2:]

    #: False for stores whose objects must all be loose (a handoff package).
    packs_new_objects = True

    def loose_objects_dir(self) -> str | None:
        return str(self.path / "objects") if self.packs_new_objects else None

    def _new_packer(self) -> PackWriter | None:
        if not self.packs_new_objects:
            return None
        return PackWriter(str(self.path / "objects"), self._write_loose)

    def _write_object(self, kind: str, body: bytes) -> ObjectId:
        oid = hash_object(kind, body)
        if self.has_object(oid):
            return oid  # objects are never rewritten
        if self._held is not None:  # staging: in memory until published
            self._held.add(oid, kind, body)
            return oid
        if self._packer is not None:
            return ObjectId(self._packer.add(kind, body, oid))
        return self._write_loose(kind, body)

    def _write_loose(self, kind: str, body: bytes) -> ObjectId:
        oid = hash_object(kind, body)
        if oid in self._pending or self._object_path(oid).exists():
            return oid
        folder = self._object_path(oid).parent
        try:
            make_dir(folder, self.path, self._checked)
            tmp = folder / f"tmp_obj_{os.urandom(8).hex()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, zlib.compress(b"%s %d\0" % (kind.encode(), len(body)) + body, 1))
            finally:
                os.close(fd)
        except OSError as e:
            raise StoreNotWritable(f"Cannot write to {self.path}: {e.strerror}.",
                                   "Check the store folder's permissions and free space.") from e
        self._pending[oid] = tmp
        return oid

    def flush(self) -> None:
        """Make pending objects durable, then move them into place (before any ref names them).

        A crash before the renames leaves only `tmp_obj_*` files, which git and gitckpt ignore;
        after, every object in place is complete.
        """
        try:
            if self._packer is not None and self._packer.ids:
                packer, self._packer = self._packer, self._new_packer()
                packer.close()  # a pack, durable and in place, or loose objects pending
                self._packs.refresh()
            if self._pending:
                self._flush()
        except OSError as e:
            raise StoreNotWritable(f"Cannot write to {self.path}: {e.strerror}.",
                                   "Check the store folder's free space and permissions.") from e

    def _flush(self) -> None:
        if not syncfs(self.path):
            for tmp in self._pending.values():
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        folders = set()
        for oid, tmp in self._pending.items():
            final = self._object_path(oid)
            try:
                os.link(tmp, final)
            except FileExistsError:
                pass
            except OSError:
                os.replace(tmp, final)  # no hard links here: rename instead
                folders.add(final.parent)
                continue
            os.unlink(tmp)
            folders.add(final.parent)
        if not syncfs(self.path):
            for folder in folders:
                fsync_dir(folder)
        self._pending.clear()

    def _read_any(self, oid: ObjectId) -> tuple[str, bytes]:
        """(kind, body) of `oid`, wherever it is: written but not flushed, loose or packed."""
        held = self._packer.get(oid) if self._packer is not None else None
        held = held or (self._held.get(oid) if self._held is not None else None)
        if held is not None:
            return held
        path = self._pending.get(oid) or self._object_path(oid)
        if not path.exists():
            packed = self._packs.read(oid, self._read_loose_only)
            if packed is not None:
                return packed
        return read_loose(path, oid)

    def _read_loose_only(self, oid: str) -> tuple[str, bytes] | None:
        path = self._object_path(ObjectId(oid))
        return read_loose(path, ObjectId(oid)) if path.exists() else None

    def _read_object(self, oid: ObjectId, kind: str) -> bytes:
        found, body = self._read_any(oid)
        if found != kind:
            raise StoreCorrupt(f"Object {oid} in {self.path} is a {found}, not a {kind}",
                               CHECK_STORE)
        return body

    def write_blob(self, data: bytes) -> ObjectId:
        return self._write_object("blob", data)

    def read_blob(self, oid: ObjectId) -> bytes:
        return self._read_object(oid, "blob")

    def write_tree(self, entries: list[TreeEntry]) -> ObjectId:
        return self._write_object("tree", encode_tree(entries))

    def read_tree(self, oid: ObjectId) -> list[TreeEntry]:
        if oid == EMPTY_TREE and not self.has_object(oid):
            return []
        try:
            return decode_tree(self._read_object(oid, "tree"))
        except ValueError as e:
            raise StoreCorrupt(f"Tree {oid} in {self.path} is malformed ({e})", CHECK_STORE) from e

    def write_commit(self, tree: ObjectId, parents: list[ObjectId], message: str,
                     time: int) -> ObjectId:
        return self._write_object("commit", encode_commit(tree, parents, time, message))

    def read_commit(self, oid: ObjectId) -> Commit:
        return decode_commit(oid, self._read_object(oid, "commit"))

    def read_object(self, oid: ObjectId) -> tuple[str, bytes]:
        return self._read_any(oid)

    def write_object(self, kind: str, body: bytes) -> ObjectId:
        return self._write_object(kind, body)

    def object_size(self, oid: ObjectId) -> int:
        held = self._packer.get(oid) if self._packer is not None else None
        if held is not None:
            return len(held[1])
        try:
            size = loose_size(self._pending.get(oid) or self._object_path(oid))
        except ValueError as e:
            raise StoreCorrupt(f"Object {oid} in {self.path} is corrupt ({e})",
                               CHECK_STORE) from e
        size = self._packs.size(oid) if size is None else size
        if size is None:
            raise StoreCorrupt(f"Object {oid} is missing from {self.path}", CHECK_STORE)
        return size

    def has_object(self, oid: ObjectId) -> bool:
        return (oid in self._pending or (self._packer is not None and oid in self._packer)
                or (self._held is not None and oid in self._held)
                or self._object_path(oid).exists() or self._packs.has(oid))

    def repository(self) -> pygit2.Repository:
        from gitckpt.store.staging import plain_repository

        self.flush()  # objects held for a pack must be on disk for libgit2
        return plain_repository(self.path, self._held)

    def loose_objects(self) -> dict[ObjectId, Path]:
        """Every object file in place (objects/xx/yyyy...), by id."""
        out = {}
        objects = self.path / "objects"
        for fan in os.listdir(objects) if objects.is_dir() else ():
            if len(fan) != 2 or not (objects / fan).is_dir():
                continue
            for rest in os.listdir(objects / fan):
                if len(rest) == 38 and all(c in "0123456789abcdef" for c in rest):
                    out[ObjectId(fan + rest)] = objects / fan / rest
        return out

    # -- refs (refs.py) ------------------------------------------------------------------------

    def get_ref(self, name: str) -> ObjectId | None:
        return self.refs.get(name)

    def list_refs(self, prefix: str, damaged: list[str] | None = None) -> dict[str, ObjectId]:
        return self.refs.list(prefix, damaged)

    def create_ref(self, name: str, oid: ObjectId) -> None:
        self.refs.create(name, oid)

    def delete_ref(self, name: str, old: ObjectId) -> None:
        self.refs.delete(name, old)

    def cas_ref(self, name: str, new: ObjectId, old: ObjectId | None) -> None:
        self.refs.cas(name, new, old)

    # -- the workspace -----------------------------------------------------------------------

    def cache_problem(self) -> tuple[Path, str] | None:
        problem = self._scanner.cache_problem()
        return (self._scanner.cache_path, problem) if problem else None

    def ignore_check(self) -> Callable[[str], bool]:
        return IgnoreRules(disk_loader(str(self.root)), list(self.builtin)).left_out

    takes_hints = True

    def scan(self, scope: Scope, *, update_cache: bool = True,
             progress: Progress | None = None, changed: set[str] | None = None,
             skipped_before: tuple[Skipped, ...] = (), watched: bool = False) -> Snapshot:
        tree, skipped = self._scanner.snapshot(scope, update_cache=update_cache,
                                               progress=progress, changed=changed,
                                               skipped_before=skipped_before, watched=watched)
        return Snapshot(tree, tuple(skipped))

    def forget_hints(self, elsewhere: bool = False) -> None:
        self._scanner.forget_hints(elsewhere)

