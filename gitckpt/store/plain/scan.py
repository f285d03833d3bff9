"""The plain-folder scanner: workspace -> tree in pure Python, with a stat cache.

Used by DirStore. Git's ignore semantics come from nested `.gitignore` files (matched by
ignore.py), plus a built-in list of dependency and build folders, `.ckptignore`, the task's
excludes, the sensitive list and the size limit (scope.py). A file whose stat (mtime, ctime,
size, inode, mode) matches the cache is not read; one modified within RACY_NS of a scan is
re-read by the next scan, and ctime catches an edit whose mtime was put back.
"""

from __future__ import annotations

import errno
import marshal
import os
import stat
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import Any

from gitckpt.core.errors import GitckptError
from gitckpt.core.gitnames import refused_name
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import EMPTY_TREE, Mode, hash_object, sha1
from gitckpt.core.values import POINTER, Progress, Reason, Skipped
from gitckpt.safety.ignore import IgnoreFile
from gitckpt.safety.rules import decide
from gitckpt.safety.scope import MAX_DEPTH, Scope, is_sensitive
from gitckpt.safety.sensitive import content_sensitive
from gitckpt.store.files import FileChanging, read_regular
from gitckpt.store.plain import hinted
from gitckpt.store.plain.hinted import CachedDir, Chain, Plan
from gitckpt.store.plain.nested import read_nested_head
from gitckpt.store.state import StateDir

RACY_NS = 2_000_000_000
CACHE = "cache"  # the stat cache's file name in the workspace's state folder
CACHE_VERSION = 6  # 6: files are read again once, for the content check of sensitive.py

# Dependency and build folders left out of plain-folder snapshots. A `.ckptignore` line such as
# `!build/` brings one back; GITCKPT_BUILTIN_IGNORE=off drops the whole list.
BUILTIN_IGNORE = (
    "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".tox/", ".nox/",
    ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".hypothesis/", "*.egg-info/", ".eggs/",
    ".gradle/", ".next/", ".nuxt/", ".parcel-cache/", ".turbo/", ".cache/", "target/",
    "build/", "dist/", ".DS_Store", "Thumbs.db",
)

_OURS = (".git", POINTER)
_TREE, _FILE, _EXEC, _LINK, _GITLINK = (b"%o" % m for m in (Mode.TREE, Mode.FILE,
                                                          Mode.EXECUTABLE, Mode.SYMLINK,
                                                          Mode.GITLINK))
# A cache entry is one bytes value (fast to load): the stat key, the blob id, a racy flag.
_KEY = struct.Struct("<qqqQI")
_ENTRY = _KEY.size + 20 + 1


def _key(st: os.stat_result) -> bytes:
    return _KEY.pack(st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_mode)


#: A folder's entries, each with its lstat (None: gone before it could be taken).
_Listing = list[tuple[os.DirEntry[str], os.stat_result | None]]


def _list(path: str) -> _Listing:
    """A folder's entries with their lstat (None if gone), taken relative to the open folder
    (fstatat), which saves resolving the whole path once per file."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(fd) as it:
            entries = list(it)
        out: _Listing = []
        for e in entries:
            try:
                out.append((e, e.stat(follow_symlinks=False)))
            except OSError:
                out.append((e, None))
        return out
    finally:
        os.close(fd)


def builtin_ignore() -> tuple[str, ...]:
    return () if os.environ.get("GITCKPT_BUILTIN_IGNORE", "").lower() in ("off", "0", "no") \
        else BUILTIN_IGNORE


@dataclass
class _Walk:
    scope: Scope
    rules: IgnoreFile  # built-ins, then .ckptignore, then task excludes
    old_files: dict[str, bytes]  # rel -> stat key + blob id + racy flag
    old_dirs: dict[str, CachedDir]  # rel dir -> (.gitignore chain, names left out, tree id, size)
    new_files: dict[str, bytes] = field(default_factory=dict)
    new_dirs: dict[str, CachedDir] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    now: int = field(default_factory=time.time_ns)
    plan: Plan | None = None  # a narrowed walk (hinted.py): which folders are listed
    reused: set[str] = field(default_factory=set)  # folders taken from the cache unlisted
    walked: set[str] = field(default_factory=set)  # folders listed (narrowed walks)
    below: dict[str, list[str]] = field(default_factory=dict)  # cached folder -> subfolders
    racy: set[str] = field(default_factory=set)  # the files it cached as too recent


class _GitIgnore:
    """One .gitignore file, parsed only when a decision is not in the cache."""

    def __init__(self, base: str, path: str) -> None:
        self.base = base
        self.path = path
        self._spec: IgnoreFile | bool | None = False

    @property
    def spec(self) -> IgnoreFile | None:
        if self._spec is False:
            self._spec = _gitignore(self.path)
        return self._spec  # type: ignore[return-value]


class DirScanner:
    """Snapshots a plain folder into a store's object database."""

    def __init__(self, root: Path, state: StateDir, skip: set[str],
                 has_object: Callable[[ObjectId], bool],
                 write_object: Callable[[str, bytes], ObjectId],
                 flush: Callable[[], None]) -> None:
        self.root = root
        self.state = state
        self.cache_path = state.path / CACHE
        self.skip = skip  # workspace-relative paths that are ours (a store inside the root)
        self.has_object = has_object
        self.write_object = write_object
        self.flush = flush  # makes written objects durable and visible

    def snapshot(self, scope: Scope, *, update_cache: bool, progress: Progress | None = None,
                 changed: set[str] | None = None, skipped_before: tuple[Skipped, ...] = (),
                 watched: bool = False) -> tuple[ObjectId, list[Skipped]]:
        """The tree of the workspace and what it left out. `watched`: a watcher's journal
        runs this walk, so its cache is kept in memory for the next (hinted.py); `changed`,
        the paths the trusted watcher saw since, limits the walk to the folders above them
        while that cache holds; `skipped_before` is what the walk before left out."""
        rules_key = self._rules_key(scope)
        where = str(self.cache_path)
        began = hinted.stamp(where)  # a memo stands for the cache file the walk began with
        memo = hinted.recall(where, rules_key) if watched else None
        if watched:
            hinted.forget(where)  # until this walk ends well: its cache is the files' again
        cache: dict[str, Any] = {"rules": rules_key}  # as marshal loaded it
        if memo is not None:
            files, dirs = memo.files, memo.dirs
        else:
            cache = self._read_cache()
            files = cache.get("files", {})
            # Ignore decisions hold only under the same rules; content hashes hold regardless.
            dirs = cache.get("dirs", {}) if cache.get("rules") == rules_key else {}
        rules = IgnoreFile([*builtin_ignore(), *scope.ckptignore, *scope.excludes])
        w = _Walk(scope, rules, files, dirs)
        w.plan = hinted.plan(memo, changed) if memo is not None and changed is not None \
            else None
        if w.plan is not None:  # what is not listed keeps its cache entries
            w.new_files, w.new_dirs = dict(files), dict(dirs)
            for key in dirs:
                if key:
                    w.below.setdefault(hinted.folder_of(key[:-1]), []).append(key)
        raw = self._walk(w, str(self.root), "", [], (), progress)
        tree = ObjectId(raw.hex()) if raw else EMPTY_TREE
        if tree == EMPTY_TREE and not self.has_object(EMPTY_TREE):
            self.write_object("tree", b"")
        # The objects first: a cache naming objects a crash lost would be trusted forever.
        self.flush()
        if w.plan is None and update_cache and (w.new_files != files or w.new_dirs != dirs
                                                 or cache.get("rules") != rules_key):
            self._write_cache({"version": CACHE_VERSION, "rules": rules_key,
                               "paths": "\0".join(w.new_files),
                               "values": b"".join(w.new_files.values()), "dirs": w.new_dirs})
            began = hinted.stamp(where)  # the file this walk wrote
        skipped = w.skipped
        if w.plan is not None:
            skipped = [*(s for s in skipped_before if hinted.under(s.path, w.reused)),
                       *skipped]
        if watched:
            racy = w.racy if memo is None or w.plan is None else \
                {r for r in memo.racy if hinted.under(r, w.reused)} | w.racy
            hinted.remember(where, hinted.Memo(
                began if hinted.stamp(where) == began else None, rules_key, w.new_files,
                w.new_dirs, racy,
                *((w.plan.slices, w.plan.cursor) if w.plan is not None else ())))
        return tree, sorted(skipped, key=lambda s: s.path)

    def forget_hints(self, elsewhere: bool) -> None:
        """The files were read outside the journal: the cache in memory here, and with
        `elsewhere` in other processes (the cache file is written again: its stamp is new),
        no longer holds. The caller holds the lock."""
        hinted.forget(str(self.cache_path))
        data = self.state.read(CACHE) if elsewhere else None
        if data is not None:
            self._write_cache_bytes(data)

    # -- the cache ---------------------------------------------------------------------------

    def _rules_key(self, scope: Scope) -> str:
        return sha1(repr((scope.fingerprint(), builtin_ignore())).encode()).hexdigest()

    def _read_cache(self) -> dict[str, Any]:
        """The cache file: marshal (never pickle: a workspace may come from anyone), with the
        file entries packed into one string of paths and one string of fixed-size values,
        which loads ten times faster than a marshalled dict."""
        try:
            raw = self.state.read(CACHE)
            data = marshal.loads(raw) if raw is not None else None
            if isinstance(data, dict) and data.get("version") == CACHE_VERSION:
                paths, values = data.pop("paths"), data.pop("values")
                n = _ENTRY
                names = paths.split("\0") if paths else []
                if len(values) != n * len(names):
                    return {}
                data["files"] = dict(zip(names, [values[i:i + n] for i in
                                                 range(0, len(values), n)], strict=True))
                return data
        except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError,
                GitckptError):
            pass  # a missing or corrupt cache costs a re-read, never data
        return {}

    def cache_problem(self) -> str | None:
        """Why the cache file cannot be used, or None (also when there is none yet)."""
        if not self.state.exists(CACHE) or self._read_cache():
            return None
        return "unreadable, damaged or from another version"

    def _write_cache(self, data: dict[str, Any]) -> None:
        self._write_cache_bytes(marshal.dumps(data))

    def _write_cache_bytes(self, data: bytes) -> None:
        try:
            self.state.write(CACHE, data)
        except OSError:
            pass  # the cache is an optimisation; the snapshot stands (a symlink is refused)

    # -- the walk ------------------------------------------------------------------------------

    def _walk(self, w: _Walk, path: str, rel: str, stack: list[_GitIgnore], chain: Chain,  # noqa: C901 (hot loop)
              progress: Progress | None) -> bytes | None:
        """The raw tree id of directory `path` (`rel` inside the workspace); None when empty.

        `chain` names the .gitignore files that apply here (path and stat): while it and the
        rules are unchanged, cached decisions are reused without matching, and while every
        entry also matches the cache, the cached tree id is reused without rebuilding.
        """
        entries = self._list(w, path, rel)
        if entries is None:
            return None
        for e, st in entries:
            if e.name == ".gitignore" and not e.is_symlink():  # git 2.32+ skips linked ones
                stack = [*stack, _GitIgnore(rel, os.path.join(path, ".gitignore"))]
                chain = (*chain, (rel, _key(st) if st else None))
        known = w.old_dirs.get(rel)
        trusted = known is not None and known[0] == chain
        left_out = set(known[1]) if trusted and known is not None else None
        same = trusted  # the cached tree holds while nothing below differs from the cache
        items: list[tuple[str, bytes, bytes]] = []  # (name, mode, raw id)
        now_out: list[str] = []
        old_files, new_files = w.old_files, w.new_files
        skip, pack, size = self.skip, _KEY.pack, _KEY.size
        max_size = w.scope.max_file_size
        for entry, st in entries:  # the hot loop: all from the cache when nothing changed
            name = entry.name
            child = rel + name
            if name in _OURS or (skip and child in skip):
                continue  # git's and gitckpt's own folders (a nested workspace's store too)
            if st is None:
                same = False
                continue  # vanished between listing and stat
            mode = st.st_mode
            if ((name[0] in ".gG~" or "~" in name or "\\" in name or not name.isascii())
                    and refused_name(os.fsencode(name), mode=mode)):
                same = False  # git and libgit2 refuse it (`GIT~1`): a tree cannot hold it
                w.skipped.append(Skipped(child, "invalid_name", st.st_size,
                                         round(st.st_mtime, 3)))
                continue
            if S_ISDIR(mode):
                item, unchanged = self._folder(w, path, name, child, st, left_out, stack,
                                               chain, now_out, progress)
                same = same and unchanged
                if item is not None:
                    items.append((name, *item))
                continue
            cached = old_files.get(child)
            key = pack(st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, mode)
            # Decisions from the cache: a name left out under these rules, or the very file
            # (its stat) the cache holds in scope. Any other file is matched: an entry of an
            # earlier file at this path (a narrowed walk keeps entries it did not list) says
            # nothing of the rules now.
            if left_out is not None and name in left_out:
                ignored = True
            elif left_out is not None and cached is not None and cached[:size] == key:
                ignored = False
            else:
                ignored = self._ignored(w, child, False, stack)
                same = same and ignored
            if ignored:
                self._leave_out(w, now_out, name, child, st)
                continue
            if progress:
                progress(child)
            if not (S_ISREG(mode) or S_ISLNK(mode)):
                continue  # fifos, sockets, devices: not content
            if st.st_size > max_size and S_ISREG(mode):
                same = False
                w.skipped.append(Skipped(child, "too_large", st.st_size, round(st.st_mtime, 3)))
                continue
            raw: bytes | None
            if cached is not None and cached[-1] == 0 and cached[:size] == key:
                new_files[child] = cached
                raw = cached[size:-1]
            else:
                same = False
                raw = self._take(w, os.path.join(path, name), child, st, key)
                if raw is None:
                    continue
            items.append((name, _LINK if S_ISLNK(mode) else _EXEC if mode & 0o100 else _FILE,
                          raw))
        tree = known[2] if same and known is not None and self._still(known, items) \
            else self._tree(items)
        w.new_dirs[rel] = (chain, tuple(now_out), tree, len(items))
        if w.plan is not None:
            w.walked.add(rel)
            self._drop_gone(w, rel)
        return tree or None

    @staticmethod
    def _drop_gone(w: _Walk, rel: str) -> None:
        """A narrowed walk listed `rel`: the cache entries of its subfolders that this walk
        neither walked nor took from the cache (gone, a file now, left out, a nested
        repository) go, with everything below them, as a full walk would not carry them.
        A subfolder's cached entry must mean "this folder held it at its last listing": the
        walk takes a name it holds for one it has seen before."""
        gone = [k for k in w.below.get(rel, ()) if k not in w.walked and k not in w.reused]
        while gone:
            key = gone.pop()
            w.new_dirs.pop(key, None)
            gone.extend(w.below.get(key, ()))

    def _list(self, w: _Walk, path: str, rel: str) -> _Listing | None:
        """The entries of folder `path` with their stat, or None (gone, or left out and said
        why: a folder that cannot be read, a path longer than the system allows)."""
        try:
            return _list(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except PermissionError:
            w.skipped.append(Skipped(rel.rstrip("/") or ".", "unreadable"))
            return None
        except OSError as e:  # a path longer than the system allows (ENAMETOOLONG), ...
            w.skipped.append(Skipped(rel.rstrip("/") or ".",
                                     "too_deep" if e.errno == errno.ENAMETOOLONG else "unreadable"))
            return None

    def _folder(self, w: _Walk, path: str, name: str, child: str, st: os.stat_result,
                left_out: set[str] | None, stack: list[_GitIgnore], chain: Chain,
                now_out: list[str], progress: Progress | None
                ) -> tuple[tuple[bytes, bytes] | None, bool]:
        """The (mode, raw id) of subfolder `name` of `path` (None: left out or empty), and
        whether the cached tree of `path` still holds as far as this entry goes."""
        # Decisions are per name and kind: `build/` may ignore a folder, not a file.
        tag = name + "/"
        same = True
        if left_out is not None and (tag in left_out or child + "/" in w.old_dirs):
            ignored = tag in left_out
        else:
            ignored = self._ignored(w, child, True, stack)
            same = ignored  # a newly seen in-scope name changes the tree
        if ignored:
            self._leave_out(w, now_out, tag, child, st)
            return None, same
        if child.count("/") >= MAX_DEPTH:
            w.skipped.append(Skipped(child, "too_deep"))
            return None, False
        plan, key = w.plan, child + "/"
        known = w.old_dirs.get(key) if plan is not None and plan.cold(key) else None
        if known is not None and (not known[2] or self.has_object(ObjectId(known[2].hex()))):
            w.reused.add(key)
            return ((_TREE, known[2]) if known[2] else None), True  # its cached tree, unlisted
        if progress:
            progress(child)
        item = self._directory(w, os.path.join(path, name), child, stack, chain, progress)
        if item is None or item[0] != _TREE or w.old_dirs.get(
                child + "/", (0, 0, b""))[2] != item[1]:
            same = False
        return item, same

    def _still(self, known: CachedDir, items: list[tuple[str, bytes, bytes]]) -> bool:
        """The cached tree `known` stands for `items`, which match the cache entry by entry."""
        return len(items) == known[3] and self.has_object(ObjectId(known[2].hex()))

    def _take(self, w: _Walk, full: str, child: str, st: os.stat_result, key: bytes
              ) -> bytes | None:
        """The raw blob id of a file the cache does not hold as it is (None: not taken); its
        cache entry is its stat `key`, the id, then the racy flag."""
        raw = self._blob(w, full, child, st)
        if raw is not None:
            racy = b"\1" if st.st_mtime_ns > w.now - RACY_NS else b"\0"
            w.new_files[child] = key + raw + racy
            if racy == b"\1":
                w.racy.add(child)
        return raw

    def _tree(self, items: list[tuple[str, bytes, bytes]]) -> bytes:
        """The raw id of the tree of `items` (name, mode, raw id), written if new; b"" if none."""
        if not items:
            return b""
        named = [(os.fsencode(name), mode, raw) for name, mode, raw in items]
        named.sort(key=lambda i: i[0] + b"/" if i[1] == _TREE else i[0])
        body = b"".join(b"%s %s\0" % (mode, name) + raw for name, mode, raw in named)
        oid = hash_object("tree", body)
        if not self.has_object(oid):
            self.write_object("tree", body)
        return bytes.fromhex(oid)

    @staticmethod
    def _leave_out(w: _Walk, now_out: list[str], tag: str, child: str, st: os.stat_result
                   ) -> None:
        now_out.append(tag)
        rel = child + "/" if tag.endswith("/") else child
        if is_sensitive(rel) and not w.scope.kept(rel):
            w.skipped.append(Skipped(child, "sensitive", None if tag.endswith("/") else st.st_size,
                                     round(st.st_mtime, 3)))

    def _ignored(self, w: _Walk, child: str, is_dir: bool, stack: list[_GitIgnore]) -> bool:
        """git's rule (rules.decide) over the .gitignore files of the folders walked."""
        return decide(child, is_dir, ((len(gi.base), gi.spec) for gi in reversed(stack)),
                      w.rules, lambda r, d: w.scope.kept(r + "/" if d else r))

    def _directory(self, w: _Walk, path: str, rel: str, stack: list[_GitIgnore], chain: Chain,
                   progress: Progress | None) -> tuple[bytes, bytes] | None:
        dotgit = os.path.join(path, ".git")
        if os.path.isfile(dotgit) or os.path.isfile(os.path.join(dotgit, "HEAD")):
            # a nested repository: a gitlink, as git stores it
            head = read_nested_head(dotgit)
            if head is None:
                w.skipped.append(Skipped(rel, "nested_repo"))
                return None
            return _GITLINK, bytes.fromhex(head)
        tree = self._walk(w, path, rel + "/", stack, chain, progress)
        return (_TREE, tree) if tree else None

    def _blob(self, w: _Walk, path: str, rel: str, st: os.stat_result) -> bytes | None:
        """Read, hash and store one file or link; None if it is gone or unreadable."""
        try:
            data = (os.fsencode(os.readlink(path)) if stat.S_ISLNK(st.st_mode)
                    else read_regular(path))
        except FileNotFoundError:
            return None
        except OSError as e:
            reason: Reason = "changing" if isinstance(e, FileChanging) else "unreadable"
            w.skipped.append(Skipped(rel, reason, st.st_size, round(st.st_mtime, 3)))
            return None
        if not stat.S_ISLNK(st.st_mode):
            verdict = w.scope.content_verdict(rel)
            if verdict is not None and content_sensitive(data, verdict):
                w.skipped.append(Skipped(rel, "sensitive", st.st_size, round(st.st_mtime, 3)))
                return None  # never stored, never cached: read again while it stays so
        oid = hash_object("blob", data)
        if not self.has_object(oid):
            self.write_object("blob", data)
        return bytes.fromhex(oid)




def _gitignore(path: str) -> IgnoreFile | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return IgnoreFile.from_text(f.read())
    except (OSError, ValueError):
        return None
