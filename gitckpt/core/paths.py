"""Workspace paths as every layer takes them from a user: relative to the workspace root,
POSIX separators, and never able to leave it or name git's folder."""

from __future__ import annotations

import os

from gitckpt.core.errors import InvalidArgument

MAX_PATHS = 1000  # path filters one command takes


class WorkPath(str):
    """A workspace-relative path, checked when it is made: not empty, not absolute, no `..`
    and no `.git` component (in any letter case), no NUL; `.` parts and doubled or trailing
    slashes are dropped."""

    __slots__ = ()

    def __new__(cls, raw: str) -> WorkPath:
        p = raw if isinstance(raw, str) else ""
        parts = [part for part in p.split("/") if part not in ("", ".")]
        if not p or p.startswith("/") or "\0" in p or not parts or any(
                part == ".." or part.casefold() == ".git" for part in parts):
            shown = raw if isinstance(raw, str) else repr(raw)
            raise InvalidArgument(f"Path {shown!r} is not inside the workspace.",
                                  "Give paths inside the workspace, without '..' or .git.")
        return super().__new__(cls, "/".join(parts))


def normalize_paths(paths: list[str] | tuple[str, ...], root: str | None = None,
                    cwd: str | None = None) -> tuple[WorkPath, ...]:
    """Path filters as WorkPaths, sorted and unique; () when one of them is the root itself
    (everything). With `cwd`, relative paths are taken from that folder (as a shell user
    means them) and `root` is the workspace root; otherwise they are relative to the root."""
    if len(paths) > MAX_PATHS:
        raise InvalidArgument(f"{len(paths):,} paths were given; the limit is {MAX_PATHS:,}.",
                              "Give their folders instead.")
    out = []
    for raw in paths:
        p = raw  # as given, as git takes a path: a backslash or a space is part of a name
        if cwd is not None and root is not None and p:
            full = os.path.normpath(os.path.join(os.path.realpath(cwd), p))
            p = os.path.relpath(full, root).replace(os.sep, "/")
        if p and not p.startswith("/") and all(part in ("", ".") for part in p.split("/")):
            return ()  # the root: everything
        out.append(WorkPath(p))
    return tuple(sorted(set(out)))
