"""The plain-folder narrowed walk driven by hand: the paths a watcher would name are passed as
`changed`, and each tree and left-out list must equal a fresh walk's (no cache at all). The
cases a review found: a cache entry of an earlier file at a path deciding scope for a new one,
and a memo trusted with no cache file after a prune."""

from __future__ import annotations

import os
import time

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import hash_object
from gitckpt.safety.scope import Scope
from gitckpt.store.plain.scan import DirScanner
from gitckpt.store.state import StateDir


class Objects(dict):
    def has(self, oid) -> bool:
        return str(oid) in self

    def write(self, kind: str, body: bytes) -> ObjectId:
        oid = hash_object(kind, body)
        self[oid] = (kind, body)
        return ObjectId(oid)


def scanner(root, state) -> tuple[DirScanner, Objects]:
    state.mkdir(exist_ok=True)
    objects = Objects()
    return DirScanner(root, StateDir(state), set(), objects.has, objects.write,
                      lambda: None), objects


def fresh(root, tmp_path):
    """What a walk with no cache finds: (tree, left-out paths)."""
    sc, _ = scanner(root, tmp_path / f"fresh-{time.monotonic_ns()}")
    tree, skipped = sc.snapshot(Scope.load(str(root)), update_cache=False)
    return tree, [s.path for s in skipped]


def narrowed(sc, root, changed):
    tree, skipped = sc.snapshot(Scope.load(str(root)), update_cache=True, changed=changed,
                                watched=True)
    return tree, [s.path for s in skipped]


def test_a_new_file_where_a_cached_one_was_is_matched_against_the_rules_now(tmp_path):
    root = tmp_path / "ws"
    (root / "u").mkdir(parents=True)
    (root / "u" / "x.log").write_text("log\n")
    (root / "u" / "a.txt").write_text("a\n")
    sc, _ = scanner(root, tmp_path / "state")
    assert narrowed(sc, root, None) == fresh(root, tmp_path)  # the full walk: memo kept
    (root / "u" / "x.log").unlink()
    assert narrowed(sc, root, {"u"}) == fresh(root, tmp_path)
    (root / "u" / ".gitignore").write_text("*.log\n")  # `u` named as an unwatched folder is
    assert narrowed(sc, root, {"u"}) == fresh(root, tmp_path)
    (root / "u" / "x.log").write_text("new log\n")  # left out now, whatever was cached
    tree, skipped = narrowed(sc, root, {"u"})
    assert (tree, skipped) == fresh(root, tmp_path)


def test_a_memo_without_a_cache_file_is_not_trusted(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f").write_text("one\n")
    sc, objects = scanner(root, tmp_path / "state")
    scope = Scope.load(str(root))
    sc.snapshot(scope, update_cache=False, watched=True)  # read-only: no cache file
    (root / "f").write_text("two\n")
    os.utime(root / "f", (time.time() - 3600,) * 2)
    sc.snapshot(scope, update_cache=False, changed={"f"}, watched=True)
    blob = hash_object("blob", b"two\n")
    del objects[blob]  # a prune: nothing reaches it, and there is no cache file to drop
    tree, _ = sc.snapshot(scope, update_cache=True, changed=set(), watched=True)
    assert blob in objects[str(tree)][1].hex()
    assert blob in objects  # read again, so written again: the tree names a blob that exists
