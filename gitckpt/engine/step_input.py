"""What a save or an init says, checked against the size limits, cleaned and redacted before
any lock is taken: a task's name, goal, constraints, excludes and plan; a step's texts, the
memory it adds or retires, the commands it ran and the files it says matter."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitckpt.core import limits
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.inputs import CommandRun, FileNote
from gitckpt.core.ops.steps import InitRequest, SaveRequest
from gitckpt.core.paths import normalize_paths
from gitckpt.engine.notes import PlanItem

if TYPE_CHECKING:
    from gitckpt.engine.records import TaskInfo
from gitckpt.safety.redact import clean, redact
from gitckpt.safety.scope import compile_patterns

LISTS = ("verified", "open_questions", "decisions", "gotchas", "answered", "dropped", "then")


@dataclass(frozen=True)
class StepInput:
    """A save's fields as they will be stored (`redacted`: the secrets taken out)."""

    title: str
    conclusion: str = ""
    next: str = ""
    description: str = ""
    lists: dict[str, list[str]] = field(default_factory=dict)  # the LISTS, each cleaned
    plan: list[PlanItem] = field(default_factory=list)
    plan_new: frozenset[str] = frozenset()
    commands: list[dict[str, Any]] = field(default_factory=list)  # without their tree yet
    files: list[dict[str, str]] = field(default_factory=list)
    redacted: int = 0

    def texts(self) -> dict[str, str]:
        return {"title": self.title, "conclusion": self.conclusion, "next": self.next,
                "description": self.description}


@dataclass(frozen=True)
class TaskInput:
    """An init's fields as they will be stored (`redacted`: the secrets taken out)."""

    name: str
    goal: str
    constraints: str
    exclude: list[str]
    plan: list[PlanItem]
    redacted: int


def prepare_task(r: InitRequest) -> TaskInput:
    """Check, clean and redact an init: the excludes must be patterns, the name not empty."""
    exclude = list(r.exclude)
    for key, value in (("name", r.name), ("goal", r.goal), ("constraints", r.constraints)):
        limits.check_text(key, value)
    limits.check_list("exclude", exclude, count=limits.PATTERNS, each=limits.TITLE)
    plan = [PlanItem(clean(p.item, one_line=True), p.status) for p in r.plan]
    limits.check_list("plan", [p.item for p in plan], count=limits.PLAN, each=limits.TITLE)
    limits.check_note({"name": r.name, "goal": r.goal, "constraints": r.constraints,
                       "exclude": exclude, "plan": [vars(p) for p in plan]})
    count = 0

    def redacted(text: str) -> str:
        nonlocal count
        out, n = redact(text)
        count += n
        return out

    exclude = [redacted(e) for e in exclude]
    compile_patterns(exclude, "--exclude")
    plan = [PlanItem(redacted(p.item), p.status) for p in plan]
    name = redacted(clean(r.name, one_line=True))
    goal, constraints = redacted(clean(r.goal)), redacted(clean(r.constraints))
    if not name:
        raise InvalidArgument("The task name is empty.", 'Use gitckpt init "NAME".')
    return TaskInput(name, goal, constraints, exclude, plan, count)


def prepare(r: SaveRequest) -> StepInput:
    """Check, clean and redact a save. `next` may be a list of ordered next actions: the
    first is `next`, the others `then`."""
    steps = [r.next] if isinstance(r.next, str) else list(r.next)
    lists: dict[str, list[str]] = {
        "verified": list(r.verified), "open_questions": list(r.open_questions),
        "decisions": list(r.decisions), "gotchas": list(r.gotchas),
        "answered": list(r.answered), "dropped": list(r.drop), "then": steps[1:]}
    raw = {"title": r.title, "conclusion": r.conclusion, "next": steps[0] if steps else "",
           "description": r.description}
    for key, value in raw.items():
        limits.check_text(key, value)
    cleaned: dict[str, list[str]] = {}
    for key in LISTS:
        items = lists[key]
        limits.check_list(key, items)
        cleaned[key] = [c for c in map(clean, items) if c]
    plan = [PlanItem(clean(p.item, one_line=True), p.status) for p in r.plan]
    limits.check_list("plan", [p.item for p in plan], count=limits.PLAN, each=limits.TITLE)
    runs = [_command(c) for c in r.commands]
    limits.check_list("commands", [c["command"] for c in runs])
    notes = [_file(f) for f in r.files]
    limits.check_list("files", [f["note"] for f in notes])
    limits.check_note({**raw, **cleaned, "plan": [vars(p) for p in plan], "commands": runs,
                       "files": notes})
    texts = {"title": clean(r.title, one_line=True), "conclusion": clean(r.conclusion),
             "next": clean(raw["next"]), "description": clean(r.description)}
    if not texts["title"]:
        raise InvalidArgument("The step title is empty.", "Give the step a title.")
    count = 0
    for key, value in texts.items():
        texts[key], n = redact(value)
        count += n
    for key, items in cleaned.items():
        kept = []
        for item in items:
            text, n = redact(item)
            kept.append(text)
            count += n
        cleaned[key] = kept
    for c in runs:
        for key in ("command", "note"):
            c[key], n = redact(c[key])
            count += n
    for f in notes:
        f["note"], n = redact(f["note"])
        count += n
    stored_plan = []
    for p in plan:
        text, n = redact(p.item)
        stored_plan.append(PlanItem(text, p.status))
        count += n
    new = frozenset(redact(clean(p.item, one_line=True))[0] for p in r.plan if p.add)
    return StepInput(texts["title"], texts["conclusion"], texts["next"], texts["description"],
                     cleaned, stored_plan, new, runs, notes, count)


def _command(c: CommandRun) -> dict[str, Any]:
    """{command, exit_code, note, duration_s?}: the note's form, checked."""
    example = 'For example commands=[{"command": "pytest -q", "exit_code": 0}].'
    if not clean(c.command, one_line=True):
        raise InvalidArgument("A command record needs its command text.", example)
    code = c.exit_code
    if not -(2**31) <= code < 2**31:
        raise InvalidArgument(f"The command {c.command[:60]!r} needs its exit_code (a whole "
                              "number: 0 for success).", example)
    duration = c.duration_s
    if duration is not None and (not math.isfinite(duration) or duration < 0):
        raise InvalidArgument("A command's note is a text and its duration_s a number of "
                              "seconds.", example)
    out: dict[str, Any] = {"command": clean(c.command, one_line=True), "exit_code": code,
                           "note": clean(c.note or "", one_line=True)}
    if duration is not None:
        out["duration_s"] = round(float(duration), 3)
    return out


def _file(f: FileNote) -> dict[str, str]:
    """{path, note}: the path inside the workspace, cleaned like a restore's path filter."""
    paths = normalize_paths([f.path])
    if not paths:
        raise InvalidArgument("A file note names a file or folder, not the whole workspace.",
                              "Give the path of the file it is about.")
    return {"path": paths[0], "note": clean(f.note, one_line=True)}


def refuse_a_name_taken(tasks: list[TaskInfo], name: str, workspace: str | None) -> None:
    """InvalidArgument when an open task of this workspace has `name` already (three inits
    of one name made three tasks named alike): the hint says how to continue it."""
    from gitckpt.core.hints import call

    same = [t for t in tasks if t.status != "closed" and t.meta.name == name
            and t.meta.workspace in (None, workspace)]
    if same:
        t = same[0]
        raise InvalidArgument(
            f"A task named {name!r} is open already: {t.id} ({t.status}, step {t.head.n}).",
            "Continue it with {0}, or give the new task another name.",
            [call("switch", task=str(t.id))])
