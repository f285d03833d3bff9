"""Restore: plan (a pure function of the target, the live snapshot and a path filter) and apply.

Apply order: the `pre_restore` drift (the safety copy) is committed before the first write, a
marker naming it is left in the store's state folder while files change, then deletions, then
emptied folders, then modes, then new content, then the `restore` commit. A killed apply leaves
the marker, which `resume` and `doctor` report with the id to restore.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from gitckpt.core import json_input
from gitckpt.core.errors import (
    CHECK_STORE,
    GitckptError,
    InvalidArgument,
    NeedsConfirmation,
    StoreCorrupt,
    StoreNotWritable,
)
from gitckpt.core.hints import BLANK, CLI, Arg, Call, call
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode, TreeEntry, UnsafeTree, apply_changes, diff_entries, in_filter
from gitckpt.core.paths import normalize_paths  # noqa: F401 (re-exported)
from gitckpt.core.values import POINTER, RestoreMarker, Snapshot
from gitckpt.engine.records import StepRecord
from gitckpt.engine.targets import Target
from gitckpt.engine.timeline import Timeline
from gitckpt.engine.workfs import Blocked, Missing, Workdir
from gitckpt.safety.rules import IgnoreRules, tree_ckptignore, tree_loader
from gitckpt.safety.scope import CKPTIGNORE, Scope
from gitckpt.store.base import Store

ACTIONS = ("create", "modify", "delete", "mode")
MARKER = "restore.json"
# An apply that deletes or rewrites more files than this, or (from CONFIRM_FLOOR on) more than
# half of the in-scope files, runs only when confirmed: a store found for the wrong folder once
# restored all of /tmp.
CONFIRM_OVER = 500
CONFIRM_FLOOR = 20


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
class Plan:
    """What a restore of `target` would do to the workspace whose snapshot is `live_tree`."""

    target: Target
    live_tree: ObjectId
    paths: tuple[str, ...]
    actions: tuple[Action, ...]
    unrestorable: tuple[tuple[str, str], ...]  # (path, reason): the target has it, we cannot
    kept: tuple[tuple[str, str], ...]  # (path, reason): left out now, never touched

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

    def summary(self) -> str:
        counts = ", ".join(f"{len(self.names(k))} {k}" for k in ACTIONS if self.names(k))
        return counts or "no file changes"

    def to_dict(self) -> dict:
        out: dict = {"target": self.target.to_dict(), "plan_id": self.id,
                     "live_tree": self.live_tree, "paths": list(self.paths)}
        out["counts"] = {k: len(self.names(k)) for k in ACTIONS}
        out["counts"].update(unrestorable=len(self.unrestorable), kept=len(self.kept))
        out.update({k: self.names(k) for k in ACTIONS})
        out["unrestorable"] = [{"path": p, "reason": r} for p, r in self.unrestorable]
        out["kept"] = [{"path": p, "reason": r} for p, r in self.kept]
        return out


def make_plan(read_tree: Callable[[ObjectId], list[TreeEntry]],
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
    kept = [(s.path, s.reason) for s in live.skipped if in_filter(os.fsencode(s.path), only)]
    skipped_then = {os.fsencode(s.path): s.reason for s in target.record.left_out}
    unrestorable = [(os.fsdecode(p), r) for p, r in skipped_then.items() if in_filter(p, only)]
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
            kept.append((name, "nested_repo"))
            if new is not None:
                unrestorable.append((name, "a nested repository is in the way"))
            continue
        blocker = _under(path, nested) or _under(path, left_out)
        if blocker is None and gitlink_above is not None:
            blocker = gitlink_above(path)
        if POINTER.encode() in path.split(b"/") or _under(path, ours) is not None:
            unrestorable.append((name, "inside gitckpt's store"))
        elif new is not None and blocker is not None:
            reason = left_out.get(blocker, "nested_repo")
            unrestorable.append((name, f"left out now ({reason}): {os.fsdecode(blocker)}"))
        elif new is not None and new.mode == Mode.GITLINK:
            unrestorable.append((name, "nested_repo"))
        elif new is None:
            if _under(path, skipped_then) is not None:
                continue  # it existed then, left out: reported as unrestorable, kept as it is
            if rules_change and left_after is not None and left_after(name):
                kept.append((name, "left out by the restored ignore rules"))
                continue
            actions.append(Action(path, "delete", None, old))
        elif not has_object(new.id):
            unrestorable.append((name, "content missing"))
        elif old is None:
            why = left_now(name) if left_now is not None else None
            if why is not None:
                unrestorable.append((name, f"left out now ({why})"))
            else:
                actions.append(Action(path, "create", new))
        elif old.id == new.id and {old.mode, new.mode} <= {Mode.FILE, Mode.EXECUTABLE}:
            actions.append(Action(path, "mode", new, old))
        else:
            actions.append(Action(path, "modify", new, old))
    lost = {p for p, _ in unrestorable}
    return Plan(target, live.tree, paths, tuple(actions), tuple(sorted(set(unrestorable))),
                tuple(sorted({k for k in kept if k[0] not in lost})))


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


def _under(path: bytes, roots: list[bytes] | dict[bytes, str] | set[bytes]) -> bytes | None:
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
    emptied = {f for p in deleted for f in _folders(p.rpartition(b"/")[0])}
    keep, blocked = [], []
    for a in plan.actions:
        reason = _obstacle(wd, a.path, deleted, emptied) if a.kind == "create" else None
        if reason is None:
            keep.append(a)
        else:
            blocked.append((a.name, reason))
    if not blocked:
        return plan
    return replace(plan, actions=tuple(keep),
                   unrestorable=tuple(sorted({*plan.unrestorable, *blocked})))


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


@dataclass
class Applied:
    """What an apply did: the actions done, and the paths it could not write (with why)."""

    done: list[Action] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)


#: Why a file is not overwritten or deleted: it changed after the safety copy was taken.
CHANGED_SINCE = "changed since the safety copy was taken; left as it is"


def write_plan(plan: Plan, wd: Workdir, checkout: Callable[[ObjectId, str], bytes],
               current: Callable[[str], tuple[int, str] | None] | None = None) -> Applied:
    """Carry out `plan` below `wd`. Per-path failures are collected, not raised.

    `current(path)` is the (mode, blob id) a snapshot would take of a file now: a file that
    is no longer what the plan (and its safety copy) saw is left as it is, never overwritten
    or deleted, so an edit made while the restore runs is not lost."""
    out = Applied()

    def moved(a: Action) -> bool:
        if current is None or a.was is None or a.was.mode in (Mode.TREE, Mode.GITLINK):
            return False
        return current(a.name) != (int(a.was.mode), a.was.id)

    needed = {a.path.rpartition(b"/")[0] for a in plan.actions if a.kind != "delete"}
    needed = {p for n in needed for p in _folders(n)}
    emptied: set[bytes] = set()
    for a in sorted((a for a in plan.actions if a.kind == "delete"), key=lambda a: a.path,
                    reverse=True):
        try:
            if moved(a):
                raise Blocked(CHANGED_SINCE)
            wd.remove(a.path)
            out.done.append(a)
            emptied.update(_folders(a.path.rpartition(b"/")[0]))
        except Blocked as e:
            out.blocked.append((a.name, e.reason))
    for folder in sorted(emptied - needed - {b""}, key=lambda p: (-p.count(b"/"), p)):
        wd.remove_empty_folder(folder)
    for a in plan.actions:
        if a.kind == "delete":
            continue
        assert a.entry is not None
        try:
            if moved(a):
                raise Blocked(CHANGED_SINCE)
            if a.kind == "mode":
                wd.set_executable(a.path, a.entry.mode == Mode.EXECUTABLE)
            else:
                st = wd.lstat(a.path) if a.kind == "create" else None
                if st is not None and not stat.S_ISDIR(st.st_mode):  # a folder: write says
                    raise Blocked("a left-out file (ignored or excluded) is in the way")
                wd.write(a.path, checkout(a.entry.id, a.name),
                         executable=a.entry.mode == Mode.EXECUTABLE,
                         symlink=a.entry.mode == Mode.SYMLINK)
            out.done.append(a)
        except Blocked as e:
            out.blocked.append((a.name, e.reason))
    return out


def _folders(path: bytes) -> list[bytes]:
    """`path` and each folder above it (b"" excluded)."""
    out = []
    while path:
        out.append(path)
        path = path.rpartition(b"/")[0]
    return out


@dataclass(frozen=True)
class Outcome:
    """An applied restore: its plan, the safety copy, the restore commit and what failed."""

    plan: Plan
    safety: StepRecord | None  # None: nothing to do, nothing written
    commit: ObjectId | None
    tree: ObjectId
    blocked: tuple[tuple[str, str], ...]


class PlanChanged(GitckptError):
    """The plan an apply would carry out is not the one its caller approved."""

    code = "plan_changed"

    def __init__(self, plan: Plan, expected: str) -> None:
        target = plan.target
        super().__init__(
            f"The workspace changed since the preview: restoring {target.label} now means "
            f"{plan.summary()} (plan {plan.id}, not {expected}); nothing was changed.",
            "Read the new plan; apply it with {0}.",
            [call("restore", target=target.commit[:12], apply=True, expect=plan.id,
                  paths=list(plan.paths) or None)])
        self.plan = plan

    def to_dict(self, voice: str = CLI) -> dict:
        return {**super().to_dict(voice), "plan": self.plan.to_dict()}


def reach(store: Store, plan: Plan) -> tuple[int, int | None]:
    """(files the plan deletes or rewrites, in-scope files now, counted only when needed)."""
    touched = sum(1 for a in plan.actions if a.kind != "create")
    if touched < CONFIRM_FLOOR or touched > confirm_over():
        return touched, None
    return touched, count_files(store.read_tree, plan.live_tree)


def check_reach(store: Store, plan: Plan, confirmed: bool, what: str) -> None:
    """NeedsConfirmation if the apply of `plan` (a restore's, a revert's) reaches too far and
    was not confirmed."""
    touched, total = reach(store, plan)
    if not confirmed and needs_confirmation(touched, total):
        of = f" of the {total} in-scope files" if total else ""
        raise NeedsConfirmation(
            f"This {what} would delete or rewrite {touched} files{of} in {store.root}; "
            "nothing was changed.",
            "Read the preview first; then confirm the apply with {0}. Its safety copy "
            "undoes it.", [Arg("confirm", True)])


def confirm_over() -> int:
    try:
        return max(0, int(os.environ.get("GITCKPT_CONFIRM_OVER", CONFIRM_OVER)))
    except ValueError:
        return CONFIRM_OVER


def needs_confirmation(touched: int, total: int | None) -> bool:
    return touched > confirm_over() or (
        touched >= CONFIRM_FLOOR and total is not None and touched * 2 > total)


def count_files(read_tree: Callable[[ObjectId], list[TreeEntry]], tree: ObjectId) -> int:
    n, stack = 0, [tree]
    while stack:
        for e in read_tree(stack.pop()):
            if e.mode == Mode.TREE:
                stack.append(e.id)
            else:
                n += 1
    return n


def preview(tl: Timeline, target: Target, meta, paths: tuple[str, ...] = ()) -> Plan:
    """The plan an apply would carry out now, computed without writing anything (a read-only
    snapshot, no lock): what `apply` would do, obstacles included."""
    store = tl.store
    scope = tl.scope(meta)
    live = store.snapshot(scope, update_cache=False, exact=True)
    with Workdir(str(store.root)) as wd:
        return check_obstacles(plan_for(store, target, live, scope, paths), wd)


_PLAN_ID = re.compile(r"[0-9a-f]{16}")


def check_plan_id(expect: str) -> str:
    if not _PLAN_ID.fullmatch(expect):
        raise InvalidArgument(f"expect {expect[:40]!r} is not a plan id (16 hex digits).",
                              "Pass the plan_id of the preview you read: {0} shows it.",
                              [call("restore", target=BLANK)])
    return expect


def apply(tl: Timeline, target: Target, paths: tuple[str, ...] = (),
          expect: str | None = None, confirmed: bool = False) -> Outcome:
    """Snapshot, plan, take the safety copy, write, and record the restore, under the lock.

    `expect` is the id of the plan a preview showed: if the plan is now another (the
    workspace changed since), nothing is written and PlanChanged carries the new plan. A plan
    with nothing to do writes nothing, not even a safety copy.
    """
    if expect is not None:
        check_plan_id(expect)
    store = tl.store
    with store.lock():
        head, meta = tl.writable(target.task)
        scope = tl.scope(meta)
        live = store.snapshot(scope, exact=True)
        plan = plan_for(store, target, live, scope, paths)
        with Workdir(str(store.root)) as wd:
            plan = check_obstacles(plan, wd)
            if expect is not None and plan.id != expect:
                raise PlanChanged(plan, expect)
            if not plan.actions:
                return Outcome(plan, None, None, live.tree, ())
            check_reach(store, plan, confirmed, "restore")
            drift = tl.record_drift(target.task, head, live, "pre_restore", always=True)
            safety = tl.record(drift.commit)
            mark(tl, target, safety.commit)
            applied = write_plan(plan, wd, store.checkout_blob, store.blob_of)
            store.forget_scans()
        changes = {a.path: (None if a.entry is None else (int(a.entry.mode), a.entry.id))
                   for a in applied.done}
        tree = apply_changes(store.read_tree, store.write_tree, live.tree, changes)
        commit = tl.record_restore(target.task, safety, tree, target)
        unmark(tl)
    return Outcome(plan, safety, commit, tree, tuple(applied.blocked))


def mark(tl: Timeline, target: Target, safety: ObjectId, revert: str | None = None) -> None:
    """Leave the marker of a restore (or of a revert of `revert`) in progress, written
    before the first file changes."""
    marker = RestoreMarker(target.task, target.commit, target.label, safety, revert)
    try:
        data = {**marker.to_dict(), "pid": os.getpid()}
        tl.store.state.write(MARKER, json.dumps(data).encode())
    except OSError as e:
        raise StoreNotWritable(f"Cannot write {tl.store.state_dir / MARKER}: {e.strerror}.",
                               "gitckpt needs write access to its state folder.") from e


def unmark(tl: Timeline) -> None:
    tl.store.state.remove(MARKER)


def undo_calls(marker: RestoreMarker, active: str | None) -> tuple[Call, Call]:
    """(undo, finish) for an interrupted restore or revert, each runnable as printed: it
    applies, it is confirmed (it rewrites what the apply did, which may be more files than
    GITCKPT_CONFIRM_OVER), and it names the task when that is not the active one (an id of
    another task is refused without it). Undo restores the safety copy; finish runs the
    restore (or the revert) again."""
    task = marker.task if marker.task and marker.task != active else None
    undo = call("restore", target=marker.safety[:12], task=task, apply=True, confirm=True)
    if marker.revert:
        finish = call("revert", target=marker.revert, task=task, apply=True, confirm=True)
    else:
        finish = call("restore", target=marker.target[:12], task=task, apply=True,
                      confirm=True)
    return undo, finish


def interrupted(tl: Timeline) -> RestoreMarker | None:
    """The marker of a restore that did not finish, or None. A marker while the store lock
    is held may be a restore in progress; with the lock free, its apply is over."""
    try:
        marker = RestoreMarker.from_dict(json_input.loads(tl.store.state.read(MARKER) or b"null"))
    except (OSError, ValueError, StoreCorrupt):
        return None
    if marker is None or tl.store.lock_held_elsewhere():
        return None
    return marker
