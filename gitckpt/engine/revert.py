"""Revert: undo what one step or drift (or a run of them) changed and keep every change made
since, by libgit2's three-way merge per file, previewed like a restore and applied through
restore's safe writes, after the same safety copy.

The change to undo is tree(first's parent) -> tree(last). It is merged onto the live
in-scope workspace with base = tree(last), ours = the live workspace, theirs = tree(first's
parent), renames found as git finds them. The merged tree becomes the target of a restore
plan, so everything restore refuses to touch (left-out files, nested repositories, the
store) a revert leaves alone too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gitckpt.core.errors import GitckptError, InvalidArgument
from gitckpt.core.hints import Arg, call
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Change, Mode, apply_changes, in_filter
from gitckpt.core.shape import HIDDEN, MERGED, Shaped
from gitckpt.core.values import Left, Snapshot
from gitckpt.engine.records import StepRecord
from gitckpt.engine.restore import check_plan_id, check_reach, mark, unmark, write_plan
from gitckpt.engine.restore_plan import ACTIONS, Plan, check_obstacles, lefts, plan_for
from gitckpt.engine.targets import Target, resolve_target
from gitckpt.engine.timeline import Timeline
from gitckpt.engine.workfs import Workdir
from gitckpt.store.base import Store

if TYPE_CHECKING:
    from gitckpt.safety.scope import Scope

CHOICES = ("markers", "ours", "theirs")


@dataclass(frozen=True)
class Conflict(Shaped):
    """A file whose change to undo overlaps a change made since."""

    path: str
    binary: bool
    why: str = "content"  # content | binary | modify/delete | rename | file/folder


@dataclass(frozen=True)
class RevertPlan(Shaped):
    """What undoing first..last does to the workspace now. It answers as its restore plan
    does, with `target` the first change undone, a conflicted path listed only among
    `conflicts`, and `counts` of `conflict` and `already` too."""

    first: Target = field(metadata=HIDDEN)
    last: Target
    # tree of first's parent: what the change started from
    before: ObjectId = field(metadata=HIDDEN)
    after: ObjectId = field(metadata=HIDDEN)   # tree of last: what the change made
    # the restore plan from the live workspace to the merged tree
    plan: Plan = field(metadata=MERGED)
    conflicts: tuple[Conflict, ...]
    already: tuple[str, ...]  # paths whose change the workspace already lacks
    choice: str | None
    derived = ("plan_id", "target", "label", "create", "modify", "delete", "mode", "counts")

    @property
    def id(self) -> str:
        h = hashlib.sha256(f"revert\0{self.first.commit}\0{self.last.commit}\0{self.choice}\0"
                           f"{self.plan.id}\0".encode())
        for c in self.conflicts:
            h.update(f"{c.path}\0".encode("utf-8", "surrogateescape"))
        return h.hexdigest()[:16]

    @property
    def label(self) -> str:
        if self.first.commit == self.last.commit:
            return self.first.label
        return f"{self.first.label}..{self.last.label}"

    @property
    def plan_id(self) -> str:
        return self.id

    @property
    def target(self) -> Target:
        return self.first

    def _clean(self, kind: str) -> list[str]:
        conflicted = {c.path for c in self.conflicts}  # a conflict is listed as one only
        return [p for p in self.plan.names(kind) if p not in conflicted]

    @property
    def create(self) -> list[str]:
        return self._clean("create")

    @property
    def modify(self) -> list[str]:
        return self._clean("modify")

    @property
    def delete(self) -> list[str]:
        return self._clean("delete")

    @property
    def mode(self) -> list[str]:
        return self._clean("mode")

    @property
    def counts(self) -> dict[str, int]:
        return {**self.plan.counts, **{k: len(self._clean(k)) for k in ACTIONS},
                "conflict": len(self.conflicts), "already": len(self.already)}


class Conflicts(GitckptError):
    """An apply of a revert some of whose files conflict, with no choice for them."""

    code = "conflicts"


def span(tl: Timeline, spec: str, task: str | None) -> tuple[Target, Target]:
    """The first and last commit `spec` names: one target, or `A..B` (consecutive steps, or
    drifts of one chain), B descending from A by first parents."""
    a, sep, b = spec.partition("..")
    first = resolve_target(tl, a, task)
    last = resolve_target(tl, b, task or first.task) if sep else first
    if last.task != first.task:
        raise InvalidArgument(f"{a} and {b} belong to different tasks.",
                              "Revert a range of one task.")
    record, walked = last.record, 0
    while record.commit != first.commit:
        if not record.parents or record.note.kind == "init" or walked > 100_000:
            raise InvalidArgument(f"{first.label} does not come before {last.label} on one "
                                  "line of the timeline.",
                                  "Name the older first: A..B, both steps or both drifts of "
                                  "one chain.")
        record, walked = tl.record(record.parents[0]), walked + 1
    if first.record.note.kind == "init" or not first.record.parents:
        raise InvalidArgument("Step 0 is the task's starting point: it changed nothing to undo.",
                              "Revert a later step, or restore step 0 instead: {0}.",
                              [call("restore", target="0")])
    return first, last


def compute(tl: Timeline, first: Target, last: Target, live: Snapshot, scope: Scope,
            paths: tuple[str, ...], choice: str | None) -> RevertPlan:
    """The revert plan; pure but for the objects it writes (merged files and trees)."""
    store = tl.store
    before = tl.record(first.record.parents[0]).tree
    after = last.tree
    # With a paths filter, no rename detection: a rename split by the filter would delete
    # one side and never write the other; without it, that file is a modify/delete conflict.
    merge = store.merge_trees(after, live.tree, before, renames=not paths)
    only = tuple(p.encode("utf-8", "surrogateescape") for p in paths)
    left_out = {s.path for s in live.skipped}
    ignored = store.ignore_check()
    conflicts: list[Conflict] = []
    untouchable: list[tuple[str, str]] = []
    resolved: list[tuple[str, tuple[int, ObjectId] | None]] = []
    for c in merge.conflicts:
        path, ours, theirs, anc = c.path, c.ours, c.theirs, c.ancestor
        keep = (ours.mode, ours.id) if ours is not None else None
        if not in_filter(path.encode("utf-8", "surrogateescape"), only):
            resolved.append((path, keep))  # outside the revert: the workspace as it is
            continue
        why = (scope.excluded(path) or ("ignored" if ignored(path) else None)
               or ("left out now" if _under(path, left_out) else None))
        if why is not None:
            untouchable.append((path, f"left out now ({why})"))
            resolved.append((path, keep))
            continue
        kind = merge.kind(c)
        marked = merge.marked(c, "workspace", f"before {first.label}") \
            if kind == "content" else None
        if kind == "content" and marked is None:
            kind = "binary"  # not UTF-8: never merged
        conflicts.append(Conflict(path, kind == "binary", kind))
        if choice == "markers" and marked is not None and ours is not None \
                and theirs is not None:
            blob = merge.blob(marked)
            # the mode merges on its own, as git merges it: the step's change of it undone
            # unless the workspace changed it since
            mode = theirs.mode if anc is not None and ours.mode == anc.mode else ours.mode
            resolved.append((path, (mode, blob)))
        elif choice == "theirs":
            resolved.append((path, (theirs.mode, theirs.id) if theirs is not None else None))
        else:
            # ours, no choice yet (an apply refuses), or markers for a conflict that has no
            # text to mark (binary, modify/delete, rename, file/folder): the workspace's file
            # stays, as git revert leaves it, and nothing made since is lost
            resolved.append((path, keep))
    merged = merge.settle(resolved)
    record = StepRecord(last.commit, merged, replace(last.record.note, skipped=[]),
                        last.record.parents)
    plan = plan_for(store, Target(last.task, record), live, scope, paths)
    acted = {a.name for a in plan.actions}
    conflicted = {c.path for c in conflicts}
    undo = store.diff_trees(after, before).paths()
    already = tuple(p for p in undo if p not in acted and p not in conflicted
                    and in_filter(p.encode("utf-8", "surrogateescape"), only)
                    and _entry(store, live.tree, p) == _entry(store, before, p))
    if untouchable:
        plan = replace(plan, unrestorable=lefts([*plan.unrestorable, *untouchable]))
    return RevertPlan(first, last, before, after, plan, tuple(conflicts), already, choice)


def _under(path: str, roots: set[str]) -> bool:
    while path:
        if path in roots:
            return True
        path = path.rpartition("/")[0]
    return False


def _entry(store: Store, tree: ObjectId, path: str) -> tuple[int, str] | None:
    for part in path.split("/")[:-1]:
        found = next((e for e in store.read_tree(tree) if e.name == part.encode(
            "utf-8", "surrogateescape") and e.mode == Mode.TREE), None)
        if found is None:
            return None
        tree = found.id
    name = path.rpartition("/")[2].encode("utf-8", "surrogateescape")
    e = next((e for e in store.read_tree(tree) if e.name == name), None)
    return (int(e.mode), e.id) if e is not None else None


def preview(tl: Timeline, first: Target, last: Target, paths: tuple[str, ...],
            choice: str | None) -> RevertPlan:
    store = tl.store
    _, meta = tl.open_task(first.task)
    scope = tl.scope(meta)
    live = store.snapshot(scope, update_cache=False, exact=True)
    rp = compute(tl, first, last, live, scope, paths, choice)
    with Workdir(str(store.root)) as wd:
        return replace(rp, plan=check_obstacles(rp.plan, wd))


@dataclass(frozen=True)
class RevertOutcome:
    plan: RevertPlan
    safety: StepRecord | None
    commit: ObjectId | None
    blocked: tuple[Left, ...]


def apply(tl: Timeline, first: Target, last: Target, paths: tuple[str, ...] = (),
          expect: str | None = None, choice: str | None = None, confirmed: bool = False
          ) -> RevertOutcome:
    """Snapshot, merge, take the safety copy, write, and record the revert, under the lock.
    A refused apply (a closed task, a changed plan, conflicts without a choice, a reach not
    confirmed) has written nothing: no object, no stat cache, no ref, no note."""
    if expect is not None:
        check_plan_id(expect)
    check_choice(choice)
    store = tl.store
    with store.lock():
        head, meta = tl.writable(first.task)
        scope = tl.scope(meta)
        with Workdir(str(store.root)) as wd:
            # Up to the last refusal nothing is written, no object and no stat cache: the
            # snapshot's and the merge's objects are held, and published once it goes ahead.
            with store.staging() as publish:
                live = store.snapshot(scope, exact=True)
                rp = compute(tl, first, last, live, scope, paths, choice)
                rp = replace(rp, plan=check_obstacles(rp.plan, wd))
                _refuse(rp, expect, choice)
                plan = rp.plan
                if not plan.actions:
                    return RevertOutcome(rp, None, None, ())
                check_reach(store, plan, confirmed, "revert")
                publish()
            drift = tl.record_drift(first.task, head, live, "pre_restore", always=True)
            safety = tl.record(drift.commit)
            # a killed revert is reported with its safety copy (undo) and its own command
            # (finish: the merged tree is no commit a restore could finish with)
            spec = first.commit[:12] if first.commit == last.commit else \
                f"{first.commit[:12]}..{last.commit[:12]}"
            mark(tl, first, safety.commit, spec)
            applied = write_plan(plan, wd, store.checkout_blob, store.blob_of)
            store.forget_scans()
        changes: dict[bytes, Change] = {
            a.path: (None if a.entry is None else (int(a.entry.mode), a.entry.id))
            for a in applied.done}
        tree = apply_changes(store.read_tree, store.write_tree, live.tree, changes)
        commit = tl.record_revert(first.task, safety, tree, rp.first.record, rp.last.record,
                                  choice, [c.path for c in rp.conflicts])
        unmark(tl)
    return RevertOutcome(rp, safety, commit, tuple(applied.blocked))


def _refuse(rp: RevertPlan, expect: str | None, choice: str | None) -> None:
    """RevertChanged or Conflicts when the apply of `rp` must not go ahead."""
    if expect is not None and rp.id != expect:
        raise RevertChanged(rp, expect)
    if rp.conflicts and choice is None:
        raise Conflicts(
            f"Reverting {rp.label} conflicts in {len(rp.conflicts)} file(s): "
            f"{', '.join(c.path for c in rp.conflicts[:10])}; nothing was changed.",
            "Choose for them: {0} (git-style markers), {1} (leave them as they are) "
            "or {2} (take the version from before the change).",
            [Arg("conflicts", "markers"), Arg("conflicts", "ours"), Arg("conflicts", "theirs")])


class RevertChanged(GitckptError):
    """The revert an apply would carry out is not the one its caller approved."""

    code = "plan_changed"

    def __init__(self, rp: RevertPlan, expected: str) -> None:
        super().__init__(
            f"The workspace changed since the preview: reverting {rp.label} now means "
            f"{rp.plan.summary()} (plan {rp.id}, not {expected}); nothing was changed.",
            "Read the new plan; apply it with {0}.",
            [call("revert", target=rp.first.commit[:12] if rp.first == rp.last else
                  f"{rp.first.commit[:12]}..{rp.last.commit[:12]}", apply=True, expect=rp.id,
                  paths=list(rp.plan.paths) or None)])
        self.plan = rp


def check_choice(choice: str | None) -> str | None:
    if choice is not None and choice not in CHOICES:
        raise InvalidArgument(f"{choice!r} is not a way to settle conflicts.",
                              f"Choose one of {', '.join(CHOICES)}: {{0}}.",
                              [Arg("conflicts", "markers")])
    return choice


def patch_text(tl: Timeline, rp: RevertPlan, first: Target, last: Target,
               paths: tuple[str, ...]) -> str:
    """The preview as a unified diff of the workspace now to the workspace reverted, with
    conflicting files shown as git shows them: their hunks between conflict markers."""
    from gitckpt.engine import patch as patching

    store = tl.store
    if rp.conflicts and rp.choice is None:
        _, meta = tl.open_task(first.task)
        scope = tl.scope(meta)
        live = store.snapshot(scope, update_cache=False, exact=True)
        rp = compute(tl, first, last, live, scope, paths, "markers")
    target = rp.plan.target.tree
    changed = tuple(a.name for a in rp.plan.actions)
    pairs = patching.file_diffs(store.read_tree, store.read_blob, rp.plan.live_tree, target,
                                changed)
    return "".join(patching.unified(d, a, b) for d, a, b in pairs) if changed else ""
