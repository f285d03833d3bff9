"""A large file's merge with its shared ends kept out (store/trim.py) says what libgit2's merge
of the whole file says: the same clean result, the same conflicts, the same marked text; and a
large file's revert never hands the whole file to libgit2's merge (bench/revertbench.py
measures its time and memory)."""

from __future__ import annotations

import os

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.core.ids import ObjectId
from gitckpt.store import merge as merging
from gitckpt.store import trim

LINES = [f"line {i}\n".encode() for i in range(60)]


def edit(lines: list[bytes], edits: list[tuple[int, int, str]]) -> bytes:
    out = list(lines)
    for at, kind, word in edits:
        at %= len(out) + 1
        if kind == 0 and at < len(out):
            out[at] = f"{word}\n".encode()
        elif kind == 1:
            out.insert(at, f"{word}\n".encode())
        elif at < len(out):
            del out[at]
    return b"".join(out)


EDITS = st.lists(st.tuples(st.integers(0, 80), st.integers(0, 2),
                           st.sampled_from(["ours", "theirs", "both", "x"])), max_size=4)


def trees(repo: pygit2.Repository, *files: bytes) -> list[ObjectId]:
    out = []
    for data in files:
        sub = repo.TreeBuilder()
        sub.insert("big.txt", repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        sub.insert("small.txt", repo.create_blob(b"same\n"), pygit2.GIT_FILEMODE_BLOB)
        top = repo.TreeBuilder()
        top.insert("dir", sub.write(), pygit2.GIT_FILEMODE_TREE)
        out.append(ObjectId(str(top.write())))
    return out


def outcome(repo: pygit2.Repository, m: merging.Merge) -> tuple:
    """What a merge says: its conflicts (sides and marked text) and its tree once they are
    settled with the markers."""
    said, settled = [], []
    for c in m.conflicts:
        sides = tuple(None if s is None else (s.path, s.mode, s.id)
                      for s in (c.ancestor, c.ours, c.theirs))
        marked = m.marked(c, "ours", "theirs")
        said.append((c.path, sides, m.kind(c), marked))
        settled.append((c.path, (c.ours.mode, m.blob(marked)) if marked is not None else None))
    return said, m.settle(settled)


@settings(max_examples=int(os.environ.get("TRIM_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(ours=EDITS, theirs=EDITS, crlf=st.booleans(), end=st.booleans())
def test_a_trimmed_merge_says_what_the_whole_merge_says(tmp_path_factory, ours, theirs, crlf,
                                                        end):
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("trim")), bare=True)
    lines = [line.replace(b"\n", b"\r\n") for line in LINES] if crlf else list(LINES)
    if not end:
        lines[-1] = lines[-1].rstrip(b"\r\n")  # no newline at the end
    base = b"".join(lines)
    base_t, ours_t, theirs_t = trees(repo, base, edit(lines, ours), edit(lines, theirs))
    whole = merging.Merge(repo, repo.merge_trees(base_t, ours_t, theirs_t))
    expected = outcome(repo, whole)
    original = trim.TRIM_OVER
    trim.TRIM_OVER = 16  # every file is large here
    try:
        got = outcome(repo, merging.merge_trees(repo, base_t, ours_t, theirs_t, renames=True))
    finally:
        trim.TRIM_OVER = original
    assert got == expected


def test_small_or_barely_shared_files_are_merged_whole(tmp_path):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    base = b"".join(LINES)
    a, b, c = trees(repo, base, base.replace(b"line 5\n", b"five\n"),
                    base.replace(b"line 50\n", b"fifty\n"))
    assert trim.trimmed(repo, a, b, c)[3].by_path == {}  # under TRIM_OVER: whole
    trim.TRIM_OVER, original = 16, trim.TRIM_OVER
    try:
        t = trim.trimmed(repo, a, b, c)[3].by_path["dir/big.txt"]
    finally:
        trim.TRIM_OVER = original
    # whole lines, and one shared line kept before the middle (its line ending is xdiff's)
    assert (t.head, t.tail) == (len(b"".join(LINES[:4])), len(b"".join(LINES[51:])))


@pytest.mark.slow
def test_a_revert_of_a_large_file_merges_only_its_middle(ws, monkeypatch):
    """A 20 MB text file, one conflicting line: libgit2's merge of it is never run whole."""
    from conftest import service

    big = ws.root / "big.txt"
    big.write_bytes(b"".join(f"line {i:07d} {'x' * 30}\n".encode() for i in range(450_000)))
    service.init(ws.root, "big")
    big.write_bytes(big.read_bytes().replace(b"line 0000010 x", b"line 0000010 step", 1))
    service.save(ws.root, "step one")
    big.write_bytes(big.read_bytes().replace(b"line 0000010 step", b"line 0000010 user", 1))
    sizes: list[int] = []
    merge_file = pygit2.Repository.merge_file_from_index

    def measured(self, a, o, t):
        sizes.append(max(self[e.id].size for e in (a, o, t)))
        return merge_file(self, a, o, t)

    monkeypatch.setattr(pygit2.Repository, "merge_file_from_index", measured)
    r = service.revert(ws.root, "1", apply=True, conflicts="markers")
    assert [c.path for c in r.plan.conflicts] == ["big.txt"]
    assert sizes
    assert max(sizes) < 4096
    text = big.read_bytes()
    assert text.count(b"<<<<<<< workspace\n") == 1
    assert b"line 0000010 user" in text
    assert b"line 0000010 xxx" in text
    assert len(text) > 19_000_000
