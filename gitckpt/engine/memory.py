"""What a task remembers across its steps: decisions, gotchas and open questions that
accumulate until a step retires them, the commands that ran (each bound to the tree it ran on),
and the files that matter, each with the step it was recorded at.

Nothing here is stored twice: each step's note says what that step added, answered or dropped,
and `recall` folds the steps in order. Notes of schema 1 (before accumulation) fold the same
way: a question repeated at every step is one question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitckpt.core.errors import GitckptError, InvalidArgument
from gitckpt.core.ids import ObjectId
from gitckpt.core.shape import Shaped
from gitckpt.engine.notes import close_item
from gitckpt.engine.records import StepRecord

if TYPE_CHECKING:
    from gitckpt.core.values import Changes


@dataclass(frozen=True)
class Entry(Shaped):
    """A decision, gotcha or question, and the step that recorded it."""

    text: str
    step: int



@dataclass(frozen=True)
class CommandRun(Shaped):
    """A command that ran against the workspace snapshot `tree`, with its outcome."""

    command: str
    exit_code: int
    tree: str
    step: int  # the step that saved it; for a run not saved yet, the step it followed
    note: str = ""
    duration_s: float | None = None
    saved: bool = True

    @property
    def passed(self) -> bool:
        return self.exit_code == 0



@dataclass(frozen=True)
class FileNote(Shaped):
    path: str
    note: str
    step: int



@dataclass
class Memory:
    """A task's memory at its newest step; lists are oldest first."""

    decisions: list[Entry] = field(default_factory=list)
    gotchas: list[Entry] = field(default_factory=list)
    questions: list[Entry] = field(default_factory=list)  # still open
    answered: list[Entry] = field(default_factory=list)  # step = the step that answered
    commands: list[CommandRun] = field(default_factory=list)
    files: list[FileNote] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"decisions": [e.to_dict() for e in self.decisions],
                "gotchas": [e.to_dict() for e in self.gotchas],
                "open_questions": [e.to_dict() for e in self.questions],
                "answered": [e.to_dict() for e in self.answered],
                "commands": [c.to_dict() for c in self.commands],
                "files": [f.to_dict() for f in self.files]}

    def newest(self, passed: bool) -> CommandRun | None:
        """The newest command that passed (or failed)."""
        return next((c for c in reversed(self.commands) if c.passed == passed), None)


def recall(steps: list[StepRecord], pending: Sequence[CommandRun] = (),
           start: Memory | None = None) -> Memory:
    """Fold the steps' notes, oldest first, into the task's memory (or into `start`, the
    memory before the first of them); `pending` are runs recorded since the newest step
    (`gitckpt run`), not saved yet. Linear in what the notes hold: each group is kept by text
    while folding (insertion-ordered, oldest first), so no step rebuilds what came before."""
    m = start if start is not None else Memory()
    decisions, gotchas, questions = (_by_text(g) for g in (m.decisions, m.gotchas, m.questions))
    files = {f.path: f for f in m.files}
    for s in steps:
        n = s.note
        _add(decisions, n.decisions, s.n)
        _add(gotchas, n.gotchas, s.n)
        for text in n.answered:
            if questions.pop(text, None) is not None:
                m.answered.append(Entry(text, s.n))
        _add(questions, n.open_questions, s.n)
        for text in n.dropped:
            for group in (decisions, gotchas, questions):
                group.pop(text, None)
        for c in n.commands:
            m.commands.append(CommandRun(c["command"], c["exit_code"], c["tree"], s.n,
                                         c.get("note", ""), c.get("duration_s")))
        for f in n.files:
            files.pop(f["path"], None)  # a file noted again moves to the newest place
            files[f["path"]] = FileNote(f["path"], f.get("note", ""), s.n)
    m.decisions, m.gotchas, m.questions = (list(g.values())
                                           for g in (decisions, gotchas, questions))
    m.files = list(files.values())
    m.commands += list(pending)
    return m


def _by_text(group: list[Entry]) -> dict[str, Entry]:
    """A group by its texts, oldest first; a text held twice (a memory kept elsewhere) is
    one entry, the older, as a fold makes it."""
    out: dict[str, Entry] = {}
    for e in group:
        out.setdefault(e.text, e)
    return out


def _add(group: dict[str, Entry], texts: list[str], step: int) -> None:
    for text in texts:
        if text not in group:
            group[text] = Entry(text, step)


def check_retired(m: Memory, answered: list[str], dropped: list[str]) -> None:
    """A save's `answered` must name open questions and its `dropped` a decision, gotcha or
    open question, exactly: a typo would leave the real one standing. The refusal names the
    entry probably meant."""
    def refuse(text: str, pool: list[str], what: str) -> None:
        near = close_item(text, pool)
        guess = f'; did you mean "{near}"?' if near else "."
        raise InvalidArgument(f'No {what} reads "{text}"{guess}',
                              f"Pass the exact text, as the full resume lists it ({what}).")

    open_q = [e.text for e in m.questions]
    for text in answered:
        if text not in open_q:
            refuse(text, open_q, "open question")
    held = [e.text for e in (*m.decisions, *m.gotchas, *m.questions)]
    for text in dropped:
        if text not in held:
            refuse(text, held, "decision, gotcha or open question")


@dataclass(frozen=True)
class Check:
    """A command's outcome against the workspace now: `changed` lists the files that differ
    from the tree it ran on ([]: this exact tree; None: unknown)."""

    run: CommandRun
    changed: list[str] | None

    def to_dict(self) -> dict[str, Any]:
        return {**self.run.to_dict(), "exact": self.changed == [],
                "changed_since": self.changed}


def checks(m: Memory, live_tree: str | None,
           diff: Callable[[ObjectId, ObjectId], Changes]) -> list[Check]:
    """The newest passing and the newest failing command, each bound to the workspace now
    (`diff(a, b)` gives the Changes between two trees)."""
    out = []
    for passed in (True, False):
        run = m.newest(passed)
        if run is None:
            continue
        changed = None
        if live_tree is not None and run.tree:  # an imported run has no tree
            try:
                changed = list(diff(ObjectId(run.tree), ObjectId(live_tree)).paths())
            except GitckptError:  # the tree it ran on is gone (a damaged store)
                changed = None
        out.append(Check(run, changed))
    return out


def touched(steps: list[StepRecord], m: Memory, recent: int = 3) -> list[FileNote]:
    """The files that matter now: every file note (newest first), then the paths the recent
    steps changed, each once."""
    out = list(reversed(m.files))
    seen = {f.path for f in out}
    for s in reversed(steps[-recent:]):
        c = s.changed
        for path in (*c.modified, *c.added, *c.deleted):
            if path not in seen:
                out.append(FileNote(path, "", s.n))
                seen.add(path)
    return out
