"""The plain-folder scanner: workspace -> tree in pure Python, with a stat cache.

Used by DirStore. Git's ignore semantics come from nested `.gitignore` files (matched with
`pathspec`), plus a built-in list of dependency and build folders, `.ckptignore`, the task's
excludes, the sensitive list and the size limit (scope.py). A file whose stat (mtime, ctime,
size, inode, mode) matches the cache is not read; one modified within RACY_NS of a scan is
re-read by the next scan, and ctime catches an edit whose mtime was put back.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from gitckpt.ids import ObjectId
from gitckpt.objects import EMPTY_TREE, Mode, TreeEntry, encode_tree, hash_object
from gitckpt.scope import Scope, is_sensitive
from gitckpt.store.base import Skipped

RACY_NS = 2_000_000_000
POINTER = ".gitckpt"  # a workspace's store folder, or the file naming it
CACHE_VERSION = 1

# Dependency and build folders left out of plain-folder snapshots. A `.ckptignore` line such as
# `!build/` brings one back; GITCKPT_BUILTIN_IGNORE=off drops the whole list.
BUILTIN_IGNORE = (
    "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".tox/", ".nox/",
    ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".hypothesis/", "*.egg-info/", ".eggs/",
    ".gradle/", ".next/", ".nuxt/", ".parcel-cache/", ".turbo/", ".cache/", "target/",
    "build/", "dist/", ".DS_Store", "Thumbs.db",
)

Progress = Callable[[str], None]
# cache: rel path -> (mtime_ns, ctime_ns, size, ino, mode, blob id or b"" when left out)
_Stat = tuple[int, int, int, int, int]


def _key(st: os.stat_result) -> _Stat:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


def builtin_ignore() -> tuple[str, ...]:
    return () if os.environ.get("GITCKPT_BUILTIN_IGNORE", "").lower() in ("off", "0", "no") \
        else BUILTIN_IGNORE


@dataclass
class _Walk:
    scope: Scope
    rules: pathspec.PathSpec  # built-ins, then .ckptignore, then task excludes
    old: dict[str, tuple]
    new: dict[str, tuple] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    now: int = field(default_factory=time.time_ns)


def read_nested_head(path: str) -> str | None:
    """The HEAD commit of the git repository whose `.git` is at `path` (standard library)."""
    try:
        if os.path.isfile(path):
            with open(path) as f:
                line = f.read().strip()
            if not line.startswith("gitdir:"):
                return None
            path = os.path.join(os.path.dirname(path), line[len("gitdir:"):].strip())
        common = path
        if os.path.isfile(os.path.join(path, "commondir")):
            with open(os.path.join(path, "commondir")) as f:
                common = os.path.join(path, f.read().strip())
        with open(os.path.join(path, "HEAD")) as f:
            head = f.read().strip()
        for _ in range(5):
            if not head.startswith("ref: "):
                return head if len(head) == 40 and all(c in "0123456789abcdef" for c in head) \
                    else None
            ref = head[5:]
            for base in (path, common):
                try:
                    with open(os.path.join(base, ref)) as f:
                        head = f.read().strip()
                    break
                except OSError:
                    continue
            else:
                head = _packed_ref(common, ref)
                if head is None:
                    return None
    except OSError:
        return None
    return None


def _packed_ref(git_dir: str, ref: str) -> str | None:
    try:
        with open(os.path.join(git_dir, "packed-refs")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except OSError:
        pass
    return None


class DirScanner:
    """Snapshots a plain folder into a store's object database."""

    def __init__(self, root: Path, cache_path: Path, skip: set[str],
                 has_object: Callable[[ObjectId], bool],
                 write_object: Callable[[str, bytes], ObjectId]) -> None:
        self.root = root
        self.cache_path = cache_path
        self.skip = skip  # workspace-relative paths that are ours (a store inside the root)
        self.has_object = has_object
        self.write_object = write_object

    def snapshot(self, scope: Scope, *, update_cache: bool, progress: Progress | None = None
                 ) -> tuple[ObjectId, list[Skipped]]:
        old = self._read_cache(scope)
        rules = pathspec.GitIgnoreSpec.from_lines(
            [*builtin_ignore(), *scope.ckptignore, *scope.excludes])
        w = _Walk(scope, rules, old)
        tree = self._walk(w, str(self.root), "", [], progress) or EMPTY_TREE
        if tree == EMPTY_TREE and not self.has_object(EMPTY_TREE):
            self.write_object("tree", b"")
        if update_cache and w.new != old:
            self._write_cache(scope, w.new)
        return tree, sorted(w.skipped, key=lambda s: s.path)

    # -- the cache ---------------------------------------------------------------------------

    def _fingerprint(self, scope: Scope) -> str:
        return hashlib.sha1(repr((CACHE_VERSION, scope.fingerprint(), builtin_ignore())
                                 ).encode()).hexdigest()

    def _read_cache(self, scope: Scope) -> dict[str, tuple]:
        try:
            with open(self.cache_path, "rb") as f:
                data = marshal.load(f)
            if data.get("fingerprint") == self._fingerprint(scope):
                return data["entries"]
        except (OSError, EOFError, ValueError, TypeError, AttributeError, KeyError):
            pass  # a missing or corrupt cache costs a re-read, never data
        return {}

    def _write_cache(self, scope: Scope, entries: dict[str, tuple]) -> None:
        tmp = self.cache_path.with_name(f"{self.cache_path.name}.{os.getpid()}.tmp")
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                marshal.dump({"fingerprint": self._fingerprint(scope), "entries": entries}, f)
            os.replace(tmp, self.cache_path)
        except OSError:
            tmp.unlink(missing_ok=True)  # the cache is an optimisation; the snapshot stands

    # -- the walk ------------------------------------------------------------------------------

    def _walk(self, w: _Walk, path: str, rel: str, stack: list, progress: Progress | None
              ) -> ObjectId | None:
        """The tree of directory `path` (`rel` inside the workspace), or None when empty."""
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except PermissionError:
            w.skipped.append(Skipped(rel.rstrip("/") or ".", "unreadable"))
            return None
        names = {e.name for e in entries}
        if ".gitignore" in names:
            stack = [*stack, (rel, _gitignore(os.path.join(path, ".gitignore")))]
        out: list[TreeEntry] = []
        for entry in entries:
            name = entry.name
            child = rel + name
            if name in (".git", POINTER) or child in self.skip:
                continue  # git's and gitckpt's own folders (a nested workspace's store too)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished between listing and stat
            is_dir = stat.S_ISDIR(st.st_mode)
            if self._ignored(w, child, is_dir, stack):
                if is_sensitive(child + "/" if is_dir else child):
                    w.skipped.append(Skipped(child, "sensitive", None if is_dir else st.st_size,
                                             round(st.st_mtime, 3)))
                continue
            if progress:
                progress(child)
            if is_dir:
                item = self._directory(w, entry.path, child, stack, progress)
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                item = self._file(w, entry.path, child, st)
            else:
                item = None  # fifos, sockets, devices: not content
            if item is not None:
                out.append(TreeEntry(os.fsencode(name), *item))
        if not out:
            return None
        body = encode_tree(out)
        oid = hash_object("tree", body)
        if not self.has_object(oid):
            self.write_object("tree", body)
        return oid

    def _ignored(self, w: _Walk, child: str, is_dir: bool, stack: list) -> bool:
        """git's rule: the deepest .gitignore with a matching pattern decides; then ours."""
        probe = child + "/" if is_dir else child
        if is_sensitive(probe):
            return True
        for base, spec in reversed(stack):
            if spec is None:
                continue
            result = spec.check_file(probe[len(base):])
            if result.include is not None:
                if result.include:
                    return True
                break
        return bool(w.rules.match_file(probe))

    def _directory(self, w: _Walk, path: str, rel: str, stack: list,
                   progress: Progress | None) -> tuple[Mode, ObjectId] | None:
        dotgit = os.path.join(path, ".git")
        if os.path.lexists(dotgit):  # a nested repository: a gitlink, as git stores it
            head = read_nested_head(dotgit)
            if head is None:
                w.skipped.append(Skipped(rel, "nested_repo"))
                return None
            return Mode.GITLINK, ObjectId(head)
        tree = self._walk(w, path, rel + "/", stack, progress)
        return (Mode.TREE, tree) if tree else None

    def _file(self, w: _Walk, path: str, rel: str, st: os.stat_result
              ) -> tuple[Mode, ObjectId] | None:
        if stat.S_ISREG(st.st_mode) and w.scope.too_large(st.st_size):
            w.skipped.append(Skipped(rel, "too_large", st.st_size, round(st.st_mtime, 3)))
            return None
        mode = (Mode.SYMLINK if stat.S_ISLNK(st.st_mode) else
                Mode.EXECUTABLE if st.st_mode & 0o100 else Mode.FILE)
        key = _key(st)
        cached = w.old.get(rel)
        if cached is not None and cached[0] == key and not cached[2]:
            oid = cached[1]
        else:
            try:
                data = os.fsencode(os.readlink(path)) if mode == Mode.SYMLINK else _read(path)
            except FileNotFoundError:
                return None
            except OSError:
                w.skipped.append(Skipped(rel, "unreadable", st.st_size, round(st.st_mtime, 3)))
                return None
            oid = hash_object("blob", data)
            if not self.has_object(oid):
                self.write_object("blob", data)
        racy = w.now - st.st_mtime_ns < RACY_NS
        w.new[rel] = (key, oid, racy)
        return mode, oid


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # never through a link swapped in
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _gitignore(path: str) -> pathspec.PathSpec | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
    except (OSError, ValueError):
        return None
