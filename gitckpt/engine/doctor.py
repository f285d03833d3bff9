"""Doctor: check a store and say what is wrong and how to fix it; `fix` repairs what can be
repaired without losing anything (caches rebuilt, missing refs re-created from what exists).

The checks only look: each finding that can be repaired carries its repair, and `doctor`
applies the plan when asked. The checks run in rounds, because a later check reads through
what an earlier repair puts back: planted links first (nothing is read through one), then the
heads of tasks (the chain of steps starts there), then everything else.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from gitckpt.core.errors import GitckptError
from gitckpt.core.hints import CLI
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.shape import HIDDEN, Shaped
from gitckpt.core.switches import watch_enabled
from gitckpt.engine.notes import Note
from gitckpt.engine.reach import reachable
from gitckpt.engine.restore import interrupted, undo_calls
from gitckpt.engine.timeline import REF_ROOT, Timeline, head_ref, step_ref
from gitckpt.store import quarantine
from gitckpt.store.base import STALE_LOCK_SECONDS, Store
from gitckpt.store.packs import repack
from gitckpt.store.state import not_a_file


@dataclass
class Finding(Shaped):
    check: str
    problem: str
    fix: str
    fixed: bool = False
    # what it returns is not used (a removal's "done")
    repair: Callable[[], object] | None = field(default=None, repr=False, compare=False,
                                                metadata=HIDDEN)


@dataclass
class DoctorResult(Shaped):
    store: str
    kind: str
    tasks: int
    checked: list[str]
    findings: list[Finding] = field(default_factory=list)
    watch: str = "on"
    loose: int | None = None  # loose objects in the store's object folder (None: not counted)
    packs: int | None = None
    pack_at: int = repack.AUTO  # loose objects past which a save packs the checkpoints' own
    derived = ("healthy",)

    @property
    def healthy(self) -> bool:
        return all(f.fixed for f in self.findings)


#: How a check reports a finding (to the plan of its round).
Add = Callable[[Finding], None]


def _task_refs(tl: Timeline, damaged: list[str]) -> dict[TaskId, dict[str, ObjectId]]:
    out: dict[TaskId, dict[str, ObjectId]] = {}
    for name, oid in tl.store.list_refs(REF_ROOT, damaged).items():
        task, _, rest = name[len(REF_ROOT):].partition("/")
        try:
            out.setdefault(TaskId(task), {})[rest] = oid
        except GitckptError:
            continue  # not a task of ours
    return out


def _check_links(store: Store, add: Add) -> None:
    """Symlinks inside the folders that are all gitckpt's: gitckpt never makes one there, so
    each was planted (a downloaded store); the repair removes the link itself."""
    for top in store.own_folders():
        found = [top] if os.path.islink(top) else []
        if not found:
            for dirpath, dirnames, filenames in os.walk(top):
                found += [Path(dirpath, n) for n in (*dirnames, *filenames)
                          if os.path.islink(os.path.join(dirpath, n))]
        for link in found:
            add(Finding("links", f"{link} is a symbolic link inside the store (to "
                        f"{os.readlink(link)}); gitckpt never writes through one.",
                        "gitckpt doctor --fix removes the link (not what it points to).",
                        repair=partial(os.unlink, link)))


def _check_lock(store: Store, add: Add) -> None:
    """The store's lock path must be a file (or not exist yet): a folder, a socket or a
    device there fails every write, and a fifo is no lock file on every system. A symlink
    there is the links check's. The repair loses nothing: an empty folder, a fifo, a socket or
    a device node holds no data and is removed (a fifo only while no writer holds it); a
    folder with something in it is moved aside, next to it."""
    path = store.lock_path
    what = not_a_file(path)
    if what is None:
        return
    problem = f"The store's lock {path} is {what}, not a file: " + (
        "a lock on one is not reliable everywhere (POSIX leaves opening a fifo for writing "
        "undefined)." if "fifo" in what else "every save fails.")
    if what != "a folder":
        if store.lock_held_elsewhere():
            add(Finding("locks", f"The store's lock {path} is {what}, not a file, and a "
                        "writer holds it now.",
                        "Run `gitckpt doctor --fix` again once that writer is done."))
            return
        add(Finding("locks", problem, "gitckpt doctor --fix removes it (it holds no data); "
                    "the next write makes a lock file there.",
                    repair=lambda: path.unlink(missing_ok=True)))
        return
    aside = _aside(path)
    try:
        empty = not any(os.scandir(path))
    except OSError:
        empty = False
    if empty:
        add(Finding("locks", problem, "gitckpt doctor --fix removes the empty folder.",
                    repair=lambda: _remove_or_move(path, aside)))
        return
    add(Finding("locks", problem, f"gitckpt doctor --fix moves it aside to {aside} (nothing in "
                f"it is deleted); by hand: mv {shlex.quote(str(path))} "
                f"{shlex.quote(str(aside))}",
                repair=lambda: _remove_or_move(path, aside)))


def _aside(path: Path) -> Path:
    """A free name next to `path` for what stood there."""
    n = 1
    while True:
        aside = path.with_name(f"{path.name}.aside" + (f"-{n}" if n > 1 else ""))
        if not os.path.lexists(aside):
            return aside
        n += 1


def _remove_or_move(path: Path, aside: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # not empty (or no longer): keep what it holds
        os.rename(path, aside)


def doctor(tl: Timeline, fix: bool = False) -> DoctorResult:
    store = tl.store
    result = DoctorResult(str(store.location), store.kind, 0,
                          ["links", "refs", "notes", "steps", "objects", "caches", "search",
                           "restore", "locks", "quarantine"],
                          watch="on" if watch_enabled() else "off")
    counted = repack.loose_count(store)
    if counted is not None:
        result.loose, result.packs = counted
    _run(result, fix, lambda add: _check_links(store, add))
    _run(result, fix, lambda add: _check_lock(store, add))
    if any(not f.fixed for f in result.findings):
        return result  # nothing is read through a planted link; repairs take the lock
    damaged: list[str] = []
    tasks = _task_refs(tl, damaged)
    result.tasks = len(tasks)
    heads = _run(result, fix, lambda add: _check_heads(tl, tasks, add))
    for task, oid in heads.items():
        tasks[task] = {**tasks[task], "head": oid}
    _run(result, fix, lambda add: _check_rest(tl, tasks, damaged, add))
    return result


def _run(result: DoctorResult, fix: bool,
         check: Callable[[Add], dict[TaskId, ObjectId] | None]) -> dict[TaskId, ObjectId]:
    """One round: the check adds its findings (the plan); with `fix`, each repair is applied
    in order. Returns what the check reported back (see _check_heads)."""
    found: list[Finding] = []
    back = check(found.append) or {}
    if fix:
        for f in found:
            if f.repair is not None:
                f.repair()
                f.fixed = True
    result.findings += found
    return back if fix else {}


def _check_heads(tl: Timeline, tasks: dict[TaskId, dict[str, ObjectId]], add: Add
                 ) -> dict[TaskId, ObjectId]:
    """A task without its head ref: the repair re-creates it at the newest step. Returns
    {task: head} for the repairs, so the next round follows the chain from there."""
    back: dict[TaskId, ObjectId] = {}
    for task, refs in sorted(tasks.items()):
        steps = {int(r[6:]): o for r, o in refs.items()
                 if r.startswith("steps/") and r[6:].isdigit()}
        if "head" in refs or not steps:
            continue
        newest = max(steps)

        def repair(task: TaskId = task, oid: ObjectId = steps[newest]) -> None:
            with tl.store.lock():
                tl.store.create_ref(head_ref(task), oid)
        add(Finding("steps", f"Task {task} has no head ref; its newest step is {newest}.",
                    f"gitckpt doctor --fix re-creates {head_ref(task)} at step {newest}.",
                    repair=repair))
        back[task] = steps[newest]
    return back


def _check_rest(tl: Timeline, tasks: dict[TaskId, dict[str, ObjectId]], damaged: list[str],
                add: Add) -> None:
    store = tl.store
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
        _check_steps(tl, task, refs, add, commits, set(damaged))
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
    _check_caches(store, add)
    stuck = interrupted(tl)
    if stuck is not None:
        undo, finish = (c.spell(CLI) for c in undo_calls(stuck, tl.active_id()))
        what = "revert of" if stuck.revert else "restore to"
        add(Finding("restore", f"A {what} {stuck.label} was interrupted; files may be "
                    "half-written.", f"Undo it: {undo} (or finish it: {finish})."))
    for path in store.stale_locks(STALE_LOCK_SECONDS):
        add(Finding("locks", f"A lock file was left behind: {path}.",
                    "gitckpt doctor --fix removes it (no writer holds it).",
                    repair=partial(path.unlink, missing_ok=True)))
    for path in quarantine.stale(store.objects_folder):
        add(Finding("quarantine", f"A fetch that was killed left its unchecked objects in "
                    f"{path}.", "gitckpt doctor --fix removes the folder (nothing names its "
                    "objects; the next fetch removes it too).",
                    repair=partial(quarantine.remove, path)))


def _check_steps(tl: Timeline, task: TaskId, refs: dict[str, ObjectId], add: Add,
                 commits: set[ObjectId], damaged: set[str]) -> None:
    store = tl.store
    steps = {int(r[6:]): o for r, o in refs.items() if r.startswith("steps/") and r[6:].isdigit()}
    if "head" not in refs:
        if steps:  # without a head there is no chain to follow: name the gaps in steps/
            for n in sorted(set(range(max(steps) + 1)) - set(steps)):
                add(Finding("steps", f"{step_ref(task, n)} is missing.",
                            "gitckpt doctor --fix re-creates head, then this ref."))
        return
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
            add(Finding("steps", f"{step_ref(task, record.n)} is missing (a save was cut off).",
                        "gitckpt doctor --fix (or the next save) re-creates it.",
                        repair=_create(store, step_ref(task, record.n), record.commit)))
        elif steps[record.n] != record.commit:
            add(Finding("steps", f"{step_ref(task, record.n)} is not the step the head "
                        "chain holds.", "Compare them with git log; refs/ are never moved."))


def _create(store: Store, ref: str, oid: ObjectId) -> Callable[[], None]:
    def repair() -> None:
        with store.lock():
            store.create_ref(ref, oid)
    return repair


def _check_notes(tl: Timeline, commits: set[ObjectId], add: Add) -> None:
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


def _check_objects(store: Store, commits: set[ObjectId], add: Add) -> None:
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


def _check_caches(store: Store, add: Add) -> None:
    from gitckpt.engine import search

    problem = search.check(store)
    if problem is not None:
        add(Finding("search", f"The search index {search.path(store)} is unusable ({problem}).",
                    "gitckpt doctor --fix deletes it; the next search builds it from the notes.",
                    repair=lambda: search.remove(store)))
    found = store.cache_problem()
    if found is not None:
        cache, problem = found
        add(Finding("caches", f"The stat cache {cache} is unusable ({problem}).",
                    "gitckpt doctor --fix deletes it; the next save reads every file again.",
                    repair=lambda: cache.unlink(missing_ok=True)))
