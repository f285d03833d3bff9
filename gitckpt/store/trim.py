"""The lines a large file's three versions share at both ends, kept out of its three-way merge:
libgit2's xdiff holds a record of every line of the three (a 38 MB file: 400 MB, twice, once
for the tree merge and once for the conflict's markers), while a revert changes a few lines.

A file changed on both sides is merged as its middle alone: the lines before the first and
after the last that any version changes are the same in all three, and a merge keeps them as
they are (xdiff itself trims such ends before it compares, so the result is the same). The
three middles go into the merge as stand-in blobs of trees rewritten for it; what the merge
says of them is put back together with the shared ends (`Trims.whole`).

Only memoryviews of libgit2's own buffers are compared, two blobs at a time: no copy of a
file is made in Python until its merged text is built.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Any, cast

import pygit2

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode
from gitckpt.store.staging import Held

TRIM_OVER = 1 << 20  # bytes: a smaller file is merged whole
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Trim:
    """One file's shared ends: `head` bytes before its middle, `tail` after, as in `source`
    (any of the three versions: the ends are the same in each)."""

    source: ObjectId
    head: int
    tail: int


def view(repo: pygit2.Repository, oid: ObjectId | pygit2.Oid, held: Held | None = None
         ) -> memoryview:
    """Blob `oid`'s bytes, in libgit2's own buffer, or in `held`'s when staging holds it (no
    copy: libgit2 would copy a held blob out of its backend to read it)."""
    found = held.get(str(oid)) if held is not None else None
    return memoryview(found[1]) if found is not None else memoryview(cast(Any, repo[oid]))


class Trims:
    """The files merged as their middles: path -> Trim, and each stand-in blob's original."""

    def __init__(self, held: Held | None = None) -> None:
        self.held = held  # the objects held while staging (Store.staging), read in place
        self.by_path: dict[str, Trim] = {}
        self.original: dict[tuple[str, ObjectId], ObjectId] = {}  # (path, stand-in) -> blob

    def real(self, path: str, oid: ObjectId) -> ObjectId:
        """The blob a merge side's id `oid` stands for (itself if it stands for none)."""
        return self.original.get((path, oid), oid)

    def whole(self, repo: pygit2.Repository, path: str, middle: bytes, text: bool = False
              ) -> bytes | None:
        """The file `path` with its merged `middle` between its shared ends; None where
        `text` asks for UTF-8 and the ends are not (read a piece at a time: no copy)."""
        t = self.by_path.get(path)
        if t is None:
            return middle
        data = view(repo, t.source, self.held)
        end = len(data) - t.tail
        if text and not (_utf8(data[:t.head]) and _utf8(data[end:])):
            return None
        return b"".join((data[:t.head], middle, data[end:]))


def _utf8(view: memoryview) -> bool:
    """Whether `view` is UTF-8 text (whole lines: no character is split across its end)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for at in range(0, len(view), _CHUNK):
            decoder.decode(view[at:at + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def trimmed(repo: pygit2.Repository, base: ObjectId, ours: ObjectId, theirs: ObjectId,
            held: Held | None = None) -> tuple[ObjectId, ObjectId, ObjectId, Trims]:
    """The three trees with each large file changed on both sides replaced by its middle,
    and what was replaced (`held`: the objects held while staging)."""
    trims = Trims(held)
    trees = [base, ours, theirs]
    for path, ids, mode in _both_changed(repo, base, ours, theirs):
        found = _ends(repo, ids, held)
        if found is None:
            continue
        source, head, tail = found
        trims.by_path[path] = Trim(source, head, tail)
        for i, oid in enumerate(ids):
            data = view(repo, oid, held)
            stand_in = ObjectId(str(repo.create_blob(data[head:len(data) - tail].tobytes())))
            del data
            trims.original[(path, stand_in)] = oid
            trees[i] = _replace(repo, trees[i], path.split("/"), stand_in, mode[i])
    return trees[0], trees[1], trees[2], trims


Both = tuple[str, tuple[ObjectId, ObjectId, ObjectId], tuple[int, int, int]]  # path, ids, modes


def _both_changed(repo: pygit2.Repository, base: ObjectId, ours: ObjectId, theirs: ObjectId
                  ) -> list[Both]:
    """Regular files over TRIM_OVER bytes that both sides modified, differently."""
    def modified(tree: ObjectId) -> dict[str, tuple[ObjectId, int]]:
        trees = repo[base].peel(pygit2.Tree), repo[tree].peel(pygit2.Tree)
        diff = trees[0].diff_to_tree(trees[1])  # no rename detection: paths stay paths
        return {d.new_file.path: (ObjectId(str(d.new_file.id)), d.new_file.mode)
                for d in diff.deltas if d.status == pygit2.enums.DeltaStatus.MODIFIED}

    mine, other = modified(ours), modified(theirs)
    out = []
    for path in mine.keys() & other.keys():
        (o, o_mode), (t, t_mode) = mine[path], other[path]
        if o == t:
            continue
        try:
            b = repo[base].peel(pygit2.Tree)[path]
        except KeyError:
            continue
        modes = (int(b.filemode), o_mode, t_mode)
        if any(m not in (Mode.FILE, Mode.EXECUTABLE) for m in modes):
            continue
        ids = (ObjectId(str(b.id)), o, t)
        if min(repo.odb.read_header(pygit2.Oid(hex=i))[1] for i in ids) > TRIM_OVER:
            out.append((path, ids, modes))
    return out


def _ends(repo: pygit2.Repository, ids: tuple[ObjectId, ...], held: Held | None
          ) -> tuple[ObjectId, int, int] | None:
    """(the blob measured, the bytes at its start and its end, whole lines, that the blobs
    share), or None: nothing worth trimming. Two blobs are in memory at a time besides what
    `held` holds, whose blob is the one measured against the others."""
    ids = tuple(sorted(ids, key=lambda i: held is None or str(i) not in held))
    first = view(repo, ids[0], held)
    size = len(first)
    head, tail = size, size
    for oid in ids[1:]:
        other = view(repo, oid, held)
        head = min(head, _prefix(first, other))
        tail = min(tail, _suffix(first, other), len(other) - head)
        del other
    tail = min(tail, size - head)
    # Cut at a newline that lies inside the shared bytes, so each end is whole lines in every
    # version (the byte before a shared tail may differ between them).
    head = _last_newline(first, head) + 1
    # One shared line stays before the middle: xdiff writes a conflict's markers with the
    # line ending of the line before it and of the base's first line, which must then be
    # one of the same kind (or nothing is trimmed at the start).
    head = _last_newline(first, head - 1) + 1 if head else 0
    if head and _crlf(first, _first_newline(first, 0, head)) \
            != _crlf(first, _first_newline(first, head, size)):
        head = 0
    at = _first_newline(first, size - tail, size)
    tail = size - at - 1 if at >= 0 else 0
    if head + tail < TRIM_OVER // 2:
        return None
    return ids[0], head, tail


def _crlf(view: memoryview, newline: int) -> bool:
    return newline > 0 and view[newline - 1] == 0x0D


def _prefix(a: memoryview, b: memoryview) -> int:
    """The length of the bytes `a` and `b` share at their start."""
    n = min(len(a), len(b))
    at = 0
    while at < n and a[at:at + _CHUNK] == b[at:at + _CHUNK]:
        at += _CHUNK
    if at >= n:
        return n
    lo, hi = at, min(at + _CHUNK, n)  # a[:lo] == b[:lo]; they differ before hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo if a[lo] != b[lo] else hi


def _suffix(a: memoryview, b: memoryview) -> int:
    """The length of the bytes `a` and `b` share at their end."""
    la, lb = len(a), len(b)
    n = min(la, lb)
    at = 0  # a[la - at:] == b[lb - at:]
    while at < n:
        step = min(_CHUNK, n - at)
        if a[la - at - step:la - at] != b[lb - at - step:lb - at]:
            break
        at += step
    else:
        return n
    lo, hi = at, at + min(_CHUNK, n - at)  # they differ within the last hi bytes
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid
    return lo if a[la - hi] != b[lb - hi] else hi


def _last_newline(view: memoryview, end: int) -> int:
    """The index of the last newline before `end`, or -1."""
    while end > 0:
        start = max(0, end - _CHUNK)
        at = view[start:end].tobytes().rfind(b"\n")
        if at >= 0:
            return start + at
        end = start
    return -1


def _first_newline(view: memoryview, start: int, end: int) -> int:
    """The index of the first newline at or after `start` (before `end`), or -1."""
    while start < end:
        stop = min(end, start + _CHUNK)
        at = view[start:stop].tobytes().find(b"\n")
        if at >= 0:
            return start + at
        start = stop
    return -1


def _replace(repo: pygit2.Repository, tree: ObjectId, parts: list[str], blob: ObjectId,
             mode: int) -> ObjectId:
    """`tree` with the file at path `parts` now `blob`."""
    t = repo[tree].peel(pygit2.Tree)
    builder = repo.TreeBuilder(t)
    if len(parts) == 1:
        builder.insert(parts[0], pygit2.Oid(hex=blob), mode)
    else:
        sub = t[parts[0]]
        builder.insert(parts[0], pygit2.Oid(hex=_replace(repo, ObjectId(str(sub.id)),
                                                         parts[1:], blob, mode)),
                       Mode.TREE)
    return ObjectId(str(builder.write()))
