"""What a save says, checked against the size limits, cleaned and redacted before any lock is
taken: the step's texts, the memory it adds or retires, the commands it ran and the files it
says matter."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import field
from typing import Any

from gitckpt.core import limits
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.paths import normalize_paths
from gitckpt.core.record import dataclass
from gitckpt.engine.notes import PlanItem
from gitckpt.safety.redact import clean, redact

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


def prepare(title: str, *, conclusion: str = "", next: str | list[str] = "",
            description: str = "", plan: list[PlanItem] | None = None,
            plan_new: Iterable[str] = (), commands: list[dict] | None = None,
            files: list[dict] | None = None, **lists: list[str] | None) -> StepInput:
    """Check, clean and redact a save. `next` may be a list of ordered next actions: the
    first is `next`, the others `then`. `verified` entries may be command records
    ({command, exit_code, ...}), which join `commands`."""
    unknown = set(lists) - set(LISTS)
    if unknown:
        raise TypeError(f"unknown fields {sorted(unknown)}")
    steps = [next] if isinstance(next, str) else list(next)
    if not all(isinstance(s, str) for s in steps):
        raise InvalidArgument("next takes a text or a list of texts.",
                              'For example next=["run the tests", "update the docs"].')
    verified = lists.get("verified") or []
    records = [v for v in verified if isinstance(v, dict)]
    lists["verified"] = [v for v in verified if not isinstance(v, dict)]
    lists["then"] = [*(lists.get("then") or []), *steps[1:]]
    raw = {"title": title, "conclusion": conclusion, "next": steps[0] if steps else "",
           "description": description}
    for key, value in raw.items():
        limits.check_text(key, value)
    cleaned: dict[str, list[str]] = {}
    for key in LISTS:
        items = lists.get(key) or []
        limits.check_list(key, items)
        cleaned[key] = [c for c in map(clean, items) if c]
    plan = plan or []
    limits.check_list("plan", [p.item for p in plan], count=limits.PLAN, each=limits.TITLE)
    runs = [_command(c) for c in [*records, *(commands or [])]]
    limits.check_list("commands", [c["command"] for c in runs])
    notes = [_file(f) for f in files or []]
    limits.check_list("files", [f["note"] for f in notes])
    limits.check_note({**raw, **cleaned, "plan": [vars(p) for p in plan], "commands": runs,
                       "files": notes})
    texts = {"title": clean(title, one_line=True), "conclusion": clean(conclusion),
             "next": clean(raw["next"]), "description": clean(description)}
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
        text, n = redact(clean(p.item, one_line=True))
        stored_plan.append(PlanItem(text, p.status))
        count += n
    new = frozenset(redact(clean(t, one_line=True))[0] for t in plan_new)
    return StepInput(texts["title"], texts["conclusion"], texts["next"], texts["description"],
                     cleaned, stored_plan, new, runs, notes, count)


def _command(c: dict) -> dict[str, Any]:
    """{command, exit_code, note?, duration_s?}, checked."""
    example = 'For example commands=[{"command": "pytest -q", "exit_code": 0}].'
    if not isinstance(c, dict) or not isinstance(c.get("command"), str) \
            or not clean(c["command"], one_line=True):
        raise InvalidArgument("A command record needs its command text.", example)
    code = c.get("exit_code")
    if isinstance(code, bool) or not isinstance(code, int) or not -(2**31) <= code < 2**31:
        raise InvalidArgument(f"The command {c['command'][:60]!r} needs its exit_code (a whole "
                              "number: 0 for success).", example)
    unknown = set(c) - {"command", "exit_code", "note", "duration_s"}
    if unknown:
        raise InvalidArgument(f"A command record has no field {sorted(unknown)[0]!r}.",
                              "Its fields are command, exit_code, note and duration_s.")
    note = c.get("note") or ""
    duration = c.get("duration_s")
    if not isinstance(note, str) or (duration is not None and (
            isinstance(duration, bool) or not isinstance(duration, int | float)
            or not math.isfinite(duration) or duration < 0)):
        raise InvalidArgument("A command's note is a text and its duration_s a number of "
                              "seconds.", example)
    out: dict[str, Any] = {"command": clean(c["command"], one_line=True), "exit_code": code,
                           "note": clean(note, one_line=True)}
    if duration is not None:
        out["duration_s"] = round(float(duration), 3)
    return out


def _file(f: dict) -> dict[str, str]:
    """{path, note}: the path inside the workspace, cleaned like a restore's path filter."""
    if not isinstance(f, dict) or not isinstance(f.get("path"), str) \
            or not isinstance(f.get("note", ""), str) or set(f) - {"path", "note"}:
        raise InvalidArgument("A file note is {path, note}.",
                              'For example files=[{"path": "src/auth.py", "note": "the '
                              'token check lives here"}].')
    paths = normalize_paths([f["path"]])
    if not paths:
        raise InvalidArgument("A file note names a file or folder, not the whole workspace.",
                              "Give the path of the file it is about.")
    return {"path": paths[0], "note": clean(f.get("note", ""), one_line=True)}
