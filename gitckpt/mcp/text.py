"""What an agent reads in each MCP result: a short text over the full object (the structured
content), for results and errors alike.

Each text function takes the result's `to_dict()` and returns a few lines in tool-call terms
(never a CLI command line): what happened, and the call that comes next.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent

from gitckpt.core.errors import GitckptError
from gitckpt.core.hints import MCP


def _n(items) -> int:
    return len(items or [])


def _changes(d: dict) -> str:
    c = d.get("changes") or {}
    return f"{_n(c.get('added'))} added, {_n(c.get('modified'))} modified, " \
           f"{_n(c.get('deleted'))} deleted"


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def save(d: dict) -> str:
    """One or two lines: the step, what changed, redactions, what was left out."""
    if d.get("idempotent"):
        head = f"Step {d['step']} of {d['task']} unchanged (same step saved again)."
    else:
        head = f"Saved step {d['step']} of {d['task']} ({d['commit'][:7]}): {_changes(d)}."
    extra = []
    if d.get("redacted"):
        extra.append(f"{d['redacted']} secret(s) redacted from the text")
    skipped = d.get("skipped") or []
    if skipped:
        extra.append(f"{len(skipped)} file(s) left out, e.g. {_clip(skipped[0]['path'], 60)} "
                     f"({skipped[0]['reason']})")
    if d.get("closed"):
        extra.append("the task is closed")
    return _clip(head + (" " + "; ".join(extra) + "." if extra else ""), 300)


def init(d: dict) -> str:
    out = (f"Started task {d['task']} ({_clip(d.get('name', ''), 60)}); step 0 is "
           f"{d['commit'][:7]}.")
    if d.get("suspended"):
        out += (f" Task {d['suspended']} was active and is now suspended: "
                f'ckpt_switch(task="{d["suspended"]}") goes back to it.')
    return _clip(out + " Next: ckpt_save(title=..., conclusion=..., next=...) after each step.",
                 400)


def resume(d: dict) -> str:
    return d.get("text", "")


def _undo(safety: str, task: str) -> str:
    """The call that undoes an apply, runnable as written: its task named (the apply may
    have been in a task that is not the active one) and confirmed (it rewrites as many
    files as the apply did)."""
    return (f'Safety copy {safety[:12]}: ckpt_restore(target="{safety[:12]}", task="{task}", '
            f'apply=true, confirm=true) undoes it.')


def restore(d: dict) -> str:
    t = d["target"]
    counts = d["counts"]
    what = ", ".join(f"{counts[k]} {k}" for k in ("create", "modify", "delete", "mode")
                     if counts.get(k)) or "no file changes"
    lines = [f"{'Restored' if d['applied'] else 'Restore'} {t['label']} ({t['commit'][:7]}) in "
             f"{d['workspace']}: {what}; {counts['unrestorable']} unrestorable."]
    for kind in ("modify", "delete", "create"):
        names = d.get(kind) or []
        if names:
            more = f" (+{len(names) - 5} more)" if len(names) > 5 else ""
            lines.append(f"  {kind}: {', '.join(_clip(n, 60) for n in names[:5])}{more}")
    if d["applied"]:
        if d.get("safety"):
            lines.append(_undo(d["safety"], t["task"]))
        else:
            lines.append("The workspace already matched; nothing was written.")
    elif any(counts.get(k) for k in ("create", "modify", "delete", "mode")):
        confirm = ", confirm=true" if d.get("needs_confirm") else ""
        lines.append(f'Nothing changed. Apply with: ckpt_restore(target="{t["commit"][:12]}", '
                     f'apply=true, expect="{d["plan_id"]}"{confirm})')
    return "\n".join(lines)


def revert(d: dict) -> str:
    counts = d["counts"]
    clean = sum(counts.get(k, 0) for k in ("create", "modify", "delete", "mode"))
    target = d["target"]["commit"][:12] if d["last"]["commit"] == d["target"]["commit"] else \
        f'{d["target"]["commit"][:12]}..{d["last"]["commit"][:12]}'
    lines = [f"{'Reverted' if d['applied'] else 'Revert'} {d['label']} in {d['workspace']}: "
             f"{clean} clean, {counts['conflict']} conflict, {counts['already']} already, "
             f"{counts['unrestorable']} unrestorable."]
    if d["conflicts"]:
        names = ", ".join(_clip(c["path"], 60) + ("" if c["why"] == "content" else
                                                   f' ({c["why"]})')
                          for c in d["conflicts"][:5])
        lines.append(f"  conflict: {names}")
    if d["applied"]:
        if d.get("safety"):
            lines.append(_undo(d["safety"], d["target"]["task"]))
        else:
            lines.append("The workspace already lacks that change; nothing was written.")
    elif d["conflicts"] and not d["choice"]:
        lines.append(f'Nothing changed. Settle conflicts: ckpt_revert(target="{target}", '
                     'apply=true, conflicts="markers"|"ours"|"theirs"); patch=true shows them.')
    elif clean or (d["choice"] and d["conflicts"]):
        confirm = ", confirm=true" if d.get("needs_confirm") else ""
        choice = f', conflicts="{d["choice"]}"' if d["choice"] else ""
        lines.append(f'Nothing changed. Apply with: ckpt_revert(target="{target}", apply=true, '
                     f'expect="{d["plan_id"]}"{choice}{confirm})')
    return "\n".join(lines)


def capture(d: dict) -> str:
    if not d.get("recorded"):
        return "Nothing changed since the last step or drift; no drift recorded."
    return f"Recorded drift {d['commit'][:7]} after step {d['after_step']}: {_changes(d)}."


def tasks(d: dict) -> str:
    rows = [f"{'*' if t.get('status') == 'active' else ' '} {t['task']}  {t.get('status')}  "
            f"{t.get('steps')} steps  {_clip(t.get('name') or '', 50)}" for t in d["tasks"]]
    return "\n".join(rows) or "No tasks yet: ckpt_init(name=..., goal=...) starts one."


def log(d: dict) -> str:
    """One line per step, newest first (with its drift count); one step asked for by number
    in full."""
    drifts: dict[int, list[dict]] = {}
    for x in d.get("drifts", []):
        drifts.setdefault(x["step"], []).append(x)
    steps = d.get("steps", [])
    lines = [f"Task {d['task']} ({_clip(d.get('name', ''), 60)}), {d.get('status')}, "
             f"steps 0-{d.get('newest_step')}:"]
    for s in reversed(steps):
        n = len(drifts.get(s["step"], []))
        lines.append(f"  {s['step']}. {s['commit'][:7]} {s.get('created_at', '')[:16]}  "
                     f"{_clip(s.get('title', ''), 80)}" + (f"  (+{n} drifts)" if n else ""))
    if d.get("more") and steps:
        lines.append(f"  ... {d['more']} older: ckpt_log(before={steps[0]['step']})")
    return "\n".join(lines)


def step(d: dict) -> str:
    """One step in full: what it concluded, what is next, its checks and its drifts."""
    s = d["steps"][0]
    lines = [f"Step {s['step']} of {d['task']} ({s['commit'][:7]}, "
             f"{s.get('created_at', '')[:16]}): {_clip(s.get('title', ''), 200)}"]
    for label, key in (("Conclusion", "conclusion"), ("Next", "next")):
        if s.get(key):
            lines.append(f"{label}: {_clip(s[key], 600)}")
    for label, key in (("Verified", "verified"), ("Decision", "decisions"),
                       ("Open", "open_questions")):
        lines += [f"{label}: {_clip(v, 300)}" for v in s.get(key) or []]
    c = s.get("changes") or {}
    lines.append(f"Changed: {_n(c.get('added'))} added, {_n(c.get('modified'))} modified, "
                 f"{_n(c.get('deleted'))} deleted")
    for x in d.get("drifts", []):
        xc = x.get("changes") or {}
        count = sum(_n(v) for v in xc.values())
        lines.append(f"  drift {x['commit'][:7]} ({x.get('trigger')}): {count} path(s)")
    return "\n".join(lines)


def switch(d: dict) -> str:
    return (f"Task {d['task']} ({_clip(d.get('name') or '', 60)}) is active again at step "
            f"{d.get('steps')}; the task active before is suspended. Next: ckpt_resume().")


def diff(d: dict) -> str:
    files = d.get("files") or []
    lines = [f"{len(files)} path(s) differ between {d['base'].get('label', d['base'])} and "
             f"{d['target'].get('label', d['target'])}: +{d.get('additions', 0)} "
             f"-{d.get('deletions', 0)} lines."]
    for f in files[:15]:
        counts = "binary" if f.get("binary") else f"+{f['additions']} -{f['deletions']}"
        lines.append(f"  {f.get('status', '?')} {_clip(f['path'], 100)} {counts}")
    if len(files) > 15:
        lines.append(f"  ... {len(files) - 15} more in the structured content")
    if d.get("patch"):
        lines.append(d["patch"] if len(d["patch"]) <= 20_000 else
                     d["patch"][:20_000] + "\n... the patch goes on (structured content)")
    return "\n".join(lines)


def export(d: dict) -> str:
    return (f"Wrote task {d['task']} ({d['steps']} steps, {d['objects']} objects) to "
            f"{d['path']}. Elsewhere: ckpt_import(package=\"{d['path']}\").")


def push(d: dict) -> str:
    tasks = ", ".join(f"{t['task']} ({t['steps']} steps)" for t in d["tasks"])
    return f"Pushed {tasks} to {d['remote']}."


def fetch(d: dict) -> str:
    if d.get("task") is None:
        tasks = d.get("tasks") or []
        listed = "; ".join(f"{t['task']} \"{t['name'] or '?'}\" ({t['steps']} steps, "
                           f"{t['last_activity'] or '?'})" for t in tasks[:10])
        more = f"; and {len(tasks) - 10} more" if len(tasks) > 10 else ""
        return (f"{d['remote']} holds {len(tasks)} tasks: {listed}{more}. Fetch one: "
                "ckpt_fetch(task=ID)." if tasks else f"{d['remote']} holds no tasks.")
    how = "new here" if d["created"] else "moved forward" if d["moved"] else "up to date"
    came = f" (as {d['task']})" if d.get("source") else ""
    kept = f"; {d['drifts_kept']} remote drifts kept" if d.get("drifts_kept") else ""
    return (f"Fetched task {d.get('source') or d['task']}{came}: {how}, step {d['steps']}"
            f"{kept}. Files unchanged. Next: ckpt_resume(task=\"{d['task']}\").")


def import_(d: dict) -> str:
    if d.get("dry_run"):
        return f"The package holds task {d['task']} ({d['steps']} steps); nothing was written."
    return (f"Imported task {d['task']} ({d['steps']} steps); it is the active task. Next: "
            "ckpt_resume(); its files: ckpt_restore(target=\"head\").")


def compress(d: dict) -> str:
    dropped = len(d.get("dropped") or [])
    if d.get("dry_run"):
        return (f"Would drop {len(d.get('eligible') or [])} old drift chain(s), freeing about "
                f"{d.get('bytes_freeable', 0)} bytes; nothing changed.")
    if not dropped:
        return f"Nothing to drop: {d.get('why_nothing') or 'no old drifts'}."
    return f"Dropped {dropped} old drift chain(s); {d.get('bytes_freed', 0)} bytes freed."


def error_result(e: GitckptError) -> CallToolResult:
    """An error as the agent reads it: the message and the hint in tool-call terms, over the
    error object (code, message, hint, and the suggested calls as data)."""
    hint = e.hint_in(MCP)
    text = f"{e.message}\nhint: {hint}" if hint else e.message
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                          structured_content=printable(e.to_dict(MCP)))


def printable(value):
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
