"""The tree-entry names and paths git or libgit2 refuse to put in a work tree or index, and why."""

from __future__ import annotations

import re
from collections.abc import Iterator

_SYMLINK, _TYPE_MASK = 0o120000, 0o170000

# Code points HFS+ ignores in names, so `.g\u200cit` is `.git` on a Mac: next_hfs_char() in
# git's utf8.c and in libgit2's src/libgit2/path.c.
_HFS_IGNORED = frozenset([*range(0x200C, 0x2010), *range(0x202A, 0x202F),
                          *range(0x206A, 0x2070), 0xFEFF])


def _code_points(name: bytes) -> Iterator[int | None]:
    """The code points of `name`, then None where it stops being valid UTF-8 (as git's
    pick_one_utf8_char() reads it: no overlongs, surrogates, U+FFFE, U+FFFF or > U+10FFFF)."""
    i = 0
    while i < len(name):
        lead = name[i]
        size = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4
        try:
            char = name[i:i + size].decode()
        except UnicodeDecodeError:
            char = ""
        if len(char) != 1 or char in "\ufffe\uffff":
            yield None
            return
        yield ord(char)
        i += size


def _is_hfs_dot(name: bytes, needle: bytes) -> bool:
    """`name` is `.<needle>` to HFS+: is_hfs_dot_generic() in git's utf8.c, or
    validate_dotgit_hfs_generic() in libgit2's path.c."""
    points = [c for c in _code_points(name) if c not in _HFS_IGNORED]
    if len(points) <= len(needle) or points[0] != ord("."):
        return False
    for c, want in zip(points[1:len(needle) + 1], needle, strict=True):
        # Both fold ASCII case. libgit2 also keeps only the low byte of each code point
        # (`char c = next_hfs_char(...)`), so it reads U+0167 as `g` and refuses `.\u0167it`.
        if c is None or not ((c < 0x80 and chr(c).lower() == chr(want))
                             or (c > 0xFF and c & 0xFF == want)):
            return False
    # git also stops at the first byte that is not UTF-8: it refuses `.git\xff`, libgit2 does not.
    rest = points[len(needle) + 1:]
    return not rest or rest[0] is None


def _ntfs_tail(rest: bytes) -> bool:
    """`rest` is what NTFS drops from the end of a name: only spaces and dots up to the end or to
    a `:` (an alternate data stream such as `::$INDEX_ALLOCATION`). git's is_ntfs_dotgit() and
    is_ntfs_dot_generic() (path.c) end the name at any `:`, whatever follows, so `.git:foo` and
    `.git. :foo` are `.git`; a `:` elsewhere in a name is allowed (only git for Windows refuses
    every `:`, in is_valid_win32_path(), a Windows-only check that is not protectNTFS's)."""
    return not rest.split(b":", 1)[0].strip(b". ")


def _is_ntfs_dotgit(name: bytes) -> bool:
    """`name` is `.git` to NTFS: is_ntfs_dotgit() in git's path.c, validate_dotgit_ntfs() in
    libgit2's path.c. Only the short name `GIT~1`: git puts `.git` first in its folder, so it
    never gets `GIT~2` (libgit2 reserves the same two, and on Windows the real short name)."""
    low = name.lower()
    return any(low.startswith(p) and _ntfs_tail(name[len(p):]) for p in (b".git", b"git~1"))


def _is_ntfs_dot_generic(name: bytes, dotname: bytes, hashed: bytes) -> bool:
    """`name` is `.<dotname>` to NTFS: is_ntfs_dot_generic() in git's path.c (and
    validate_dotgit_ntfs_generic() in libgit2's): the name itself, its 8.3 short names (six
    letters then `~1`..`~4`), or the fall-back short name (up to six letters of `hashed`, `~`, a
    digit 1-9, and digits up to eight characters), each followed by what NTFS drops."""
    low = name.lower()
    if low.startswith(b"." + dotname):
        return _ntfs_tail(name[len(dotname) + 1:])
    if low[:6] == dotname[:6] and low[6:7] == b"~" and low[7:8] in (b"1", b"2", b"3", b"4"):
        return _ntfs_tail(name[8:])
    short = re.match(rb"([^~]{0,6})~[1-9][0-9]*", low)
    return bool(short and short.end() == 8 and hashed.startswith(short[1])
                and _ntfs_tail(name[8:]))


def refused_name(name: bytes, *, mode: int | None = None) -> str | None:
    """Why git or libgit2 would refuse the tree-entry name `name` in a work tree or index with
    every platform's protections on (core.protectNTFS and core.protectHFS), or None if neither
    would. `mode` is the entry's git mode; 0o120000 (a symlink) adds the .gitmodules rules."""
    if (name and name[:1] not in b".gG~" and name.isascii() and b"~" not in name
            and b"\\" not in name and b"/" not in name and b"\0" not in name):
        return None  # the common case: no rule below can match (none starts so)
    if name in (b"", b".", b".."):
        return f"a name git refuses ({name.decode()})" if name else "an empty name"
    if b"/" in name or b"\0" in name:
        return "a name with a slash or a NUL byte"
    # verify_path() and verify_dotfile() in git's read-cache.c; validate_repo_component() in
    # libgit2's path.c (GIT_PATH_REJECT_DOT_GIT_NTFS and _HFS).
    if name.lower() == b".git":
        return "a name git refuses (.git)"
    if _is_ntfs_dotgit(name):
        return "a name NTFS reads as .git"
    if _is_hfs_dot(name, b"git"):
        return "a name HFS+ reads as .git"
    # A backslash separates folders on Windows only, where git (verify_path() under
    # GIT_WINDOWS_NATIVE) and libgit2 refuse any. Elsewhere `a\b` is an ordinary name that git
    # adds (so snapshots keep it), but git refuses `.git` after a backslash (`foo\.git`).
    if b"\\" in name and any(p.lower() == b".git" or _is_ntfs_dotgit(p)
                              for p in name.split(b"\\")):
        return "a name Windows reads as a path through .git"
    # A symlinked .gitmodules: the same functions, with is_ntfs_dotgitmodules() and
    # is_hfs_dotgitmodules(). git does not refuse symlinked .gitignore, .gitattributes or
    # .mailmap (it reads them with O_NOFOLLOW and `git fsck` warns), and libgit2 neither.
    if mode is not None and mode & _TYPE_MASK == _SYMLINK:
        if _is_ntfs_dot_generic(name, b"gitmodules", b"gi7eba"):
            return "a symlink NTFS reads as .gitmodules"
        if _is_hfs_dot(name, b"gitmodules"):
            return "a symlink HFS+ reads as .gitmodules"
    return None


def refused_path(path: bytes, *, mode: int | None = None) -> str | None:
    """Why git or libgit2 would refuse the `/`-separated relative `path`, or None: no absolute
    path, no empty component, and every component passes refused_name() with `mode` (git's
    verify_path() and libgit2 also judge every component by the entry's mode)."""
    if path.startswith(b"/"):
        return "an absolute path"
    for part in path.split(b"/"):
        why = "an empty component" if not part else refused_name(part, mode=mode)
        if why:
            return f"{why}: {path.decode(errors='backslashreplace')!r}"
    return None
