"""The report of a task as one self-contained HTML page: no script from elsewhere, no font, no
image, nothing the page fetches; a timeline of steps and the drifts between them, each step's
conclusion and verification as badges, its diff collapsed (coloured, cut past a size), and the
decisions and questions beside it (below it on a phone)."""

from __future__ import annotations

import re
from html import escape

from gitckpt.engine.patch import FileDiff
from gitckpt.engine.records import StepRecord
from gitckpt.engine.report import Facts, StepFacts

_CSS = """
:root{--bg:#fff;--fg:#1f2328;--mute:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--ok:#1a7f37;
--bad:#cf222e;--add:#dafbe1;--del:#ffebe9;--hunk:#ddf4ff;--kw:#8250df;--str:#0a3069;--com:#6e7781}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;
--line:#3d444d;--soft:#151b23;--ok:#3fb950;--bad:#f85149;--add:#12261e;--del:#25171c;
--hunk:#121d2f;--kw:#d2a8ff;--str:#a5d6ff;--com:#8b949e}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
header{padding:16px 20px;border-bottom:1px solid var(--line)}h1{font-size:22px;margin:0 0 4px}
.mute{color:var(--mute)}main{display:grid;grid-template-columns:minmax(0,1fr) 320px;gap:20px;
padding:16px 20px;max-width:1400px;margin:0 auto}@media (max-width:800px){main{display:block}
aside{margin-top:20px}}ol.tl{list-style:none;margin:0;padding:0}
li.step{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:0 0 10px}
li.drift{margin:0 0 6px 14px;padding:2px 10px;border-left:3px solid var(--line);
font-size:13px;color:var(--mute)}h2{font-size:17px;margin:0}.n{color:var(--mute);
font-weight:normal}.badge{display:inline-block;font-size:12px;border-radius:10px;
padding:0 8px;margin:4px 4px 0 0;border:1px solid var(--line)}.ok{color:var(--ok);
border-color:var(--ok)}.bad{color:var(--bad);border-color:var(--bad)}
details{margin-top:6px}summary{cursor:pointer;color:var(--mute);font-size:13px}
pre{background:var(--soft);padding:8px;overflow-x:auto;font:12px/1.45 ui-monospace,
SFMono-Regular,Menlo,monospace;margin:6px 0 0;border-radius:6px}pre span.a{background:var(--add)}
pre span.d{background:var(--del)}pre span.h{background:var(--hunk);color:var(--mute)}
pre span.f{font-weight:bold}span.k{color:var(--kw)}span.s{color:var(--str)}
span.c{color:var(--com)}aside section{border:1px solid var(--line);border-radius:8px;
padding:10px 12px;margin-bottom:12px}aside h3{font-size:14px;margin:0 0 6px}
aside ul{margin:0;padding-left:18px}.cut{font-size:12px;color:var(--mute)}
"""

_KEYWORDS = re.compile(
    r"\b(def|class|return|if|elif|else|for|while|import|from|as|with|try|except|finally|"
    r"raise|async|await|yield|lambda|None|True|False|function|const|let|var|new|this|"
    r"public|private|static|void|int|struct|fn|impl|pub|use|match|package|func|go)\b")
_TOKENS = re.compile(r"(?P<c>#.*$|//.*$)|(?P<s>\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')")


def _code(text: str) -> str:
    """One source line, escaped, with comments, strings and keywords coloured."""
    out, at = [], 0
    for m in _TOKENS.finditer(text):
        out.append(_KEYWORDS.sub(r'<span class="k">\1</span>', escape(text[at:m.start()])))
        out.append(f'<span class="{m.lastgroup}">{escape(m.group())}</span>')
        at = m.end()
    out.append(_KEYWORDS.sub(r'<span class="k">\1</span>', escape(text[at:])))
    return "".join(out)


def _diff(patch: str) -> str:
    lines = []
    for line in patch.splitlines():
        if line.startswith(("diff --git", "+++", "---", "new file", "deleted file", "index ",
                            "old mode", "new mode", "Binary")):
            lines.append(f'<span class="f">{escape(line)}</span>')
        elif line.startswith("@@"):
            lines.append(f'<span class="h">{escape(line)}</span>')
        elif line.startswith("+"):
            lines.append(f'<span class="a">+{_code(line[1:])}</span>')
        elif line.startswith("-"):
            lines.append(f'<span class="d">-{_code(line[1:])}</span>')
        else:
            lines.append(_code(line))
    return "\n".join(lines)


def _drift(d: StepRecord) -> str:
    n = d.note
    what = escape(n.trigger or n.kind)
    if n.tool:
        what += ": " + escape(str(n.tool.get("name", "")))
        if n.tool.get("command"):
            what += f" <code>{escape(str(n.tool['command']))}</code>"
    paths = sum(len(v) for v in n.changes.values())
    return (f'<li class="drift">{"restore" if n.kind == "restore" else "drift"} · {what} · '
            f"{paths} path{'s' if paths != 1 else ''}"
            f' · <span class="mute">{escape(n.created_at)}</span></li>')


def _step(s: StepFacts, by_step: dict[int, list[str]]) -> str:
    n = s.record.note
    badges = []
    for c in n.commands:
        ok = c.get("exit_code") == 0
        badges.append(f'<span class="badge {"ok" if ok else "bad"}">'
                      f'{"✓" if ok else "✗"} {escape(str(c.get("command", "")))}</span>')
    badges += [f'<span class="badge ok">✓ {escape(v)}</span>' for v in n.verified]
    if not badges:
        badges.append('<span class="badge">not verified</span>')
    plus = sum(d.additions or 0 for d in s.files)
    minus = sum(d.deletions or 0 for d in s.files)
    body = [f'<li class="step" id="step-{n.step}"><h2><span class="n">{n.step}.</span> '
            f"{escape(n.title)}</h2>",
            f'<div class="mute">{escape(n.created_at)}</div>']
    if n.conclusion:
        body.append(f"<p>{escape(n.conclusion)}</p>")
    if n.next:
        body.append(f'<div class="mute">next: {escape(n.next)}</div>')
    body.append("<div>" + "".join(badges) + "</div>")
    for q in by_step.get(n.step, []):
        body.append(f'<div class="mute">{q}</div>')
    if s.files:
        files = f"{len(s.files)} file{'s' if len(s.files) != 1 else ''}, +{plus} -{minus}"
        if s.patch is not None:
            cut = (f'<div class="cut">… {s.cut:,} more bytes of this diff not shown '
                   f"(`gitckpt diff {n.step - 1} {n.step} --patch`)</div>" if s.cut else "")
            body.append(f"<details><summary>diff: {files}</summary><pre>{_diff(s.patch)}"
                        f"</pre>{cut}</details>")
        else:
            names = ", ".join(escape(d.path) for d in s.files[:20])
            body.append(f'<div class="mute">files: {files}: {names}</div>')
    body.append("</li>")
    return "\n".join(body)


def _stat(d: FileDiff) -> str:
    return "binary" if d.additions is None else f"+{d.additions} -{d.deletions}"


def _list(title: str, items: list[str]) -> str:
    if not items:
        return ""
    return (f"<section><h3>{escape(title)}</h3><ul>"
            + "".join(f"<li>{i}</li>" for i in items) + "</ul></section>")


def page(f: Facts) -> str:
    meta = f.meta.note
    last = f.steps[-1].record.n if f.steps else 0
    by_step: dict[int, list[str]] = {}
    for e in f.memory.answered:
        by_step.setdefault(e.step, []).append(f"answered: {escape(e.text)}")
    timeline = []
    for s in f.steps:
        timeline += [_drift(d) for d in s.drifts]
        timeline.append(_step(s, by_step))
    plan = f.steps[-1].record.note.plan if f.steps else meta.plan
    side = [
        _list("Verification", [escape(c.sentence(last)).replace("`", "") for c in f.checks]),
        _list("Decisions", [f"{escape(e.text)} <span class=mute>(step {e.step})</span>"
                            for e in f.memory.decisions]),
        _list("Open questions", [f"{escape(e.text)} <span class=mute>(step {e.step})</span>"
                                 for e in f.memory.questions]),
        _list("Gotchas", [escape(e.text) for e in f.memory.gotchas]),
        _list("Plan", [f"{escape(p.item)} <span class=mute>({escape(p.status)})</span>"
                       for p in plan]),
        _list("Files changed", [f"{escape(d.path)} <span class=mute>{_stat(d)}</span>"
                                for d in f.files[:300]]),
    ]
    usage = ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in f.usage.items())
    sub = [f"task {escape(str(f.task))}", f"{last} step{'s' if last != 1 else ''}"]
    sub += ["closed"] if f.closed else []
    sub += [f"{f.prompts} prompts"] if f.prompts else []
    sub += [f"tokens: {usage}"] if usage else []
    title = escape(meta.name or str(f.task))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}: gitckpt report</title><style>{_CSS}</style></head><body>
<header><h1>{title}</h1>
{f'<div>{escape(meta.goal)}</div>' if meta.goal else ''}
<div class="mute">{' · '.join(sub)}</div></header>
<main><section><ol class="tl">
{chr(10).join(timeline) or '<li class="step">No step saved yet.</li>'}
</ol></section><aside>{''.join(side)}</aside></main></body></html>
"""
