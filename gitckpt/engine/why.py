"""Why a line is there: for each line of a file, the step or drift that last changed it (the
tool call and prompt behind it, the step that saved it, the newest command run on a tree that
holds it), through renames, restores and reverts (`gitckpt why`, `gitckpt blame`, `ckpt_why`).

The task's checkpoints are read in the order they were taken (step 0, the drifts after it,
step 1, ...), and each version's lines are paired with the one before by git's own diff
(store/lines.py), as `git blame` pairs them along one line of history: an unchanged line
keeps its origin, a changed or added one is the version's own. A restore or a revert is the
exception: the lines it brings back keep the origin they had in the version it restored.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.objects import Mode, TreeEntry
from gitckpt.core.shape import Shaped
from gitckpt.engine import prompts as prompting
from gitckpt.engine.records import StepRecord
from gitckpt.engine.timeline import Timeline
from gitckpt.store.base import Store
from gitckpt.store.lines import is_binary, kept, split_lines, unchanged

#: Similarity (of lines, 0 to 1) above which a file added where another went is that file
#: renamed, as `git log --follow` decides with its default of 50%.
RENAME_SIMILARITY = 0.5
#: The deleted files looked at as a rename's source (a change that deleted more is a rewrite).
RENAME_CANDIDATES = 200


@dataclass(frozen=True)
class LineOrigin(Shaped):
    """Where one line of the file comes from."""

    line: int  # 1-based, in the file as it is now
    text: str
    kind: str  # before_task | step | drift | restore | revert | unsaved
    commit: str | None  # the checkpoint that wrote it (None: on disk, not checkpointed yet)
    label: str  # "step 3", "drift after step 3", "before the task", "not checkpointed"
    step: int | None  # the step it is, or follows
    trigger: str | None  # a drift's: tool, watch, boundary, capture, revert, ...
    tool: dict[str, Any] | None  # the hook's tool call: name, host, session, command
    path: str  # the file's path in that checkpoint (another where it was renamed since)
    created_at: str | None
    prompt: str | None  # the user's prompt it answered, where a hook recorded one
    saved_in: int | None  # the step that holds it (None: not saved as a step yet)
    conclusion: str | None  # that step's conclusion
    verified: str  # the newest command run on a tree with this line, or that none was
    user_commit: str | None  # before the task: the user's commit that last changed it
    task: str | None = None  # across tasks (`blame --all`): the task whose checkpoint it is


@dataclass(frozen=True)
class WhyResult(Shaped):
    """The origins of the lines asked about, and what was read to find them."""

    task: str
    path: str
    total_lines: int
    checkpoints: int  # the checkpoints of the task read
    lines: list[LineOrigin]
    more: int = 0  # lines asked for and left out (a caller's limit)


@dataclass(frozen=True)
class _Version:
    record: StepRecord | None  # None: the file on disk
    path: str | None
    blob: bytes | ObjectId | None  # the content, or the blob that holds it (read on use)
    read: Callable[[ObjectId], bytes] | None = None

    @property
    def data(self) -> bytes | None:
        """The file's content (a blob is read at each use: the versions of a long task are
        not all held at once)."""
        if self.blob is None or isinstance(self.blob, bytes):
            return self.blob
        assert self.read is not None  # given with every blob id
        return self.read(self.blob)

    def same(self, other: _Version) -> bool:
        """The same content (two blobs by their ids, without reading them)."""
        if isinstance(self.blob, str) and isinstance(other.blob, str):
            return self.blob == other.blob
        return self.data == other.data


def why(tl: Timeline, task: TaskId, path: str, first: int | None = None,
        last: int | None = None, *, on_disk: bool = True,
        limit: int | None = None) -> WhyResult:
    """The origins of lines `first`..`last` (1-based, inclusive; all by default) of `path`
    (workspace-relative) as the file is on disk (`on_disk`: the active task's view), else as
    the task's newest checkpoint holds it; at most `limit` lines (`more` says how many
    were left out)."""
    records = chronological(tl, task)
    store = tl.store
    disk = _read_disk(os.path.join(store.root, path)) if on_disk else None
    versions = _versions(TreeReader(store), records, path, disk, on_disk)
    if all(v.blob is None for v in versions):
        raise InvalidArgument(f"{path} is in no checkpoint of task {task} and not on disk.",
                              "Pass a workspace-relative path of a file the task holds.")
    final = versions[-1].data
    if final is None:
        raise InvalidArgument(f"{path} does not exist now (it was deleted).",
                              "`gitckpt log` shows where; restore it to ask about its lines.")
    if is_binary(final):
        raise InvalidArgument(f"{path} is a binary file; it has no lines.",
                              "Ask about a text file.")
    runs = _runs(records)
    origins, alive = _blame(versions, records)
    lines = split_lines(final)
    lo, hi = (first or 1), (last or len(lines))
    if lines and not 1 <= lo <= hi <= len(lines):
        asked = f"line {lo}" if lo == hi else f"lines {lo}-{hi}"
        raise InvalidArgument(f"{path} has {len(lines)} lines; {asked} is not among them.",
                              f"Ask for lines 1 to {len(lines)}.")
    shown = hi if limit is None else min(hi, lo - 1 + limit)
    ctx = _Context(tl, records, versions, runs, alive)
    picked = [ctx.origin(k + 1, lines[k], *origins[k]) for k in range(lo - 1, shown)] \
        if lines else []
    return WhyResult(task, path, len(lines), len(records), picked, hi - shown)


_WRITTEN = ("step", "drift", "restore", "revert")


def across(tl: Timeline, tasks: list[TaskId], path: str, *, active: TaskId | None,
           limit: int | None = None) -> WhyResult:
    """`why` of the file on disk over every one of `tasks` that holds it: each line's origin
    is the earliest checkpoint of any of them that has the line where it is now (a line
    another task only found there, as its baseline or a watcher's drift, was written by the
    first); a line no task wrote keeps the active task's answer (else the first's)."""
    found: list[tuple[TaskId, WhyResult]] = []
    for tid in tasks:
        try:
            found.append((tid, why(tl, tid, path, on_disk=True)))
        except InvalidArgument:
            continue  # a task that never held the file
    if not found:
        raise InvalidArgument(f"{path} is in no checkpoint of any task here.",
                              "Pass a workspace-relative path of a file a task holds.")
    found.sort(key=lambda f: f[0] != active)  # the active task's answer first
    picked: list[LineOrigin] = []
    for k in range(found[0][1].total_lines):
        options = [replace(r.lines[k], task=str(tid)) for tid, r in found]
        written = [o for o in options if o.kind in _WRITTEN]
        picked.append(min(written, key=lambda o: o.created_at or "~") if written
                      else options[0])
    shown = picked if limit is None else picked[:limit]
    return WhyResult(", ".join(str(t) for t, _ in found), path, len(picked),
                     sum(r.checkpoints for _, r in found), shown, len(picked) - len(shown))


_LINES = re.compile(r"(.*):([0-9]+)(?:-([0-9]+))?")


def parse_target(target: str) -> tuple[str, int | None, int | None]:
    """PATH, PATH:LINE or PATH:FIRST-LAST as (path, first, last); a path may hold colons."""
    m = _LINES.fullmatch(target)
    if m is None:
        return target, None, None
    first = int(m.group(2))
    last = int(m.group(3)) if m.group(3) else first
    if first < 1 or last < first:
        raise InvalidArgument(f"{target}: lines are counted from 1, first to last.",
                              "For example src/app.py:10 or src/app.py:10-20.")
    return m.group(1), first, last


def chronological(tl: Timeline, task: TaskId) -> list[StepRecord]:
    """The task's checkpoints in the order they were taken: step 0, the drifts after it,
    step 1, its drifts, ... (each step's tree holds the drifts before it)."""
    out: list[StepRecord] = []
    for step in tl.steps(task):
        out.append(step)
        out.extend(tl.drifts(task, step.n))
    return out


def _read_disk(full: str) -> bytes | None:
    try:
        if os.path.islink(full) or not os.path.isfile(full):
            return None
        with open(full, "rb") as f:
            return f.read()
    except OSError:
        return None


def _versions(trees: TreeReader, records: list[StepRecord], path: str,
              disk: bytes | None, on_disk: bool = True) -> list[_Version]:
    """The file in each checkpoint, newest to oldest renames followed, and on disk last
    (where it differs from the newest checkpoint)."""
    out: list[_Version] = []
    at: str | None = path
    read = trees.store.read_blob
    for i in range(len(records) - 1, -1, -1):
        r = records[i]
        oid = trees.entry(r.tree, at) if at is not None else None
        out.append(_Version(r, at if oid is not None else None, oid, read))
        if at is not None and oid is not None and i > 0 \
                and trees.entry(records[i - 1].tree, at) is None:
            # added here: renamed from another path, or (kept) deleted and made again, whose
            # older life a restore may bring back
            at = _renamed_from(trees, records[i - 1], r, at, read(oid)) or at
    out.reverse()
    tip = out[-1].data if out else None
    if on_disk and disk != tip:
        out.append(_Version(None, path if disk is not None else None, disk))
    return out


class TreeReader:
    """Paths in a store's trees, each tree read once: a cache for one question (`why`,
    `explain`), dropped with it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._trees: dict[ObjectId, dict[bytes, TreeEntry]] = {}

    def entry(self, tree: ObjectId, path: str) -> ObjectId | None:
        """The blob id of the regular file `path` in `tree`, or None (absent, a folder, a
        link, a nested repository)."""
        parts = path.split("/")
        for k, part in enumerate(parts):
            entries = self._trees.get(tree)
            if entries is None:
                entries = self._trees[tree] = {e.name: e for e in self.store.read_tree(tree)}
            e = entries.get(part.encode("utf-8", "surrogateescape"))
            if e is None:
                return None
            if k < len(parts) - 1:
                if e.mode != Mode.TREE:
                    return None
                tree = e.id
            elif e.mode in (Mode.FILE, Mode.EXECUTABLE):
                return e.id
        return None

    def blob(self, tree: ObjectId, path: str) -> bytes | None:
        """The bytes of the regular file `path` in `tree`, or None."""
        oid = self.entry(tree, path)
        return self.store.read_blob(oid) if oid is not None else None


def _renamed_from(trees: TreeReader, before: StepRecord, now: StepRecord, path: str,
                  data: bytes) -> str | None:
    """The path `path` had in `before`, where `now` added it in place of a file it deleted
    whose lines are mostly the same (a rename), else None."""
    store = trees.store
    changes = store.diff_trees(before.tree, now.tree)
    if path not in changes.added:
        return None
    mine = split_lines(data)
    best, score = None, RENAME_SIMILARITY
    for gone in changes.deleted[:RENAME_CANDIDATES]:
        oid = trees.entry(before.tree, gone)
        if oid is None or not 0.5 <= store.object_size(oid) / max(1, len(data)) <= 2:
            continue  # a file of another size is no rename (git's similarity bounds it too)
        theirs = store.read_blob(oid)
        if is_binary(theirs):
            continue
        m = difflib.SequenceMatcher(None, split_lines(theirs), mine)
        if m.real_quick_ratio() >= score and m.quick_ratio() >= score and m.ratio() >= score:
            best, score = gone, m.ratio()
    return best


class Lives:
    """When each line origin (version, line) was in the file: the versions where it came,
    went and came back, recorded as the blame walks the versions (a cost that follows the
    lines changed, not the file's length times its versions)."""

    def __init__(self) -> None:
        self.events: dict[tuple[int, int], list[tuple[int, bool]]] = {}

    def set(self, origin: tuple[int, int], at: int, present: bool) -> None:
        self.events.setdefault(origin, []).append((at, present))

    def holds(self, origin: tuple[int, int], at: int) -> bool:
        """Whether version `at` held the line `origin` wrote."""
        events = self.events.get(origin, [])
        k = bisect.bisect_right(events, (at, True))
        return events[k - 1][1] if k else at >= origin[0]


def _blame(versions: list[_Version], records: list[StepRecord]
           ) -> tuple[list[tuple[int, int]], Lives]:
    """For each line of the last version, the version that wrote it and the line's index
    there; and when each origin was present (for the checks that ran on a version)."""
    index = {r.commit: i for i, r in enumerate(records)}
    back = {}  # version -> the version whose lines it brings back (restore, revert)
    for i, v in enumerate(versions):
        target = _brought_back(v.record, index, records) if v.record is not None else None
        if target is not None:
            back[i] = target
    keep = set(back.values())
    memo: dict[int, list[tuple[int, int]]] = {}
    lives = Lives()
    origins: list[tuple[int, int]] = []
    prev: bytes | None = None
    last: _Version | None = None  # the version `prev` is the content of
    for i, v in enumerate(versions):
        before = origins
        if last is not None and prev is not None and v.blob is not None \
                and i not in back and v.same(last):
            pass  # the same content as the version before: the same lines
        elif (data := v.data) is None or is_binary(data):  # gone, or no lines: next are new
            origins, prev = [], None
            _moved(lives, i, before, origins)
        elif i in back and back[i] in memo and versions[back[i]].same(v):
            # the version it restored, whole: every line is that version's, as git blame
            # passes a merge's whole blame to a parent with the same file
            origins, prev = list(memo[back[i]]), data
            _moved(lives, i, before, origins)
        elif prev is None or data != prev:
            runs, n_new = unchanged(prev or b"", data)
            mine: list[tuple[int, int]] = []
            gone = 0  # old lines before the next run that it drops
            for o, n, length in runs:  # the lines between runs are this version's own
                for dead in before[gone:o]:
                    lives.set(dead, i, False)
                gone = o + length
                mine += [(i, j) for j in range(len(mine), n)]
                mine += before[o:o + length]
            for dead in before[gone:]:
                lives.set(dead, i, False)
            mine += [(i, j) for j in range(len(mine), n_new)]
            source = memo.get(back[i]) if i in back else None
            if source:  # lines it brought back keep their first origin
                again = kept(versions[back[i]].data or b"", data)
                mine = [source[a] if m[0] == i and a is not None else m
                        for m, a in zip(mine, again, strict=True)]
                for m in mine:
                    if m[0] != i:
                        lives.set(m, i, True)  # back (a line kept is set again: harmless)
            origins, prev = mine, data
        last = v
        if i in keep:
            memo[i] = origins
    return origins, lives


def _moved(lives: Lives, at: int, before: list[tuple[int, int]],
           after: list[tuple[int, int]]) -> None:
    """Version `at` replaced the whole file: what left and what came back."""
    old, new = set(before), set(after)
    for o in old - new:
        lives.set(o, at, False)
    for o in new - old:
        lives.set(o, at, True)


def _brought_back(r: StepRecord, index: dict[ObjectId, int], records: list[StepRecord]
                  ) -> int | None:
    """The version a restore restored, or for a revert the parent of the first checkpoint
    it undid (what that checkpoint changed, it changed from its parent)."""
    n = r.note
    if n.kind == "restore" and n.target is not None and ObjectId(n.target) in index:
        return index[ObjectId(n.target)]
    first = (n.reverted or {}).get("first")
    if n.trigger == "revert" and isinstance(first, str) and ObjectId(first) in index:
        parents = records[index[ObjectId(first)]].parents
        return index.get(parents[0]) if parents else None
    return None


def _runs(records: list[StepRecord]) -> list[tuple[int, dict[str, Any], int]]:
    """Each saved command: (the version it ran on, the command, the step that recorded it)."""
    by_tree: dict[str, int] = {}
    for i, r in enumerate(records):
        by_tree[r.tree] = i  # the newest version with that tree
    out = []
    for i, r in enumerate(records):
        for c in r.note.commands:
            at = by_tree.get(str(c.get("tree")), i)
            out.append((min(at, i), c, r.n))
    return out


class _Context:
    """What each origin is told of: the step that saved it, its prompt, its verification."""

    def __init__(self, tl: Timeline, records: list[StepRecord], versions: list[_Version],
                 runs: list[tuple[int, dict[str, Any], int]] | None = None,
                 alive: Lives | None = None) -> None:
        self.tl, self.records, self.versions = tl, records, versions
        self.alive = alive  # None: a line is taken to stand from its origin on
        self.steps = {r.n: r for r in records if r.note.kind in ("init", "step")}
        heard = [p for r in self.steps.values() for p in r.note.prompts if isinstance(p, dict)]
        heard += prompting.pending(tl.store, TaskId(records[0].note.task)) if records else []
        self.prompts = {p.get("id"): p for p in heard}  # a step's, or still in the state
        self.runs = runs if runs is not None else _runs(records)
        self._user: dict[str, Any] = {}

    def origin(self, line: int, text: bytes, i: int, j: int) -> LineOrigin:
        """Line `line` now (`text`), written by version `i` as its line `j`."""
        v = self.versions[i]
        shown = text.decode("utf-8", "replace")
        if v.record is None:
            return LineOrigin(line, shown, "unsaved", None, "not checkpointed", None, None,
                              None, v.path or "", None, None, None, None,
                              "nothing was run after it changed", None)
        r, n = v.record, v.record.note
        first = n.kind == "init" or (i == 0)
        kind = "before_task" if first else n.kind if n.kind in ("step", "restore") else \
            "revert" if n.trigger == "revert" else "drift"
        saved = r.n if n.kind in ("init", "step") else r.n + 1 if r.n + 1 in self.steps \
            else None
        label = "before the task" if first else f"step {r.n}" if n.kind == "step" else \
            f"{'restore' if n.kind == 'restore' else 'drift'} after step {r.n}"
        prompt_id = (n.tool or {}).get("prompt")
        prompt = self.prompts.get(prompt_id, {}).get("text") if prompt_id else None
        if prompt is None and n.kind == "step":
            own = [p for p in n.prompts if isinstance(p, dict)]
            prompt = own[-1].get("text") if own else None
        return LineOrigin(line, shown, kind, r.commit, label, r.n, n.trigger, n.tool,
                          v.path or "", n.created_at, prompt, saved,
                          self.steps[saved].note.conclusion or None if saved is not None
                          else None, self._verified(i, j), self._user_commit(v, j, first))

    def _verified(self, i: int, j: int) -> str:
        """The newest command that ran on a version holding this line (written by version
        `i` as its line `j`)."""
        ran = [(at, n, k, c) for k, (at, c, n) in enumerate(self.runs) if at >= i
               and (self.alive is None or self.alive.holds((i, j), at))]
        if not ran:
            return "nothing was run after it changed"
        # the newest: on the newest version, recorded by the newest step, and of two runs on
        # one tree the one recorded last (`runs` is in the order they were recorded)
        _at, n, _k, c = max(ran, key=lambda x: (x[0], x[1], x[2]))
        code = c.get("exit_code")
        result = "passed" if code == 0 else f"failed (exit {code})" if code is not None \
            else "ran"
        return f"`{c.get('command')}` {result} on a tree with this line (step {n})"

    def _user_commit(self, v: _Version, j: int, first: bool) -> str | None:
        """Before the task: the user's commit that last changed the line (line `j` of the
        task's first version), in the HEAD the task started from (git stores)."""
        if not first or v.record is None:
            return None
        head = (v.record.note.git or {}).get("head")
        if not head or v.path is None:
            return None
        key = f"{head}:{v.path}"
        if key not in self._user:  # the user's blame, and which of its lines are here
            found = self.tl.store.user_blame(v.path, head)
            self._user[key] = None if found is None or is_binary(found[0]) \
                or is_binary(v.data or b"") else (found[1], kept(found[0], v.data or b""))
        memo = self._user[key]
        if memo is None:
            return None
        commits, pairs = memo
        p = pairs[j] if j < len(pairs) else None
        return commits[p] if p is not None and p < len(commits) else None
