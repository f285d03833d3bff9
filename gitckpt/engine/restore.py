"""Restore: plan (a pure function of the target, the live snapshot and a path filter) and apply.

Apply order: the `pre_restore` drift (the safety copy) is committed before the first write, a
marker naming it is left in the store's state folder while files change, then deletions, then
emptied folders, then modes, then new content, then the `restore` commit. A killed apply leaves
the marker, which `resume` and `doctor` report with the id to restore.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitckpt.core import json_input
from gitckpt.core.errors import (
    GitckptError,
    InvalidArgument,
    NeedsConfirmation,
    StoreCorrupt,
    StoreNotWritable,
)
from gitckpt.core.hints import BLANK, CLI, Arg, Call, call
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Change, Mode, TreeEntry, apply_changes
from gitckpt.core.values import Left, RestoreMarker
from gitckpt.engine.records import StepRecord
from gitckpt.engine.restore_plan import Action, Plan, check_obstacles, folders_above, plan_for
from gitckpt.engine.targets import Target
from gitckpt.engine.timeline import Timeline
from gitckpt.engine.workfs import Blocked, Workdir
from gitckpt.store.base import Store

if TYPE_CHECKING:
    from gitckpt.engine.notes import Note

MARKER = RestoreMarker.FILE
# An apply that deletes or rewrites more files than this, or (from CONFIRM_FLOOR on) more than
# half of the in-scope files, runs only when confirmed: a store found for the wrong folder once
# restored all of /tmp.
CONFIRM_OVER = 500
CONFIRM_FLOOR = 20


@dataclass
class Applied:
    """What an apply did: the actions done, and the paths it could not write (with why)."""

    done: list[Action] = field(default_factory=list)
    blocked: list[Left] = field(default_factory=list)


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
    needed = {p for n in needed for p in folders_above(n)}
    emptied: set[bytes] = set()
    for a in sorted((a for a in plan.actions if a.kind == "delete"), key=lambda a: a.path,
                    reverse=True):
        try:
            if moved(a):
                raise Blocked(CHANGED_SINCE)
            wd.remove(a.path)
            out.done.append(a)
            emptied.update(folders_above(a.path.rpartition(b"/")[0]))
        except Blocked as e:
            out.blocked.append(Left(a.name, e.reason))
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
            out.blocked.append(Left(a.name, e.reason))
    return out


@dataclass(frozen=True)
class Outcome:
    """An applied restore: its plan, the safety copy, the restore commit and what failed."""

    plan: Plan
    safety: StepRecord | None  # None: nothing to do, nothing written
    commit: ObjectId | None
    tree: ObjectId
    blocked: tuple[Left, ...]


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

    def to_dict(self, voice: str = CLI) -> dict[str, Any]:
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


def preview(tl: Timeline, target: Target, meta: Note, paths: tuple[str, ...] = ()) -> Plan:
    """The plan an apply would carry out now, computed without writing anything (a read-only
    snapshot, no lock): what `apply` would do, obstacles included."""
    store = tl.store
    scope = tl.scope(meta)
    live = store.snapshot(scope, update_cache=False, exact=not paths, exactly=paths)
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
        # a restore of some paths reads those as they are and takes the rest as a watcher
        # last saw it: the safety copy holds exactly what the restore may overwrite
        live = store.snapshot(scope, exact=not paths, exactly=paths)
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
        changes: dict[bytes, Change] = {
            a.path: (None if a.entry is None else (int(a.entry.mode), a.entry.id))
            for a in applied.done}
        tree = apply_changes(store.read_tree, store.write_tree, live.tree, changes)
        # the target's record: its label and commit are the target's own
        commit = tl.record_restore(target.task, safety, tree, target.record)
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
