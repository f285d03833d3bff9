"""The resume handoff: about one screen of text telling a new session where the task stands.

The text is built from blocks in order of importance; when it would pass LIMIT characters the
least important blocks are shortened first (older step titles, verified lines, decisions), so
a task of any length still fits one screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitckpt.core.hints import BLANK, CLI, MCP, call
from gitckpt.core.values import Changes, GitSince
from gitckpt.engine.memory import Check, Entry, FileNote, Memory
from gitckpt.engine.notes import PLAN_MARKS
from gitckpt.engine.records import StepRecord, TaskInfo

LIMIT = 2000  # characters: one screen, and the MCP budget of a resume text
MAX_PATHS = 10


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Voice:
    """How the handoff names the next action: as a command line (`cli`, in backticks) or as
    a tool call (`mcp`), every call spelled by core/hints."""

    name: str

    def _call(self, op: str, **args: object) -> str:
        spelled = call(op, **args).spell(self.name)
        return f"`{spelled}`" if self.name == CLI else spelled

    @property
    def more(self) -> str:
        """Where everything a list left out is."""
        return "`gitckpt resume --json`" if self.name == CLI else "the structured content"

    @property
    def full(self) -> str:
        return self._call("resume", format="full")

    def log(self, before: int) -> str:
        return self._call("log", before=before)

    def undo(self, safety: str, task: str | None) -> str:
        """The call that restores a safety copy, runnable as written: confirmed (it rewrites
        as many files as the restore did), in the task of the copy when not the active one."""
        return self._call("restore", target=safety[:12], task=task, apply=True, confirm=True)

    @property
    def capture(self) -> str:
        return self._call("capture")

    @property
    def init(self) -> str:
        return self._call("init", name=BLANK, goal=BLANK)

    @property
    def save(self) -> str:
        return "Save each finished step: " + call(
            "save", title=BLANK, conclusion=BLANK, next=BLANK).spell(self.name)


VOICES = {CLI: Voice(CLI), MCP: Voice(MCP)}
FOLD = 5  # new files in one folder shown as one line from this many on


def _paths(changes: Changes, voice: Voice, limit: int = MAX_PATHS) -> list[str]:
    """Modified and deleted paths first (what the next session must re-read), then added
    ones, a folder with many new files folded into one line so nothing else is hidden."""
    rows = sorted([(p, "M") for p in changes.modified] + [(p, "D") for p in changes.deleted])
    added: dict[str, list[str]] = {}
    for p in changes.added:
        added.setdefault(p.rpartition("/")[0], []).append(p)
    for folder, files in sorted(added.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if len(files) >= FOLD and folder:
            rows.append((f"{folder}/: {len(files)} added", "A"))
        else:
            rows += [(p, "A") for p in sorted(files)]
    out = [f"  {mark} {_clip(path, 120)}" for path, mark in rows[:limit]]
    if len(rows) > limit:
        out.append(f"  ... {len(rows) - limit} more: {voice.more}")
    return out


def _counts(c: Changes) -> str:
    return f"{len(c.added)} added, {len(c.modified)} modified, {len(c.deleted)} deleted"


def _plan(info: TaskInfo, items: int, voice: Voice) -> list[str]:
    plan = info.head.note.plan
    if not plan:
        return []
    # Open items first; the list keeps the plan's order. Hidden items are counted by status,
    # so an open item is never reported as done.
    order = sorted(range(len(plan)), key=lambda i: plan[i].status == "done")
    shown = sorted(order[:items])
    lines = ["", "Plan:"] + [f"  {PLAN_MARKS[plan[i].status]} {_clip(plan[i].item, 100)}"
                             for i in shown]
    hidden = [plan[i].status for i in order[items:]]
    if hidden:
        counts = ", ".join(f"{hidden.count(s)} {s.replace('_', ' ')}"
                           for s in ("pending", "in_progress", "blocked", "done")
                           if hidden.count(s))
        lines.append(f"  ... {len(hidden)} more ({counts}): {voice.more}")
    return lines


def _steps(steps: list[StepRecord], full: int, titles: int, verified: bool, width: int,
           voice: Voice) -> list[str]:
    first = next((i for i, s in enumerate(steps) if s.note.step > 0), len(steps))
    real = steps[first:]  # oldest first: after step 0
    if not real:
        return ["", "No step saved yet (only the baseline, step 0)."]
    out = ["", "Latest steps:"]
    for s in reversed(real[-full:]):
        out.append(f"  {s.n}. {_clip(s.note.title, 140)} ({s.note.created_at})")
        if s is real[-1] and s.note.prompts:  # the request the newest step answered
            out.append(f"     Prompt: {_clip(str(s.note.prompts[-1].get('text', '')), width)!r}")
        if s.note.conclusion:
            out.append(f"     Conclusion: {_clip(s.note.conclusion, width)}")
        if verified:
            out += [f"     Verified: {_clip(v, 140)}" for v in s.note.verified[:3]]
    older = real[:-full]
    listed = older[-titles:] if titles else []  # ([-0:] would be all of them)
    out += [f"  {s.n}. {_clip(s.note.title, 90)}" for s in reversed(listed)]
    if len(older) > titles:
        oldest = (listed or real[-full:])[0].n  # the oldest step shown
        out.append(f"  ... {len(older) - titles} older steps: {voice.log(oldest)}")
    return out


def _since(n: int, drifts: list[StepRecord], unsaved: Changes | None,
           since_step: Changes | None, voice: Voice,
           task: str | None = None) -> list[str]:
    """What changed since step n; `task` is the task's id when it is not the active one."""
    if unsaved is None or since_step is None:
        return ["", "Changes since the last step: unknown (see problems)."]
    if not since_step and not drifts:
        return ["", f"Changed after step {n}: nothing; the files are as saved."]
    out = [""]
    if drifts:
        kinds = ", ".join(f"{d.note.trigger or d.note.kind} {d.note.created_at[11:16]}"
                          for d in drifts[-4:])
        more = f" and {len(drifts) - 4} earlier" if len(drifts) > 4 else ""
        out.append(f"Captured since step {n}: {len(drifts)} drift(s) ({kinds}{more}).")
        restores = [d for d in drifts if d.note.kind == "restore"]
        if restores:
            last = restores[-1].note
            out.append(f"  Last restore: {_clip(last.title, 80)}; undo with "
                       f"{voice.undo(last.safety or '', task)}.")
    if since_step:
        out.append(f"Changed after step {n}, re-read before editing: {_counts(since_step)}")
        out += _paths(since_step, voice)
    if unsaved and drifts and since_step:
        out.append(f"Of these, not captured by a drift yet: {_counts(unsaved)}")
    return out


def _git(n: int, git: GitSince | None) -> list[str]:
    if git is None:
        return []
    if not git.head:
        return ["Git: no commit yet in this repository"]
    line = f"Git: {git.branch or 'detached HEAD'} at {git.head[:7]}"
    then = git.at_step
    if then is not None:
        was = f"{then.branch or 'detached HEAD'} at {(then.head or '-')[:7]}"
        if then.branch != git.branch:
            line += f"; the branch changed since step {n} ({was})"
        if git.head_reachable is False:
            line += (f"; HEAD at step {n} ({(then.head or '-')[:7]}) is no longer in "
                     "the branch's history (rebase or reset)")
        elif git.commits_since:
            line += f"; {git.commits_since} commit(s) since step {n}"
    return [line]


@dataclass(frozen=True)
class Handoff:
    """Everything a resume says, gathered by service.resume."""

    info: TaskInfo
    steps: list[StepRecord]
    drifts: list[StepRecord]
    unsaved: Changes | None
    since_step: Changes | None
    git: GitSince | None
    watch: str
    problems: list[str]
    memory: Memory
    checks: list[Check]
    files: list[FileNote]


def _memory(title: str, entries: list[Entry], shown: int, width: int,
            voice: Voice) -> list[str]:
    """Newest first, each with the step that recorded it; the rest counted."""
    if not entries or not shown:
        return ["", f"{title}: {len(entries)} (see {voice.full})"] if entries else []
    out = ["", f"{title} ({len(entries)}, newest first):"]
    out += [f"  - {_clip(e.text, width)} (step {e.step})" for e in reversed(entries[-shown:])]
    if len(entries) > shown:
        out.append(f"  ... {len(entries) - shown} more: {voice.full}")
    return out


def _check(c: Check) -> str:
    run = c.run
    what = f"`{_clip(run.command, 80)}` " + ("passed" if run.passed else
                                             f"failed (exit {run.exit_code})")
    at = f"step {run.step}" if run.saved else f"a run after step {run.step}"
    if c.changed is None:
        return f"  {what} at {at}; whether the files still match is unknown"
    if not c.changed:
        return f"  {what} on this exact tree ({at})"
    names = ", ".join(_clip(p, 60) for p in c.changed[:3])
    more = ", ..." if len(c.changed) > 3 else ""
    return f"  {what} at {at}; {len(c.changed)} file(s) changed since: {names}{more}"


def _files(files: list[FileNote], shown: int) -> list[str]:
    if not files or not shown:
        return []
    out = ["", "Files of the recent steps:"]
    for f in files[:shown]:
        out.append(f"  {_clip(f.path, 100)}" + (f": {_clip(f.note, 120)}" if f.note else ""))
    if len(files) > shown:
        out.append(f"  ... {len(files) - shown} more")
    return out


def _elsewhere(info: TaskInfo) -> str | None:
    """The task's id where a call must name it (it is not the active task), else None."""
    return None if info.status == "active" else str(info.id)


def handoff_text(h: Handoff, voice: str = "cli") -> str:
    """The resume text: task, goal, plan, latest steps, next, what the task remembers
    (decisions, gotchas, open questions, checks bound to the files, the files that matter),
    what changed since the last step, git, problems; shortened to fit LIMIT characters.
    `voice` names the next actions as command lines (`cli`) or tool calls (`mcp`)."""
    info, m = h.info, h.memory
    meta, head = info.meta, info.head
    say = VOICES[voice]
    note = head.note

    def build(lv: _Level) -> str:
        out = [f"# Task: {meta.name} ({info.id}), {info.status}, step {head.n}"]
        if meta.goal:
            out.append(f"Goal: {_clip(meta.goal, lv.width)}")
        if meta.constraints:
            out.append(f"Constraints: {_clip(meta.constraints, lv.width)}")
        out += _plan(info, lv.plan, say)
        out += _steps(h.steps, lv.full, lv.titles, lv.verified, lv.width, say)
        if note.next:
            out += ["", f"Next: {_clip(note.next, lv.width)}"]
            if note.then:
                out.append("Then: " + "; ".join(_clip(t, lv.width // 3)
                                                for t in note.then[:lv.questions]))
        out += _memory("Open questions", m.questions, lv.questions, lv.width // 2, say)
        out += _memory("Decisions", m.decisions, lv.decisions, lv.width // 2, say)
        out += _memory("Gotchas", m.gotchas, lv.decisions, lv.width // 2, say)
        if h.checks:
            out += ["", "Checks:"] + [_check(c) for c in h.checks]
        out += _files(h.files, lv.files)
        out += _since(head.n, h.drifts, h.unsaved, h.since_step, say, _elsewhere(info))
        out += _git(head.n, h.git)
        if h.watch == "off":
            out.append("Watcher: off (GITCKPT_WATCH=off); changes are captured at saves, "
                       f"tool calls and {say.capture}.")
        if h.problems:
            out += ["", "Problems:"] + [f"  ! {_clip(p, 300)}" for p in h.problems[:4]]
        if info.status == "closed":
            out += ["", f"This task is closed (read-only). Start a new one with {say.init}."]
        else:
            out += ["", say.save]
        return "\n".join(out) + "\n"

    for level in _LEVELS:  # from the fullest text to the tightest: the first that fits wins
        text = build(level)
        if len(text) <= LIMIT:
            break
    return text


def full_text(h: Handoff, voice: str = "cli") -> str:
    """Everything the task knows, with no budget: every step with its conclusion, next,
    checks and commands; every decision, gotcha and question; every file note."""
    info, m = h.info, h.memory
    meta = info.meta
    say = VOICES[voice]
    out = [f"# Task: {meta.name} ({info.id}), {info.status}, step {info.head.n}"]
    out += [f"Goal: {meta.goal}"] if meta.goal else []
    out += [f"Constraints: {meta.constraints}"] if meta.constraints else []
    out += _plan(info, 10_000, say)
    out += ["", "Steps:"]
    for s in h.steps:
        n = s.note
        out.append(f"  {s.n}. {n.title} ({n.created_at})" + ("  [closed]" if n.closed else ""))
        out += [f"     Conclusion: {n.conclusion}"] if n.conclusion else []
        out += [f"     Next: {'; '.join([n.next, *n.then])}"] if n.next else []
        out += [f"     Verified: {v}" for v in n.verified]
        out += [f"     Ran: `{c['command']}` exit {c['exit_code']}"
                + (f" ({c['note']})" if c.get("note") else "") for c in n.commands]
    out += _memory("Open questions", m.questions, 10_000, 10_000, say)
    if m.answered:
        out += ["", "Answered:"] + [f"  - {e.text} (step {e.step})" for e in m.answered]
    out += _memory("Decisions", m.decisions, 10_000, 10_000, say)
    out += _memory("Gotchas", m.gotchas, 10_000, 10_000, say)
    if h.checks:
        out += ["", "Checks:"] + [_check(c) for c in h.checks]
    if m.commands:
        out += ["", "Commands:"] + [
            f"  `{c.command}` exit {c.exit_code} at "
            f"{'step' if c.saved else 'a run after step'} {c.step}" for c in m.commands]
    out += _files(h.files, 10_000)
    out += _since(info.head.n, h.drifts, h.unsaved, h.since_step, say, _elsewhere(info))
    out += _git(info.head.n, h.git)
    if h.problems:
        out += ["", "Problems:"] + [f"  ! {p}" for p in h.problems]
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class _Level:
    full: int  # newest steps with their conclusions
    titles: int  # older steps as titles
    verified: bool
    questions: int
    decisions: int
    plan: int  # plan items shown (open ones first)
    width: int  # characters of a conclusion, next, goal
    files: int  # files of the recent steps


_LEVELS = (_Level(2, 8, True, 6, 6, 12, 400, 6), _Level(2, 5, False, 4, 4, 8, 300, 4),
           _Level(1, 3, False, 3, 3, 6, 240, 3), _Level(1, 2, False, 2, 2, 4, 200, 2),
           _Level(1, 0, False, 2, 1, 3, 160, 0), _Level(1, 0, False, 1, 1, 2, 120, 0))
