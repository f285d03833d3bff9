"""Tasks and their timelines: steps as commits, notes, refs, and the active-task pointer.

Write order for every step is objects, commit, note, `head` (compare-and-swap), `steps/<n>`:
`head` is the commit point. A writer killed after moving `head` leaves `steps/<n>` missing; the
next writer re-creates it from `head` before doing anything else.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gitckpt.core import json_input, limits
from gitckpt.core.errors import (
    CHECK_STORE,
    InvalidArgument,
    NoActiveTask,
    StoreCorrupt,
    StoreNotWritable,
    TaskClosed,
    TaskElsewhere,
    TaskNotFound,
)
from gitckpt.core.ids import ObjectId, TaskId, new_task_id
from gitckpt.core.inputs import ToolCall
from gitckpt.core.values import Changes, Snapshot
from gitckpt.engine import prompts as prompting
from gitckpt.engine.kept import Kept, current, kept
from gitckpt.engine.notes import Note, merge_plan
from gitckpt.engine.records import (
    DriftResult,
    Run,
    SaveResult,
    StepRecord,
    TaskInfo,
    drift_message,
    line,
    parse_time,
    restore_message,
    revert_message,
    rfc3339,
    step_message,
)
from gitckpt.safety.redact import redact
from gitckpt.safety.scope import Scope
from gitckpt.store.base import Store

if TYPE_CHECKING:
    from gitckpt.engine.step_input import StepInput, TaskInput

REF_ROOT = "refs/checkpoints/"
Clock = Callable[[], float]


def head_ref(task: str) -> str:
    return f"{REF_ROOT}{task}/head"


def step_ref(task: str, n: int) -> str:
    return f"{REF_ROOT}{task}/steps/{n}"


def drift_ref(task: str, n: int) -> str:
    return f"{REF_ROOT}{task}/drifts/{n}"


class Timeline:
    """All tasks of one workspace's store."""

    def __init__(self, store: Store, clock: Clock = time.time) -> None:
        self.store = store
        self.clock = clock
        self._kept: Kept | None = None

    # -- reading -------------------------------------------------------------------------------

    def kept(self) -> Kept:
        """What this process keeps of the store's timelines, checked against the notes at
        the call's first read and after each notes write of its own."""
        self._kept = self._kept or kept(self.store)
        return current(self._kept, self.store)

    def record(self, commit: ObjectId) -> StepRecord:
        k = self.kept()
        if (found := k.record(commit)) is not None:
            return found
        c = self.store.read_commit(commit)  # first: a missing commit says so
        text = self.store.read_note(commit)
        if text is None:
            raise StoreCorrupt(f"Timeline commit {commit} has no note", CHECK_STORE)
        record = StepRecord(commit, c.tree, Note.parse(text, commit), c.parents)
        k.keep(record, self.store.notes_head(again=False))
        return record

    def head(self, task: TaskId) -> StepRecord:
        commit = self.store.get_ref(head_ref(task))
        if commit is None:
            raise TaskNotFound(task)
        return self.record(commit)

    def meta(self, task: TaskId) -> Note:
        """The step-0 note, which holds the task's name, goal, constraints and excludes."""
        commit = self.store.get_ref(step_ref(task, 0))
        if commit is None:
            # steps/0 is written right after head at init; fall back to walking.
            return self.steps(task)[0].note
        return self.record(commit).note

    def steps(self, task: TaskId, since: int = 0) -> list[StepRecord]:
        """Every step from `since` on, oldest first, following first parents from `head`."""
        return self.kept().walk(self.head(task), since, self.record)

    def tip(self, task: TaskId, head: StepRecord | None = None) -> StepRecord:
        """The newest commit of the task: the newest drift after the newest step, or that step."""
        head = head or self.head(task)
        commit = self.store.get_ref(drift_ref(task, head.n))
        return head if commit is None else self.record(commit)

    def drifts(self, task: TaskId, n: int) -> list[StepRecord]:
        """The drifts after step `n`, oldest first (the chain of `drifts/<n>` back to step n)."""
        out: list[StepRecord] = []
        commit = self.store.get_ref(drift_ref(task, n))
        while commit is not None:
            record = self.record(commit)
            if record.note.kind in ("init", "step"):
                break
            out.append(record)
            commit = record.parents[0] if record.parents else None
        return out[::-1]

    def drift_steps(self, task: TaskId) -> list[int]:
        """The steps that have drifts after them."""
        prefix = f"{REF_ROOT}{task}/drifts/"
        return sorted(int(n) for n in (name[len(prefix):] for name in
                                       self.store.list_refs(prefix)) if n.isdigit())

    def commits(self, task: TaskId) -> set[ObjectId]:
        """Every commit of the task's timeline (steps and drifts), without reading notes.
        Every parent is followed: a drift chain merged by a fetch keeps the remote's drifts
        as second parents (`remote_fetch.merge_drifts`)."""
        prefix = f"{REF_ROOT}{task}/"
        tips = [commit for name, commit in self.store.list_refs(prefix).items()
                if name[len(prefix):] == "head"
                or name[len(prefix):].startswith(("steps/", "drifts/"))]  # not a card
        from gitckpt.engine import reach  # a history walk's: a drift does without

        return reach.commits(self.store.read_commit, tips)

    def task_ids(self) -> list[TaskId]:
        names = self.store.list_refs(REF_ROOT)
        ids = []
        for name in names:
            rest = name[len(REF_ROOT):]
            if rest.endswith("/head") and rest.count("/") == 1:
                try:
                    ids.append(TaskId(rest[: -len("/head")]))
                except InvalidArgument:
                    continue  # not ours
        return sorted(ids)

    def info(self, task: TaskId, active: TaskId | bool | None = False) -> TaskInfo:
        """`active`: the active task if the caller has read it already."""
        head = self.head(task)
        meta = head.note if head.n == 0 else self.meta(task)
        if active is False:
            active = self.active_id()
        status = "closed" if head.note.closed else "active" if active == task else "suspended"
        return TaskInfo(task, meta, head, status, self.tip(task, head).note.created_at)

    def tasks(self) -> list[TaskInfo]:
        active = self.active_id()
        return [self.info(t, active) for t in self.task_ids()]

    def active_id(self) -> TaskId | None:
        try:
            raw = self.store.state.read("active")
        except (OSError, StoreCorrupt):
            return None  # unreadable, or a symlink planted there: no active task
        text = (raw or b"").decode("utf-8", "replace").strip()
        try:
            return TaskId(text) if text else None
        except InvalidArgument:
            return None

    def resolve(self, task: str | None) -> TaskId:
        """The task named on the command line, else the active one (`""` is no task id)."""
        if task is not None:
            tid = TaskId(task)
            if self.store.get_ref(head_ref(tid)) is None:
                raise TaskNotFound(tid)
            return tid
        active = self.active_id()
        if active is None or self.store.get_ref(head_ref(active)) is None:
            raise NoActiveTask()
        return active

    def check_workspace(self, task: TaskId, meta: Note) -> None:
        if meta.workspace is not None and meta.workspace not in (self.store.workspace,
                                                                 *self.store.aliases):
            there = self.store.workspace_path(meta.workspace)
            raise TaskElsewhere(
                f"Task {task} belongs to the workspace {there}, not to {self.store.root}.",
                f"Run gitckpt in that folder: gitckpt -C {there} ...",
            )

    # -- writing ------------------------------------------------------------------------------

    def set_active(self, task: TaskId) -> None:
        try:
            self.store.state.write("active", f"{task}\n".encode())
        except OSError as e:
            raise StoreNotWritable(f"Cannot write {self.store.state_dir}: {e.strerror}.",
                                   "Check the permissions of the store.") from e

    def _repair(self, task: TaskId, head: StepRecord) -> None:
        """Re-create `steps/<n>` refs a killed writer did not get to (head is the truth)."""
        record = head
        while self.store.get_ref(step_ref(task, record.n)) is None:
            self.store.create_ref(step_ref(task, record.n), record.commit)
            if record.n == 0 or not record.parents:
                break
            record = self.record(record.parents[0])

    def _commit(self, task: TaskId, tree: ObjectId, parent: StepRecord | None, message: str,
                note: Note, now: float) -> ObjectId:
        """Commit, note, head (compare-and-swap), steps/<n>: in that order."""
        parents = [parent.commit] if parent else []
        commit = self.store.write_commit(tree, parents, redact(message)[0], int(now))
        self.store.write_note(commit, note.dump())
        self.store.cas_ref(head_ref(task), commit, parent.commit if parent else None)
        self.store.create_ref(step_ref(task, note.step), commit)
        return commit

    def init(self, spec: TaskInput) -> tuple[TaskId, SaveResult]:
        """Create a task, take snapshot 0, make it active. `spec` is the checked init
        (step_input.prepare_task)."""
        name, goal, constraints, exclude = spec.name, spec.goal, spec.constraints, spec.exclude
        self.store.prepare()
        with self.store.lock():
            task = new_task_id(name)
            while self.store.get_ref(head_ref(task)) is not None:
                task = new_task_id(name)
            snap = self.store.snapshot(Scope.load(str(self.store.root), exclude))
            now = self.clock()
            note = Note(kind="init", task=task, step=0, created_at=rfc3339(now), title=name,
                        plan=merge_plan([], spec.plan), skipped=_skipped(snap),
                        git=_git(self.store), name=name, goal=goal, constraints=constraints,
                        exclude=exclude, workspace=self.store.workspace)
            lines = [f"init: {name}", ""]
            if goal:
                lines += [f"Goal: {line(goal)}", ""]
            message = "\n".join([*lines, f"Task: {task}", ""])
            commit = self._commit(task, snap.tree, None, message, note, now)
            self.set_active(task)
        result = SaveResult(task, 0, commit, snap.tree, False, False, Changes(), snap.skipped,
                            spec.redacted, note.plan, [x.path for x in snap.skipped])
        return task, result

    def create_task(self, meta: Note, steps: list[tuple[ObjectId, Note]], *,
                    activate: bool) -> TaskId:
        """A task made from history kept elsewhere (a migration): step 0 is `meta` (an init
        note) over the first tree, then `steps`, each a tree and its step note; the task ids
        and step numbers are set here. The caller checked everything; this only writes."""
        self.store.prepare()
        with self.store.lock():
            task = new_task_id(meta.name or "imported")
            while self.store.get_ref(head_ref(task)) is not None:
                task = new_task_id(meta.name or "imported")
            first = steps[0][0] if steps else self.store.write_tree([])
            history = [(first, replace(meta, task=task, step=0, kind="init",
                                       workspace=meta.workspace or self.store.workspace))]
            history += [(tree, replace(n, task=task, step=i, kind="step"))
                        for i, (tree, n) in enumerate(steps, 1)]
            parent = None
            for tree, note in history:
                if parent is not None:
                    note = replace(note, changes=self.store.diff_trees(parent.tree, tree)
                                   .to_dict())
                message = (step_message(task, note) if note.kind == "step"
                           else f"init: {line(note.name or '')}\n\nTask: {task}\n")
                stamp = parse_time(note.created_at) or self.clock()
                commit = self._commit(task, tree, parent, message, note, stamp)
                parent = self.record(commit)
            if activate:
                self.set_active(task)
        return task

    def save(self, spec: StepInput, *, close: bool = False, task: str | None = None) -> SaveResult:
        """Record a finished step; identical to the previous step means no new commit.
        `spec` is the checked save (step_input.prepare); its commands ran on this save's
        snapshot. The runs recorded since the last step (`gitckpt run`), each with the tree
        it ran on, join the step's commands."""
        from gitckpt.engine import memory, open_items, search, sessions  # a save's alone

        tid = self.resolve(task)  # before the lock: a store that does not exist stays so
        with self.store.lock():
            head, meta = self.writable(tid)
            pending = self.runs(tid)
            if spec.lists["answered"] or spec.lists["dropped"]:
                memory.check_retired(open_items.current(self, tid, head),
                                     spec.lists["answered"], spec.lists["dropped"])
            snap = self.store.snapshot(self.scope(meta))
            merged = merge_plan(head.note.plan, spec.plan, spec.plan_new)
            # a command ran on this snapshot unless it says otherwise (a migrated one: "")
            commands = [*(r.entry() for r in pending),
                        *({"tree": snap.tree, **c} for c in spec.commands)]
            prev = head.note
            # A retried save changes nothing. Besides title, conclusion, next, verified and
            # the files, every other field must match too, so that no update is dropped.
            same = (not close and prev.kind == "step" and snap.tree == head.tree
                    and merged == prev.plan and not pending
                    and spec.texts() == {k: getattr(prev, k) for k in spec.texts()}
                    and spec.lists == {k: getattr(prev, k) for k in spec.lists}
                    and commands == prev.commands and spec.files == prev.files)
            if same:
                return SaveResult(tid, head.n, head.commit, head.tree, True, False, Changes(),
                                  snap.skipped, spec.redacted, prev.plan)
            now = self.clock()
            changes = self.store.diff_trees(head.tree, snap.tree)
            heard = prompting.pending(self.store, tid)  # the user's prompts since the step
            said = sessions.since(self.store, tid)  # and what the sessions' transcripts say
            lists = spec.lists
            note = Note(kind="step", task=tid, step=head.n + 1, created_at=rfc3339(now),
                        title=spec.title, conclusion=spec.conclusion, next=spec.next,
                        description=spec.description, verified=lists["verified"],
                        open_questions=lists["open_questions"], decisions=lists["decisions"],
                        gotchas=lists["gotchas"], answered=lists["answered"],
                        dropped=lists["dropped"], then=lists["then"], plan=merged, closed=close,
                        commands=commands, files=spec.files, changes=changes.to_dict(),
                        skipped=_skipped(snap), git=_git(self.store), prompts=heard,
                        sessions=sorted({p["session"] for p in heard if p.get("session")}
                                        | {s.session for s in said.segments if s.data}),
                        usage=said.usage, models=said.models)
            commit = self._commit(tid, snap.tree, head, step_message(tid, note), note, now)
            search.saved(self.store, tid, head_ref(tid), commit, note)  # where one exists
            if pending:
                self.store.state.remove(_runs_file(tid))
            if heard:
                prompting.taken_safely(self.store, tid, heard)
            if said.segments and sessions.enabled(self.store):
                sessions.keep(self.store, tid, note.step, said, int(now))
            sessions.advanced(self.store, tid, said)
        before = {str(x.get("path")) for x in prev.skipped if isinstance(x, dict)}
        return SaveResult(tid, note.step, commit, snap.tree, False, close, changes,
                          snap.skipped, spec.redacted, merged,
                          [x.path for x in snap.skipped if x.path not in before])

    def runs(self, tid: TaskId) -> list[Run]:
        """The commands `gitckpt run` recorded since the task's newest step, oldest first; a
        damaged file, or a damaged entry, reads as none."""
        try:
            data = json_input.loads(self.store.state.read(_runs_file(tid)) or b"[]")
        except ValueError:
            return []
        runs = (Run.read(r) for r in data) if isinstance(data, list) else ()
        return [r for r in runs if r is not None]

    def add_run(self, tid: TaskId, run: Run) -> None:
        """Keep a run for the next save (the caller holds the lock)."""
        runs = self.runs(tid)[-(limits.ITEMS - 1):]  # a save takes at most ITEMS commands
        self.store.state.write(_runs_file(tid),
                               json.dumps([r.entry() for r in [*runs, run]]).encode())

    def open_task(self, tid: TaskId) -> tuple[StepRecord, Note]:
        """The head and metadata of a task this workspace may change: not closed, and of
        this workspace (TaskClosed, TaskElsewhere)."""
        head = self.head(tid)
        if head.note.closed:
            raise TaskClosed(tid)
        meta = head.note if head.n == 0 else self.meta(tid)
        self.check_workspace(tid, meta)
        return head, meta

    def writable(self, tid: TaskId) -> tuple[StepRecord, Note]:
        """Under the lock: `open_task`, with step refs a killed writer left missing repaired."""
        head, meta = self.open_task(tid)
        self._repair(tid, head)
        return head, meta

    def switch(self, task: str) -> TaskInfo:
        """Make `task` the active task of this workspace (the current one is suspended)."""
        tid = TaskId(task)
        self.open_task(tid)
        with self.store.lock():
            self.set_active(tid)
        return self.info(tid, tid)

    def scope(self, meta: Note) -> Scope:
        return Scope.load(str(self.store.root), meta.exclude or [])

    def capture(self, trigger: str, task: str | None = None, *, partial: bool = False,
                lock_timeout: float | None = None, tool: ToolCall | None = None,
                exact: bool = False, settled: float | None = None) -> DriftResult:
        """Record a drift if in-scope files differ from the tip; `tool` names the tool call
        that made the change (a host's hook); `exact` as for `Store.snapshot`. With
        `settled` (seconds), a change to a file written less than that long ago is not
        recorded (the result says `recorded` False with the changes): a tool call may be
        writing it, and its hook is the one to attribute it."""
        tid = self.resolve(task)
        with self.store.lock(lock_timeout):
            head, meta = self.writable(tid)
            snap = self.store.snapshot(self.scope(meta), exact=exact)
            if settled is not None:
                tip = self.tip(tid, head)
                changes = self.store.diff_trees(tip.tree, snap.tree)
                if self._written_within(changes, settled):
                    return DriftResult(tid, False, tip.commit, tip.tree, head.n, trigger,
                                       partial, changes, snap.skipped)
            return self.record_drift(tid, head, snap, trigger, partial=partial, tool=tool)

    def _written_within(self, changes: Changes, seconds: float) -> bool:
        """Whether an added or modified file of `changes` was written in the last `seconds`."""
        since = time.time() - seconds
        for path in (*changes.added, *changes.modified):
            try:
                if os.lstat(os.path.join(self.store.root, path)).st_mtime > since:
                    return True
            except OSError:
                continue  # gone since: the next capture sees it
        return False

    def record_drift(self, tid: TaskId, head: StepRecord, snap: Snapshot, trigger: str, *,
                     partial: bool = False, always: bool = False,
                     tool: ToolCall | None = None) -> DriftResult:
        """A drift of `snap` after step `head` if it differs from the tip (`always`: even if
        not). The caller holds the lock and took `snap` under it."""
        tip = self.tip(tid, head)
        changes = self.store.diff_trees(tip.tree, snap.tree)
        if not changes and not always:
            return DriftResult(tid, False, tip.commit, tip.tree, head.n, trigger, partial,
                               changes, snap.skipped)
        # its command as kept: redacted, then cut
        by = tool.to_note(redact(tool.command or "")[0][:limits.COMMAND]) if tool else None
        now = self.clock()
        note = Note(kind="drift", task=tid, step=head.n, created_at=rfc3339(now),
                    trigger=trigger, partial=partial, changes=changes.to_dict(),
                    skipped=_skipped(snap), git=_git(self.store), tool=by)
        commit = self._drift(tid, snap.tree, tip, drift_message(tid, note, changes), note, now)
        return DriftResult(tid, True, commit, snap.tree, head.n, trigger, partial, changes,
                           snap.skipped)

    def record_restore(self, tid: TaskId, safety: StepRecord, tree: ObjectId,
                       target: StepRecord) -> ObjectId:
        """The `restore` commit after an applied restore; the caller holds the lock and has
        recorded `safety` (the pre_restore drift) as the tip."""
        changes = self.store.diff_trees(safety.tree, tree)
        now = self.clock()
        note = Note(kind="restore", task=tid, step=safety.n, created_at=rfc3339(now),
                    title=f"restore: {target.label}", target=target.commit,
                    safety=safety.commit, changes=changes.to_dict(), git=_git(self.store))
        return self._drift(tid, tree, safety,
                           restore_message(tid, target.label, safety.commit, changes), note, now)

    def record_revert(self, tid: TaskId, safety: StepRecord, tree: ObjectId,
                      first: StepRecord, last: StepRecord, choice: str | None,
                      conflicted: list[str]) -> ObjectId:
        """The `revert` drift after an applied revert of first..last; the caller holds the
        lock and has recorded `safety` (the pre_restore drift) as the tip."""
        changes = self.store.diff_trees(safety.tree, tree)
        now = self.clock()
        label = first.label if first.commit == last.commit else f"{first.label}..{last.label}"
        note = Note(kind="drift", task=tid, step=safety.n, created_at=rfc3339(now),
                    title=f"revert: {label}", trigger="revert", target=last.commit,
                    safety=safety.commit, changes=changes.to_dict(), git=_git(self.store),
                    reverted={"first": first.commit, "last": last.commit,
                              "conflicts": choice, "files": conflicted})
        return self._drift(tid, tree, safety,
                           revert_message(tid, label, safety.commit, changes), note, now)

    def _drift(self, tid: TaskId, tree: ObjectId, tip: StepRecord, message: str, note: Note,
               now: float) -> ObjectId:
        """Commit, note, `drifts/<n>` (compare-and-swap from the tip)."""
        commit = self.store.write_commit(tree, [tip.commit], redact(message)[0], int(now))
        self.store.write_note(commit, note.dump())
        old = tip.commit if tip.note.kind not in ("init", "step") else None
        self.store.cas_ref(drift_ref(tid, note.step), commit, old)
        return commit

    def live(self, meta: Note, exact: bool = False) -> Snapshot:
        """A snapshot of the workspace now, without touching the stat cache or taking the lock."""
        return self.store.snapshot(self.scope(meta), update_cache=False, exact=exact)


def _runs_file(tid: TaskId) -> str:
    return f"runs-{tid}.json"


def _skipped(snap: Snapshot) -> list[dict[str, Any]]:
    return [s.to_dict() for s in snap.skipped]


def _git(store: Store) -> dict[str, Any] | None:
    state = store.git_state()
    return state.to_dict() if state else None


