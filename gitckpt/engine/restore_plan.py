"""The restore plan: a pure function of the target, the live snapshot and a path filter,
and the check that moves creates a workspace obstacle blocks to `unrestorable`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field, replace

from gitckpt.core.errors import CHECK_STORE, StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode, TreeEntry, UnsafeTree, diff_entries, in_filter
from gitckpt.core.shape import HIDDEN, Shaped
from gitckpt.core.values import POINTER, Left, Snapshot
from gitckpt.engine.targets import Target
from gitckpt.engine.workfs import Blocked, Missing, Workdir
from gitckpt.safety.rules import IgnoreRules, tree_ckptignore, tree_loader
from gitckpt.safety.scope import CKPTIGNORE, Scope
from gitckpt.store.base import Store

ACTIONS = ("create", "modify", "delete", "mode")


@dataclass(frozen=True)
class Action:
    """One change to one path: `entry` is the target's content (None for a delete)."""

    path: bytes
    kind: str  # create | modify | delete | mode
    entry: TreeEntry | None
    was: TreeEntry | None = None  # what the live snapshot (the safety copy) holds there

    @property
    def name(self) -> str:
        return os.fsdecode(self.path)


@dataclass(frozen=True)
class Plan(Shaped):
    """What a restore of `target` would do to the workspace whose snapshot is `live_tree`;
    it answers with the paths of each kind of action and their `counts`."""

    target: Target
    live_tree: ObjectId
    paths: tuple[str, ...]
    actions: tuple[Action, ...] = field(metadata=HIDDEN)
    unrestorable: tuple[Left, ...]  # the target has it, we cannot write it
    kept: tuple[Left, ...]  # left out now, never touched
    derived = ("plan_id", "counts", "create", "modify", "delete", "mode")

    def names(self, kind: str) -> list[str]:
        return [a.name for a in self.actions if a.kind == kind]

    @property
    def id(self) -> str:
        """What the plan does, as 16 hex digits: equal ids, equal writes. An apply given the
        id of the preview its caller read refuses any other plan (`expect`)."""
        h = hashlib.sha256(f"{self.target.commit}\0".encode())
        for a in sorted(self.actions, key=lambda a: a.path):
            e = a.entry
            h.update(a.kind.encode() + b"\0" + a.path + b"\0" +
                     (f"{int(e.mode):o} {e.id}" if e is not None else "-").encode() + b"\0")
        for path, reason in self.unrestorable:
            h.update(f"!{path}\0{reason}\0".encode("utf-8", "surrogateescape"))
        return h.hexdigest()[:16]

    @property
    def plan_id(self) -> str:
        return self.id

    @property
    def counts(self) -> dict[str, int]:
        """How many paths each action, and `unrestorable` and `kept`, hold."""
        return {**{k: len(self.names(k)) for k in ACTIONS},
                "unrestorable": len(self.unrestorable), "kept": len(self.kept)}

    @property
    def create(self) -> list[str]:
        return self.names("create")

    @property
    def modify(self) -> list[str]:
        return self.names("modify")

    @property
    def delete(self) -> list[str]:
        return self.names("delete")

    @property
    def mode(self) -> list[str]:
        return self.names("mode")

    def summary(self) -> str:
        counts = ", ".join(f"{len(self.names(k))} {k}" for k in ACTIONS if self.names(k))
        return counts or "no file changes"


def make_plan(read_tree: Callable[[ObjectId], list[TreeEntry]],  # noqa: C901 (baseline)
              has_object: Callable[[ObjectId], bool], target: Target, live: Snapshot,
              paths: tuple[str, ...] = (), private: tuple[str, ...] = (),
              left_now: Callable[[str], str | None] | None = None,
              left_after: Callable[[str], bool] | None = None) -> Plan:
    """The plan that makes the in-scope workspace `live` equal to `target` under `paths`.

    Pure: reads objects and asks the two rule functions, nothing else. Never touched: files
    left out now (`live.skipped`, and any path `left_now` names a reason for), nested
    repositories, gitckpt's store (`.gitckpt` anywhere, the `private` folders), paths the
    target left out (its note's `skipped`), and, when the restore changes ignore files, the
    in-scope files that the target's rules (`left_after`) leave out: deleting them would lose
    what no snapshot holds. What the target has but cannot be written is `unrestorable`. A
    target tree with an unsafe name is refused whole.
    """
    only = tuple(os.fsencode(p) for p in paths)
    left_out = {os.fsencode(s.path): s.reason for s in live.skipped}
    kept = [Left(s.path, s.reason) for s in live.skipped
            if in_filter(os.fsencode(s.path), only)]
    skipped_then = {os.fsencode(s.path): s.reason for s in target.record.left_out}
    # a file left out then and now, of the same size and time (never read, either time): as
    # it was, so nothing to restore; it is among `kept`, not called unrestorable
    now = {t.path: (t.size, t.mtime) for t in live.skipped}
    same = {os.fsencode(s.path) for s in target.record.left_out
            if s.size is not None and s.mtime is not None
            and now.get(s.path) == (s.size, s.mtime)}
    unrestorable = [Left(os.fsdecode(p), r) for p, r in skipped_then.items()
                    if in_filter(p, only) and p not in same]
    actions: list[Action] = []
    nested: list[bytes] = []  # nested repositories in the workspace: never written into
    ours = {os.fsencode(p): "gitckpt's store" for p in private}
    try:
        pairs = list(diff_entries(read_tree, live.tree, target.tree, only, check_new=True))
    except UnsafeTree as e:
        raise StoreCorrupt(
            f"{target.label} holds an unsafe path {os.fsdecode(e.path)!r}; nothing was written",
            "Such a tree only comes from a crafted store or package. " + CHECK_STORE) from e
    rules_change = left_after is not None and any(
        p.rpartition(b"/")[2] == b".gitignore" or p == CKPTIGNORE.encode() for p, _, _ in pairs)
    gitlink_above = _GitlinkAbove(read_tree, live.tree) if only else None
    for path, old, new in pairs:
        name = os.fsdecode(path)
        if old is not None and old.mode == Mode.GITLINK:
            nested.append(path)
            kept.append(Left(name, "nested_repo"))
            if new is not None:
                unrestorable.append(Left(name, "a nested repository is in the way"))
            continue
        blocker = _under(path, nested) or _under(path, left_out)
        if blocker is None and gitlink_above is not None:
            blocker = gitlink_above(path)
        if POINTER.encode() in path.split(b"/") or _under(path, ours) is not None:
            unrestorable.append(Left(name, "inside gitckpt's store"))
        elif new is not None and blocker is not None:
            reason = left_out.get(blocker, "nested_repo")
            unrestorable.append(Left(name, f"left out now ({reason}): {os.fsdecode(blocker)}"))
        elif new is not None and new.mode == Mode.GITLINK:
            unrestorable.append(Left(name, "nested_repo"))
        elif new is None:
            if _under(path, skipped_then) is not None:
                continue  # it existed then, left out: reported as unrestorable, kept as it is
            if rules_change and left_after is not None and left_after(name):
                kept.append(Left(name, "left out by the restored ignore rules"))
                continue
            actions.append(Action(path, "delete", None, old))
        elif not has_object(new.id):
            unrestorable.append(Left(name, "content missing"))
        elif old is None:
            why = left_now(name) if left_now is not None else None
            if why is not None:
                unrestorable.append(Left(name, f"left out now ({why})"))
            else:
                actions.append(Action(path, "create", new))
        elif old.id == new.id and {old.mode, new.mode} <= {Mode.FILE, Mode.EXECUTABLE}:
            actions.append(Action(path, "mode", new, old))
        else:
            actions.append(Action(path, "modify", new, old))
    lost = {p for p, _ in unrestorable}
    return Plan(target, live.tree, paths, tuple(actions), lefts(unrestorable),
                lefts(k for k in kept if k[0] not in lost))


def lefts(pairs: Iterable[tuple[str, str]]) -> tuple[Left, ...]:
    """(path, reason) pairs as a plan holds them: records, sorted, each once."""
    return tuple(sorted({Left(*p) for p in pairs}))


class _GitlinkAbove:
    """The nested repository (gitlink) of the live tree that a path lies inside, if any: a
    path filter can skip the gitlink itself, so creates below it are checked here."""

    def __init__(self, read_tree: Callable[[ObjectId], list[TreeEntry]], tree: ObjectId):
        self.read_tree = read_tree
        self.folders: dict[bytes, ObjectId | None] = {b"": tree}
        self.links: set[bytes] = set()

    def _folder(self, folder: bytes) -> ObjectId | None:
        if folder not in self.folders:
            parent, _, name = folder.rpartition(b"/")
            up = self._folder(parent)
            found = None
            for e in self.read_tree(up) if up is not None else ():
                if e.name == name and e.mode == Mode.TREE:
                    found = e.id
                elif e.name == name and e.mode == Mode.GITLINK:
                    self.links.add(folder)
            self.folders[folder] = found
        return self.folders[folder]

    def __call__(self, path: bytes) -> bytes | None:
        folder = path.rpartition(b"/")[0]
        self._folder(folder)
        return _under(folder, self.links)


def plan_for(store: Store, target: Target, live: Snapshot, scope: Scope,
             paths: tuple[str, ...] = ()) -> Plan:
    """`make_plan` with the workspace's rules now and the rules the target brings back."""
    ignored = store.ignore_check()

    def left_now(rel: str) -> str | None:
        return scope.excluded(rel) or ("ignored" if ignored(rel) else None)

    after = IgnoreRules(tree_loader(store.read_tree, store.read_blob, target.tree),
                        [*store.builtin, *tree_ckptignore(store.read_tree, store.read_blob,
                                                          target.tree), *scope.excludes])
    return make_plan(store.read_tree, store.has_object, target, live, paths, store.private,
                     left_now, after.left_out)


def _under(path: bytes, roots: Container[bytes]) -> bytes | None:
    """The entry of `roots` that is `path` or one of the folders above it."""
    while path:
        if path in roots:
            return path
        path = path.rpartition(b"/")[0]
    return None


def check_obstacles(plan: Plan, wd: Workdir) -> Plan:
    """Move creates that would land on a left-out file, or go through a symlink or a file
    the plan does not delete, to `unrestorable`: the preview shows what apply will do."""
    deleted = {a.path for a in plan.actions if a.kind == "delete"}
    emptied = {f for p in deleted for f in folders_above(p.rpartition(b"/")[0])}
    keep, blocked = [], []
    for a in plan.actions:
        reason = _obstacle(wd, a.path, deleted, emptied) if a.kind == "create" else None
        if reason is None:
            keep.append(a)
        else:
            blocked.append((a.name, reason))
    if not blocked:
        return plan
    return replace(plan, actions=tuple(keep), unrestorable=lefts([*plan.unrestorable, *blocked]))


def _obstacle(wd: Workdir, path: bytes, deleted: set[bytes], emptied: set[bytes]) -> str | None:
    """Why a create at `path` cannot happen, or None. A folder the plan empties may become
    this file, and a file the plan deletes may become a folder above it."""
    parent = path.rpartition(b"/")[0]
    if path in emptied or _under(parent, deleted) is not None:
        return None
    try:
        wd.folder(parent)
    except Missing:
        return None  # created on the way
    except Blocked as e:
        return e.reason
    if wd.lstat(path) is not None:
        return "a left-out file (ignored or excluded) is in the way"
    return None


def folders_above(path: bytes) -> list[bytes]:
    """`path` and each folder above it (b"" excluded)."""
    out = []
    while path:
        out.append(path)
        path = path.rpartition(b"/")[0]
    return out
