"""What a resume says, gathered: the task, its steps and drifts, what is unsaved, the memory
of commands and checks, the user's repository since the step, and the problems found."""

from __future__ import annotations

from dataclasses import replace

from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import TaskId
from gitckpt.core.switches import watch_enabled
from gitckpt.core.values import RestoreMarker
from gitckpt.engine.handoff import Handoff
from gitckpt.engine.memory import CommandRun, checks, touched
from gitckpt.engine.records import StepRecord
from gitckpt.engine.timeline import Timeline, step_ref


def gather(tl: Timeline, task: str | None, voice: str, exact: bool = False) -> Handoff:
    """The facts of the handoff for `task` (the active one if None). Read-only: no lock, no
    commit, no cache write; a workspace that cannot be scanned is a problem, not an error.
    `voice` spells the commands named in problems (`cli`) or the tool calls (`mcp`)."""
    tid = tl.resolve(task)
    info = tl.info(tid)
    tl.check_workspace(tid, info.meta)  # another workspace's task is read from there only
    steps = tl.steps(tid)
    drifts = tl.drifts(tid, info.head.n)
    tip = drifts[-1] if drifts else info.head
    problems: list[str] = []
    unsaved = since_step = live_tree = None
    looking = not exact and tl.store.first_look_pending()
    try:
        if looking:  # the handoff now, the files' state from the watcher once it has looked
            raise FirstLook()
        live = tl.live(info.meta, exact=exact)
        live_tree = live.tree
        unsaved = tl.store.diff_trees(tip.tree, live.tree)
        since_step = tl.store.diff_trees(info.head.tree, live.tree)
    except FirstLook:
        problems.append("The watcher is taking its first look at the files: what changed "
                        "since the last step is recorded as a drift when it is done, and "
                        "the next resume shows it.")
    except GitckptError as e:
        problems.append(f"Cannot scan the workspace: {e.message}")
    except OSError as e:  # a read-only store: the scan cannot write its objects
        problems.append(f"Cannot scan the workspace: {e.strerror or e}"
                        f"{f' ({e.filename})' if e.filename else ''}")
    runs = [CommandRun(r.command, r.exit_code, r.tree, info.head.n, r.note, r.duration_s,
                       saved=False) for r in tl.runs(tid)]
    memory = tl.kept().memory(steps)
    memory.commands += runs
    bound = checks(memory, live_tree, tl.store.diff_trees)
    files = touched(steps, memory)
    stuck = None
    if _marked(tl):  # the restore module only where a restore was interrupted
        from gitckpt.engine import restore

        stuck = restore.interrupted(tl)
    if stuck is not None:
        spelled = [c.spell(voice) for c in restore.undo_calls(stuck, tl.active_id())]
        undo, finish = spelled if voice == "mcp" else [f"`{c}`" for c in spelled]
        what, how = ("A revert of", "half-written") if stuck.revert else \
            ("A restore to", "half-restored")
        problems.append(f"{what} {stuck.label} was interrupted; files may be {how}. Undo it "
                        f"with {undo}, or finish it with {finish}.")
    missing = _missing(tl, tid, steps)
    if missing is not None:
        problems.append(f"refs steps/{missing}.. are missing (a save was interrupted); the "
                        "next save re-creates them.")
    then = info.head.git_then
    git = tl.store.git_since(then.head if then else None)
    if git is not None:
        git = replace(git, at_step=then)
    watch = "on" if watch_enabled() else "off"
    return Handoff(info, steps, drifts, unsaved, since_step, git, watch, problems, memory,
                   bound, files)


def _missing(tl: Timeline, tid: TaskId, steps: list[StepRecord]) -> int | None:
    """The oldest step whose ref is missing, looked for from the newest back: a save writes
    `head` first and the step's ref after it, so an interrupted save leaves the newest refs
    missing, and the first ref found ends the search."""
    oldest = None
    for s in reversed(steps):
        if tl.store.get_ref(step_ref(tid, s.n)) is not None:
            break
        oldest = s.n
    return oldest


class FirstLook(Exception):
    """The watcher's first full scan of the workspace is not done: the handoff does not wait
    for it."""


def _marked(tl: Timeline) -> bool:
    """A restore left its marker (or the state folder cannot say: `interrupted` decides)."""
    try:
        return tl.store.state.exists(RestoreMarker.FILE)
    except (OSError, GitckptError):
        return True
