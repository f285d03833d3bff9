"""What a user names as a restore or diff target: a step number, head or tip, a commit id
prefix, or a ref."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gitckpt.core.errors import InvalidArgument, NoActiveTask, TaskNotFound
from gitckpt.core.hints import Arg, call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.engine.records import StepRecord
from gitckpt.engine.timeline import REF_ROOT, Timeline, step_ref

LIVE = "live"
HEAD, TIP = "head", "tip"  # the newest step; the newest commit (its drift, if any)
_HEX = re.compile(r"[0-9a-f]{4,40}")
_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also takes "²"
_SHAPES = ("a step number (2), head (the newest step), tip (the newest drift or step), a "
           "commit id prefix of 4+ hex digits (1a2b3c4), or a ref "
           "(refs/checkpoints/TASK/steps/2)")


@dataclass(frozen=True)
class Target:
    """One timeline commit, and the task it belongs to."""

    task: TaskId
    record: StepRecord

    @property
    def commit(self) -> ObjectId:
        return self.record.commit

    @property
    def tree(self) -> ObjectId:
        return self.record.tree

    @property
    def label(self) -> str:
        return self.record.label

    def to_dict(self) -> dict[str, Any]:
        n = self.record.note
        return {"task": self.task, "commit": self.commit, "label": self.label, "kind": n.kind,
                "step": n.step, "title": n.title, "created_at": n.created_at}


def resolve_target(tl: Timeline, spec: str, task: str | None = None) -> Target:
    """The commit `spec` names. A step number counts in `task` (default: the active task); a
    commit of another task than `task` (or the active one) is refused unless `task` names it."""
    spec = spec.strip()
    tid: TaskId | None  # None: no task to count a step number in
    if spec in (HEAD, TIP):
        tid = tl.resolve(task)
        head = tl.head(tid)
        return Target(tid, head if spec == HEAD else tl.tip(tid, head))
    if spec.startswith("refs/"):
        return _from_ref(tl, spec, task)
    if _DIGITS.fullmatch(spec) and (spec == "0" or spec[0] != "0") and len(spec) < 10:
        # a step number is written as one: `0042` or forty zeros are commit id prefixes
        n = int(spec)
        try:
            tid = tl.resolve(task)
        except NoActiveTask:
            if len(spec) < 4:
                raise
            tid = None  # no task to count steps in: a commit id prefix, maybe
        if tid is not None:
            head = tl.head(tid)
            if n <= head.n:
                commit = tl.store.get_ref(step_ref(tid, n))
                return Target(tid, tl.record(commit) if commit else tl.steps(tid)[n])
            if len(spec) < 4:
                raise InvalidArgument(
                    f"Task {tid} has no step {n}: its steps are 0 to {head.n}.",
                    "See them with {0}.", [call("log", task=str(tid))])
    if _HEX.fullmatch(spec.lower()):
        return _from_prefix(tl, spec.lower(), task)
    raise InvalidArgument(f"{spec!r} names no step or commit.", f"Use {_SHAPES}.")


def _from_ref(tl: Timeline, ref: str, task: str | None) -> Target:
    parts = ref[len(REF_ROOT):].split("/") if ref.startswith(REF_ROOT) else []
    if len(parts) < 2 or ".." in parts:
        raise InvalidArgument(f"{ref!r} is not a checkpoint ref.",
                              "Checkpoint refs look like refs/checkpoints/TASK/steps/2.")
    tid = TaskId(parts[0])
    if task is not None and TaskId(task) != tid:
        raise InvalidArgument(f"{ref} belongs to task {tid}, not to {task}.",
                              "Pass {0}, or leave task out.", [Arg("task", str(tid))])
    commit = tl.store.get_ref(ref)
    if commit is None:
        if tl.store.get_ref(f"{REF_ROOT}{tid}/head") is None:
            raise TaskNotFound(tid)
        raise InvalidArgument(f"No ref {ref}.", "See the task's steps with {0}.",
                              [call("log", task=str(tid))])
    return Target(tid, tl.record(commit))


def _from_prefix(tl: Timeline, prefix: str, task: str | None) -> Target:
    own: TaskId | None
    if task is not None:
        own = tl.resolve(task)
        order = [own]
    else:
        active = tl.active_id()
        own = active
        order = [t for t in tl.task_ids() if t == active] + [
            t for t in tl.task_ids() if t != active]
    found: dict[ObjectId, TaskId] = {}
    for tid in order:
        for commit in tl.commits(tid):
            if commit.startswith(prefix):
                found.setdefault(commit, tid)
    if not found:
        where = f"task {own}" if task is not None else "any task of this store"
        raise InvalidArgument(f"No commit {prefix} in {where}.",
                              "See the commits with {0}.", [call("log")])
    if len(found) > 1:
        listed = ", ".join(f"{c[:12]} ({t})" for c, t in sorted(found.items()))
        raise InvalidArgument(f"Commit prefix {prefix} is ambiguous: {listed}.",
                              "Give more digits.")
    commit, tid = next(iter(found.items()))
    if own is not None and tid != own:
        raise InvalidArgument(f"{commit[:12]} belongs to task {tid}, not to the active task "
                              f"{own}.", f"Pass --task {tid} to use it.")
    return Target(tid, tl.record(commit))
