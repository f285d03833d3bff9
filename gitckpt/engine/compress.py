"""Compress: drop old drift chains and old steps' kept transcripts (never a step), and in a
plain-folder store the objects nothing reaches any more.

A chain (`drifts/<n>`, the drifts after step n) is dropped when its newest drift is older
than the limit, it does not follow one of the newest `min_steps` steps of its task, and it
holds no restore and no safety copy (those are how a restore is undone). A step's transcripts
(`transcripts/<n>`) go by the same age and newest-steps rules. In a git repository
the freed objects are left to the user's own `git gc`: gitckpt never runs gc there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from gitckpt.core.errors import InvalidArgument, StoreCorrupt
from gitckpt.core.hints import call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.shape import Shaped
from gitckpt.engine.reach import commits, reachable
from gitckpt.engine.timeline import REF_ROOT, Timeline, drift_ref, step_ref
from gitckpt.store.base import Store
from gitckpt.store.packs import repack

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """`7d`, `12h`, `30m`, `2w`, `90s` (or bare seconds) as seconds."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smhdw]?)\s*", text.lower())
    if not m:
        raise InvalidArgument(f"Not a duration: {text!r}.",
                              "Use a number with s, m, h, d or w, for example 7d or 12h.")
    seconds = float(m[1]) * _UNITS[m[2] or "s"]
    if not seconds < 100 * 365 * 86400:
        raise InvalidArgument(f"The duration {text[:40]!r} is longer than a century.",
                              "Use a number with s, m, h, d or w, for example 7d or 12h.")
    return seconds


@dataclass(frozen=True)
class Chain(Shaped):
    task: TaskId
    after_step: int
    tip: ObjectId
    drifts: int
    newest: str  # created_at of the newest drift
    reason: str  # why it is dropped or kept


@dataclass
class CompressResult(Shaped):

    keep_seconds: float
    min_steps: int
    dry_run: bool
    eligible: list[Chain] = field(default_factory=list)
    kept: list[Chain] = field(default_factory=list)
    dropped: list[Chain] = field(default_factory=list)
    transcripts: int = 0  # the steps whose kept transcripts were dropped (dry: would be)
    bytes_freed: int = 0
    bytes_freeable: int = 0
    why_nothing: str = ""
    packed_objects: int = 0  # loose objects moved into a pack
    packed_refs: int = 0  # loose refs moved into packed-refs


def _age(created_at: str, now: float) -> float:
    try:
        return now - datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0  # unreadable time: treat as new, never drop on a guess


def plan(tl: Timeline, keep_seconds: float, min_steps: int, now: float
         ) -> tuple[list[Chain], list[Chain]]:
    """(eligible, kept) drift chains of every task in the store."""
    eligible: list[Chain] = []
    kept: list[Chain] = []
    for task in tl.task_ids():
        head = tl.head(task)
        for n in tl.drift_steps(task):
            chain = tl.drifts(task, n)
            if not chain:
                continue
            newest = chain[-1].note.created_at
            if n > head.n - min_steps:
                reason = f"follows one of the newest {min_steps} steps"
            elif any(d.note.kind == "restore" or d.note.trigger == "pre_restore"
                     for d in chain):
                reason = "holds a restore or its safety copy"
            elif _age(newest, now) < keep_seconds:
                reason = "newer than the limit"
            else:
                reason = ""
            c = Chain(task, n, chain[-1].commit, len(chain), newest,
                      reason or "older than the limit")
            (kept if reason else eligible).append(c)
    return eligible, kept


def compress(tl: Timeline, keep_seconds: float, min_steps: int, now: float,
             dry_run: bool = False) -> CompressResult:
    if min_steps < 0 or keep_seconds < 0:
        raise InvalidArgument("keep and min_steps cannot be negative.", "Use {0}.",
                              [call("compress", keep="7d", min_steps=3)])
    out = CompressResult(keep_seconds, min_steps, dry_run)
    store = tl.store
    with store.lock():
        out.eligible, out.kept = plan(tl, keep_seconds, min_steps, now)
        old_transcripts = _old_transcripts(tl, keep_seconds, min_steps, now)
        out.transcripts = len(old_transcripts)
        if not out.eligible and not old_transcripts:
            if not dry_run:
                out.packed_objects, out.packed_refs = repack.pack(store)
            out.why_nothing = ("no drift chains at all" if not out.kept else
                               "every drift chain is kept: " + "; ".join(
                                   sorted({c.reason for c in out.kept})))
            return out
        doomed = {}
        for c in out.eligible:
            for d in tl.drifts(c.task, c.after_step):
                doomed[d.commit] = c
        size = _unique_size(store, tl, set(doomed) | set(old_transcripts.values()))
        if dry_run:
            out.bytes_freeable = size
            return out
        for name, oid in sorted(old_transcripts.items()):
            store.delete_ref(name, oid)
        for c in out.eligible:
            store.delete_ref(drift_ref(c.task, c.after_step), c.tip)
            out.dropped.append(c)
        # A commit can be shared (a task imported under a second id, worktrees): its note
        # stays while any ref still reaches it.
        still = commits(store.read_commit, list(store.list_refs(REF_ROOT).values()))
        store.update_notes({oid: None for oid in doomed if oid not in still},
                           "Notes of dropped drifts removed\n")
        freed = store.prune(lambda: _reachable(store))
        if freed is None:
            out.bytes_freeable = size  # left to the repository's own `git gc`
        else:
            out.bytes_freed = freed
        # what stays is packed after the drop: a packed object is never pruned
        out.packed_objects, out.packed_refs = repack.pack(store)
    return out


def _old_transcripts(tl: Timeline, keep_seconds: float, min_steps: int, now: float
                     ) -> dict[str, ObjectId]:
    """The transcripts/<n> refs of steps older than the limit and not among the newest
    `min_steps` of their task."""
    out: dict[str, ObjectId] = {}
    for task in tl.task_ids():
        prefix = f"{REF_ROOT}{task}/transcripts/"
        found = tl.store.list_refs(prefix)
        if not found:
            continue
        head = tl.head(task)
        for name, oid in found.items():
            n = int(name[len(prefix):]) if name[len(prefix):].isdigit() else head.n
            step = tl.store.get_ref(step_ref(task, n)) if n <= head.n - min_steps else None
            if step is not None and _age(tl.record(step).note.created_at,
                                         now) >= keep_seconds:
                out[name] = oid
    return out


def _walk(store: Store, tips: list[ObjectId], seen: set[ObjectId], strict: bool = False
          ) -> set[ObjectId]:
    """Objects reachable from commits `tips`, not yet in `seen` (which it extends); missing
    ones are passed over, or with `strict` raise StoreCorrupt."""
    return set(reachable(store.read_object, tips, seen=seen, blob_exists=store.has_object,
                         missing=None if strict else (lambda oid: None)))


def _unique_size(store: Store, tl: Timeline, doomed: set[ObjectId]) -> int:
    """Bytes of the objects only the doomed drifts reach (body sizes, before compression)."""
    kept_tips = [o for n, o in store.list_refs(REF_ROOT).items()
                 if o not in doomed and not _is_doomed_ref(n, doomed, o)]
    seen: set[ObjectId] = set()
    _walk(store, kept_tips, seen)
    return sum(len(store.read_object(o)[1]) for o in _walk(store, list(doomed), seen))


def _is_doomed_ref(name: str, doomed: set[ObjectId], oid: ObjectId) -> bool:
    return ("/drifts/" in name or "/transcripts/" in name) and oid in doomed


def _reachable(store: Store) -> set[ObjectId]:
    """Every object a ref reaches (the notes history included): what a prune must keep. A
    missing object stops the prune (StoreCorrupt) before anything is deleted."""
    seen: set[ObjectId] = set()
    try:
        _walk(store, list(store.list_refs("refs/").values()), seen, strict=True)
    except StoreCorrupt as e:
        raise StoreCorrupt(f"{e.message}; nothing was pruned",
                           "Run {0} to see what the store lacks.", [call("doctor")]) from e
    return seen
