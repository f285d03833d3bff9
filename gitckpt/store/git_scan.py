"""GitStore snapshots: the live workspace to a tree through a private libgit2 index (stat cache).

The private index lives under `<git-dir>/gitckpt/` and is opened as a standalone libgit2 index,
never through `repo.index`, so the user's `.git/index` cannot be read or written by accident.
libgit2 compares it with the work tree (one stat walk, git's ignore rules, nested repositories
as single entries); only the paths it reports are looked at again.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, ObjectType

from gitckpt.errors import InternalError, StoreNotWritable
from gitckpt.ids import ObjectId
from gitckpt.objects import EMPTY_TREE, Mode, TreeEntry, decode_tree, encode_tree
from gitckpt.scope import Scope
from gitckpt.store.base import Skipped, Snapshot
from gitckpt.store.git_index import add_entry, index_diff, nested_head

# A file modified this recently may change again within the file system's timestamp
# granularity without its stat changing; its cache entry is smudged (size 0) so that libgit2
# re-reads it, and the next scan re-takes it with its real stat once it is old enough.
# (libgit2's own UPDATE_INDEX refresh is not used: with a standalone index it would update the
# repository's index in memory instead.)
RACY_NS = 2_000_000_000
# Index changes kept pending (re-found by the next scan) rather than written at once.
PENDING_MAX = 100
_FLAGS = (DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
          | DiffOption.INCLUDE_TYPECHANGE | DiffOption.SKIP_BINARY_CHECK
          | DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_UNREADABLE
          | DiffOption.DISABLE_PATHSPEC_MATCH)

#: Called with each workspace-relative path a scan is about to look at (tests, progress bars).
Progress = Callable[[str], None]


@dataclass
class _Pass:
    """The state of one snapshot while it runs."""

    index: pygit2.Index
    scope: Scope
    gitlinks: set[str]
    attributes: set[str]
    racy: set[str]  # entries smudged because their file was too new to trust
    filters: bool = False
    now: int = field(default_factory=time.time_ns)
    skipped: list[Skipped] = field(default_factory=list)
    refilter: set[str] = field(default_factory=set)
    renormalize: set[str] = field(default_factory=set)
    # Every change made to the index, by work-tree path: (mode, id), or None when removed.
    changes: dict[str, tuple[int, str] | None] = field(default_factory=dict)

    def put(self, path: str, oid: str, mode: int, st: os.stat_result | None, racy: bool) -> None:
        (self.racy.add if racy else self.racy.discard)(path)
        add_entry(self.index, path, oid, mode, st, racy)
        self.changes[path] = (mode, oid)

    def remove(self, path: str) -> None:
        self.racy.discard(path)
        if path in self.index:
            self.index.remove(path)
            self.changes[path] = None

    def skip(self, rel: str, reason, st: os.stat_result | None = None) -> None:
        self.skipped.append(Skipped(rel, reason, st.st_size if st else None,
                                    round(st.st_mtime, 3) if st else None))


class Scanner:
    """Snapshots one workspace (`prefix` inside the work tree) of one repository."""

    def __init__(self, repo: pygit2.Repository, workdir: Path, prefix: str, state_dir: Path,
                 common_dir: Path, user_index: Path) -> None:
        self.repo = repo
        self.workdir = workdir
        self.prefix = prefix
        self.common_dir = common_dir
        self.index_path = state_dir / "index"
        self.state_path = state_dir / "scan.json"
        if self.index_path.resolve() == user_index.resolve():
            raise InternalError(f"private index {self.index_path} is the user's index")
        self.user_index = user_index

    def snapshot(self, scope: Scope, *, update_cache: bool, progress: Progress | None = None
                 ) -> Snapshot:
        before = _stamp(self.user_index)
        opened = _stamp(self.index_path)
        index = self._open_index(update_cache)
        state = self._read_state()
        # The recorded tree is that of the index we read only if the file did not change
        # while we read it (writers replace it by rename) and the state names that file.
        same_file = opened is not None and _stamp(self.index_path) == opened
        base = state.get("tree") if same_file and state.get("index") == list(opened) else None
        fingerprint = self._fingerprint(scope)
        p = _Pass(index, scope, set(state.get("gitlinks", [])),
                  set(state.get("attributes", [])), set(state.get("racy", [])))
        cached = len(index)
        if state.get("fingerprint") != fingerprint:
            p.refilter.add(self.prefix)  # rules changed: cached entries may be out of scope
        deltas = list(index_diff(self.repo, index, _FLAGS, self.prefix).deltas)
        p.filters = self._filters_possible(p.attributes) or any(
            d.new_file.raw_path.endswith(b".gitattributes") for d in deltas)
        recheck = set(p.racy)
        for delta in deltas:
            recheck.discard(self._visit(p, delta, progress))
        for path in sorted(recheck):  # unchanged since, or libgit2 would have reported them
            if path in index:
                self._take(p, path, path[len(self.prefix) + 1:] if self.prefix else path)
            else:
                p.racy.discard(path)
        self._check_gitlinks(p)
        if p.renormalize and cached:
            self._renormalize(p)
        if p.refilter and cached:  # an empty cache holds nothing the rules could drop
            self._refilter(p)
        if base and base not in self.repo.odb:
            base = None
        tree = self._tree(index, base, p.changes)
        new_state = {"fingerprint": fingerprint, "gitlinks": sorted(p.gitlinks),
                     "attributes": sorted(p.attributes), "racy": sorted(p.racy),
                     "index": state.get("index"), "tree": state.get("tree")}
        # Writing a large index costs more than re-reading a few changed files next time, so
        # small changes stay pending; rule changes and unknown bases are written at once.
        if update_cache and p.changes and (base is None or len(p.changes) > PENDING_MAX
                                           or p.refilter or p.renormalize):
            self._write_index(index)
            new_state.update(index=list(_stamp(self.index_path) or ()), tree=tree)
        if update_cache and new_state != state:
            self._write_state(new_state)
        if _stamp(self.user_index) != before:
            raise InternalError(
                f"{self.user_index} changed during a snapshot. gitckpt never writes it, so "
                "another git process did; retry. If it happens with no other git running, "
                "report a bug.")
        return Snapshot(tree, tuple(sorted(p.skipped, key=lambda s: s.path)))

    # -- the private index and its side state ------------------------------------------------

    def _open_index(self, update_cache: bool) -> pygit2.Index:
        if update_cache:
            try:
                self.index_path.parent.mkdir(parents=True, exist_ok=True)
                # Left by a killed writer: the caller holds the store lock.
                self.index_path.with_name("index.lock").unlink(missing_ok=True)
            except OSError as e:
                raise StoreNotWritable(f"Cannot write {self.index_path.parent}: {e.strerror}.",
                                       "Check the permissions of the .git folder.") from e
        try:
            index = pygit2.Index(str(self.index_path))
        except pygit2.GitError:
            # A corrupt stat cache costs a re-read, never data: start from empty.
            if not update_cache:
                index = pygit2.Index()
            else:
                self.index_path.unlink(missing_ok=True)
                index = pygit2.Index(str(self.index_path))
        index._repo = self.repo  # diff_to_workdir needs the repository; ownership stays None
        return index

    def _write_index(self, index: pygit2.Index) -> None:
        try:
            index.write()
        except pygit2.GitError as e:
            raise StoreNotWritable(f"Cannot write the stat cache {self.index_path}: {e}.",
                                   "Check the permissions of the repository's .git folder."
                                   ) from e

    def _read_state(self) -> dict:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return {}

    def _write_state(self, state: dict) -> None:
        tmp = self.state_path.with_name(f"scan.json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.state_path)

    def _fingerprint(self, scope: Scope) -> str:
        """Scope rules plus the ignore files no scan of this workspace sees change."""
        files = [self.common_dir / "info" / "exclude"]
        try:
            files.append(Path(os.path.expanduser(self.repo.config["core.excludesFile"])))
        except KeyError:
            xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
            files.append(Path(xdg) / "git" / "ignore")
        if self.prefix:  # .gitignore files above a monorepo workspace
            above = self.prefix.split("/")[:-1]
            files += [self.workdir.joinpath(*above[:i], ".gitignore")
                      for i in range(len(above) + 1)]
        return "|".join([scope.fingerprint(), *(f"{f}:{_stamp(f)}" for f in files)])

    def _filters_possible(self, attributes: set[str]) -> bool:
        """True when git's content filters (line endings, ident) could apply to some file.

        Loading filters costs more than hashing a file, so they are only asked for when some
        attributes file or core.autocrlf can call for them.
        """
        if attributes or os.path.exists(self.common_dir / "info" / "attributes"):
            return True
        config = self.repo.config
        autocrlf = config["core.autocrlf"].lower() if "core.autocrlf" in config else "false"
        if autocrlf not in ("false", "0", "no", "off") or "core.attributesFile" in config:
            return True
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        return os.path.exists(os.path.join(xdg, "git", "attributes"))  # False if unreadable

    # -- the scan ------------------------------------------------------------------------------

    def _visit(self, p: _Pass, delta: pygit2.DiffDelta, progress: Progress | None) -> str:
        """Bring the index up to date for one reported path; returns the path."""
        status = delta.status
        side = delta.old_file if status == DeltaStatus.DELETED else delta.new_file
        path = os.fsdecode(side.raw_path).rstrip("/")
        rel = path[len(self.prefix) + 1:] if self.prefix else path
        if progress:
            progress(rel)
        name = path.rsplit("/", 1)[-1]
        if name == ".gitignore":
            p.refilter.add(path.rpartition("/")[0])
        if status == DeltaStatus.DELETED:
            p.remove(path)
            p.attributes.discard(path)
        elif status == DeltaStatus.UNREADABLE:
            p.remove(path)
            p.skip(rel, "unreadable")
        else:
            self._take(p, path, rel)
        if name == ".gitattributes":
            if status != DeltaStatus.DELETED and path in p.index:
                p.attributes.add(path)
            p.renormalize.add(path.rpartition("/")[0])
        return path

    def _take(self, p: _Pass, path: str, rel: str) -> None:
        """Put the current state of `path` into the index, or leave it out and say why."""
        full = os.path.join(self.workdir, path)
        reason = p.scope.excluded(rel)
        st = _lstat(full) if reason != "excluded" else None
        if reason:
            p.remove(path)
            if reason == "sensitive" and st:
                p.skip(rel, reason, st)
        elif st is None:
            p.remove(path)
        elif stat.S_ISDIR(st.st_mode):
            self._take_nested(p, path, rel)
        elif not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            p.remove(path)  # fifos, sockets, devices: not content
        elif stat.S_ISREG(st.st_mode) and p.scope.too_large(st.st_size):
            p.remove(path)
            p.skip(rel, "too_large", st)
        else:
            try:
                oid = self._blob(path, full, st, p.filters)
            except (pygit2.GitError, OSError):
                p.remove(path)
                if _lstat(full) is not None:
                    p.skip(rel, "unreadable", st)
                return
            if stat.S_ISLNK(st.st_mode):
                mode = Mode.SYMLINK
            else:
                mode = Mode.EXECUTABLE if st.st_mode & 0o100 else Mode.FILE
            p.put(path, str(oid), mode, st, racy=p.now - st.st_mtime_ns < RACY_NS)

    def _blob(self, path: str, full: str, st: os.stat_result, filters: bool) -> pygit2.Oid:
        """The blob of a file or link; written only when the object database lacks it.

        Hashing first avoids creating a temp file per already-known object, which dominates a
        first save in an existing repository.
        """
        odb = self.repo.odb
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(os.fsencode(full))
            oid = pygit2.hash(target)
            return oid if oid in odb else self.repo.create_blob(target)
        oid = self.repo.hashfile(path) if filters else pygit2.hashfile(full)
        return oid if oid in odb else self.repo.create_blob_fromworkdir(path)

    def _take_nested(self, p: _Pass, path: str, rel: str) -> None:
        """A nested repository becomes a gitlink to its HEAD commit, as `git add` makes it."""
        head = nested_head(os.path.join(self.workdir, path))
        if head is None:
            p.remove(path)
            p.gitlinks.discard(path)
            p.skip(rel, "nested_repo")
            return
        p.put(path, head, Mode.GITLINK, None, racy=False)
        p.gitlinks.add(path)

    def _check_gitlinks(self, p: _Pass) -> None:
        """Nested repositories whose HEAD moved or that vanished (libgit2 skips gitlinks)."""
        for path in sorted(p.gitlinks):
            head = nested_head(os.path.join(self.workdir, path))
            current = p.index[path].id if path in p.index else None
            if head is None:
                p.remove(path)
                p.gitlinks.discard(path)
            elif current is None or str(current) != head:
                p.put(path, head, Mode.GITLINK, None, racy=False)

    def _renormalize(self, p: _Pass) -> None:
        """Re-hash cached files under dirs whose .gitattributes changed, as a fresh `git add`
        would filter them (line endings) differently now."""
        unders = tuple(d + "/" if d else "" for d in p.renormalize)
        for entry in list(p.index):
            if entry.path.startswith(unders) and entry.mode in (Mode.FILE, Mode.EXECUTABLE):
                path = entry.path
                self._take(p, path, path[len(self.prefix) + 1:] if self.prefix else path)

    def _refilter(self, p: _Pass) -> None:
        """Drop cached entries that changed rules now leave out, under the dirs `p.refilter`.

        libgit2 lists what git would add under each dir (an untracked scan against an empty
        index); cached entries it does not list are ignored now.
        """
        everything = any(d == self.prefix or not d for d in p.refilter)
        for d in [self.prefix] if everything else sorted(p.refilter):
            empty = pygit2.Index()
            empty._repo = self.repo
            listed = {os.fsdecode(delta.new_file.raw_path).rstrip("/")
                      for delta in index_diff(self.repo, empty, _FLAGS, d).deltas}
            under = d + "/" if d else ""
            for entry in list(p.index):
                path = entry.path
                if not path.startswith(under):
                    continue
                rel = path[len(self.prefix) + 1:] if self.prefix else path
                gone = path not in listed or p.scope.excluded(rel)
                if not gone and everything and entry.mode != Mode.GITLINK:
                    st = _lstat(os.path.join(self.workdir, path))
                    gone = (st is not None and stat.S_ISREG(st.st_mode)
                            and p.scope.too_large(st.st_size))
                if gone:
                    p.remove(path)

    def _tree(self, index: pygit2.Index, base: str | None,
              changes: dict[str, tuple[int, str] | None]) -> ObjectId:
        """The workspace tree: `base` with `changes` applied, or the whole index written."""
        if base is not None:
            cut = len(self.prefix) + 1 if self.prefix else 0
            tree = self._apply(ObjectId(base), {os.fsencode(k[cut:]): v
                                                for k, v in changes.items()})
        else:
            root = index.write_tree(self.repo)
            try:
                tree = ObjectId(str(self.repo[root][self.prefix].id) if self.prefix
                                else str(root))
            except KeyError:
                tree = EMPTY_TREE
        if tree == EMPTY_TREE:
            self.repo.odb.write(ObjectType.TREE, b"")
        return tree

    def _apply(self, tree: ObjectId, changes: dict[bytes, tuple[int, str] | None]
               ) -> ObjectId:
        """Tree `tree` with `changes` (path -> (mode, id) or None) applied; only the trees on
        the changed paths are read and written (libgit2 rewrites every tree once any is stale).
        """
        if not changes:
            return tree
        entries = {e.name: e for e in self._read_tree(tree)}
        leaves: dict[bytes, tuple[int, str] | None] = {}
        below: dict[bytes, dict[bytes, tuple[int, str] | None]] = {}
        for path, change in changes.items():
            head, sep, rest = path.partition(b"/")
            if sep:
                below.setdefault(head, {})[rest] = change
            else:
                leaves[head] = change
        for name, sub in below.items():
            old = entries.pop(name, None)
            child = self._apply(old.id if old and old.mode == Mode.TREE else EMPTY_TREE, sub)
            if child != EMPTY_TREE:
                entries[name] = TreeEntry(name, Mode.TREE, child)
        for name, change in leaves.items():
            if change is not None:  # a file replacing a folder wins: both cannot exist
                entries[name] = TreeEntry(name, Mode(change[0]), ObjectId(change[1]))
            elif name in entries and entries[name].mode != Mode.TREE:
                del entries[name]
        if not entries:
            return EMPTY_TREE
        return ObjectId(str(self.repo.odb.write(ObjectType.TREE,
                                                encode_tree(list(entries.values())))))

    def _read_tree(self, tree: ObjectId) -> list[TreeEntry]:
        if tree == EMPTY_TREE:
            return []
        kind, body = self.repo.odb.read(tree)
        return decode_tree(body)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
