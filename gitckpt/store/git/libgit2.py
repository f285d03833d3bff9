"""Every libgit2 call pygit2 (1.21) does not wrap, in one place: a pathspec-limited index
diff (`Index.diff_to_workdir` takes no pathspec), index entries with stat data (`IndexEntry`
holds only path, id and mode), a standalone index whose failure to open is quiet
(`pygit2.Index(path)` prints "Exception ignored" from its half-made object), binding an index
to a repository (no public setter), the HEAD of a nested repository, and an entry's path
alone (`index[i]` builds the whole entry).

These go through pygit2's cffi handles (`C`, `ffi`, `_repo`, `_index`), which are not its
public API: importing this module checks that the installed pygit2 is one of the versions
gitckpt was tested with (pyproject.toml pins the same range: 1.17 and older cannot decode a
path that is not UTF-8), so a change there fails with a clear error instead of a crash in the
middle of a save. What pygit2 does offer publicly is used from it directly, not wrapped here.
"""

from __future__ import annotations

import os

import pygit2
from pygit2 import C, ffi
from pygit2.enums import RepositoryOpenFlag
from pygit2.errors import check_error

from gitckpt.core.errors import Unsupported

TESTED = ((1, 18), (1, 21))  # the oldest and newest pygit2 minor versions tested


def _check_version(version: str) -> None:
    try:
        found = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        found = (0, 0)
    if not TESTED[0] <= found <= TESTED[1]:
        low, high = (".".join(map(str, v)) for v in TESTED)
        raise Unsupported(f"gitckpt was tested with pygit2 {low} to {high}.x; this is pygit2 "
                          f"{version}, whose internals it uses may differ.",
                          f"Install a tested version: pip install 'pygit2>={low},<"
                          f"{TESTED[1][0]}.{TESTED[1][1] + 1}'.")


_check_version(pygit2.__version__)  # type: ignore[attr-defined]  # not in pygit2's __all__


def index_diff(repo: pygit2.Repository, index: pygit2.Index, flags: int,
               under: str | list[bytes]) -> pygit2.Diff:
    """libgit2's index-to-work-tree diff of a standalone `index`, limited to the work-tree
    folder `under` ("" for all), or to a list of literal work-tree paths (files or folders)."""
    opts = ffi.new("git_diff_options *")
    check_error(C.git_diff_options_init(opts, 1))
    opts.flags = int(flags)
    paths = under if isinstance(under, list) else [os.fsencode(under + "/")] if under else []
    if paths:
        keep = [ffi.new("char[]", p) for p in paths]
        strings = ffi.new("char *[]", keep)
        opts.pathspec.strings = strings
        opts.pathspec.count = len(keep)
    out = ffi.new("git_diff **")
    check_error(C.git_diff_index_to_workdir(out, repo._repo, index._index, opts))
    return pygit2.Diff.from_c(bytes(ffi.buffer(out)[:]), repo)


def entry_path(index: pygit2.Index, position: int) -> bytes:
    """The path of the index entry at `position` (0 <= position < len(index)), as stored:
    `index[position]` builds a whole IndexEntry (its id, its mode as an enum, its path decoded)
    for a binary search that compares only the bytes."""
    return ffi.string(C.git_index_get_byindex(index._index, position).path)  # type: ignore[no-any-return]


def stat_moved(index: pygit2.Index, position: int, workdir: bytes) -> tuple[bytes, bool]:
    """(path, whether its file in `workdir` differs in stat from the entry at `position`):
    mtime, ctime, size and inode, as libgit2 compares them (a file gone or not a regular
    file or link counts as moved: the scan that takes it again decides)."""
    entry = C.git_index_get_byindex(index._index, position)
    path = ffi.string(entry.path)
    if entry.mode == 0o160000:
        return path, False  # a nested repository: its HEAD is looked at elsewhere
    try:
        st = os.lstat(os.path.join(workdir, path))
    except OSError:
        return path, True
    return path, (entry.mtime.seconds != st.st_mtime_ns // 1_000_000_000
                  or entry.mtime.nanoseconds != st.st_mtime_ns % 1_000_000_000
                  or entry.ctime.seconds != st.st_ctime_ns // 1_000_000_000
                  or entry.ctime.nanoseconds != st.st_ctime_ns % 1_000_000_000
                  or entry.file_size != st.st_size & 0xFFFFFFFF
                  or entry.ino != st.st_ino & 0xFFFFFFFF)


def thread_reads() -> int | None:
    """Bytes this thread has read with read(2) so far (Linux's /proc/thread-self/io), or None
    where that is not known: what a diff read tells whether libgit2 hashed files whose
    stat moved but whose content did not (it reports nothing of them)."""
    try:
        with open("/proc/thread-self/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line[6:])
    except (OSError, ValueError):
        return None
    return None


def add_entry(index: pygit2.Index, path: str, oid: str, mode: int, st: os.stat_result | None,
              racy: bool) -> None:
    """Add an entry with the stat data libgit2 compares on the next scan.

    `racy` stores size 0 instead of the real size, so libgit2 re-reads the file next time.
    """
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
        entry.file_size = 0 if racy else st.st_size & 0xFFFFFFFF
    entry.mode = mode
    ffi.buffer(ffi.addressof(entry, "id"))[:] = bytes.fromhex(oid)
    cpath = ffi.new("char[]", os.fsencode(path))
    entry.path = cpath
    check_error(C.git_index_add(index._index, entry))


def nested_head(path: str) -> str | None:
    """The HEAD commit of the repository at `path`, or None (not a repository, or unborn)."""
    try:
        nested = pygit2.Repository(path, RepositoryOpenFlag.NO_SEARCH)
        return None if nested.head_is_unborn else str(nested.head.target)
    except (pygit2.GitError, KeyError, ValueError):
        return None


def open_index(path: str) -> pygit2.Index:
    """A standalone index read from (or later written to) `path`. GitError if the file is
    not a usable index; unlike `pygit2.Index(path)`, a failure leaves no half-made object
    whose `__del__` prints "Exception ignored" on stderr."""
    out = ffi.new("git_index **")
    check_error(C.git_index_open(out, os.fsencode(path)))
    return pygit2.Index.from_c(None, out)  # type: ignore[no-untyped-call, no-any-return]


def bind(index: pygit2.Index, repo: pygit2.Repository) -> pygit2.Index:
    """`index` (standalone) used against `repo`'s work tree and object database."""
    index._repo = repo  # type: ignore[assignment]  # pygit2 types the private slot as None
    return index
