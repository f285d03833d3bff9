"""Fetching a task from a git remote: its objects into a quarantine (no ref written, nothing
added to the store yet), every check a package import makes, the size limit of files, then
under the store lock the objects moved in, its notes, its drift chains (merged, keeping
both) and its head (only forward), the refs in one transaction. A refused fetch leaves no
object behind. See `remote` for what travels."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from gitckpt.core import json_input
from gitckpt.core.errors import Diverged, FileTooLarge, GitckptError, InvalidArgument, RemoteFailed
from gitckpt.core.hints import Arg, call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.objects import Mode
from gitckpt.core.progress import Meter
from gitckpt.core.shape import Shaped
from gitckpt.engine import reach
from gitckpt.engine.notes import Note
from gitckpt.engine.timeline import REF_ROOT, Timeline, head_ref
from gitckpt.store.base import Store
from gitckpt.store.quarantine import Quarantine, sweep
from gitckpt.transfer import git as remote_git
from gitckpt.transfer.remotes import (
    NOTES_ROOT,
    RemoteTask,
    default_remote,
    git_dir,
    listing,
    reaches,
    remote_tasks,
    top,
)
from gitckpt.transfer.verify import Foreign, Refused, verify

_BATCH = 4000  # refspecs per git fetch: far below any command line's limit
_DAMAGED = "Nothing was changed here. Push the task again from a good copy."


@dataclass
class FetchResult(Shaped):

    remote: str
    tasks: list[RemoteTask]
    task: str | None = None
    source: str | None = None   # the remote's task id, when fetched --as another
    created: bool = False       # the task is new here
    moved: bool = False         # head moved forward
    steps: int = 0              # the head's step number
    drifts_kept: int = 0        # the remote's drifts added after this store's own


def fetch(tl: Timeline, remote: str | None, task: str | None = None,
          as_id: str | None = None) -> FetchResult:
    """Without `task`: the tasks the remote holds. With it: bring that task here, as `as_id`
    if given (a task of its own: a line that diverged from this store's; fetching it --as the
    same id again brings that line forward)."""
    store = tl.store
    where = default_remote(store, remote, "fetch")
    url = where.url_shown
    if task is None:
        return FetchResult(url, list(listing(store, where).values()))
    source = TaskId(task)
    dest = TaskId(as_id) if as_id is not None else source
    theirs = remote_tasks(store, where).get(source)
    if theirs is None or theirs.head is None:
        raise InvalidArgument(f"{url} holds no task {source}.", "See what it holds: {0}.",
                              [call("fetch", remote=where.shown)])
    store.prepare()  # a plain folder's store is made by its first fetch
    sweep(store.objects_folder)  # what a killed fetch left
    wanted = [f"{REF_ROOT}{source}/{rest}" for rest in sorted(theirs.refs)]
    wanted += [f"{NOTES_ROOT}{source}"] if theirs.notes else []
    with Quarantine(store) as q:
        with Meter(f"Fetching {source}", "refs", len(wanted)) as meter:
            for at in range(0, len(wanted), _BATCH):
                # --refmap= : the remote's configured refspecs must not update any ref either
                remote_git.run(git_dir(store), "fetch", "-q", "--progress", "--no-tags",
                               "--no-write-fetch-head", "--refmap=", where.spec,
                               *wanted[at:at + _BATCH], cwd=top(store), remote=where,
                               env=q.env)
                meter.advance(len(wanted[at:at + _BATCH]))
        if any(o and not q.has_object(o) for o in [*theirs.refs.values(), theirs.notes]):
            raise RemoteFailed(f"The remote's task {source} changed while it was fetched; "
                               "nothing was changed here.", "Fetch again.")
        try:
            notes = _remote_notes(q, theirs)
            verify(Foreign(dict(theirs.refs), q.read_object, q.read_commit, q.object_size,
                           lambda commit: _note(store, commit, notes),
                           blob_exists=q.has_object), _DAMAGED)
        except FileTooLarge as e:
            raise FileTooLarge(
                e.path, e.size, e.limit,
                f"The remote's task {source} holds {e.path} of {e.size:,} bytes, over the "
                f"size limit of {e.limit:,} bytes (GITCKPT_MAX_FILE_SIZE); nothing was "
                "fetched.",
                "If that file may be here, fetch again with a higher limit (e.g. "
                f"GITCKPT_MAX_FILE_SIZE={_mib(e.size)}M); or have it left out of the task "
                "where it was saved.") from e
        except Refused as e:
            raise RemoteFailed(f"The remote's task {source} is damaged: {e.message}.",
                               _DAMAGED) from e
        except GitckptError as e:
            raise RemoteFailed(f"The remote's task {source} is damaged: {e.message}",
                               _DAMAGED) from e
        with store.lock():
            q.admit()  # every check passed: the objects become the store's
            result = _merge(tl, dest, theirs, notes)
    result.remote, result.tasks = url, [theirs]
    result.source = source if dest != source else None
    return result


def _mib(size: int) -> int:
    return -(-size // (1 << 20))


# -- checks: a remote is somebody else's data ---------------------------------------------------

def _remote_notes(q: Quarantine, theirs: RemoteTask) -> dict[ObjectId, str]:
    """The notes of the fetched notes commit, for the commits of the remote's task only;
    a note larger than any note is refused before it is read."""
    if theirs.notes is None:
        return {}
    task_commits = reach.commits(q.read_commit, list(theirs.refs.values()))
    found: dict[ObjectId, str] = {}
    for fan in q.read_tree(q.read_commit(theirs.notes).tree):
        if fan.mode != Mode.TREE or len(fan.name) != 2:
            continue
        for leaf in q.read_tree(fan.id):
            oid = (fan.name + leaf.name).decode("ascii", "replace")
            if oid in task_commits and leaf.mode == Mode.FILE:
                size = q.object_size(leaf.id)
                if size > json_input.MAX_BYTES:
                    raise InvalidArgument(f"the note of commit {oid[:12]} is {size:,} bytes; "
                                          f"a note holds at most {json_input.MAX_BYTES:,}.", "")
                found[ObjectId(oid)] = q.read_blob(leaf.id).decode("utf-8", "replace")
    return found


def _note(store: Store, commit: ObjectId, fetched: dict[ObjectId, str]) -> Note | None:
    text = store.read_note(commit)
    if text is None:
        text = fetched.get(commit)
    return Note.parse(text, commit) if text is not None else None


# -- writing ----------------------------------------------------------------------------------

def _merge(tl: Timeline, tid: TaskId, theirs: RemoteTask, notes: dict[ObjectId, str]
           ) -> FetchResult:
    """Under the lock: the notes this store lacks, the copies of the remote's drifts a merge
    keeps, then every ref in one transaction (head only forward, steps/<n> and transcripts/<n>
    created only)."""
    store = tl.store
    remote_head = theirs.head
    assert remote_head is not None
    local_head = store.get_ref(head_ref(tid))
    new = local_head is None
    if local_head is not None and local_head != remote_head \
            and not reaches(store, remote_head, local_head):  # not `new`
        if not reaches(store, local_head, remote_head):
            raise Diverged(
                f"Task {tid} has steps here and on the remote after the same step (here "
                f"{local_head[:12]}, remote {remote_head[:12]}); nothing was changed.",
                "Keep both: fetch the remote's line as a task of its own with {0}.",
                [Arg("as_id", f"{tid}-2")])
        remote_head = local_head  # this store is ahead: only what it lacks comes in
    updates: list[tuple[str, ObjectId, ObjectId | None]] = []
    for rest, oid in theirs.refs.items():
        mine = store.get_ref(f"{REF_ROOT}{tid}/{rest}")
        if rest.startswith("steps/") and mine is not None and mine != oid:
            raise Diverged(f"{rest} of task {tid} differs here and on the remote; nothing was "
                           "changed.", "Keep both: fetch the remote's line with {0}.",
                           [Arg("as_id", f"{tid}-2")])
    _add_notes(store, theirs, notes, new)
    kept = 0
    for rest, oid in sorted(theirs.refs.items()):
        if rest.startswith("drifts/"):
            ref = f"{REF_ROOT}{tid}/{rest}"
            mine = store.get_ref(ref)
            tip, added = merge_drifts(store, mine, oid)
            kept += added
            if tip != mine:
                updates.append((ref, tip, mine))
    moved = remote_head != local_head
    if moved:
        updates.append((head_ref(tid), remote_head, local_head))
    head_n = Note.parse(store.read_note(remote_head) or notes[remote_head], remote_head).step
    for rest, oid in sorted(theirs.refs.items()):
        kind, _, n = rest.partition("/")
        # steps/<n> and transcripts/<n> are created once: one kept here stays as it is
        if (kind in ("steps", "transcripts") and int(n) <= head_n
                and store.get_ref(f"{REF_ROOT}{tid}/{rest}") is None):
            updates.append((f"{REF_ROOT}{tid}/{rest}", oid, None))
    store.flush()
    _transaction(store, updates)
    return FetchResult("", [], tid, created=new, moved=moved, steps=head_n, drifts_kept=kept)


def _transaction(store: Store, updates: list[tuple[str, ObjectId, ObjectId | None]]) -> None:
    """Every ref of a fetch at once (`git update-ref --stdin`: all or none, so a kill leaves
    no head without its steps refs), each checked to lie in a real folder of the store."""
    if not updates:
        return
    base = Path(store.refs_folder)
    for name, _, _ in updates:
        where = base
        for part in name.split("/")[:-1]:
            where = where / part
            try:
                if stat.S_ISLNK(os.lstat(where).st_mode):
                    raise RemoteFailed(f"{where} is a symbolic link; no ref is written through "
                                       "one.", "gitckpt doctor --fix removes it.")
            except FileNotFoundError:
                break
        # only gitckpt writes refs/checkpoints, and it holds the store lock: a lock file
        # there is a killed fetch's, which would make git refuse the whole transaction
        lock = base / f"{name}.lock"
        try:
            if stat.S_ISREG(os.lstat(lock).st_mode):
                os.unlink(lock)
        except FileNotFoundError:
            pass
    lines = [f"update {name} {new} {old}" if old else f"create {name} {new}"
             for name, new, old in updates]
    p = remote_git.run(git_dir(store), "update-ref", "--stdin", stdin="\n".join(lines) + "\n",
                       cwd=top(store), check=False)
    if p.returncode != 0:
        raise RemoteFailed(f"The fetched refs could not be written: {remote_git.failure(p)}",
                           "Nothing of the task moved here. Run gitckpt doctor, then fetch "
                           "again.")


def _add_notes(store: Store, theirs: RemoteTask, notes: dict[ObjectId, str], new: bool) -> int:
    """Add the fetched notes this store lacks (a note is never changed). A task new here
    gets this workspace as its own, as an import does."""
    lacking: dict[ObjectId, str | None] = {}
    for oid, text in notes.items():
        if store.read_note(oid) is not None:
            continue
        note = Note.parse(text, oid)
        if new and note.kind == "init" and note.workspace not in (
                None, store.workspace, *store.aliases):
            text = replace(note, workspace=store.workspace).dump()
        lacking[oid] = text
    if lacking:
        store.update_notes(lacking, f"Notes fetched for task {theirs.task} by gitckpt\n")
    return len(lacking)


def merge_drifts(store: Store, mine: ObjectId | None, theirs: ObjectId) -> tuple[ObjectId, int]:
    """The tip of this store's drift chain `mine` merged with the remote's `theirs`, keeping
    both: a fast-forward when one contains the other; otherwise the remote's drifts this chain
    lacks are added after this chain's newest, oldest first, each a copy (same tree, message,
    time and note) whose second parent is the remote's original, so both chains stay
    reachable and the next push is a fast-forward. Returns the tip and how many were added."""
    if mine is None or reaches(store, theirs, mine):
        return theirs, 0
    if reaches(store, mine, theirs):
        return mine, 0
    ours = reach.commits(store.read_commit, [mine])
    lacking: list[ObjectId] = []
    commit: ObjectId | None = theirs
    while commit is not None and commit not in ours:
        text = store.read_note(commit)
        if text is None or Note.parse(text, commit).kind in ("init", "step"):
            break
        lacking.append(commit)
        parents = store.read_commit(commit).parents
        commit = parents[0] if parents else None
    tip, copies = mine, {}
    for original in reversed(lacking):
        c = store.read_commit(original)
        tip = store.write_commit(c.tree, [tip, original], c.message, c.time)
        copies[tip] = store.read_note(original)
    store.update_notes(copies, "Drifts fetched by gitckpt\n")
    return tip, len(lacking)
