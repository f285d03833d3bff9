"""The resume handoff: about one screen of text telling a new session where the task stands."""

from __future__ import annotations

from gitckpt.notes import PLAN_MARKS
from gitckpt.store.base import Changes
from gitckpt.records import StepRecord, TaskInfo

FULL_STEPS = 2  # the newest steps shown with their conclusions
TITLE_STEPS = 8  # then this many older ones as titles
MAX_PATHS = 12
MAX_LINE = 240


def _clip(text: str, limit: int = MAX_LINE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def handoff_text(info: TaskInfo, steps: list[StepRecord], unsaved: Changes | None,
                 git_now: dict | None, problems: list[str]) -> str:
    """The resume text: task, goal, plan, latest steps, next, open questions, unsaved, git."""
    meta, head = info.meta, info.head
    out = [f"# Task: {meta.name} ({info.id}), {info.status}, step {head.n}"]
    if meta.goal:
        out.append(f"Goal: {_clip(meta.goal, 400)}")
    if meta.constraints:
        out.append(f"Constraints: {_clip(meta.constraints, 400)}")
    plan = head.note.plan
    if plan:
        out += ["", "Plan:"] + [f"  {PLAN_MARKS[p.status]} {_clip(p.item, 120)}" for p in plan]

    real = [s for s in steps if s.n > 0]
    if real:
        out += ["", "Latest steps:"]
        for s in reversed(real[-FULL_STEPS:]):
            out.append(f"  {s.n}. {_clip(s.note.title, 160)} ({s.note.created_at})")
            if s.note.conclusion:
                out.append(f"     Conclusion: {_clip(s.note.conclusion, 400)}")
            for v in s.note.verified[:3]:
                out.append(f"     Verified: {_clip(v, 160)}")
        older = real[:-FULL_STEPS]
        for s in reversed(older[-TITLE_STEPS:]):
            out.append(f"  {s.n}. {_clip(s.note.title, 100)}")
        if len(older) > TITLE_STEPS:
            out.append(f"  ... {len(older) - TITLE_STEPS} older steps: `gitckpt log`")
    else:
        out += ["", "No step saved yet (only the baseline, step 0)."]

    if head.note.next:
        out += ["", f"Next: {_clip(head.note.next, 400)}"]
    if head.note.open_questions:
        out += ["", "Open questions:"] + [f"  - {_clip(q, 200)}" for q in
                                          head.note.open_questions[:6]]
    if head.note.decisions:
        out += ["", "Decisions:"] + [f"  - {_clip(d, 200)}" for d in head.note.decisions[:6]]

    out.append("")
    if unsaved is None:
        out.append("Unsaved changes: unknown (see problems).")
    elif not unsaved:
        out.append(f"Unsaved changes: none since step {head.n}.")
    else:
        rows = ([("A", p) for p in unsaved.added] + [("M", p) for p in unsaved.modified]
                + [("D", p) for p in unsaved.deleted])
        out.append(f"Unsaved changes since step {head.n}: {len(unsaved.added)} added, "
                   f"{len(unsaved.modified)} modified, {len(unsaved.deleted)} deleted")
        out += [f"  {mark} {path}" for mark, path in sorted(rows, key=lambda r: r[1])[:MAX_PATHS]]
        if len(rows) > MAX_PATHS:
            out.append(f"  ... {len(rows) - MAX_PATHS} more: `gitckpt resume --json`")

    then = head.note.git
    if git_now and then:
        where = f"{git_now.get('branch') or 'detached HEAD'} at {(git_now.get('head') or '-')[:7]}"
        was = f"{then.get('branch') or 'detached HEAD'} at {(then.get('head') or '-')[:7]}"
        out.append(f"Git: {where}" + ("" if where == was else f" (step {head.n} saw {was})"))
    if problems:
        out += ["", "Problems:"] + [f"  ! {p}" for p in problems]
    if info.status == "closed":
        out += ["", "This task is closed (read-only). Start a new one with `gitckpt init`."]
    else:
        out += ["", "Save each finished step: gitckpt save \"TITLE\" --conclusion ... --next ..."]
    return "\n".join(out) + "\n"
