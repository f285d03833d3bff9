"""Which lines of one text are the lines of another, as git's own diff (xdiff, through
pygit2) pairs them: the unchanged lines `git blame` passes from a version to the next."""

from __future__ import annotations

import pygit2
from pygit2.enums import DiffOption


def split_lines(data: bytes) -> list[bytes]:
    """The lines of `data` as git counts them: split at \\n only, a last line without one
    counted too."""
    lines = data.split(b"\n")
    return lines[:-1] if lines and lines[-1] == b"" else lines


def is_binary(data: bytes) -> bool:
    """Binary as git decides it: a NUL byte in the first 8,000 bytes."""
    return b"\0" in data[:8000]


def unchanged(old: bytes, new: bytes) -> tuple[list[tuple[int, int, int]], int]:
    """The runs of lines `new` keeps from `old`, unchanged, as `git diff` pairs them (Myers,
    as xdiff does it): (first line in old, first line in new, length), 0-based, in order; and
    the number of lines of `new`."""
    patch = pygit2.Patch.create_from(old, new, context_lines=0,
                                     flag=DiffOption.INDENT_HEURISTIC)  # as git's default
    n_new = len(split_lines(new))
    runs = []
    o = n = 0  # the next line of each side not yet paired or changed
    for h in patch.hunks:
        # xdiff's starts are 1-based, and name the line before the hunk when it is empty
        old_begin = h.old_start - 1 if h.old_lines else h.old_start
        new_begin = h.new_start - 1 if h.new_lines else h.new_start
        if new_begin > n:
            runs.append((o, n, new_begin - n))
        o, n = old_begin + h.old_lines, new_begin + h.new_lines
    if n_new > n:
        runs.append((o, n, n_new - n))
    return runs, n_new


def kept(old: bytes, new: bytes) -> list[int | None]:
    """For each line of `new` (0-based), the line of `old` it is, unchanged, or None where
    `new` changed or added it."""
    runs, n_new = unchanged(old, new)
    out: list[int | None] = [None] * n_new
    for o, n, length in runs:
        out[n:n + length] = range(o, o + length)
    return out
