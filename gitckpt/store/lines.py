"""Which lines of one text are the lines of another, as git's own diff (xdiff, through
pygit2) pairs them: the unchanged lines `git blame` passes from a version to the next, and the
hunks and counts `git diff` shows."""

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


def _patch(old: bytes, new: bytes, context: int) -> pygit2.Patch:
    return pygit2.Patch.create_from(old, new, context_lines=context,
                                    flag=DiffOption.INDENT_HEURISTIC)  # as git's default


def line_counts(old: bytes, new: bytes) -> tuple[int, int]:
    """The lines `git diff --numstat` counts: (added, deleted)."""
    _, added, deleted = _patch(old, new, 0).line_stats
    return added, deleted


def hunks(old: bytes, new: bytes, context: int = 3) -> str:
    """The hunks of `git diff` between two texts, each "@@" header with its function line,
    context and end-of-file markers as git prints them ("" when they are the same). Bytes
    that are not UTF-8 are kept (surrogateescape), so the text applies."""
    out = []
    for hunk in _patch(old, new, context).hunks:
        out.append(hunk.header)
        for line in hunk.lines:
            text = line.raw_content.decode("utf-8", "surrogateescape")
            # an end-of-file marker's origin is no column: its text is the whole line
            out.append(line.origin + text if line.origin in " +-" else text)
    return "".join(out)
