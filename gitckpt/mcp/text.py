"""What an agent reads in each MCP result: a short text (with GITCKPT_MCP_RESULTS=full, over
the full object as structured content), for results and errors alike.

Each text function takes the typed result the service returned (the one whose `to_dict()` is
the structured content) and returns a few lines in tool-call terms: what happened, and the
call that comes next, spelled by core/hints as every suggestion is.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, TextContent

from gitckpt.core.errors import GitckptError
from gitckpt.core.hints import BLANK, MCP, call

if TYPE_CHECKING:
    from gitckpt.core.values import Changes
    from gitckpt.engine.compress import CompressResult
    from gitckpt.engine.records import DriftResult, SaveResult, StepRecord, TaskInfo
    from gitckpt.engine.search import SearchResult
    from gitckpt.engine.why import LineOrigin, WhyResult
    from gitckpt.service.results import (
        DiffResult,
        InitResult,
        LogResult,
        RestoreResult,
        ResumeResult,
        RevertResult,
        TasksResult,
    )
    from gitckpt.transfer.fetch import FetchResult
    from gitckpt.transfer.package import ExportResult, ImportResult
    from gitckpt.transfer.push import PushResult


def _next(op: str, **args: object) -> str:
    """The tool call that comes next, as the agent would write it."""
    return call(op, **args).spell(MCP)


def _changes(c: Changes) -> str:
    return f"{len(c.added)} added, {len(c.modified)} modified, {len(c.deleted)} deleted"


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def save(r: SaveResult) -> str:
    """One or two lines: the step, what changed, redactions, what was left out."""
    if r.idempotent:
        head = f"Step {r.step} of {r.task} unchanged (same step saved again)."
    else:
        head = f"Saved step {r.step} of {r.task} ({r.commit[:7]}): {_changes(r.changes)}."
    extra = []
    if r.redacted:
        extra.append(f"{r.redacted} secret(s) redacted from the text")
    if r.skipped:
        first = r.skipped[0]
        extra.append(f"{len(r.skipped)} file(s) left out, e.g. {_clip(first.path, 60)} "
                     f"({first.reason})")
    if r.closed:
        extra.append("the task is closed")
    return _clip(head + (" " + "; ".join(extra) + "." if extra else ""), 300)


def init(r: InitResult) -> str:
    out = f"Started task {r.save.task} ({_clip(r.name, 60)}); step 0 is {r.save.commit[:7]}."
    if r.suspended:
        out += (f" Task {r.suspended} was active and is now suspended: "
                f"{_next('switch', task=r.suspended)} goes back to it.")
    step = _next("save", title=BLANK, conclusion=BLANK, next=BLANK)
    return _clip(out + f" Next: {step} after each step.", 400)


def resume(r: ResumeResult) -> str:
    return r.text


def _undo(safety: str, task: str) -> str:
    """The call that undoes an apply, runnable as written: its task named (the apply may
    have been in a task that is not the active one) and confirmed (it rewrites as many
    files as the apply did)."""
    undo = _next("restore", target=safety[:12], task=task, apply=True, confirm=True)
    return f"Safety copy {safety[:12]}: {undo} undoes it."


def restore(r: RestoreResult) -> str:
    p = r.plan
    t = p.target
    counts = p.counts
    what = ", ".join(f"{counts[k]} {k}" for k in ("create", "modify", "delete", "mode")
                     if counts.get(k)) or "no file changes"
    lines = [f"{'Restored' if r.applied else 'Restore'} {t.label} ({t.commit[:7]}) in "
             f"{r.workspace}: {what}; {counts['unrestorable']} unrestorable."]
    for kind, names in (("modify", p.modify), ("delete", p.delete), ("create", p.create)):
        if names:
            more = f" (+{len(names) - 5} more)" if len(names) > 5 else ""
            lines.append(f"  {kind}: {', '.join(_clip(n, 60) for n in names[:5])}{more}")
    if r.applied:
        if r.safety:
            lines.append(_undo(r.safety, t.task))
            if p.paths:
                lines.append(f"The safety copy holds {', '.join(_clip(x, 60) for x in p.paths)}"
                             " exactly as they were.")
        else:
            lines.append("The workspace already matched; nothing was written.")
    elif any(counts.get(k) for k in ("create", "modify", "delete", "mode")):
        apply = _next("restore", target=t.commit[:12], apply=True, expect=p.plan_id,
                      confirm=True if r.needs_confirm else None)
        lines.append(f"Nothing changed. Apply with: {apply}")
    return "\n".join(lines)


def revert(r: RevertResult) -> str:
    rp = r.plan
    counts = rp.counts
    clean = sum(counts.get(k, 0) for k in ("create", "modify", "delete", "mode"))
    first, last = rp.target.commit[:12], rp.last.commit[:12]
    target = first if first == last else f"{first}..{last}"
    lines = [f"{'Reverted' if r.applied else 'Revert'} {rp.label} in {r.workspace}: "
             f"{clean} clean, {counts['conflict']} conflict, {counts['already']} already, "
             f"{counts['unrestorable']} unrestorable."]
    if rp.conflicts:
        names = ", ".join(_clip(c.path, 60) + ("" if c.why == "content" else f" ({c.why})")
                          for c in rp.conflicts[:5])
        lines.append(f"  conflict: {names}")
    if r.applied:
        if r.safety:
            lines.append(_undo(r.safety, rp.target.task))
        else:
            lines.append("The workspace already lacks that change; nothing was written.")
    elif rp.conflicts and not rp.choice:
        settle = _next("revert", target=target, apply=True, conflicts=BLANK)
        lines.append(f'Nothing changed. Settle conflicts: {settle} with conflicts "markers", '
                     '"ours" or "theirs"; patch=true shows them.')
    elif clean or (rp.choice and rp.conflicts):
        apply = _next("revert", target=target, apply=True, expect=rp.plan_id,
                      conflicts=rp.choice, confirm=True if r.needs_confirm else None)
        lines.append(f"Nothing changed. Apply with: {apply}")
    return "\n".join(lines)


def capture(r: DriftResult) -> str:
    if not r.recorded:
        return "Nothing changed since the last step or drift; no drift recorded."
    return f"Recorded drift {r.commit[:7]} after step {r.after_step}: {_changes(r.changes)}."


def tasks(r: TasksResult) -> str:
    rows = [f"{'*' if t.status == 'active' else ' '} {t.id}  {t.status}  {t.head.n} steps  "
            f"{_clip(t.meta.name or '', 50)}" for t in r.tasks]
    start = _next("init", name=BLANK, goal=BLANK)
    return "\n".join(rows) or f"No tasks yet: {start} starts one."


def log(r: LogResult) -> str:
    """One line per step, newest first (with its drift count)."""
    lines = [f"Task {r.task} ({_clip(r.name or '', 60)}), {r.status}, "
             f"steps 0-{r.newest_step}:"]
    for s in reversed(r.steps):
        n = len(r.after.get(s.n, []))
        lines.append(f"  {s.n}. {s.commit[:7]} {s.note.created_at[:16]}  "
                     f"{_clip(s.note.title, 80)}" + (f"  (+{n} drifts)" if n else ""))
    if r.more and r.steps:
        lines.append(f"  ... {r.more} older: {_next('log', before=r.steps[0].n)}")
    return "\n".join(lines)


def _count(changes: dict[str, list[str]]) -> int:
    return sum(len(v or ()) for v in changes.values())


def step(r: LogResult) -> str:
    """One step asked for by number, in full: what it concluded, what is next, its checks and
    its drifts."""
    s: StepRecord = r.steps[0]
    n = s.note
    lines = [f"Step {s.n} of {r.task} ({s.commit[:7]}, {n.created_at[:16]}): "
             f"{_clip(n.title, 200)}"]
    for label, text in (("Conclusion", n.conclusion), ("Next", n.next)):
        if text:
            lines.append(f"{label}: {_clip(text, 600)}")
    for label, values in (("Verified", n.verified), ("Decision", n.decisions),
                          ("Open", n.open_questions)):
        lines += [f"{label}: {_clip(v, 300)}" for v in values]
    lines.append(f"Changed: {_changes(s.changed)}")
    for x in r.drifts:
        lines.append(f"  drift {x.commit[:7]} ({x.note.trigger}): {_count(x.note.changes)} "
                     "path(s)")
    return "\n".join(lines)


def switch(t: TaskInfo) -> str:
    return (f"Task {t.id} ({_clip(t.meta.name or '', 60)}) is active again at step "
            f"{t.head.n}; the task active before is suspended. Next: {_next('resume')}.")


def diff(r: DiffResult) -> str:
    lines = [f"{len(r.files)} path(s) differ between {r.base.get('label', r.base)} and "
             f"{r.target.get('label', r.target)}: +{r.additions} -{r.deletions} lines."]
    for f in r.files[:15]:
        counts = "binary" if f.additions is None else f"+{f.additions} -{f.deletions}"
        lines.append(f"  {f.status} {_clip(f.path, 100)} {counts}")
    if len(r.files) > 15:
        lines.append(f"  ... {len(r.files) - 15} more in the structured content")
    if r.patch:
        lines.append(r.patch if len(r.patch) <= 20_000 else
                     r.patch[:20_000] + "\n... the patch goes on (structured content)")
    return "\n".join(lines)


def search(r: SearchResult) -> str:
    """The hits, one line each: task, checkpoint, kind, snippet."""
    if not r.hits:
        return f"Nothing in {r.indexed} checkpoints' notes matches {_clip(r.query, 60)!r}."
    lines = [f"{h.task} {h.label} [{h.kind}] {_clip(' '.join(h.text.split()), 140)}"
             for h in r.hits]
    return "\n".join(lines + (["(more: narrow with task, kind or since)"] if r.more else []))


def why(r: WhyResult) -> str:
    """The lines' origins, one line per run of lines from one checkpoint (at most 12)."""
    runs: list[list[LineOrigin]] = []
    for o in r.lines:
        if runs and runs[-1][-1].commit == o.commit and runs[-1][-1].line == o.line - 1:
            runs[-1].append(o)
        else:
            runs.append([o])
    lines = [f"{r.path} ({r.total_lines} lines, task {r.task}):"]
    for run in runs[:12]:
        o = run[0]
        span = f"{o.line}" if len(run) == 1 else f"{o.line}-{run[-1].line}"
        where = f"{o.commit[:7]} {o.label}" if o.commit else o.label
        tool = o.tool or {}
        if tool.get("command"):
            where += f" by `{_clip(tool['command'], 60)}`"
        elif tool.get("name"):
            where += f" by {tool['name']}"
        said = [f"prompt {_clip(o.prompt, 80)!r}"] if o.prompt else []
        if o.saved_in is not None and o.kind != "before_task":
            said.append(f"step {o.saved_in}: {_clip(o.conclusion or '', 80)}")
        said.append(o.verified)
        lines.append(f"  {span}: {where}; " + "; ".join(said))
    if len(runs) > 12:
        lines.append(f"  ... {len(runs) - 12} more runs in the structured content")
    if r.more:
        last = r.lines[-1].line if r.lines else 0
        lines.append(f"  ... {r.more} more lines: ask for {r.path}:{last + 1}-{last + r.more}")
    return "\n".join(lines)


def export(r: ExportResult) -> str:
    return (f"Wrote task {r.task} ({r.steps} steps, {r.objects} objects) to {r.path}. "
            f"Elsewhere: {_next('import', package=str(r.path))}.")


def push(r: PushResult) -> str:
    tasks = ", ".join(f"{t.task} ({t.steps} steps)" for t in r.tasks)
    return f"Pushed {tasks} to {r.remote}."


def fetch(r: FetchResult) -> str:
    if r.task is None:
        listed = "; ".join(f"{t.task} \"{t.name or '?'}\" ({t.steps} steps, "
                           f"{t.last_activity or '?'})" for t in r.tasks[:10])
        more = f"; and {len(r.tasks) - 10} more" if len(r.tasks) > 10 else ""
        return (f"{r.remote} holds {len(r.tasks)} tasks: {listed}{more}. Fetch one: "
                f"{_next('fetch', task=BLANK)}." if r.tasks else
                f"{r.remote} holds no tasks.")
    how = "new here" if r.created else "moved forward" if r.moved else "up to date"
    came = f" (as {r.task})" if r.source else ""
    kept = f"; {r.drifts_kept} remote drifts kept" if r.drifts_kept else ""
    return (f"Fetched task {r.source or r.task}{came}: {how}, step {r.steps}{kept}. Files "
            f"unchanged. Next: {_next('resume', task=r.task)}.")


def import_(r: ImportResult) -> str:
    if r.dry_run:
        return f"The package holds task {r.task} ({r.steps} steps); nothing was written."
    return (f"Imported task {r.task} ({r.steps} steps); it is the active task. Next: "
            f"{_next('resume')}; its files: {_next('restore', target='head')}.")


def compress(r: CompressResult) -> str:
    if r.dry_run:
        return (f"Would drop {len(r.eligible)} old drift chain(s), freeing about "
                f"{r.bytes_freeable} bytes; nothing changed.")
    packed = (f"Packed {r.packed_objects} loose object(s), {r.packed_refs} loose ref(s). "
              if r.packed_objects or r.packed_refs else "")
    if not r.dropped:
        return f"{packed}Nothing to drop: {r.why_nothing or 'no old drifts'}."
    return f"{packed}Dropped {len(r.dropped)} old drift chain(s); {r.bytes_freed} bytes freed."


def full_results() -> bool:
    """GITCKPT_MCP_RESULTS=full: every tool declares its output schema and every answer
    carries the result's whole object as structured content (the CLI's `--json`), for a
    program that reads MCP. Otherwise an answer is its text alone, because hosts differ in
    what they show their model of structured content (one shows only its JSON, one the text
    and the JSON, one only the text), and the text is what gitckpt writes for a model, within
    its budget (docs/mcp.md)."""
    return os.environ.get("GITCKPT_MCP_RESULTS", "").strip().lower() == "full"


def error_result(e: GitckptError) -> CallToolResult:
    """An error as the agent reads it: the message and the hint in tool-call terms (with
    full results, over the error object: code, message, hint, the suggested calls as data)."""
    hint = e.hint_in(MCP)
    text = f"{e.message}\nhint: {hint}" if hint else e.message
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                          structured_content=printable(e.to_dict(MCP)) if full_results()
                          else None)


def printable(value: Any) -> Any:
    """`value` with file names that are not UTF-8 (lone surrogates) written as `\\xNN`: the
    protocol carries UTF-8 only, and a result must never fail after the work was done."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    return value
