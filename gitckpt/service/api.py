"""The one API both front ends call: each function opens the workspace, acts, returns a result.

Results are the dataclasses of results.py, each with `to_dict()`; the CLI's `--json` output
and the MCP tools' structured content are that dict. Nothing here prints.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from gitckpt.core.errors import GitckptError, InvalidArgument, NeedsConfirmation, NoActiveTask
from gitckpt.core.hints import call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.lazy import lazy
from gitckpt.core.paths import normalize_paths
from gitckpt.engine.notes import PlanItem
from gitckpt.engine.records import DriftResult, Run, SaveResult, TaskInfo
from gitckpt.engine.targets import LIVE, resolve_target
from gitckpt.engine.timeline import Clock
from gitckpt.service.workspace import one_call, open_timeline  # noqa: F401 (the API)
from gitckpt.store.discover import open_store

if TYPE_CHECKING:
    from gitckpt.engine import handoff
    from gitckpt.engine.compress import CompressResult
    from gitckpt.engine.contains import ExplainResult
    from gitckpt.engine.doctor import DoctorResult
    from gitckpt.engine.session import WatchSession
    from gitckpt.engine.watch import Settings, Source
    from gitckpt.engine.why import WhyResult
    from gitckpt.service import results
    from gitckpt.transfer.migrate import MigrateResult
    from gitckpt.transfer.package import ExportResult, ImportResult
else:  # a hook's drift (capture) builds no result of results.py and no handoff text
    handoff = lazy("gitckpt.engine.handoff")
    results = lazy("gitckpt.service.results")

# Each command pays only for what it runs (a CLI should start like a git command).
step_input = lazy("gitckpt.engine.step_input")  # a save's; a hook's drift does without
compressing = lazy("gitckpt.engine.compress")
checking = lazy("gitckpt.engine.doctor")
explaining = lazy("gitckpt.engine.explain")
package = lazy("gitckpt.transfer.package")
patching = lazy("gitckpt.engine.patch")
restoring = lazy("gitckpt.engine.restore")
resuming = lazy("gitckpt.engine.resume")
sessions = lazy("gitckpt.engine.session")

#: Parts of the API that live in their own modules, imported when first named (PEP 562).
_ELSEWHERE = {"search": "gitckpt.service.search", "report": "gitckpt.service.search",
              "remote_setting": "gitckpt.service.settings",
              "set_remote": "gitckpt.service.settings",
              "transcripts": "gitckpt.service.settings"}


def __getattr__(name: str):
    if name in _ELSEWHERE:
        import importlib

        value = getattr(importlib.import_module(_ELSEWHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def init(root: str | Path, name: str, *, goal: str = "", constraints: str = "",
         exclude: list[str] | None = None, plan: list[PlanItem] | None = None,
         store: str | None = None, clock: Clock = time.time) -> results.InitResult:
    """Start a task: snapshot 0, make it active (the previous active task is suspended).

    `store` puts a plain folder's checkpoints in that folder (with a pointer file here)."""
    tl = open_timeline(root, clock, store, discover=False, ancestors=False)
    before = tl.active_id()
    task, result = tl.init(name, goal, constraints, exclude, list(plan or ()))
    meta = tl.meta(task)
    suspended = before if before and before != task and tl.store.get_ref(
        f"refs/checkpoints/{before}/head") is not None else None
    return results.InitResult(result, meta.name or name, meta.goal or "", tl.store.kind, suspended)


def save(root: str | Path, title: str, *, conclusion: str = "", next: str | list[str] = "",
         description: str = "", verified: list | None = None,
         open_questions: list[str] | None = None, decisions: list[str] | None = None,
         gotchas: list[str] | None = None, answered: list[str] | None = None,
         drop: list[str] | None = None, commands: list[dict] | None = None,
         files: list[dict] | None = None, plan: list[PlanItem] | None = None,
         close: bool = False, task: str | None = None, plan_new: list[str] | None = None,
         clock: Clock = time.time) -> SaveResult:
    """Save a finished step of the active task (or `task`, without changing the active one).

    Decisions, gotchas and open questions accumulate over the task; `answered` closes open
    questions and `drop` retires any of the three, by exact text. `commands` ran on the
    workspace as saved ({command, exit_code, note?, duration_s?}); `files` say why a path
    matters ({path, note}); `next` may be a list of ordered next actions."""
    tl = open_timeline(root, clock)
    spec = step_input.prepare(title, conclusion=conclusion, next=next, description=description,
                              verified=verified, open_questions=open_questions,
                              decisions=decisions, gotchas=gotchas, answered=answered,
                              dropped=drop, plan=list(plan or ()), plan_new=set(plan_new or ()),
                              commands=commands, files=files)
    return tl.save(spec, close=close, task=task)


def resume(root: str | Path, *, task: str | None = None, voice: str = "cli",
           full: bool = False, exact: bool = False) -> results.ResumeResult:
    """The handoff for a new session. Read-only: no lock, no commit, no cache write. `voice`
    says whether the text names next actions as commands (`cli`) or tool calls (`mcp`);
    `full` gives every step and the whole memory instead of one screen."""
    facts = resuming.gather(open_timeline(root), task, voice, exact)
    text = handoff.full_text(facts, voice) if full else handoff.handoff_text(facts, voice)
    return results.ResumeResult(facts.info, facts.steps, facts.drifts, facts.unsaved,
                                facts.since_step, facts.git, facts.watch, facts.problems, text,
                                facts.memory, facts.checks, facts.files)


def log(root: str | Path, *, task: str | None = None, steps_only: bool = False,
        limit: int | None = None, before: int | None = None,
        step: int | None = None) -> results.LogResult:
    """The timeline of the active task (or `task`), oldest first: the newest `limit` steps
    older than step `before` (all by default), or only `step`; with the drifts after each
    unless `steps_only`."""
    for name, value in (("limit", limit), ("before", before), ("step", step)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < (0 if name == "step" else 1)):
            raise InvalidArgument(f"{name} must be a whole number of at least "
                                  f"{0 if name == 'step' else 1}, not {value!r}.",
                                  "For example {0}.", [call("log", **{name: 10 if name == "limit"
                                                                       else 3})])
    tl = open_timeline(root)
    tid = tl.resolve(task)
    info = tl.info(tid)
    newest = info.head.n
    if step is not None:
        if step > newest:
            raise InvalidArgument(f"Task {tid} has no step {step}: its steps are 0 to {newest}.",
                                  "See them with {0}.", [call("log", task=str(tid))])
        top, low = step, step
    else:
        top = newest if before is None else min(before - 1, newest)
        low = 0 if limit is None else max(0, top - limit + 1)
    steps = [s for s in tl.steps(tid, since=low) if low <= s.n <= top] if top >= 0 else []
    shown = {s.n for s in steps}
    drifts = {} if steps_only else {n: tl.drifts(tid, n) for n in tl.drift_steps(tid)
                                    if n in shown}
    return results.LogResult(info, steps, drifts, more=max(0, low), full=step is not None)


def tasks(root: str | Path) -> results.TasksResult:
    """Every task in the workspace's store."""
    tl = open_timeline(root)
    return results.TasksResult(tl.tasks(), tl.active_id())



def restore(root: str | Path, target: str, *, apply: bool = False,
            paths: list[str] | tuple[str, ...] = (), task: str | None = None,
            patch: bool = False, expect: str | None = None, cwd: str | None = None,
            confirm: bool = False) -> results.RestoreResult:
    """Preview (default) or apply a restore of `target` (step number, commit prefix or ref).

    `paths` limits it to these paths (relative to `cwd` if given, else to the root).
    `expect` is the `plan_id` of a preview: an apply whose plan is now another is refused
    (PlanChanged, carrying the new plan). An apply that deletes or rewrites many files (see
    `restoring.needs_confirmation`) needs `confirm`."""
    tl = open_timeline(root)
    only = normalize_paths(paths, str(tl.store.root), cwd)
    tgt = resolve_target(tl, target, task)
    _, meta = tl.open_task(tgt.task)  # closed tasks and other workspaces' are refused
    store = tl.store
    if apply:
        out = restoring.apply(tl, tgt, only, expect, confirm)
        plan = out.plan
    else:
        plan = restoring.preview(tl, tgt, meta, only)
    text = None
    if patch:
        changed = tuple(a.name for a in plan.actions)
        pairs = patching.file_diffs(store.read_tree, store.read_blob, plan.live_tree,
                                    tgt.tree, changed)
        text = "".join(patching.unified(d, a, b) for d, a, b in pairs) if changed else ""
    where = str(store.root)
    if not apply:
        return results.RestoreResult(plan, False, where, patch=text,
                                     needs_confirm=restoring.needs_confirmation(
                                         *restoring.reach(store, plan)))
    safety = out.safety.commit if out.safety is not None else None
    return results.RestoreResult(plan, True, where, safety, out.commit, out.blocked, text)


def revert(root: str | Path, target: str, *, apply: bool = False,
           paths: list[str] | tuple[str, ...] = (), task: str | None = None,
           patch: bool = False, expect: str | None = None, conflicts: str | None = None,
           cwd: str | None = None, confirm: bool = False) -> results.RevertResult:
    """Preview (default) or apply the undo of what `target` changed (a step, a drift, or
    `A..B`), keeping every change made since (a three-way merge per file). `conflicts`
    settles conflicting files: markers, ours or theirs; an apply refuses them without it.
    `expect` and `confirm` work as for `restore`."""
    from gitckpt.engine import revert as reverting

    reverting.check_choice(conflicts)
    tl = open_timeline(root)
    only = normalize_paths(paths, str(tl.store.root), cwd)
    first, last = reverting.span(tl, target, task)
    tl.open_task(first.task)  # closed tasks and other workspaces' are refused
    where = str(tl.store.root)
    if apply:
        out = reverting.apply(tl, first, last, only, expect, conflicts, confirm)
        text = reverting.patch_text(tl, out.plan, first, last, only) if patch else None
        safety = out.safety.commit if out.safety is not None else None
        return results.RevertResult(out.plan, True, where, safety, out.commit, out.blocked, text)
    rp = reverting.preview(tl, first, last, only, conflicts)
    text = reverting.patch_text(tl, rp, first, last, only) if patch else None
    return results.RevertResult(rp, False, where, patch=text,
                                needs_confirm=restoring.needs_confirmation(
                                    *restoring.reach(tl.store, rp.plan)))


def diff(root: str | Path, base: str, target: str = LIVE, *,
         paths: list[str] | tuple[str, ...] = (), patch: bool = False,
         task: str | None = None, cwd: str | None = None) -> results.DiffResult:
    """What changed from `base` to `target` (each a step, commit prefix, ref, or `live`)."""
    tl = open_timeline(root)
    only = normalize_paths(paths, str(tl.store.root), cwd)

    def side(spec: str) -> tuple[ObjectId, dict]:
        if spec.strip().lower() == LIVE:
            tid = tl.resolve(task)
            meta = tl.meta(tid)
            tl.check_workspace(tid, meta)  # the live side is this folder: it must be the task's
            return tl.live(meta).tree, {"label": "live workspace", "commit": None}
        t = resolve_target(tl, spec, task)
        tl.check_workspace(t.task, tl.meta(t.task))  # its files are read from there only
        return t.tree, t.to_dict()

    old, old_info = side(base)
    new, new_info = side(target)
    files, chunks = [], []
    for d, a, b in patching.file_diffs(tl.store.read_tree, tl.store.read_blob, old, new, only):
        files.append(d)
        if patch:
            chunks.append(patching.unified(d, a, b))
    return results.DiffResult(old_info, new_info, files, "".join(chunks) if patch else None)


def why(root: str | Path, target: str, *, task: str | None = None, cwd: str | None = None,
        lines: bool = True, limit: int | None = None, all_tasks: bool = False) -> WhyResult:
    """Where each line of `target` comes from: PATH, PATH:LINE or PATH:FIRST-LAST (a
    workspace path, or one relative to `cwd`; `lines` False: a PATH only), in the active
    task or `task` (another task's: as its newest checkpoint holds the file), or with
    `all_tasks` in every task of this workspace that holds it (the file on disk). A file
    snapshots leave out (sensitive, ignored) is refused: its lines are not shown."""
    from gitckpt.engine.explain import explain as decide
    from gitckpt.engine.why import parse_target
    from gitckpt.engine.why import why as origins

    tl = open_timeline(root)
    base = os.path.realpath(cwd) if cwd is not None else str(tl.store.root)
    path, first, last = target, None, None
    if lines and not os.path.lexists(os.path.join(base, target)):  # a name may hold ':'
        path, first, last = parse_target(target)
    active = tl.active_id()
    mine = [t for t in tl.task_ids() if tl.meta(t).workspace in
            (None, tl.store.workspace, *tl.store.aliases)] if all_tasks else []
    tid = tl.resolve(task) if not mine else (active if active in mine else mine[0])
    [rel] = normalize_paths([path], str(tl.store.root), cwd) or [""]
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
        from gitckpt.engine.why import across

        return across(tl, mine, rel, active=active, limit=limit)
    return origins(tl, tid, rel, first, last, on_disk=task is None or tid == active,
                   limit=limit)


def explain(root: str | Path, rev: str = "HEAD") -> ExplainResult:
    """What commit `rev` of the user's holds of the tasks' work, file by file, by content."""
    from gitckpt.engine.contains import explain as stories

    return stories(open_timeline(root), rev)


def capture(root: str | Path, *, task: str | None = None, trigger: str = "capture",
            lock_timeout: float | None = None, clock: Clock = time.time,
            tool: dict | None = None) -> DriftResult:
    """Record a drift now if in-scope files differ from the tip; `recorded` says if one was.
    `tool` names the host's tool call that made the change (a hook's drift)."""
    return open_timeline(root, clock).capture(trigger, task, lock_timeout=lock_timeout,
                                              tool=tool)


def active(root: str | Path) -> TaskId | None:
    """The task a command at `root` would act on, or None: read-only, and nothing is created
    in a folder without a store (a host's hook asks this first, in any folder)."""
    try:
        return open_timeline(root).active_id()
    except GitckptError:
        return None


def pending(root: str | Path, *, trigger: str,
            lock_timeout: float | None = None) -> results.Pending:
    """What is not saved as a step: the workspace is captured first (a `trigger` drift if it
    changed), then the files that differ from the newest step are counted."""
    tl = open_timeline(root)
    tid = tl.resolve(None)
    drift = tl.capture(trigger, tid, lock_timeout=lock_timeout)
    head = tl.head(tid)
    changed = tl.store.diff_trees(head.tree, drift.tree).paths()
    return results.Pending(tid, head.n, head.note.title, len(changed), drift.commit, drift.recorded)


def watchable(root: str | Path) -> results.Watchable | None:
    """The workspace a watcher for `root` would serve, or None without an active task."""
    try:
        tl = open_timeline(root)
        tl.resolve(None)
    except GitckptError:
        return None
    state = tl.store.state
    return results.Watchable(tl.store.root, state.path, state.open_log)


def run(root: str | Path, argv: list[str], *, task: str | None = None,
        cwd: str | None = None) -> results.RunResult:
    """Run `argv` (its output goes where ours goes) on the workspace as it is now: the files
    are captured first (a `run` drift if they changed), so the outcome is bound to that tree;
    the next save records it. A command that cannot start exits 127, as in a shell."""
    import shlex
    import subprocess

    if not argv:
        raise InvalidArgument("gitckpt run needs a command.",
                              "For example: gitckpt run -- pytest -q")
    tl = open_timeline(root)
    tid = tl.resolve(task)
    before = tl.capture("run", tid)
    start = time.monotonic()
    failure = None
    try:
        code = subprocess.call(argv, cwd=cwd or str(tl.store.root))
    except OSError as e:
        failure, code = f"{argv[0]}: {e.strerror or e}", 127
    duration = round(time.monotonic() - start, 3)
    spec = step_input.prepare("run", commands=[{"command": shlex.join(argv), "exit_code": code,
                                                "duration_s": duration}])
    c = spec.commands[0]
    ran = Run(c["command"], code, before.tree, c["note"], c.get("duration_s"))
    with tl.store.lock():
        tl.add_run(tid, ran)
    return results.RunResult(tid, ran.command, code, duration, before.tree,
                             before.commit if before.recorded else None, failure)


def watch(root: str | Path, *, task: str | None = None,
          on_drift: Callable[[DriftResult], None] | None = None,
          settings: Settings | None = None, source: Source | None = None,
          clock: Callable[[], float] = time.monotonic) -> WatchSession:
    """Start watching the workspace for the active task (or `task`); drifts are recorded with
    `trigger: watch` and passed to `on_drift`. The event source has started on return."""
    return sessions.start(open_timeline(root), task, on_drift, settings, source, clock)


def scope(root: str | Path, paths: list[str] | tuple[str, ...], *, task: str | None = None,
          cwd: str | None = None) -> results.ScopeResult:
    """For each path, in or out of snapshots and the rule that decided (the task's excludes
    apply when a task is active or named)."""
    from gitckpt.safety.scope import Scope

    tl = open_timeline(root)
    only = [q for p in paths for q in normalize_paths([p], str(tl.store.root), cwd)
            or ("",)]  # in the order given; "" is the root itself
    try:
        sc = tl.scope(tl.meta(tl.resolve(task)))
    except NoActiveTask:
        sc = Scope.load(str(tl.store.root))
    return results.ScopeResult(str(tl.store.root),
                               [explaining.explain(tl.store, sc, p) for p in only])


def adopt(root: str | Path) -> results.AdoptResult:
    """Record this folder as the workspace of its own plain-folder store after the folder was
    moved or copied: the store's tasks of the old path become this folder's."""
    store = open_store(root, ancestors_too=False, adopt=True)
    with store.lock():
        earlier = store.adopt()
    return results.AdoptResult(str(store.root), str(store.location), earlier)


def switch(root: str | Path, task: str) -> TaskInfo:
    """Make a suspended task active again; the active one becomes suspended."""
    return open_timeline(root, discover=False).switch(task)


def push(root: str | Path, remote: str | None = None, *, task: str | None = None,
         all_tasks: bool = False, as_id: str | None = None, confirm: bool = False):
    """Push the active task (or `task` as the remote's `as_id`, or every task) to a git
    remote (default: the one set with `set_remote`); a task's first push to a remote needs
    `confirm`."""
    from gitckpt.transfer import push as remote_push

    return remote_push.push(open_timeline(root), remote, task, all_tasks=all_tasks,
                            as_id=as_id, confirm=confirm)


def fetch(root: str | Path, remote: str | None = None, *, task: str | None = None,
          as_id: str | None = None):
    """List the tasks a git remote holds, or bring `task` here (its head only forward), as
    `as_id` if given. Like init, a fetch into a plain folder uses its own store."""
    from gitckpt.transfer import fetch as remote_fetch

    tl = open_timeline(root) if task is None else open_timeline(root, discover=False,
                                                                 ancestors=False)
    return remote_fetch.fetch(tl, remote, task, as_id)


def export(root: str | Path, to: str | Path, *, task: str | None = None) -> ExportResult:
    """Write a handoff package of the active task (or `task`) to the new folder `to`."""
    tl = open_timeline(root)
    tid = tl.resolve(task)
    tl.check_workspace(tid, tl.meta(tid))
    dest = Path(os.path.realpath(to))
    store = Path(os.path.realpath(tl.store.location))
    if dest == store or store in dest.parents:
        raise InvalidArgument(f"A package cannot be written inside the store ({store}).",
                              "Export to a folder outside it, e.g. next to the workspace.")
    return package.export(tl, tid, Path(to), resume(root, task=tid, exact=True).text)


def import_(root: str | Path, pkg: str | Path, *, as_id: str | None = None,
            dry_run: bool = False, checkout: bool = False, confirm: bool = False
            ) -> ImportResult:
    """Import a handoff package; its task becomes the active task here. `dry_run` only
    checks it and says what it holds; `checkout` then puts its head's files into the
    workspace, as `restore head --apply` does (with a safety copy that undoes it, and
    `confirm` for a restore that deletes or rewrites many files)."""
    if dry_run:
        return package.inspect_package(Path(pkg))
    # like init, an import makes a task: in this folder's own store, never a parent's
    out = package.import_package(open_timeline(root, discover=False, ancestors=False),
                                 Path(pkg), as_id)
    if checkout:
        try:
            done = restore(root, "head", apply=True, task=out.task, confirm=confirm)
        except NeedsConfirmation as e:
            raise NeedsConfirmation(
                f"Task {out.task} was imported; its files were not put here: {e.message}",
                "Put them here with {0}.",
                [call("restore", target="head", task=str(out.task), apply=True,
                      confirm=True)]) from e
        out = replace(out, checkout=done)
    return out


def migrate(root: str | Path, source: str, path: str | Path) -> MigrateResult:
    """Tasks from the tools gitckpt replaces (`source`: claude-checkpoint, a
    `.claude-checkpoint` file; task-checkpoint, a task-checkpoint-mcp store), all checked
    before anything is written."""
    from gitckpt.transfer import migrate as migrating

    if source not in migrating.SOURCES:
        raise InvalidArgument(f"Cannot import from {source!r}.",
                              f"Sources: {', '.join(migrating.SOURCES)}.")
    tl = open_timeline(root, discover=False, ancestors=False)  # like init: this folder's store
    read = migrating.claude_checkpoint if source == "claude-checkpoint" else \
        migrating.task_checkpoint
    return read(tl, Path(os.path.abspath(path)))


def compress(root: str | Path, *, keep: str = "7d", min_steps: int = 3,
             dry_run: bool = False, clock: Clock = time.time) -> CompressResult:
    """Drop drift chains older than `keep` (never a step, never a restore's chain)."""
    return compressing.compress(open_timeline(root, clock), compressing.parse_duration(keep),
                                min_steps, clock(), dry_run)


def doctor(root: str | Path, *, fix: bool = False) -> DoctorResult:
    """Check the store; with `fix`, repair what can be repaired without losing data."""
    # The folder's own store is examined even if it records another folder or holds planted
    # links: doctor is how those are found and repaired.
    return checking.doctor(open_timeline(root, adopt=True), fix)
