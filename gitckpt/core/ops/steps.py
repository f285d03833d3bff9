"""The requests of a task's steps: init, save, resume, log, tasks, capture, switch, run, watch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from gitckpt.core.inputs import CommandRun, FileNote, PlanEntry, PlanUpdate
from gitckpt.core.ops.fields import Voice, task, voice
from gitckpt.core.request import Opening, Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from gitckpt.engine.records import DriftResult, SaveResult, TaskInfo  # noqa: F401
    from gitckpt.engine.session import WatchSession  # noqa: F401
    from gitckpt.service import results  # noqa: F401


#: A plan as a tool call writes it, for the hint of an error (a type name does not say it).
PLAN_EXAMPLE = '[{"item": "Write the parser", "status": "done"}]'


@dataclass(frozen=True)
class InitRequest(Request["results.InitResult"]):
    """Start a task NAME: snapshot 0, and make it the active task."""

    op = "init"
    command = "init"
    tool = "ckpt_init"
    summary = ("Start a task, once per job of several steps: step 0 snapshots the "
               "workspace.")
    opening = Opening.HERE

    name: str = arg(brief="", positional=True)
    goal: str = arg("What the task is for.", brief="What done looks like.", default="")
    constraints: str = arg("Rules the work must keep to.", brief="", default="")
    exclude: tuple[str, ...] = arg(
        "Leave matching files out of snapshots (.gitignore syntax); repeatable.",
        brief=".gitignore patterns to leave out.", metavar="PATTERN", default=())
    plan: tuple[PlanEntry, ...] = arg(
        "A plan item (pending, in_progress, done, blocked); repeatable.", brief="Checklist.",
        metavar="ITEM[=STATUS]", example=PLAN_EXAMPLE, default=())
    store: str | None = arg("Plain folders only: keep the checkpoints in DIR (default: "
                            "./.gitckpt).", metavar="DIR", mcp=False, path="file",
                            default=None)

    def store_folder(self) -> str | None:
        return self.store


@dataclass(frozen=True)
class SaveRequest(Request["SaveResult"]):
    """Save a finished step TITLE with what it concluded and what comes next.

    Decisions, gotchas and open questions accumulate over the task until a step retires
    them (--answered, --drop). Commands run with `gitckpt run` join the step by themselves."""

    op = "save"
    command = "save"
    tool = "ckpt_save"
    summary = ("Save a finished step (one you could report in a sentence): a commit of the "
               "workspace and what it meant. Decisions, gotchas, questions last until dropped.")

    title: str = arg(brief="The step, in a few words.", positional=True)
    conclusion: str = arg("What this step established.", brief="What is now true or learned.",
                          default="")
    next: str | tuple[str, ...] = arg("What to do next; repeat for ordered next actions.",
                                      brief="Next action(s), in order.", metavar="TEXT",
                                      default="")
    description: str = arg("Longer notes on the step.", brief="", default="")
    verified: tuple[str, ...] = arg("A check that passed; repeatable.", brief="",
                                    metavar="TEXT", default=())
    commands: tuple[CommandRun, ...] = arg(
        "A command that ran on the workspace as saved; pair each with --exit.",
        brief="Commands run.", cli="--ran", metavar="CMD",
        pair=("--exit", "N", "The exit code of the --ran at the same position."), default=())
    files: tuple[FileNote, ...] = arg("A file that matters, and why; repeatable.",
                                      brief="", cli="--file",
                                      metavar="PATH[=NOTE]", default=())
    open_questions: tuple[str, ...] = arg("An open question; repeatable.", brief="",
                                          cli="--question", metavar="TEXT", default=())
    answered: tuple[str, ...] = arg(
        "An open question this step answers (its exact text); repeatable.",
        brief="Questions now answered.", metavar="TEXT", default=())
    decisions: tuple[str, ...] = arg("A decision made; repeatable.", brief="",
                                     cli="--decision", metavar="TEXT", default=())
    gotchas: tuple[str, ...] = arg("A trap the next session must know; repeatable.",
                                   brief="", cli="--gotcha", metavar="TEXT", default=())
    drop: tuple[str, ...] = arg(
        "Retire a decision, gotcha or open question (its exact text); repeatable.",
        brief="Retire these notes.", metavar="TEXT", default=())
    plan: tuple[PlanUpdate, ...] = arg("Update a plan item.", brief="Items to update, by text.",
                                       metavar="ITEM[=STATUS]", example=PLAN_EXAMPLE,
                                       default=())
    close: bool = arg("This is the last step: end the task.", brief="Last step: end the task.",
                      default=False)
    task: str | None = task("Save into this task (default: active).")


@dataclass(frozen=True)
class ResumeRequest(Request["results.ResumeResult"]):
    """Print the handoff: where the task stands and what to do next."""

    op = "resume"
    command = "resume"
    tool = "ckpt_resume"
    summary = "The handoff: goal, step, conclusions, next, questions, unsaved files. Read-only."

    task: str | None = task("Resume this task (default: active).")
    format: Literal["brief", "full"] = arg(
        brief="full: everything, no length limit.", default="brief",
        cli={"--full": ("full", "Every step, decision, question, command and file note (no "
                                "length limit).")})
    voice: Voice = voice(mcp_default="mcp")
    #: the unsaved paths from a full stat of the workspace, not a watcher's journal
    exact: bool = arg(cli=None, mcp=False, default=False)


@dataclass(frozen=True)
class LogRequest(Request["results.LogResult"]):
    """Show the timeline of a task (steps and drifts), newest first."""

    op = "log"
    command = "log"
    tool = "ckpt_log"
    summary = "A task's steps, newest first, one line each. Read-only."

    task: str | None = task("Show this task (default: active).")
    steps_only: bool = arg("Hide the drifts between steps.", cli="--steps", mcp=False,
                           default=False)
    limit: int | None = arg("Only the newest N steps.", brief="", metavar="N",
                            minimum=1, mcp_default=10, default=None)
    before: int | None = arg("Only steps older than step N (pages back with --limit).",
                             brief="Page: steps older than this.", metavar="N", minimum=1,
                             default=None)
    step: int | None = arg("Only step N, in full.", brief="One step in full.", metavar="N",
                           minimum=0, default=None)
    all_tasks: bool = arg(brief="", cli=None, default=False)


@dataclass(frozen=True)
class TasksRequest(Request["results.TasksResult"]):
    """List every task in this workspace's store."""

    op = "tasks"
    command = "tasks"
    tool = "ckpt_log"  # a suggested call: ckpt_log(all_tasks=true)
    tool_args: ClassVar[Mapping[str, object]] = {"all_tasks": True}


@dataclass(frozen=True)
class CaptureRequest(Request["DriftResult"]):
    """Record a drift now if files changed since the last step or drift."""

    op = "capture"
    command = "capture"
    tool = "ckpt_capture"
    summary = "Record the files now as a drift, e.g. before something risky."

    task: str | None = task("Capture into this task.")


@dataclass(frozen=True)
class SwitchRequest(Request["TaskInfo"]):
    """Make TASK the active task again (the active one is suspended)."""

    op = "switch"
    command = "switch"
    tool = "ckpt_switch"
    summary = "Make a suspended task active; the active one is suspended."
    opening = Opening.STORE

    task: str = arg(brief="", positional=True, complete="task")


@dataclass(frozen=True)
class RunRequest(Request["results.RunResult"]):
    """Run CMD in the workspace and record its exit code and duration for the next save,
    bound to the files as they were when it ran. Its output shows as it goes; gitckpt exits
    with its exit code."""

    op = "run"
    command = "run"

    argv: tuple[str, ...] = arg(positional=True, metavar="-- CMD...", raw=True, mcp=False)
    task: str | None = task("Record into this task.")


@dataclass(frozen=True)
class WatchRequest(Request["WatchSession"]):
    """Watch the workspace in the foreground and record drifts as files change (Ctrl-C ends).

    Events are hints: after GITCKPT_QUIET seconds without one (default 2), or GITCKPT_MAX_WAIT
    seconds of continuous changes (default 30), a snapshot decides. Without file events it
    polls every GITCKPT_POLL seconds (default 15)."""

    op = "watch"
    command = "watch"

    task: str | None = task("Capture into this task.")
