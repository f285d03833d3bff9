"""The JSON note attached to every timeline commit (DESIGN.md section 2), and the task plan."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from gitckpt.core import json_input
from gitckpt.core.errors import CHECK_STORE, InvalidArgument, SchemaTooNew, StoreCorrupt
from gitckpt.safety.redact import redact

SCHEMA = 2  # 2: gotchas, answered, dropped, commands, files, then (all additive)

Kind = Literal["init", "step", "drift", "restore", "import"]
PLAN_STATUSES = ("pending", "in_progress", "done", "blocked")
PLAN_MARKS = {"done": "[x]", "in_progress": "[~]", "pending": "[ ]", "blocked": "[!]"}


@dataclass(frozen=True)
class PlanItem:
    item: str
    status: str = "pending"

    def __post_init__(self) -> None:
        if not self.item.strip():
            raise InvalidArgument("A plan item has no text.", "Give each plan entry its text.")
        if self.status not in PLAN_STATUSES:
            raise InvalidArgument(
                f"Unknown plan status {self.status!r} for {self.item!r}.",
                f"Use one of: {', '.join(PLAN_STATUSES)}.",
            )


def merge_plan(plan: list[PlanItem], updates: list[PlanItem],
               new: frozenset[str] | set[str] = frozenset()) -> list[PlanItem]:
    """Items matched by text get the new status; new ones are appended; none are dropped.

    An update that matches no item but is close to one (letter case, a plural, a typo) is
    refused with the item it probably means, unless its text is in `new` (said to be new):
    a typo must not add an item marked done and leave the real one pending."""
    merged = {p.item: p for p in plan}
    for u in updates:
        if u.item not in merged and u.item not in new:
            near = close_item(u.item, list(merged))
            if near is not None:
                raise InvalidArgument(
                    f'The plan has no item "{u.item}"; did you mean "{near}"?',
                    f'Use the item\'s exact text ("{near}"), or mark the entry as new '
                    '(a tool call\'s "add": true; on the command line, --plan "+TEXT=STATUS").')
        merged[u.item] = u
    return list(merged.values())


def close_item(text: str, items: list[str]) -> str | None:
    """The item `text` is probably a misspelling of, or None."""
    low = text.casefold().rstrip("s")
    for item in items:
        if item.casefold().rstrip("s") == low:
            return item
    import difflib

    def numbered(t: str) -> str:
        return re.sub(r"[0-9]+", "#", t)

    # "step 10" is not a typo of "step 1": items that differ only in numbers are different
    candidates = [i for i in items if numbered(i) != numbered(text)]
    found = difflib.get_close_matches(text, candidates, 1, 0.85) if len(text) >= 5 else []
    return found[0] if found else None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: Any) -> str:
    """Readable JSON that is also valid UTF-8: file names that are not UTF-8 reach us as lone
    surrogates (Python's surrogateescape), which are written as `\\udcXX` escapes and read
    back as the same name."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_ALWAYS = {"kind", "task", "step", "created_at", "title", "workspace"}
# Fields made by gitckpt, never by hand: ids, times, paths (redacting a path would break a
# restore's view of what was left out), the user's git state. Everything else is free text.
_STRUCTURAL = {"schema", "kind", "task", "step", "created_at", "closed", "changes", "skipped",
               "git", "trigger", "partial", "target", "safety", "workspace", "reverted"}


# Keys inside a free-text field's objects that gitckpt makes: a plan item's status, a command's
# tree and exit code, a file note's path.
_MADE_KEYS = {"status", "tree", "exit_code", "duration_s", "path"}


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: v if k in _MADE_KEYS else _redacted(v) for k, v in value.items()}
    return value


@dataclass(slots=True)
class Note:
    """Everything structured about one timeline commit. Unknown keys are kept, not dropped."""

    kind: Kind
    task: str
    step: int
    created_at: str
    title: str = ""
    conclusion: str = ""
    next: str = ""
    description: str = ""
    verified: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)  # opened at this step
    decisions: list[str] = field(default_factory=list)  # made at this step
    plan: list[PlanItem] = field(default_factory=list)
    # Schema 2: task memory (gitckpt.memory folds the steps). What this step adds, answers
    # and retires; the commands it saved, each {command, exit_code, tree, note?, duration_s?};
    # the files it says matter, each {path, note}; the next actions after `next`.
    gotchas: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    then: list[str] = field(default_factory=list)
    closed: bool = False
    changes: dict[str, list[str]] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    git: dict[str, Any] | None = None
    # Drifts and restores.
    trigger: str | None = None  # watch | boundary | capture | pre_restore | run | tool | stop
    partial: bool = False
    target: str | None = None  # restore: the commit restored, and
    safety: str | None = None  # the pre_restore drift that undoes it
    # A revert (a drift, trigger "revert"): {"first", "last"} the commits whose change it
    # undid, "conflicts" the choice for conflicting files and "files" those files.
    reverted: dict[str, Any] | None = None
    # A drift an agent host's hook recorded after one tool call (trigger "tool"):
    # {"name", "host", "session"?, "command"?} (the command redacted, as every free text).
    tool: dict[str, Any] | None = None
    # A step: the user's prompts a host's hook heard since the step before (each {id, session,
    # host, at, text, model?}, redacted and capped: engine/prompts.py) and their sessions.
    prompts: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    # ... and, where a host's transcript says (engine/sessions.py), the tokens its model calls
    # used since the step before ({input, output, cache_read, cache_write}) and the models.
    usage: dict[str, int] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    # Task metadata, in the step-0 note only.
    name: str | None = None
    goal: str | None = None
    constraints: str | None = None
    exclude: list[str] | None = None
    workspace: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def dump(self) -> str:
        """The note's JSON: the only way a note is written. Every free-text value (every field
        but the structural ones, including fields this version does not know) is passed
        through `redact` here, so no field can reach the store unredacted."""
        data: dict[str, Any] = {"schema": SCHEMA}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or value is None or (value in ("", [], {}, False)
                                                      and f.name not in _ALWAYS):
                continue
            data[f.name] = [asdict(p) for p in value] if f.name == "plan" else value
        data.update(self.extra)
        return json_text({k: v if k in _STRUCTURAL else _redacted(v) for k, v in data.items()})

    @classmethod
    def parse(cls, text: str, where: str) -> Note:
        """Read a note; StoreCorrupt if it is not ours, SchemaTooNew if it is from the future."""
        try:
            data = json_input.loads(text)
            schema = data.pop("schema")
        except json_input.JsonRefused as e:
            raise StoreCorrupt(f"The note of {where} is not a gitckpt note: {e}",
                               CHECK_STORE) from e
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise StoreCorrupt(f"The note of {where} is not a gitckpt note",
                               CHECK_STORE) from e
        if not isinstance(schema, int) or schema < 1:
            raise StoreCorrupt(f"The note of {where} has a bad schema {schema!r}",
                               CHECK_STORE)
        if schema > SCHEMA:
            raise SchemaTooNew(f"The note of {where}", schema, SCHEMA)
        known = {f.name for f in fields(cls)} - {"extra"}
        extra = {k: data.pop(k) for k in list(data) if k not in known}
        try:
            data["plan"] = [PlanItem(**p) for p in data.get("plan", [])]
            note = cls(**data, extra=extra)
            _check_types(note)
            return note
        except (TypeError, InvalidArgument) as e:
            raise StoreCorrupt(f"The note of {where} is malformed: {e}",
                               CHECK_STORE) from e


_TYPES = {"kind": str, "task": str, "step": int, "created_at": str, "title": str,
          "conclusion": str, "next": str, "description": str, "closed": bool,
          "changes": dict, "skipped": list, "verified": list, "open_questions": list,
          "decisions": list, "partial": bool, "gotchas": list, "answered": list,
          "dropped": list, "commands": list, "files": list, "then": list, "prompts": list,
          "sessions": list, "usage": dict, "models": list}
_OPTIONAL_TEXT = ("trigger", "target", "safety", "name", "goal", "constraints", "workspace")
TRIGGERS = ("watch", "boundary", "capture", "pre_restore", "run")


def _check_types(note: Note) -> None:  # noqa: C901 (baseline)
    """A note read from a store is input: every field must have its type (else TypeError)."""
    for name, kind in _TYPES.items():
        value = getattr(note, name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"{name} is {type(value).__name__}, not {kind.__name__}")
    for name in ("verified", "open_questions", "decisions", "gotchas", "answered", "dropped",
                 "then", "models"):
        if not all(isinstance(v, str) for v in getattr(note, name)):
            raise TypeError(f"{name} holds a non-string")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in note.usage.values()):
        raise TypeError("usage holds a non-integer")
    if note.git is not None and not (isinstance(note.git, dict) and all(
            isinstance(note.git.get(k), str | None) for k in ("head", "branch"))):
        raise TypeError("git is not {head, branch}")
    for change, paths in note.changes.items():
        if change not in ("added", "modified", "deleted") or not isinstance(paths, list) \
                or not all(isinstance(p, str) for p in paths):
            raise TypeError("changes holds a malformed entry")
    for sk in note.skipped:
        if not (isinstance(sk, dict) and isinstance(sk.get("path"), str)
                and isinstance(sk.get("reason"), str)):
            raise TypeError("skipped holds a malformed entry")
    for c in note.commands:
        if not (isinstance(c, dict) and isinstance(c.get("command"), str)
                and isinstance(c.get("exit_code"), int) and isinstance(c.get("tree"), str)
                and isinstance(c.get("note", ""), str)
                and isinstance(c.get("duration_s", 0), int | float | None)):
            raise TypeError("commands holds a malformed entry")
    for f in note.files:
        if not (isinstance(f, dict) and isinstance(f.get("path"), str)
                and isinstance(f.get("note", ""), str)):
            raise TypeError("files holds a malformed entry")
    for name in _OPTIONAL_TEXT:
        if not isinstance(getattr(note, name), str | None):
            raise TypeError(f"{name} is not text")
    if note.kind not in ("init", "step", "drift", "restore", "import") or note.step < 0:
        raise TypeError(f"kind {note.kind!r} / step {note.step} are not valid")
