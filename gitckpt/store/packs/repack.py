"""The checkpoints' loose objects gathered into one pack, as `git gc` would, touching only
what the checkpoints reach: every step writes a few small objects (a commit, trees, its note
and the notes trees), each a file of at least one disk block, so a long task left thousands.

From the checkpoint refs and the notes ref, the walk follows only loose objects: a packed
object's own objects were packed with it or before. What it reaches is written to one pack
by libgit2 (with deltas among them; published and made durable first), and only then are
those loose files removed. Nothing
else in the object folder is read or moved, so the user's own objects keep whatever
reachability and expiry git gives them. Killed at any moment, it leaves either the loose
files, or the pack beside them (a duplicate git tolerates), never neither."""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode, decode_commit, decode_tree
from gitckpt.store.git.loose import loose_problem

if TYPE_CHECKING:
    from gitckpt.store.base import Backend

#: Loose objects (estimated) a writer lets pile up before it packs the checkpoints' own.
AUTO = 1000
#: The store's state file holding the loose objects counted after the last pack.
BASELINE = "loose-baseline"
#: Fan-out folders counted for the estimate (`git gc --auto` counts objects/17 alone).
_SAMPLE = tuple(f"{i:x}{i:x}" for i in range(16))
_NAME = frozenset("0123456789abcdef")


def estimate(objects_dir: str) -> int:
    """About how many loose objects the folder holds, from 16 of its 256 fan-out folders."""
    found = 0
    for fan in _SAMPLE:
        try:
            found += sum(1 for n in os.listdir(os.path.join(objects_dir, fan))
                         if len(n) in (38, 62) and _NAME.issuperset(n))
        except OSError:
            continue
    return found * 256 // len(_SAMPLE)


def loose_ids(objects_dir: str) -> set[str]:
    """Every loose object's id in the folder (a walk of its 256 fan-out folders)."""
    out: set[str] = set()
    for fan in os.listdir(objects_dir) if os.path.isdir(objects_dir) else ():
        if len(fan) != 2 or not _NAME.issuperset(fan):
            continue
        try:
            names = os.listdir(os.path.join(objects_dir, fan))
        except OSError:
            continue
        out.update(fan + n for n in names if len(n) in (38, 62) and _NAME.issuperset(n))
    return out


def _read(objects_dir: str, oid: str) -> tuple[str, bytes] | None:
    """(kind, body) of a sound loose object, or None (damaged: left where it is)."""
    if loose_problem(objects_dir, oid, verify=True) is not None:
        return None
    with open(os.path.join(objects_dir, oid[:2], oid[2:]), "rb") as f:
        raw = zlib.decompress(f.read())
    head, _, body = raw.partition(b"\0")
    return head.partition(b" ")[0].decode(), body


def pack_loose(objects_dir: str, tips: Iterable[str]) -> int:
    """Pack the loose objects that `tips` reach through loose objects, then remove their
    loose files; how many were packed. The caller holds the store lock."""
    loose = loose_ids(objects_dir)
    todo = [t for t in tips if t in loose]
    if not todo:
        return 0
    packed: list[str] = []
    seen: set[str] = set()
    while todo:
        oid = todo.pop()
        if oid in seen:
            continue
        seen.add(oid)
        got = _read(objects_dir, oid)  # sound: libgit2 never meets a damaged one
        if got is None:
            continue
        kind, body = got
        packed.append(oid)
        if kind == "commit":
            c = decode_commit(ObjectId(oid), body)
            nxt = [c.tree, *c.parents]
        elif kind == "tree":
            nxt = [e.id for e in decode_tree(body) if e.mode != Mode.GITLINK]
        else:
            nxt = []
        todo += [x for x in nxt if x in loose and x not in seen]
    if not packed:
        return 0
    _write_pack(objects_dir, packed)
    # the newest found last: every object still loose after a kill is reached from a tip
    # through loose objects (each was found through one found before it), so the next run
    # finds it again
    for oid in reversed(packed):
        try:
            os.unlink(os.path.join(objects_dir, oid[:2], oid[2:]))
        except OSError:
            continue  # a read-only file system or a file gone: a duplicate, harmless
    return len(packed)


def _write_pack(objects_dir: str, ids: list[str]) -> None:
    """One pack of objects `ids`, deltas found by libgit2 among them (a file changed a
    little at every step is kept as one version and its changes), made durable."""
    import pygit2

    folder = os.path.join(objects_dir, "pack")
    os.makedirs(folder, exist_ok=True)
    before = set(os.listdir(folder))
    builder = pygit2.PackBuilder(pygit2.Repository(os.path.dirname(objects_dir)))
    for oid in ids:
        builder.add(pygit2.Oid(hex=oid))
    builder.write(folder)
    for name in sorted(set(os.listdir(folder)) - before):
        if name.startswith("pack-") and name.endswith((".pack", ".idx")):
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    _sync_folder(folder)


def _sync_folder(path: str) -> None:
    """fsync a folder, raising on failure (files.fsync_dir forgives one): the loose files
    go only once the pack's names are durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tidy(store: Backend) -> None:
    """At the end of a write hold: once the loose objects grew by AUTO since the last pack
    (or since the store first looked: a repository full of the user's own loose objects
    does not make every save pack), `pack`. Never fails the call that held the lock (its
    work is done and kept): a failure is logged and retried next time."""
    folder = store.loose_objects_dir()
    if folder is None:
        return
    try:
        now = estimate(folder)
        try:
            base = int(store.shared.read(BASELINE) or b"-1")
        except ValueError:
            base = -1
        packed = 0 <= base <= now - AUTO
        if packed:
            pack(store)
            now = estimate(folder)  # what is left loose: the user's own
        if base < 0 or packed or now < base:  # (fewer: the user's `git gc` ran)
            store.shared.write(BASELINE, str(now).encode())
    except Exception:
        logging.getLogger("gitckpt").exception("packing the loose objects failed")


def pack(store: Backend) -> tuple[int, int]:
    """Pack the checkpoints' loose objects and move their loose refs into packed-refs,
    touching nothing else; (objects, refs) moved. The caller holds the store lock."""
    from gitckpt.store.notes import NOTES_REF
    from gitckpt.store.reflist import CHECKPOINT_REFS, pack_refs

    folder = store.loose_objects_dir()
    if folder is None:
        return 0, 0
    tips: list[str] = list(store.list_refs(CHECKPOINT_REFS, damaged=[]).values())
    notes = store.get_ref(NOTES_REF)
    objects = pack_loose(folder, tips + ([notes] if notes else []))
    return objects, pack_refs(store.refs_folder, CHECKPOINT_REFS)


def loose_count(store: Backend) -> tuple[int, int] | None:
    """(loose objects, packs) in the store's object folder; None for a store whose objects
    stay loose."""
    folder = store.loose_objects_dir()
    if folder is None:
        return None
    try:
        packs = sum(1 for n in os.listdir(os.path.join(folder, "pack")) if n.endswith(".pack"))
    except OSError:
        packs = 0
    return len(loose_ids(folder)), packs
