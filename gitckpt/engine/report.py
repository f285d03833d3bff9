"""A task as a reviewer reads it: the facts (goal, plan, steps with their verification bound to
trees, drifts, decisions, questions, files changed, prompts and tokens) gathered once, and
written as Markdown for a pull request's body (`report_html` writes them as one page).

Everything shown was redacted when it was stored; diffs are of checkpoint trees, which never
hold a file a snapshot left out, so no left-out file's content can appear."""

from __future__ import annotations

from dataclasses import dataclass, field

from gitckpt.core.ids import TaskId
from gitckpt.core.shape import Shaped
from gitckpt.engine.memory import Memory, recall
from gitckpt.engine.patch import FileDiff, file_diffs, unified
from gitckpt.engine.records import StepRecord
from gitckpt.engine.timeline import Timeline

#: A step's diff shown in the page: at most this many bytes (the rest is cut, with a note).
DIFF_BYTES = 16_000
#: Diffs of a report at most (the newest steps'; older steps show their files only): with
#: the markup about 2.3 times as much in the page, which stays under 4 MB at any length.
DIFF_TOTAL = 1_500_000


@dataclass(frozen=True)
class ReportResult(Shaped):
    task: str
    format: str  # markdown | html
    text: str


@dataclass
class Verification:
    """The newest run of one command, and the tree it ran on against the task's final one."""

    command: str
    exit_code: int
    step: int  # the step that recorded it
    on_step: int | None  # the step whose tree it ran on (None: a drift's tree)
    final: bool  # it ran on the final tree

    def sentence(self, last: int) -> str:
        how = "passed" if self.exit_code == 0 else f"failed (exit {self.exit_code})"
        if self.final:
            return f"`{self.command}` {how} on the final tree"
        on = f"step {self.on_step}'s tree" if self.on_step is not None else \
            f"a tree before step {self.step}"
        since = self.on_step if self.on_step is not None else self.step
        return f"`{self.command}` {how} on {on}; not run since step {since} (of {last})"


@dataclass
class StepFacts:
    record: StepRecord
    drifts: list[StepRecord]
    files: list[FileDiff]
    patch: str | None  # the step's unified diff from the step before, None: not shown
    cut: int = 0  # bytes of the patch left out


@dataclass
class Facts:
    task: TaskId
    meta: StepRecord
    steps: list[StepFacts]
    memory: Memory
    checks: list[Verification]
    files: list[FileDiff]  # step 0 to the final step
    usage: dict[str, int] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    prompts: int = 0
    closed: bool = False
    git: str = "git"  # how git reads the store from the workspace (a plain folder's: --git-dir)


def gather(tl: Timeline, tid: TaskId, diffs: bool = True) -> Facts:
    """Everything a report shows of task `tid`, read once."""
    store = tl.store
    steps = tl.steps(tid)
    head = steps[-1]
    memory = recall(steps)
    by_tree: dict[str, int] = {s.tree: s.n for s in steps}
    checks: dict[str, Verification] = {}
    for c in memory.commands:  # oldest first: the newest run of each command is kept
        checks[c.command] = Verification(c.command, c.exit_code, c.step, by_tree.get(c.tree),
                                         c.tree == head.tree)
    out: list[StepFacts] = []
    budget = DIFF_TOTAL
    by_n = {s.n: s for s in steps}
    for s in reversed(steps[1:]):  # the newest first get a diff while the budget lasts
        parent = by_n.get(s.n - 1, steps[0])
        files, chunks = [], []
        for d, a, b in file_diffs(store.read_tree, store.read_blob, parent.tree, s.tree):
            files.append(d)
            if diffs and budget > 0:
                chunks.append(unified(d, a, b))
        text = "".join(chunks) if diffs and budget > 0 else None
        cut = 0
        if text is not None and len(text) > DIFF_BYTES:
            cut, text = len(text) - DIFF_BYTES, text[:DIFF_BYTES]
        budget -= len(text or "")
        out.append(StepFacts(s, tl.drifts(tid, s.n - 1), files, text, cut))
    out.reverse()
    usage: dict[str, int] = {}
    for s in steps:
        for k, v in s.note.usage.items():
            usage[k] = usage.get(k, 0) + v
    models = list(dict.fromkeys(m for s in steps for m in s.note.models))
    total = [d for d, _, _ in file_diffs(store.read_tree, store.read_blob, steps[0].tree,
                                         head.tree)]
    return Facts(tid, steps[0], out, memory, list(checks.values()), total, usage, models,
                 sum(len(s.note.prompts) for s in steps), head.note.closed, store.git)


def _md(text: str) -> str:
    """One line of Markdown from free text: newlines folded, and pipes, HTML, links, images,
    emphasis and mentions inert (a note is not the reviewer's markup)."""
    text = " ".join(text.split())
    for ch in "\\`*_[]!|#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("<", "&lt;").replace("@", "@\u200b")


def _fenced(text: str) -> str:
    """A path as a line inside a code fence: no newline or backtick to close it."""
    return "".join("?" if ch in "\n\r`" else ch for ch in text)


def markdown(f: Facts) -> str:
    """The report as a pull request's body."""
    meta = f.meta.note
    last = f.steps[-1].record.n if f.steps else 0
    lines = [f"## {_md(meta.name or str(f.task))}", ""]
    if meta.goal:
        lines += [f"**Goal:** {_md(meta.goal)}", ""]
    plan = f.steps[-1].record.note.plan if f.steps else meta.plan
    if plan:
        lines += ["**Plan**", ""]
        lines += [f"- [{'x' if p.status == 'done' else ' '}] {_md(p.item)}"
                  + ("" if p.status in ("done", "pending") else f" ({p.status})") for p in plan]
        lines.append("")
    lines += [f"**Steps** ({last}{', closed' if f.closed else ''})", ""]
    for s in f.steps:
        n = s.record.note
        lines.append(f"{n.step}. **{_md(n.title)}**"
                     + (f": {_md(n.conclusion)}" if n.conclusion else ""))
    lines.append("")
    # the checks each step says passed (`--verified`), beside the commands recorded as run
    verified = [(s.record.note.step, v) for s in f.steps for v in s.record.note.verified]
    if f.checks or verified:
        lines += ["**Verification**", ""]
        lines += [f"- {c.sentence(last)}" for c in f.checks]
        lines += [f"- {_md(v)} (step {n})" for n, v in verified]
        lines.append("")
    else:
        lines += ["**Verification:** no command was recorded as run.", ""]
    for title, entries in (("Decisions", f.memory.decisions), ("Gotchas", f.memory.gotchas),
                           ("Open questions", f.memory.questions)):
        if entries:
            lines += [f"**{title}**", ""]
            lines += [f"- {_md(e.text)} (step {e.step})" for e in entries]
            lines.append("")
    if f.files:
        plus = sum(d.additions or 0 for d in f.files)
        minus = sum(d.deletions or 0 for d in f.files)
        lines += [f"**Files changed** ({len(f.files)}, +{plus} -{minus})", "", "```"]
        width = max(len(_fenced(d.path)) for d in f.files[:200])
        lines += [f"{_fenced(d.path).ljust(width)}  {_stat(d)}" for d in f.files[:200]]
        if len(f.files) > 200:
            lines.append(f"... and {len(f.files) - 200} more")
        lines += ["```", ""]
    if f.prompts or f.usage:
        said = [f"{f.prompts} prompt{'s' if f.prompts != 1 else ''} recorded"] if f.prompts \
            else []
        if f.usage:
            said.append("tokens: " + ", ".join(f"{v:,} {k.replace('_', ' ')}"
                                              for k, v in f.usage.items()))
        if f.models:
            said.append("models: " + ", ".join(f.models))
        lines += ["**Session:** " + "; ".join(said) + ".", ""]
    lines.append(f"<sub>gitckpt task `{f.task}`: `{f.git} log refs/checkpoints/{f.task}/head "
                 "--notes=checkpoints`</sub>")
    return "\n".join(lines) + "\n"


def _stat(d: FileDiff) -> str:
    if d.additions is None:
        return f"{d.status}, binary"
    return f"{d.status} +{d.additions} -{d.deletions}"
