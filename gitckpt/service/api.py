"""The one API every front end calls: each function takes a workspace opened for the call
(service/workspace.py) and a typed request (core/operations.py), acts, and returns a typed
result. Read top to bottom, this is the list of what gitckpt can do. Nothing here prints."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core.errors import InvalidArgument, NeedsConfirmation, NoActiveTask
from gitckpt.core.hints import call
from gitckpt.core.ids import ObjectId
from gitckpt.core.inputs import CommandRun
from gitckpt.core.paths import WorkPath, normalize_paths
from gitckpt.engine.records import DriftResult, Run, SaveResult, TaskInfo
from gitckpt.engine.targets import LIVE, resolve_target
from gitckpt.service.workspace import Workspace

if TYPE_CHECKING:
    from gitckpt.core.operations import (
        AdoptRequest,
        BlameRequest,
        CaptureRequest,
        CompressRequest,
        DiffRequest,
        DoctorRequest,
        ExplainRequest,
        ExportRequest,
        FetchRequest,
        ImportRequest,
        InitRequest,
        LogRequest,
        PushRequest,
        RevertRequest,
        RunRequest,
        ScopeRequest,
        SwitchRequest,
        TasksRequest,
        WatchRequest,
        WhyRequest,
    )
    from gitckpt.core.ops.steps import ResumeRequest, SaveRequest
    from gitckpt.core.ops.undo import RestoreRequest
    from gitckpt.engine.compress import CompressResult
    from gitckpt.engine.contains import ExplainResult
    from gitckpt.engine.doctor import DoctorResult
    from gitckpt.engine.session import WatchSession
    from gitckpt.engine.watch import Settings, Source
    from gitckpt.engine.why import WhyResult
    from gitckpt.service import results
    from gitckpt.transfer.fetch import FetchResult
    from gitckpt.transfer.migrate import MigrateResult
    from gitckpt.transfer.package import ExportResult, ImportResult
    from gitckpt.transfer.push import PushResult

# -- a task's steps -------------------------------------------------------------------------


def init(ws: Workspace, r: InitRequest) -> results.InitResult:
    """Start a task: snapshot 0, make it active (the previous active task is suspended)."""
    from gitckpt.engine import step_input
    from gitckpt.service import results  # (each function imports what it uses, when used)

    tl, before = ws.timeline, ws.timeline.active_id()
    step_input.refuse_a_name_taken(tl.tasks(), r.name, tl.store.workspace)
    task, result = tl.init(step_input.prepare_task(r))
    meta = tl.meta(task)
    suspended = before if before and before != task and tl.store.get_ref(
        f"refs/checkpoints/{before}/head") is not None else None
    return results.InitResult(result, meta.name or r.name, meta.goal or "", tl.store.kind,
                              suspended, str(tl.store.location))


def save(ws: Workspace, r: SaveRequest) -> SaveResult:
    """Save a finished step of the active task (or `r.task`, without changing the active
    one). Decisions, gotchas and open questions accumulate over the task; `answered` closes
    open questions and `drop` retires any of the three, by exact text."""
    from gitckpt.engine import step_input

    return ws.timeline.save(step_input.prepare(r), close=r.close, task=r.task)


def resume(ws: Workspace, r: ResumeRequest) -> results.ResumeResult:
    """The handoff for a new session. Read-only: no lock, no commit, no cache write."""
    from gitckpt.engine import handoff
    from gitckpt.engine import resume as resuming
    from gitckpt.service import results

    facts = resuming.gather(ws.timeline, r.task, r.voice, r.exact)
    text = handoff.full_text(facts, r.voice) if r.format == "full" \
        else handoff.handoff_text(facts, r.voice)
    return results.ResumeResult(facts.info, facts.steps, facts.drifts, facts.unsaved,
                                facts.since_step, facts.git, facts.watch, facts.problems, text,
                                facts.memory, facts.checks, facts.files)


def log(ws: Workspace, r: LogRequest) -> results.LogResult:
    """The timeline of the active task (or `r.task`), oldest first: the newest `limit` steps
    older than step `before` (all by default), or only `step`; with the drifts after each
    unless `steps_only`."""
    from gitckpt.service import results

    tl = ws.timeline
    tid = tl.resolve(r.task)
    info = tl.info(tid)
    newest = info.head.n
    if r.step is not None:
        if r.step > newest:
            raise InvalidArgument(f"Task {tid} has no step {r.step}: its steps are 0 to "
                                  f"{newest}.", "See them with {0}.",
                                  [call("log", task=str(tid))])
        top, low = r.step, r.step
    else:
        top = newest if r.before is None else min(r.before - 1, newest)
        low = 0 if r.limit is None else max(0, top - r.limit + 1)
    steps = [s for s in tl.steps(tid, since=low) if low <= s.n <= top] if top >= 0 else []
    shown = {s.n for s in steps}
    drifts = {} if r.steps_only else {n: tl.drifts(tid, n) for n in tl.drift_steps(tid)
                                      if n in shown}
    return results.LogResult(info, steps, drifts, more=max(0, low), full=r.step is not None)


def tasks(ws: Workspace, r: TasksRequest) -> results.TasksResult:
    """Every task in the workspace's store."""
    from gitckpt.service import results

    return results.TasksResult(ws.timeline.tasks(), ws.timeline.active_id())


def capture(ws: Workspace, r: CaptureRequest) -> DriftResult:
    """Record a drift now if in-scope files differ from the tip; `recorded` says if one was."""
    return ws.timeline.capture("capture", r.task)


def switch(ws: Workspace, r: SwitchRequest) -> TaskInfo:
    """Make a suspended task active again; the active one becomes suspended."""
    return ws.timeline.switch(r.task)


def run(ws: Workspace, r: RunRequest) -> results.RunResult:
    """Run `argv` (its output goes where ours goes) on the workspace as it is now: the files
    are captured first (a `run` drift if they changed), so the outcome is bound to that tree;
    the next save records it. A command that cannot start exits 127, as in a shell."""
    import subprocess

    from gitckpt.core.ops.steps import SaveRequest
    from gitckpt.engine import step_input
    from gitckpt.service import results

    if not r.argv:
        raise InvalidArgument("gitckpt run needs a command.",
                              "For example: gitckpt run -- pytest -q")
    tl = ws.timeline
    tid = tl.resolve(r.task)
    before = tl.capture("run", tid)
    start, failure = time.monotonic(), None
    try:
        code = subprocess.call(list(r.argv), cwd=ws.root)
    except OSError as e:
        failure, code = f"{r.argv[0]}: {e.strerror or e}", 127
    duration = round(time.monotonic() - start, 3)
    ran = CommandRun(shlex.join(r.argv), code, duration_s=duration)
    spec = step_input.prepare(SaveRequest("run", commands=(ran,)))
    c = spec.commands[0]
    recorded = Run(c["command"], code, before.tree, c["note"], c.get("duration_s"))
    with tl.store.lock():
        tl.add_run(tid, recorded)
    return results.RunResult(tid, recorded.command, code, duration, before.tree,
                             before.commit if before.recorded else None, failure)


def watch(ws: Workspace, r: WatchRequest, *,
          on_drift: Callable[[DriftResult], None] | None = None,
          settings: Settings | None = None, source: Source | None = None,
          clock: Callable[[], float] = time.monotonic) -> WatchSession:
    """Start watching the workspace for the active task (or `r.task`); drifts are recorded
    with `trigger: watch` and passed to `on_drift`. The event source has started on return."""
    from gitckpt.engine import session as sessions

    return sessions.start(ws.timeline, r.task, on_drift, settings, source, clock)


def pending(ws: Workspace, *, trigger: str, lock_timeout: float | None = None
            ) -> results.Pending:
    """What is not saved as a step: the workspace is captured first (a `trigger` drift if it
    changed), then the files that differ from the newest step are counted."""
    from gitckpt.service import results

    tl = ws.timeline
    tid = tl.resolve(None)
    drift = tl.capture(trigger, tid, lock_timeout=lock_timeout)
    head = tl.head(tid)
    changed = tl.store.diff_trees(head.tree, drift.tree).paths()
    return results.Pending(tid, head.n, head.note.title, len(changed), drift.commit,
                           drift.recorded)


def watchable(ws: Workspace) -> results.Watchable | None:
    """The workspace a watcher here would serve, or None without an active task."""
    from gitckpt.service import results

    if ws.active() is None:
        return None
    state = ws.store.state
    return results.Watchable(ws.root, state.path, state.open_log)


# -- reading the history --------------------------------------------------------------------


def diff(ws: Workspace, r: DiffRequest) -> results.DiffResult:
    """What changed from `base` to `target` (each a step, commit prefix, ref, or `live`)."""
    from gitckpt.engine import patch as patching
    from gitckpt.service import results

    tl = ws.timeline
    only = _paths(ws, r.paths)

    def side(spec: str) -> tuple[ObjectId, dict[str, Any]]:
        if spec.strip().lower() == LIVE:
            tid = tl.resolve(r.task)
            meta = tl.meta(tid)
            tl.check_workspace(tid, meta)  # the live side is this folder: it must be the task's
            return tl.live(meta).tree, {"label": "live workspace", "commit": None}
        t = resolve_target(tl, spec, r.task)
        tl.check_workspace(t.task, tl.meta(t.task))  # its files are read from there only
        return t.tree, t.to_dict()

    old, old_info = side(r.base)
    new, new_info = side(r.target)
    files, chunks = [], []
    for d, a, b in patching.file_diffs(tl.store.read_tree, tl.store.read_blob, old, new, only):
        files.append(d)
        if r.patch:
            chunks.append(patching.unified(d, a, b))
    return results.DiffResult(old_info, new_info, files, "".join(chunks) if r.patch else None)


def why(ws: Workspace, r: WhyRequest) -> WhyResult:
    """Where each line of `r.path` comes from: PATH, PATH:LINE or PATH:FIRST-LAST (relative
    to the caller's folder), in the active task or `r.task` (another task's: as its newest
    checkpoint holds the file)."""
    return _origins(ws, r.path, r.task, lines=True, limit=r.limit, all_tasks=False)


def blame(ws: Workspace, r: BlameRequest) -> WhyResult:
    """Each line of the file `r.path` with the checkpoint that wrote it; with `all_tasks`,
    its earliest checkpoint in every task of this workspace that holds the file."""
    return _origins(ws, r.path, r.task, lines=False, limit=None, all_tasks=r.all_tasks)


def _origins(ws: Workspace, target: str, task: str | None, *, lines: bool,
             limit: int | None, all_tasks: bool) -> WhyResult:
    """`why` and `blame`: a file snapshots leave out (sensitive, ignored) is refused, its
    lines are not shown."""
    from gitckpt.engine.explain import explain as decide
    from gitckpt.engine.why import across, parse_target
    from gitckpt.engine.why import why as origins

    tl = ws.timeline
    path, first, last = target, None, None
    if lines and not os.path.lexists(os.path.join(ws.cwd, target)):  # a name may hold ':'
        path, first, last = parse_target(target)
    active = tl.active_id()
    mine = [t for t in tl.task_ids() if tl.meta(t).workspace in
            (None, tl.store.workspace, *tl.store.aliases)] if all_tasks else []
    tid = tl.resolve(task) if not mine else (active if active in mine else mine[0])
    [rel] = normalize_paths([path], str(tl.store.root), ws.cwd) or [""]
    if not rel or rel.startswith("../"):
        raise InvalidArgument(f"{path} is not a file inside the workspace.",
                              "Pass a path inside it, e.g. src/app.py:10.")
    meta = tl.meta(tid)
    decision = decide(tl.store, tl.scope(meta), rel)
    if not decision.in_scope and decision.reason not in ("missing",):
        raise InvalidArgument(f"gitckpt does not checkpoint {rel} ({decision.reason}: "
                              f"{decision.rule}); it has no checkpointed lines to explain.",
                              "Ask about a file the task checkpoints; `gitckpt scope PATH` "
                              "says why a path is left out.")
    if mine:
        return across(tl, mine, rel, active=active, limit=limit)
    return origins(tl, tid, rel, first, last, on_disk=task is None or tid == active,
                   limit=limit)


def explain(ws: Workspace, r: ExplainRequest) -> ExplainResult:
    """What commit `r.commit` of the user's holds of the tasks' work, file by file."""
    from gitckpt.engine.contains import explain as stories

    return stories(ws.timeline, r.commit)


# -- putting files back ---------------------------------------------------------------------


def restore(ws: Workspace, r: RestoreRequest) -> results.RestoreResult:
    """Preview (default) or apply a restore of `r.target` (a step number, commit prefix or
    ref), limited to `r.paths`. `expect` is the `plan_id` of a preview: an apply whose plan is
    now another is refused (PlanChanged, carrying the new plan). An apply that deletes or
    rewrites many files needs `confirm`."""
    from gitckpt.engine import patch as patching
    from gitckpt.engine import restore as restoring
    from gitckpt.service import results

    tl = ws.timeline
    only = _paths(ws, r.paths)
    tgt = resolve_target(tl, r.target, r.task)
    _, meta = tl.open_task(tgt.task)  # closed tasks and other workspaces' are refused
    store = tl.store
    if r.apply:
        out = restoring.apply(tl, tgt, only, r.expect, r.confirm)
        plan = out.plan
    else:
        plan = restoring.preview(tl, tgt, meta, only)
    text = None
    if r.patch:
        changed = tuple(a.name for a in plan.actions)
        pairs = patching.file_diffs(store.read_tree, store.read_blob, plan.live_tree,
                                    tgt.tree, changed)
        text = "".join(patching.unified(d, a, b) for d, a, b in pairs) if changed else ""
    where = str(store.root)
    if not r.apply:
        return results.RestoreResult(plan, False, where, patch=text,
                                     needs_confirm=restoring.needs_confirmation(
                                         *restoring.reach(store, plan)))
    safety = out.safety.commit if out.safety is not None else None
    return results.RestoreResult(plan, True, where, safety, out.commit, out.blocked, text)


def revert(ws: Workspace, r: RevertRequest) -> results.RevertResult:
    """Preview (default) or apply the undo of what `r.target` changed (a step, a drift, or
    `A..B`), keeping every change made since (a three-way merge per file). `conflicts`
    settles conflicting files: markers, ours or theirs; an apply refuses them without it."""
    from gitckpt.engine import restore as restoring
    from gitckpt.engine import revert as reverting
    from gitckpt.service import results

    reverting.check_choice(r.conflicts)
    tl = ws.timeline
    only = _paths(ws, r.paths)
    first, last = reverting.span(tl, r.target, r.task)
    tl.open_task(first.task)  # closed tasks and other workspaces' are refused
    where = str(tl.store.root)
    if r.apply:
        out = reverting.apply(tl, first, last, only, r.expect, r.conflicts, r.confirm)
        text = reverting.patch_text(tl, out.plan, first, last, only) if r.patch else None
        safety = out.safety.commit if out.safety is not None else None
        return results.RevertResult(out.plan, True, where, safety, out.commit, out.blocked,
                                    text)
    rp = reverting.preview(tl, first, last, only, r.conflicts)
    text = reverting.patch_text(tl, rp, first, last, only) if r.patch else None
    return results.RevertResult(rp, False, where, patch=text,
                                needs_confirm=restoring.needs_confirmation(
                                    *restoring.reach(tl.store, rp.plan)))


def compress(ws: Workspace, r: CompressRequest) -> CompressResult:
    """Drop drift chains older than `keep` (never a step, never a restore's chain)."""
    from gitckpt.engine import compress as compressing

    tl = ws.timeline
    return compressing.compress(tl, compressing.parse_duration(r.keep), r.min_steps,
                                tl.clock(), r.dry_run)


# -- the store ------------------------------------------------------------------------------


def scope(ws: Workspace, r: ScopeRequest) -> results.ScopeResult:
    """For each path, in or out of snapshots and the rule that decided (the task's excludes
    apply when a task is active or named)."""
    from gitckpt.engine import explain as explaining
    from gitckpt.safety.scope import Scope
    from gitckpt.service import results

    tl = ws.timeline
    only = [q for p in r.paths for q in normalize_paths([p], str(tl.store.root), ws.cwd)
            or ("",)]  # in the order given; "" is the root itself
    try:
        sc = tl.scope(tl.meta(tl.resolve(r.task)))
    except NoActiveTask:
        sc = Scope.load(str(tl.store.root))
    return results.ScopeResult(str(tl.store.root),
                               [explaining.explain(tl.store, sc, p) for p in only])


def adopt(ws: Workspace, r: AdoptRequest) -> results.AdoptResult:
    """Record this folder as the workspace of its own plain-folder store after the folder was
    moved or copied: the store's tasks of the old path become this folder's."""
    from gitckpt.service import results

    store = ws.store
    with store.lock():
        earlier = store.adopt()
    return results.AdoptResult(str(store.root), str(store.location), earlier)


def doctor(ws: Workspace, r: DoctorRequest) -> DoctorResult:
    """Check the store; with `fix`, repair what can be repaired without losing data. (The
    folder's own store is examined even if it records another folder or holds planted
    links: doctor is how those are found and repaired.)"""
    from gitckpt.engine import doctor as checking

    return checking.doctor(ws.timeline, r.fix)


# -- moving a task elsewhere ----------------------------------------------------------------


def push(ws: Workspace, r: PushRequest) -> PushResult:
    """Push the active task (or `task` as the remote's `as_id`, or every task) to a git
    remote (default: the one `config remote` set); a task's first push to a remote needs
    `confirm`."""
    from gitckpt.transfer import push as remote_push

    return remote_push.push(ws.timeline, r.remote, r.task, all_tasks=r.all_tasks,
                            as_id=r.as_id, confirm=r.confirm)


def fetch(ws: Workspace, r: FetchRequest) -> FetchResult:
    """List the tasks a git remote holds, or bring `task` here (its head only forward), as
    `as_id` if given. Like init, a fetch of a task into a plain folder uses its own store."""
    from gitckpt.transfer import fetch as remote_fetch

    return remote_fetch.fetch(ws.timeline, r.remote, r.task, r.as_id)


def export(ws: Workspace, r: ExportRequest) -> ExportResult:
    """Write a handoff package of the active task (or `task`) to the new folder `to`."""
    from gitckpt.transfer import package

    tl = ws.timeline
    tid = tl.resolve(r.task)
    tl.check_workspace(tid, tl.meta(tid))
    to = _file(ws, r.to)
    dest = Path(os.path.realpath(to))
    store = Path(os.path.realpath(tl.store.location))
    if dest == store or store in dest.parents:
        raise InvalidArgument(f"A package cannot be written inside the store ({store}).",
                              "Export to a folder outside it, e.g. next to the workspace.")
    from gitckpt.core.ops.steps import ResumeRequest

    handoff = resume(ws, ResumeRequest(task=str(tid), exact=True)).text
    return package.export(tl, tid, Path(to), handoff)


def import_(ws: Workspace, r: ImportRequest) -> ImportResult | MigrateResult:
    """Import a handoff package (or, with `source`, tasks from the tools gitckpt replaces);
    its task becomes the active task here. `dry_run` only checks it and says what it holds;
    `checkout` then puts its head's files into the workspace, as `restore head --apply` does
    (with a safety copy that undoes it, and `confirm` for one that rewrites many files)."""
    from gitckpt.transfer import package

    pkg = _file(ws, r.package)
    if r.source is not None:
        return _migrate(ws, r.source, pkg)
    if r.dry_run:
        return package.inspect_package(Path(pkg))
    out = package.import_package(ws.timeline, Path(pkg), r.as_id)
    if r.checkout:
        try:
            from gitckpt.core.ops.undo import RestoreRequest

            done = restore(ws, RestoreRequest("head", apply=True, task=str(out.task),
                                              confirm=r.confirm))
        except NeedsConfirmation as e:
            raise NeedsConfirmation(
                f"Task {out.task} was imported; its files were not put here: {e.message}",
                "Put them here with {0}.",
                [call("restore", target="head", task=str(out.task), apply=True,
                      confirm=True)]) from e
        out = replace(out, checkout=done)
    return out


def _migrate(ws: Workspace, source: str, path: str) -> MigrateResult:
    """Tasks from the tools gitckpt replaces (claude-checkpoint: a `.claude-checkpoint` file;
    task-checkpoint: a task-checkpoint-mcp store), all checked before anything is written."""
    from gitckpt.transfer import migrate as migrating

    read = migrating.claude_checkpoint if source == "claude-checkpoint" else \
        migrating.task_checkpoint
    return read(ws.timeline, Path(path))


# -- what a request's paths name ------------------------------------------------------------


def _paths(ws: Workspace, paths: tuple[str, ...]) -> tuple[WorkPath, ...]:
    """A path filter, each path read from the caller's folder."""
    return normalize_paths(paths, str(ws.root), ws.cwd)


def _file(ws: Workspace, path: str) -> str:
    """A path of the caller's file system, read from the caller's folder."""
    return os.path.join(ws.cwd, os.path.expanduser(path))
