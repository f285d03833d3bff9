"""GitStore snapshots: the live workspace to a tree through a private libgit2 index (stat cache).

The private index lives under `<git-dir>/gitckpt/` and is opened as a standalone libgit2 index,
never through `repo.index`, so the user's `.git/index` cannot be read or written by accident.
libgit2 compares it with the work tree (one stat walk, git's ignore rules, nested repositories
as single entries); only paths it reports are re-read.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2 import C, ffi
from pygit2.enums import DeltaStatus, DiffOption
from pygit2.errors import check_error

from gitckpt.errors import InternalError, StoreNotWritable
from gitckpt.ids import ObjectId
from gitckpt.objects import EMPTY_TREE, Mode
from gitckpt.scope import Scope
from gitckpt.store.base import Skipped, Snapshot

# A file modified this recently may change again within the file system's timestamp
# granularity without its stat changing; its cache entry is smudged so the next scan re-reads it.
RACY_NS = 2_000_000_000
_FLAGS = (DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
          | DiffOption.INCLUDE_TYPECHANGE | DiffOption.SKIP_BINARY_CHECK
          | DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_UNREADABLE
          | DiffOption.DISABLE_PATHSPEC_MATCH)

Progress = Callable[[str], None]


class Scanner:
    """Snapshots one workspace (`prefix` inside the work tree) of one repository."""

    def __init__(self, repo: pygit2.Repository, workdir: Path, prefix: str, state_dir: Path,
                 common_dir: Path, user_index: Path) -> None:
        self.repo = repo
        self.common_dir = common_dir
        self.workdir = workdir
        self.prefix = prefix
        self.index_path = state_dir / "index"
        self.state_path = state_dir / "scan.json"
        if self.index_path.resolve() == user_index.resolve():
            raise InternalError(f"private index {self.index_path} is the user's index")
        self.user_index = user_index

    def snapshot(self, scope: Scope, *, update_cache: bool, progress: Progress | None = None
                 ) -> Snapshot:
        before = _stamp(self.user_index)
        index = self._open_index(update_cache)
        state = self._read_state()
        fingerprint = self._fingerprint(scope)
        refilter_dirs: set[str] = set()
        if state.get("fingerprint") != fingerprint:
            refilter_dirs.add("")
        gitlinks = set(state.get("gitlinks", []))
        skipped: list[Skipped] = []
        now = time.time_ns()
        flags = _FLAGS | (DiffOption.UPDATE_INDEX if update_cache else 0)
        for delta in self._diff(index, flags, self.prefix).deltas:
            status = delta.status
            path = os.fsdecode((delta.old_file if status == DeltaStatus.DELETED
                                else delta.new_file).raw_path).rstrip("/")
            rel = path[len(self.prefix) + 1:] if self.prefix else path
            if progress:
                progress(rel)
            if path.rsplit("/", 1)[-1] == ".gitignore":
                refilter_dirs.add(path.rpartition("/")[0] or self.prefix)
            if status == DeltaStatus.DELETED:
                _remove(index, path)
            elif status == DeltaStatus.UNREADABLE:
                _remove(index, path)
                skipped.append(Skipped(rel, "unreadable"))
            else:
                self._take(index, path, rel, scope, now, skipped, gitlinks)
        self._check_gitlinks(index, gitlinks, skipped)
        if refilter_dirs:
            self._refilter(index, scope, refilter_dirs)
        tree = self._tree(index)
        if update_cache:
            self._write_index(index)
            self._write_state({"fingerprint": fingerprint, "gitlinks": sorted(gitlinks)})
        if _stamp(self.user_index) != before:
            raise InternalError(
                f"{self.user_index} changed during a snapshot. gitckpt never writes it, so "
                "another git process did; retry. If it happens with no other git running, "
                "report a bug.")
        return Snapshot(tree, tuple(sorted(skipped, key=lambda s: s.path)))

    # -- the private index -----------------------------------------------------------------

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
            self.index_path.unlink(missing_ok=True)
            index = pygit2.Index(str(self.index_path))
        index._repo = self.repo  # diff_to_workdir needs the repository; ownership stays None
        return index

    def _write_index(self, index: pygit2.Index) -> None:
        try:
            index.write()
        except pygit2.GitError as e:
            raise StoreNotWritable(f"Cannot write the stat cache {self.index_path}: {e}.",
                                   "Check the permissions of the repository's .git folder.")

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
        """Scope rules plus the ignore files outside the work tree, to detect rule changes."""
        parts = [scope.fingerprint()]
        excludes = [self.common_dir / "info" / "exclude"]
        try:
            excludes.append(Path(os.path.expanduser(self.repo.config["core.excludesFile"])))
        except KeyError:
            xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
            excludes.append(Path(xdg) / "git" / "ignore")
        # .gitignore files above a monorepo workspace never show up in its scans.
        above = self.prefix.split("/")[:-1] if self.prefix else []
        excludes += [self.workdir.joinpath(*above[:i], ".gitignore") for i in range(len(above) + 1)
                     ] if self.prefix else []
        for p in excludes:
            parts.append(f"{p}:{_stamp(p)}")
        return "|".join(parts)

    # -- the scan ------------------------------------------------------------------------------

    def _diff(self, index: pygit2.Index, flags: int, under: str) -> pygit2.Diff:
        """libgit2's index-to-work-tree diff, limited to work-tree directory `under`."""
        opts = ffi.new("git_diff_options *")
        check_error(C.git_diff_options_init(opts, 1))
        opts.flags = int(flags)
        keep = []
        if under:
            keep.append(ffi.new("char[]", os.fsencode(under + "/")))
            strings = ffi.new("char *[]", keep)
            opts.pathspec.strings = strings
            opts.pathspec.count = 1
            keep.append(strings)
        out = ffi.new("git_diff **")
        check_error(C.git_diff_index_to_workdir(out, self.repo._repo, index._index, opts))
        return pygit2.Diff.from_c(bytes(ffi.buffer(out)[:]), self.repo)

    def _take(self, index: pygit2.Index, path: str, rel: str, scope: Scope, now: int,
              skipped: list[Skipped], gitlinks: set[str]) -> None:
        """Put the current state of `path` into the index, or leave it out and say why."""
        full = os.path.join(self.workdir, path)
        reason = scope.excluded(rel)
        if reason:
            _remove(index, path)
            if reason == "sensitive":
                st = _lstat(full)
                if st:
                    skipped.append(Skipped(rel, reason, st.st_size, round(st.st_mtime, 3)))
            return
        st = _lstat(full)
        if st is None:
            _remove(index, path)
        elif stat.S_ISDIR(st.st_mode):
            self._take_nested(index, path, rel, skipped, gitlinks)
        elif not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            _remove(index, path)  # fifos, sockets, devices: not content
        elif stat.S_ISREG(st.st_mode) and scope.too_large(st.st_size):
            _remove(index, path)
            skipped.append(Skipped(rel, "too_large", st.st_size, round(st.st_mtime, 3)))
        else:
            try:
                oid = self.repo.create_blob_fromworkdir(path)
            except (pygit2.GitError, OSError):
                _remove(index, path)
                if _lstat(full) is not None:
                    skipped.append(Skipped(rel, "unreadable", st.st_size, round(st.st_mtime, 3)))
                return
            if stat.S_ISLNK(st.st_mode):
                mode = Mode.SYMLINK
            else:
                mode = Mode.EXECUTABLE if st.st_mode & 0o100 else Mode.FILE
            _add(index, path, str(oid), mode, st, racy=now - st.st_mtime_ns < RACY_NS)

    def _take_nested(self, index: pygit2.Index, path: str, rel: str, skipped: list[Skipped],
                     gitlinks: set[str]) -> None:
        """A nested repository becomes a gitlink to its HEAD commit, as `git add` makes it."""
        head = _nested_head(os.path.join(self.workdir, path))
        if head is None:
            _remove(index, path)
            gitlinks.discard(path)
            skipped.append(Skipped(rel, "nested_repo"))
            return
        _add(index, path, head, Mode.GITLINK, None, racy=False)
        gitlinks.add(path)

    def _check_gitlinks(self, index: pygit2.Index, gitlinks: set[str],
                        skipped: list[Skipped]) -> None:
        """Nested repositories whose HEAD moved or that vanished (libgit2 skips gitlinks)."""
        for path in sorted(gitlinks):
            head = _nested_head(os.path.join(self.workdir, path))
            current = index[path].id if path in index else None
            if head is None:
                _remove(index, path)
                gitlinks.discard(path)
            elif current is None or str(current) != head:
                _add(index, path, head, Mode.GITLINK, None, racy=False)

    def _refilter(self, index: pygit2.Index, scope: Scope, dirs: set[str]) -> None:
        """Drop cached entries that changed rules now leave out, in the work-tree dirs `dirs`.

        libgit2 lists what git would add under each dir (an untracked scan against an empty
        index); cached entries it does not list are ignored now.
        """
        everything = any(d == self.prefix or not d for d in dirs)
        roots = [self.prefix] if everything else sorted(dirs)
        for d in roots:
            empty = pygit2.Index()
            empty._repo = self.repo
            listed = {os.fsdecode(delta.new_file.raw_path).rstrip("/")
                      for delta in self._diff(empty, _FLAGS, d).deltas}
            under = d + "/" if d else ""
            for entry in list(index):
                path = entry.path
                if not path.startswith(under):
                    continue
                rel = path[len(self.prefix) + 1:] if self.prefix else path
                gone = path not in listed or scope.excluded(rel)
                if not gone and everything and entry.mode != Mode.GITLINK:
                    st = _lstat(os.path.join(self.workdir, path))
                    gone = (st is not None and stat.S_ISREG(st.st_mode)
                            and scope.too_large(st.st_size))
                if gone:
                    _remove(index, path)

    def _tree(self, index: pygit2.Index) -> ObjectId:
        root = index.write_tree(self.repo)
        if not self.prefix:
            return ObjectId(str(root))
        try:
            return ObjectId(str(self.repo[root][self.prefix].id))
        except KeyError:
            self.repo.odb.write(pygit2.enums.ObjectType.TREE, b"")
            return EMPTY_TREE


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


def _nested_head(path: str) -> str | None:
    try:
        nested = pygit2.Repository(path, pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        return None if nested.head_is_unborn else str(nested.head.target)
    except (pygit2.GitError, KeyError, ValueError):
        return None


def _remove(index: pygit2.Index, path: str) -> None:
    if path in index:
        index.remove(path)


def _add(index: pygit2.Index, path: str, oid: str, mode: int, st: os.stat_result | None,
         racy: bool) -> None:
    """Add an entry with the stat data libgit2 compares on the next scan."""
    entry = ffi.new("git_index_entry *")
    if st is not None:
        entry.ctime.seconds = st.st_ctime_ns // 1_000_000_000
        entry.ctime.nanoseconds = st.st_ctime_ns % 1_000_000_000
        entry.mtime.seconds = st.st_mtime_ns // 1_000_000_000
        entry.mtime.nanoseconds = st.st_mtime_ns % 1_000_000_000
        entry.dev = st.st_dev & 0xFFFFFFFF
        entry.ino = st.st_ino & 0xFFFFFFFF
        entry.uid = st.st_uid & 0xFFFFFFFF
        entry.gid = st.st_gid & 0xFFFFFFFF
        # A smudged size forces the next scan to re-read a file changed too recently to trust.
        entry.file_size = 0 if racy else st.st_size & 0xFFFFFFFF
    entry.mode = mode
    ffi.buffer(ffi.addressof(entry, "id"))[:] = bytes.fromhex(oid)
    cpath = ffi.new("char[]", os.fsencode(path))
    entry.path = cpath
    check_error(C.git_index_add(index._index, entry))
