"""Doctor: check a store and say what is wrong and how to fix it; `fix` repairs what can be
repaired without losing anything (caches rebuilt, missing refs re-created from what exists).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from gitckpt.errors import GitckptError
from gitckpt.ids import ObjectId, TaskId
from gitckpt.notes import Note
from gitckpt.reach import reachable
from gitckpt.restore import interrupted
from gitckpt.store.base import STALE_LOCK_SECONDS
from gitckpt.timeline import REF_ROOT, Timeline, head_ref, step_ref
from gitckpt.watch import watch_enabled


@dataclass
class Finding:
    check: str
    problem: str
    fix: str
    fixed: bool = False

    def to_dict(self) -> dict:
        return {"check": self.check, "problem": self.problem, "fix": self.fix,
                "fixed": self.fixed}


@dataclass
class DoctorResult:
    store: str
    kind: str
    tasks: int
    checked: list[str]
    findings: list[Finding] = field(default_factory=list)
    watch: str = "on"

    @property
    def healthy(self) -> bool:
        return all(f.fixed for f in self.findings)

    def to_dict(self) -> dict:
        return {"store": self.store, "kind": self.kind, "tasks": self.tasks,
                "checked": self.checked, "healthy": self.healthy, "watch": self.watch,
                "findings": [f.to_dict() for f in self.findings]}


def _task_refs(tl: Timeline, damaged: list[str]) -> dict[TaskId, dict[str, ObjectId]]:
    out: dict[TaskId, dict[str, ObjectId]] = {}
    for name, oid in tl.store.list_refs(REF_ROOT, damaged).items():
        task, _, rest = name[len(REF_ROOT):].partition("/")
        try:
            out.setdefault(TaskId(task), {})[rest] = oid
        except GitckptError:
            continue  # not a task of ours
    return out


def _check_links(store, fix: bool, add) -> None:
    """Symlinks inside the folders that are all gitckpt's: gitckpt never makes one there, so
    each was planted (a downloaded store) and `fix` removes the link itself."""
    for top in store.own_folders():
        found = [top] if os.path.islink(top) else []
        if not found:
            for dirpath, dirnames, filenames in os.walk(top):
                found += [Path(dirpath, n) for n in (*dirnames, *filenames)
                          if os.path.islink(os.path.join(dirpath, n))]
        for link in found:
            f = Finding("links", f"{link} is a symbolic link inside the store (to "
                        f"{os.readlink(link)}); gitckpt never writes through one.",
                        "gitckpt doctor --fix removes the link (not what it points to).")
            if fix:
                os.unlink(link)
                f.fixed = True
            add(f)


def doctor(tl: Timeline, fix: bool = False) -> DoctorResult:
    store = tl.store
    result = DoctorResult(str(store.location), store.kind, 0,
                          ["links", "refs", "notes", "steps", "objects", "caches", "restore",
                           "locks"],
                          watch="on" if watch_enabled() else "off")
    add = result.findings.append
    _check_links(store, fix, add)
    if any(not f.fixed for f in result.findings):
        return result  # nothing else is read through a planted link
    damaged: list[str] = []
    tasks = _task_refs(tl, damaged)
    result.tasks = len(tasks)
    for name in damaged:
        if "/steps/" in name:
            continue  # reported with the commit that belongs there, below
        add(Finding("refs", f"The ref {name} cannot be read (damaged).",
                    "Look at it with git; if its step is known, write that commit id into it. "
                    "Steps are never rewritten, so the id is in `git log` of the task."))
    commits: set[ObjectId] = set()
    for task, refs in sorted(tasks.items()):
        for rest, oid in sorted(refs.items()):
            try:
                store.read_commit(oid)
            except GitckptError:
                add(Finding("refs", f"{REF_ROOT}{task}/{rest} points at {oid[:12]}, which is "
                            "missing or not a commit.",
                            "Restore the repository's objects from a backup; `git fsck` "
                            "lists what is missing."))
        _check_steps(tl, task, refs, fix, add, commits, set(damaged))
        try:
            commits.update(tl.commits(task))
        except GitckptError:
            pass  # a ref to a missing commit: reported above
        for n in tl.drift_steps(task):
            try:
                commits.update(d.commit for d in tl.drifts(task, n))
            except GitckptError as e:
                add(Finding("notes", f"The drifts after step {n} of {task}: {e.message}",
                            e.hint))
    _check_notes(tl, commits, add)
    _check_objects(store, commits, add)
    _check_caches(store, fix, add)
    stuck = interrupted(tl)
    if stuck is not None:
        add(Finding("restore", f"A restore to {stuck['label']} was interrupted; files may be "
                    "half-restored.",
                    f"Undo it: gitckpt restore {stuck['safety'][:12]} --apply (or finish it: "
                    f"gitckpt restore {str(stuck['target'])[:12]} --apply)."))
    _check_locks(store, fix, add)
    return result


def _check_steps(tl: Timeline, task: TaskId, refs: dict[str, ObjectId], fix: bool, add,
                 commits: set[ObjectId], damaged: set[str]) -> None:
    store = tl.store
    steps = {int(r[6:]): o for r, o in refs.items() if r.startswith("steps/") and r[6:].isdigit()}
    if "head" not in refs:
        if not steps:
            return
        newest = max(steps)
        f = Finding("steps", f"Task {task} has no head ref; its newest step is {newest}.",
                    f"gitckpt doctor --fix re-creates {head_ref(task)} at step {newest}.")
        add(f)
        if not fix:  # without a head there is no chain to follow: name the gaps in steps/
            for n in sorted(set(range(newest + 1)) - set(steps)):
                add(Finding("steps", f"{step_ref(task, n)} is missing.",
                            "gitckpt doctor --fix re-creates head, then this ref."))
            return
        with store.lock():
            store.create_ref(head_ref(task), steps[newest])
        f.fixed = True
        refs = {**refs, "head": steps[newest]}
    try:
        chain = tl.steps(task)
    except GitckptError as e:
        add(Finding("steps", f"The steps of {task} cannot be read: {e.message}", e.hint))
        return
    for expected, record in enumerate(chain):
        commits.add(record.commit)
        if record.n != expected:
            add(Finding("steps", f"Task {task} numbers its steps with a gap: step "
                        f"{record.n} where {expected} was expected.",
                        "Export the task and inspect it with git; steps are never rewritten."))
            return
        if steps.get(record.n) is None and step_ref(task, record.n) in damaged:
            add(Finding("refs", f"{step_ref(task, record.n)} is damaged; it should name step "
                        f"{record.n}, commit {record.commit}.",
                        f"Remove the damaged file {store.location / step_ref(task, record.n)}, "
                        "then `gitckpt doctor --fix` re-creates the ref."))
        elif steps.get(record.n) is None:
            f = Finding("steps", f"{step_ref(task, record.n)} is missing (a save was cut off).",
                        "gitckpt doctor --fix (or the next save) re-creates it.")
            if fix:
                with store.lock():
                    store.create_ref(step_ref(task, record.n), record.commit)
                f.fixed = True
            add(f)
        elif steps[record.n] != record.commit:
            add(Finding("steps", f"{step_ref(task, record.n)} is not the step the head "
                        "chain holds.", "Compare them with git log; refs/ are never moved."))


def _check_notes(tl: Timeline, commits: set[ObjectId], add) -> None:
    try:
        tl.store.read_note(next(iter(commits))) if commits else None
    except GitckptError as e:
        add(Finding("notes", f"refs/notes/checkpoints cannot be read: {e.message}",
                    "Look at it with `git log refs/notes/checkpoints`; a handoff package "
                    "(gitckpt import) or a backup holds the notes too."))
        return
    for oid in sorted(commits):
        try:
            text = tl.store.read_note(oid)
            if text is None:
                add(Finding("notes", f"Timeline commit {oid[:12]} has no note.",
                            "Its step can still be restored by id; its meaning is lost."))
            else:
                Note.parse(text, oid)
        except GitckptError as e:
            add(Finding("notes", e.message, e.hint))


def _check_objects(store, commits: set[ObjectId], add) -> None:
    """Every tree and blob the timeline commits reach exists."""
    missing: list[ObjectId] = []
    try:
        reachable(store.read_object, sorted(commits),
                  blob_exists=lambda oid: store.object_problem(oid) is None,
                  missing=missing.append)
    except GitckptError as e:
        add(Finding("objects", e.message, e.hint))
    if missing:
        add(Finding("objects", f"{len(missing)} objects the timeline needs are missing or "
                    f"damaged (first: {missing[0][:12]}).",
                    "Steps that need them cannot be restored; recover them from a backup "
                    "or a handoff package (gitckpt import)."))


def _check_caches(store, fix: bool, add) -> None:
    found = store.cache_problem()
    if found is not None:
        cache, problem = found
        f = Finding("caches", f"The stat cache {cache} is unusable ({problem}).",
                    "gitckpt doctor --fix deletes it; the next save reads every file again.")
        if fix:
            cache.unlink(missing_ok=True)
            f.fixed = True
        add(f)


def _check_locks(store, fix: bool, add) -> None:
    now = time.time()
    refs_dir = getattr(store, "common_dir", getattr(store, "path", None))
    if refs_dir is None:
        return
    for folder, _, files in os.walk(refs_dir / "refs" / "checkpoints"):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".lock") and now - os.path.getmtime(path) > STALE_LOCK_SECONDS:
                f = Finding("locks", f"A lock file was left behind: {path}.",
                            "gitckpt doctor --fix removes it (no writer holds it).")
                if fix:
                    os.unlink(path)
                    f.fixed = True
                add(f)
