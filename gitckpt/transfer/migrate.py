"""Tasks from the tools gitckpt replaces: a claude-checkpoint-mcp `.claude-checkpoint` file
and a task-checkpoint-mcp store. Each source is read and checked whole before anything is
written; malformed input is refused with what is wrong and where.

task-checkpoint-mcp 0.1.7 keeps `tasks/<id>/state.json`, one `steps/sNNNN.json` per step with
a `manifest_ref` into `manifest/mNNNN.json` (a full file map, or a delta on a parent), and file
contents as `payload/<sha[:2]>/<sha256>`. Files it never stored (its sensitive list, files over
its size limit) and files gitckpt treats as credentials are left out and listed as skipped.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from gitckpt.core import json_input, limits
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.ids import ObjectId
from gitckpt.core.inputs import CommandRun, FileNote, PlanStatus
from gitckpt.core.objects import EMPTY_TREE, Change, Mode, apply_changes
from gitckpt.core.operations import InitRequest, PlanEntry, SaveRequest
from gitckpt.core.paths import WorkPath
from gitckpt.core.shape import Shaped
from gitckpt.engine.notes import PLAN_STATUSES, Note, PlanItem
from gitckpt.engine.records import parse_time, rfc3339
from gitckpt.engine.step_input import prepare, prepare_task
from gitckpt.engine.timeline import Timeline
from gitckpt.safety.sensitive import classify, content_sensitive

SOURCES = ("claude-checkpoint", "task-checkpoint")
MAX_JSON = 4 * 2**20  # bytes of one JSON file of a source
_STEP = re.compile(r"s(\d{1,9})\.json")
_MANIFEST = re.compile(r"m\d{1,9}\.json")
_SHA = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Migrated(Shaped):
    """A task brought in: its id, name, steps and the paths left out of its snapshots."""

    task: str
    name: str | None
    steps: int
    skipped: list[str]


@dataclass(frozen=True)
class MigrateResult(Shaped):
    source: str
    path: str
    tasks: list[Migrated]
    active: str | None


class _Bad(InvalidArgument):
    def __init__(self, where: Path | str, what: str) -> None:
        super().__init__(f"{where}: {what}; nothing was imported.",
                         "Point to an unmodified file or store of that tool.")


def _json(path: Path) -> Any:
    try:
        st = os.lstat(path)
    except OSError as e:
        raise _Bad(path, f"cannot be read ({e.strerror})") from e
    if not stat.S_ISREG(st.st_mode):
        raise _Bad(path, "is not a regular file (a link or a folder)")
    if st.st_size > MAX_JSON:
        raise _Bad(path, f"is {st.st_size:,} bytes, more than such a file holds")
    try:
        return json_input.loads(path.read_bytes())
    except (OSError, ValueError) as e:
        raise _Bad(path, f"is not valid JSON ({e})") from e


def _text(value: Any, where: Path, name: str, limit: int = limits.TEXT) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad(where, f"{name} is not a text")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _texts(value: Any, where: Path, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(where, f"{name} is not a list of texts")
    return [_text(v, where, name, limits.ITEM) for v in value[: limits.ITEMS] if v.strip()]


def _path(rel: Any, where: Path) -> str:
    """A workspace-relative path of a source, refused if it could leave the workspace or
    name git's own folder."""
    try:
        return WorkPath(rel)
    except InvalidArgument:
        raise _Bad(where, f"holds the path {str(rel)[:80]!r}, which is not inside a "
                   "workspace") from None


# -- claude-checkpoint-mcp --------------------------------------------------------------------

def claude_checkpoint(tl: Timeline, path: Path) -> MigrateResult:
    """A new task from a `.claude-checkpoint` file (version 1): its goal and tasks are the
    task's goal and plan; step 1 carries the summary, next steps, decisions, modified files
    with their notes and the recent commands (not bound to a tree: they ran on files gitckpt
    never saw)."""
    path = Path(path)
    if path.is_dir():
        path = path / ".claude-checkpoint"
    data = _json(path)
    if not isinstance(data, dict) or data.get("version") != 1:
        raise _Bad(path, "is not a version 1 .claude-checkpoint file")
    goal = data.get("goal") or {}
    if not isinstance(goal, dict):
        raise _Bad(path, "goal is not an object")
    plan = []
    for t in goal.get("tasks") or []:
        if not isinstance(t, dict) or not isinstance(t.get("description"), str) \
                or t.get("status", "pending") not in PLAN_STATUSES:
            raise _Bad(path, "goal.tasks holds an entry without description or status")
        if t["description"].strip():
            plan.append(PlanItem(_text(t["description"], path, "task", limits.TITLE),
                                 t.get("status", "pending")))
    project = data.get("project") or {}
    name = _text(project.get("name") if isinstance(project, dict) else None, path,
                 "project.name", limits.TITLE) or "claude-checkpoint"
    files = []
    for f in data.get("modifiedFiles") or []:
        if not isinstance(f, dict):
            raise _Bad(path, "modifiedFiles holds an entry that is not an object")
        note = _text(f.get("note"), path, "a file note", limits.ITEM)
        status = f.get("status")
        files.append(FileNote(_path(f.get("path"), path),
                              " ".join(x for x in (f"({status})" if status else "", note) if x)))
    commands, verified = [], []
    for c in data.get("recentCommands") or []:
        if not isinstance(c, dict) or not isinstance(c.get("command"), str):
            raise _Bad(path, "recentCommands holds an entry without its command")
        code = c.get("exitCode")
        note = _text(c.get("note"), path, "a command note", limits.ITEM)
        if isinstance(code, int) and not isinstance(code, bool):
            commands.append(CommandRun(c["command"][: limits.ITEM], code, note))
        else:
            verified.append(f"ran {c['command'][:1800]}" + (f": {note}" if note else ""))
    spec = prepare(SaveRequest(
        "Imported from .claude-checkpoint", _text(data.get("summary"), path, "summary"),
        tuple(_texts(data.get("nextSteps"), path, "nextSteps")) or "",
        decisions=tuple(_texts(data.get("decisions"), path, "decisions")),
        verified=tuple(verified[: limits.ITEMS]), commands=tuple(commands[-limits.ITEMS:]),
        files=tuple(files[: limits.ITEMS])))
    # Commands ran on files gitckpt never saw: no tree, so no check claims this one.
    spec = replace(spec, commands=[{**c, "tree": ""} for c in spec.commands])
    goal_text = _text(goal.get("primary"), path, "goal.primary")
    task, _ = tl.init(prepare_task(InitRequest(
        name, goal_text, plan=tuple(PlanEntry(p.item, cast(PlanStatus, p.status))
                                    for p in plan))))  # (statuses checked above)
    saved = tl.save(spec, task=task)
    return MigrateResult("claude-checkpoint", str(path),
                         [Migrated(task, name, saved.step, [])],
                         task)


# -- task-checkpoint-mcp ----------------------------------------------------------------------

@dataclass
class _TcStep:
    note: Note
    files: dict[str, tuple[int, str]]  # path -> (mode, sha256)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # as Note.skipped


@dataclass
class _TcTask:
    meta: Note
    steps: list[_TcStep]
    closed: bool
    active_here: bool
    created: str


def task_checkpoint(tl: Timeline, store: Path) -> MigrateResult:
    """Every task of a task-checkpoint-mcp store, each step with its title, conclusion,
    next, verified and open questions and its files rebuilt from the stored contents. The
    task active for this workspace there (else the newest open one) becomes active here."""
    store = Path(store)
    pointer = store / ".task-checkpoint-store.json"
    if not (store / "tasks").is_dir() and pointer.is_file():
        target = _json(pointer)
        store = Path(target.get("store", "")) if isinstance(target, dict) else store
    elif not (store / "tasks").is_dir() and (store / ".checkpoints" / "tasks").is_dir():
        store = store / ".checkpoints"
    if not (store / "tasks").is_dir():
        raise _Bad(store, "is not a task-checkpoint-mcp store (no tasks folder)")
    active = _active(store, tl)
    tasks = [_read_task(d, store, d.name in active)
             for d in sorted((store / "tasks").iterdir()) if d.is_dir()]
    if not tasks:
        raise _Bad(store, "holds no task")
    contents = _check_payloads(store, tasks)
    tasks.sort(key=lambda t: t.created)
    chosen = next((t for t in tasks if t.active_here), None) or next(
        (t for t in reversed(tasks) if not t.closed), None)
    out = []
    blobs: dict[str, ObjectId] = {}
    for t in tasks:
        trees = _trees(tl, store, t, contents, blobs)
        steps = [(tree, s.note) for tree, s in zip(trees, t.steps, strict=True)]
        if t.closed and steps:
            steps[-1] = (steps[-1][0], replace(steps[-1][1], closed=True))
        task = tl.create_task(t.meta, steps, activate=t is chosen)
        out.append(Migrated(task, t.meta.name, len(steps),
                            sorted({s["path"] for st in t.steps for s in st.skipped})))
    return MigrateResult("task-checkpoint", str(store), out,
                         out[tasks.index(chosen)].task if chosen else None)


def _active(store: Path, tl: Timeline) -> set[str]:
    """The task ids the store marks active for this workspace."""
    current = store / "current.json"
    if not current.is_file():
        return set()
    data = _json(current)
    table = data.get("active") if isinstance(data, dict) else None
    here = os.path.realpath(tl.store.root)
    return {tid for root, tid in (table or {}).items()
            if isinstance(root, str) and os.path.realpath(root) == here}


def _read_task(folder: Path, store: Path, active_here: bool) -> _TcTask:
    state = _json(folder / "state.json")
    if not isinstance(state, dict):
        raise _Bad(folder / "state.json", "is not an object")
    name = _text(state.get("name"), folder, "name", limits.TITLE) or folder.name
    exclude = _texts(state.get("exclude"), folder, "exclude")[: limits.PATTERNS]
    created = _time(state.get("created_at"))
    meta = Note(kind="init", task="", step=0, created_at=created, title=name, name=name,
                goal=_text(state.get("goal"), folder, "goal"),
                constraints=_text(state.get("constraints"), folder, "constraints"),
                exclude=exclude, workspace=None)
    numbered = []
    for p in (folder / "steps").iterdir() if (folder / "steps").is_dir() else ():
        m = _STEP.fullmatch(p.name)
        if m:
            numbered.append((int(m.group(1)), p))
    steps: list[_TcStep] = []
    cache: dict[str, dict[str, Any]] = {}  # manifest name -> its full file map
    for n, p in sorted(numbered):
        raw = _json(p)
        if not isinstance(raw, dict):
            raise _Bad(p, "is not an object")
        entries = _manifest(folder / "manifest", raw.get("manifest_ref"), cache, set())
        files: dict[str, tuple[int, str]] = {}
        skipped: list[dict[str, Any]] = []
        for rel, e in sorted(entries.items()):
            rel = _path(rel, p)
            if not isinstance(e, dict):
                raise _Bad(p, f"the manifest entry of {rel!r} is not an object")
            reason = ("sensitive in task-checkpoint" if e.get("sensitive") else
                      f"not stored by task-checkpoint ({e['skipped']})" if e.get("skipped")
                      else None)
            if reason is None and classify(rel)[0] == "out":
                reason = "sensitive"
            sha = e.get("sha256")
            if reason is None and not (isinstance(sha, str) and _SHA.fullmatch(sha)):
                raise _Bad(p, f"the manifest entry of {rel!r} has no content hash")
            if reason:
                skipped.append({"path": rel, "reason": reason})
                continue
            assert isinstance(sha, str)  # no reason to skip it: checked above
            given = e.get("mode")
            mode = given if isinstance(given, int) else 0o644
            files[rel] = (Mode.EXECUTABLE if mode & 0o111 else Mode.FILE, sha)
        title = _text(raw.get("title"), p, "title", limits.TITLE) or f"step {n}"
        note = Note(kind="step", task="", step=n, created_at=_time(raw.get("timestamp")),
                    title=title, conclusion=_text(raw.get("conclusion"), p, "conclusion"),
                    next=_text(raw.get("next"), p, "next"),
                    description=_text(raw.get("description"), p, "description"),
                    verified=_texts(raw.get("verified"), p, "verified"),
                    open_questions=_texts(raw.get("open_questions"), p, "open_questions"),
                    skipped=skipped)
        steps.append(_TcStep(note, files, skipped))
    return _TcTask(meta, steps, state.get("status") == "closed", active_here, created)


def _manifest(folder: Path, ref: Any, cache: dict[str, dict[str, Any]], seen: set[str]
              ) -> dict[str, Any]:
    """The full file map of manifest `ref`: a delta is its parent's map, plus its entries,
    minus its removed paths."""
    if ref in (None, ""):
        return {}
    if not isinstance(ref, str) or not _MANIFEST.fullmatch(ref):
        raise _Bad(folder, f"a step names the manifest {str(ref)[:40]!r}")
    if ref in cache:
        return dict(cache[ref])
    if ref in seen:
        raise _Bad(folder / ref, "is part of a cycle of manifests")
    seen.add(ref)
    raw = _json(folder / ref)
    if not isinstance(raw, dict):
        raise _Bad(folder / ref, "is not an object")
    entries = raw.get("entries") or raw.get("full_baseline") or {}
    removed = raw.get("removed") or []
    if not isinstance(entries, dict) or not isinstance(removed, list):
        raise _Bad(folder / ref, "has malformed entries")
    if raw.get("mode") == "delta":
        out = _manifest(folder, raw.get("parent"), cache, seen)
        out.update(entries)
        for rel in removed:
            out.pop(rel, None)
    else:
        out = dict(entries)
    cache[ref] = dict(out)
    return out


def _check_payloads(store: Path, tasks: list[_TcTask]) -> dict[str, Path]:
    """Every content a step needs exists and hashes to its name (read once per content);
    one that is missing is refused, before anything is written."""
    found: dict[str, Path] = {}
    for t in tasks:
        for s in t.steps:
            for rel, (_, sha) in s.files.items():
                if sha in found:
                    continue
                p = store / "payload" / sha[:2] / sha
                try:
                    data = p.read_bytes() if stat.S_ISREG(os.lstat(p).st_mode) else None
                except OSError:
                    data = None
                if data is None or hashlib.sha256(data).hexdigest() != sha:
                    raise _Bad(p, f"(the content of {rel!r}) is missing or damaged")
                found[sha] = p
    return found


def _trees(tl: Timeline, store: Path, t: _TcTask, contents: dict[str, Path],
           blobs: dict[str, ObjectId]) -> list[ObjectId]:
    """The tree of each step, built as changes on the previous one."""
    st = tl.store
    trees: list[ObjectId] = []
    prev: dict[str, tuple[int, str]] = {}
    tree = EMPTY_TREE
    st.prepare()
    with st.lock():
        for s in t.steps:
            for rel, (_, sha) in list(s.files.items()):
                verdict = classify(rel)[0]
                data = contents[sha].read_bytes() if sha not in blobs or verdict in (
                    "content", "key") else None
                if data is not None and verdict in ("content", "key") \
                        and content_sensitive(data, verdict):
                    del s.files[rel]  # a credential by its content: never stored here
                    s.skipped.append({"path": rel, "reason": "sensitive"})
                    continue
                if sha not in blobs:
                    assert data is not None  # read above: its content is not written yet
                    blobs[sha] = st.write_blob(data)
            changes: dict[bytes, Change] = {
                rel.encode(): (int(m), blobs[sha]) for rel, (m, sha) in s.files.items()
                if prev.get(rel) != (m, sha)}
            changes.update({rel.encode(): None for rel in prev if rel not in s.files})
            tree = apply_changes(st.read_tree, st.write_tree, tree, changes)
            trees.append(ObjectId(tree))
            prev = dict(s.files)
    return trees


def _time(value: Any) -> str:
    """A source's time as gitckpt writes times; a missing or bad one as now."""
    t = parse_time(value) if isinstance(value, str) else None
    return rfc3339(t if t is not None else time.time())
