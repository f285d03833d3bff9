"""Tasks and their timelines: steps as commits, notes, refs, and the active-task pointer.

Write order for every step is objects, commit, note, `head` (compare-and-swap), `steps/<n>`:
`head` is the commit point. A writer killed after moving `head` leaves `steps/<n>` missing; the
next writer re-creates it from `head` before doing anything else.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gitckpt.errors import (CHECK_STORE, InvalidArgument, NoActiveTask, StoreCorrupt,
                            StoreNotWritable, TaskClosed, TaskElsewhere, TaskNotFound)
from gitckpt.ids import ObjectId, TaskId, new_task_id
from gitckpt.notes import Note, PlanItem, merge_plan
from gitckpt.redact import clean, redact
from gitckpt.scope import Scope, compile_patterns
from gitckpt.store.base import Changes, Snapshot, Store

REF_ROOT = "refs/checkpoints/"
Clock = Callable[[], float]


def head_ref(task: str) -> str:
    return f"{REF_ROOT}{task}/head"


def step_ref(task: str, n: int) -> str:
    return f"{REF_ROOT}{task}/steps/{n}"


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class StepRecord:
    """One step of a timeline: its commit, tree and note."""

    commit: ObjectId
    tree: ObjectId
    note: Note

    @property
    def n(self) -> int:
        return self.note.step

    def to_dict(self) -> dict:
        n = self.note
        return {"step": n.step, "commit": self.commit, "kind": n.kind, "title": n.title,
                "conclusion": n.conclusion, "next": n.next, "created_at": n.created_at,
                "verified": n.verified, "open_questions": n.open_questions,
                "decisions": n.decisions, "closed": n.closed, "changes": n.changes}


@dataclass(frozen=True)
class TaskInfo:
    """A task as listed: metadata from its step-0 note, state from its head."""

    id: TaskId
    meta: Note
    head: StepRecord
    status: str  # active | suspended | closed

    def to_dict(self) -> dict:
        return {"task": self.id, "name": self.meta.name, "goal": self.meta.goal,
                "status": self.status, "steps": self.head.n, "head": self.head.commit,
                "last_activity": self.head.note.created_at, "workspace": self.meta.workspace}


@dataclass(frozen=True)
class SaveResult:
    task: TaskId
    step: int
    commit: ObjectId
    tree: ObjectId
    idempotent: bool
    closed: bool
    changes: Changes
    skipped: list[dict]
    redacted: int
    plan: list[PlanItem] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"task": self.task, "step": self.step, "commit": self.commit, "tree": self.tree,
                "idempotent": self.idempotent, "closed": self.closed,
                "changes": self.changes.to_dict(), "skipped": self.skipped,
                "redacted": self.redacted, "plan": [vars(p) for p in self.plan]}


class Timeline:
    """All tasks of one workspace's store."""

    def __init__(self, store: Store, clock: Clock = time.time) -> None:
        self.store = store
        self.clock = clock

    # -- reading -------------------------------------------------------------------------------

    def record(self, commit: ObjectId) -> StepRecord:
        tree = self.store.read_commit(commit).tree  # first: a missing commit says so
        text = self.store.read_note(commit)
        if text is None:
            raise StoreCorrupt(f"Timeline commit {commit} has no note",
                               CHECK_STORE)
        return StepRecord(commit, tree, Note.parse(text, commit))

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

    def steps(self, task: TaskId) -> list[StepRecord]:
        """Every step, oldest first, following first parents from `head`."""
        out = [self.head(task)]
        while out[-1].n > 0:
            parents = self.store.read_commit(out[-1].commit).parents
            if not parents:
                raise StoreCorrupt(f"Step {out[-1].n} of {task} has no parent",
                                   CHECK_STORE)
            out.append(self.record(parents[0]))
        return out[::-1]

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

    def info(self, task: TaskId, active: TaskId | None | bool = False) -> TaskInfo:
        """`active`: the active task if the caller has read it already."""
        head = self.head(task)
        meta = head.note if head.n == 0 else self.meta(task)
        if active is False:
            active = self.active_id()
        status = "closed" if head.note.closed else "active" if active == task else "suspended"
        return TaskInfo(task, meta, head, status)

    def tasks(self) -> list[TaskInfo]:
        active = self.active_id()
        return [self.info(t, active) for t in self.task_ids()]

    def active_id(self) -> TaskId | None:
        try:
            text = (self.store.state_dir / "active").read_text().strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return TaskId(text) if text else None
        except InvalidArgument:
            return None

    def resolve(self, task: str | None) -> TaskId:
        """The task named on the command line, else the active one."""
        if task:
            tid = TaskId(task)
            if self.store.get_ref(head_ref(tid)) is None:
                raise TaskNotFound(tid)
            return tid
        active = self.active_id()
        if active is None or self.store.get_ref(head_ref(active)) is None:
            raise NoActiveTask()
        return active

    def check_workspace(self, task: TaskId, meta: Note) -> None:
        if meta.workspace is not None and meta.workspace != self.store.workspace:
            raise TaskElsewhere(
                f"Task {task} belongs to workspace {meta.workspace or '(repository root)'!r} "
                f"of this store, not to {self.store.workspace or '(repository root)'!r}.",
                "Run gitckpt from that folder (gitckpt -C DIR ...).",
            )

    # -- writing ------------------------------------------------------------------------------

    def _set_active(self, task: TaskId) -> None:
        state = self.store.state_dir
        try:
            state.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = state / f"active.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(task + "\n")
            os.replace(tmp, state / "active")
        except OSError as e:
            raise StoreNotWritable(f"Cannot write {state}: {e.strerror}.",
                                   "Check the permissions of the store.") from e

    def _repair(self, task: TaskId, head: StepRecord) -> None:
        """Re-create `steps/<n>` refs a killed writer did not get to (head is the truth)."""
        record = head
        while self.store.get_ref(step_ref(task, record.n)) is None:
            self.store.create_ref(step_ref(task, record.n), record.commit)
            parents = self.store.read_commit(record.commit).parents
            if record.n == 0 or not parents:
                break
            record = self.record(parents[0])

    def _commit(self, task: TaskId, tree: ObjectId, parent: StepRecord | None, message: str,
                note: Note, now: float) -> ObjectId:
        """Commit, note, head (compare-and-swap), steps/<n>: in that order."""
        parents = [parent.commit] if parent else []
        commit = self.store.write_commit(tree, parents, message, int(now))
        self.store.write_note(commit, note.dump())
        self.store.cas_ref(head_ref(task), commit, parent.commit if parent else None)
        self.store.create_ref(step_ref(task, note.step), commit)
        return commit

    def init(self, name: str, goal: str = "", constraints: str = "",
             exclude: list[str] | None = None, plan: list[PlanItem] | None = None,
             ) -> tuple[TaskId, SaveResult]:
        """Create a task, take snapshot 0, make it active."""
        exclude = list(exclude or [])
        compile_patterns(exclude, "--exclude")
        name, n1 = redact(clean(name, one_line=True))
        goal, n2 = redact(clean(goal))
        constraints, n3 = redact(clean(constraints))
        if not name:
            raise InvalidArgument("The task name is empty.", 'Use gitckpt init "NAME".')
        self.store.prepare()
        with self.store.lock():
            task = new_task_id(name)
            while self.store.get_ref(head_ref(task)) is not None:
                task = new_task_id(name)
            snap = self.store.snapshot(Scope.load(str(self.store.root), exclude))
            now = self.clock()
            note = Note(kind="init", task=task, step=0, created_at=rfc3339(now), title=name,
                        plan=merge_plan([], plan or []), skipped=_skipped(snap),
                        git=_git(self.store), name=name, goal=goal, constraints=constraints,
                        exclude=exclude, workspace=self.store.workspace)
            lines = [f"init: {name}", ""]
            if goal:
                lines += [f"Goal: {_line(goal)}", ""]
            message = "\n".join([*lines, f"Task: {task}", ""])
            commit = self._commit(task, snap.tree, None, message, note, now)
            self._set_active(task)
        result = SaveResult(task, 0, commit, snap.tree, False, False, Changes(), note.skipped,
                            n1 + n2 + n3, note.plan)
        return task, result

    def save(self, title: str, *, conclusion: str = "", next: str = "", description: str = "",
             verified: list[str] | None = None, open_questions: list[str] | None = None,
             decisions: list[str] | None = None, plan: list[PlanItem] | None = None,
             close: bool = False, task: str | None = None) -> SaveResult:
        """Record a finished step; identical to the previous step means no new commit."""
        texts = {"title": clean(title, one_line=True), "conclusion": clean(conclusion),
                 "next": clean(next), "description": clean(description)}
        lists = {"verified": verified or [], "open_questions": open_questions or [],
                 "decisions": decisions or []}
        if not texts["title"]:
            raise InvalidArgument("The step title is empty.", 'Use gitckpt save "TITLE".')
        redacted = 0
        for key, value in texts.items():
            texts[key], n = redact(value)
            redacted += n
        for key, items in lists.items():
            kept = []
            for item in filter(None, map(clean, items)):
                text, n = redact(item)
                kept.append(text)
                redacted += n
            lists[key] = kept
        tid = self.resolve(task)  # before the lock: a store that does not exist stays so
        with self.store.lock():
            head = self.head(tid)
            if head.note.closed:
                raise TaskClosed(tid)
            meta = head.note if head.n == 0 else self.meta(tid)
            self.check_workspace(tid, meta)
            self._repair(tid, head)
            snap = self.store.snapshot(Scope.load(str(self.store.root), meta.exclude or []))
            merged = merge_plan(head.note.plan, plan or [])
            prev = head.note
            # A retried save changes nothing. Besides title, conclusion, next, verified and
            # the files, every other field must match too, so that no update is dropped.
            same = (not close and prev.kind == "step" and snap.tree == head.tree
                    and merged == prev.plan
                    and texts == {k: getattr(prev, k) for k in texts}
                    and lists == {k: getattr(prev, k) for k in lists})
            if same:
                return SaveResult(tid, head.n, head.commit, head.tree, True, False, Changes(),
                                  _skipped(snap), redacted, prev.plan)
            now = self.clock()
            changes = self.store.diff_trees(head.tree, snap.tree)
            note = Note(kind="step", task=tid, step=head.n + 1, created_at=rfc3339(now),
                        **texts, **lists, plan=merged, closed=close,
                        changes=changes.to_dict(), skipped=_skipped(snap), git=_git(self.store))
            commit = self._commit(tid, snap.tree, head, _step_message(tid, note), note, now)
        return SaveResult(tid, note.step, commit, snap.tree, False, close, changes,
                          note.skipped, redacted, merged)

    def live(self, meta: Note) -> Snapshot:
        """A snapshot of the workspace now, without touching the stat cache or taking the lock."""
        return self.store.snapshot(Scope.load(str(self.store.root), meta.exclude or []),
                                   update_cache=False)


def _skipped(snap: Snapshot) -> list[dict]:
    return [s.to_dict() for s in snap.skipped]


def _git(store: Store) -> dict | None:
    state = store.git_state()
    return state.to_dict() if state else None


def _line(text: str) -> str:
    """One line of a commit message: free text cannot forge a `Task:` line."""
    return clean(text, one_line=True)


def _step_message(task: TaskId, note: Note) -> str:
    lines = [f"step {note.step}: {_line(note.title)}", ""]
    body = [f"Conclusion: {_line(note.conclusion)}" if note.conclusion else "",
            f"Next: {_line(note.next)}" if note.next else ""]
    body += [f"Verified: {_line(v)}" for v in note.verified]
    body = [b for b in body if b]
    if body:
        lines += [*body, ""]
    if note.closed:
        lines += ["Closed: the task is finished.", ""]
    lines.append(f"Task: {task}")
    return "\n".join(lines) + "\n"

