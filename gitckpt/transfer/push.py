"""Pushing tasks to a git remote: their refs by id as read under the store lock, a card and a
notes commit per task, in one atomic `git push` whose notes refs carry a lease (see `remote`
for what travels). Nothing is sent before every check passed and, for a task's first push to
a remote, the user confirmed what it publishes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitckpt.core import json_input
from gitckpt.core.errors import (
    Diverged,
    GitckptError,
    InvalidArgument,
    NeedsConfirmation,
    RemoteFailed,
)
from gitckpt.core.hints import BLANK, Arg, call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.objects import EMPTY_TREE, Mode, TreeEntry
from gitckpt.core.shape import Shaped
from gitckpt.engine.notes import Note
from gitckpt.engine.timeline import REF_ROOT, Timeline, head_ref
from gitckpt.store.base import Store
from gitckpt.store.quarantine import Quarantine, sweep
from gitckpt.transfer import git as remote_git
from gitckpt.transfer.git import Remote
from gitckpt.transfer.remotes import (
    CARD,
    NOTES_ROOT,
    RemoteTask,
    default_remote,
    git_dir,
    numbered,
    reaches,
    remote_tasks,
    top,
)

if TYPE_CHECKING:
    from gitckpt.core import child_process
    from gitckpt.store.state import StateDir

PUSHED = "pushed.json"  # {remote URL: [remote task ids whose first push was confirmed]}
_SHOWN = 10             # untracked files named in a confirmation; the count says the rest
_AHEAD = ("Bring the remote's line here first: {0} (drifts are merged, keeping both). If both "
          "sides saved steps, keep the remote's here as another task ({1}), or publish this "
          "one as another ({2}).")


def card_commit(tl: Timeline, task: TaskId, name: TaskId) -> ObjectId:
    """The card of `task`, pushed as the remote's task `name`."""
    head = tl.head(task)
    tip = tl.tip(task, head)
    meta = head.note if head.n == 0 else tl.meta(task)
    card = {"task": name, "name": meta.name, "step": head.n, "title": head.note.title,
            "updated": tip.note.created_at}
    store = tl.store
    store.write_tree([])  # the empty tree, which a repository need not hold yet
    return store.write_commit(EMPTY_TREE, [], f"card: {meta.name}\n\n{json.dumps(card)}\n",
                              store.read_commit(tip.commit).time)


def notes_commit(tl: Timeline, task: TaskId, name: TaskId,
                 carried: dict[ObjectId, ObjectId]) -> ObjectId:
    """A notes commit with the notes of every commit of the task's timeline, and the
    `carried` notes (commit: note blob) of the remote's that this store does not name, with
    no parent."""
    store = tl.store
    blobs = dict(carried)
    for commit in tl.commits(task):
        text = store.read_note(commit)
        if text is not None:
            blobs[commit] = store.write_blob(text.encode())
    fans: dict[bytes, list[TreeEntry]] = {}
    for commit, blob in sorted(blobs.items()):
        fans.setdefault(commit[:2].encode(), []).append(
            TreeEntry(commit[2:].encode(), Mode.FILE, blob))
    root = [TreeEntry(fan, Mode.TREE, store.write_tree(leaves)) for fan, leaves in fans.items()]
    return store.write_commit(store.write_tree(root), [], f"Notes of task {name}\n",
                              store.read_commit(tl.tip(task).commit).time)


def _carried(store: Store, remote: Remote, theirs: RemoteTask) -> dict[ObjectId, ObjectId]:
    """The remote's notes (commit: note blob), fetched without any ref into a quarantine:
    what a push must carry on for the drifts the remote keeps and this store does not have.
    Only the blobs that are gitckpt notes enter the store; the rest of what was fetched is
    dropped with the quarantine."""
    if theirs.notes is None:
        return {}
    store.prepare()
    sweep(store.objects_folder)
    out: dict[ObjectId, ObjectId] = {}
    with Quarantine(store) as q:
        remote_git.run(git_dir(store), "fetch", "-q", "--progress", "--no-tags",
                       "--no-write-fetch-head", "--refmap=", remote.spec,
                       f"{NOTES_ROOT}{theirs.task}", cwd=top(store), remote=remote, env=q.env)
        for fan in q.read_tree(q.read_commit(theirs.notes).tree):
            if fan.mode == Mode.TREE and len(fan.name) == 2:
                for leaf in q.read_tree(fan.id):
                    oid = (fan.name + leaf.name).decode("ascii", "replace")
                    text = _a_note(q, leaf.id) if len(oid) == 40 and leaf.mode == Mode.FILE \
                        else None
                    if text is not None:
                        out[ObjectId(oid)] = store.write_blob(text)
    return out


def _a_note(q: Quarantine, blob: ObjectId) -> bytes | None:
    """The bytes of `blob` if it is a gitckpt note (what a push carries on must be one)."""
    try:
        if q.object_size(blob) > json_input.MAX_BYTES:
            return None
        kind, body = q.read_object(blob)
        return body if kind == "blob" and Note.parse(body.decode("utf-8"), blob) else None
    except (GitckptError, UnicodeDecodeError):
        return None


@dataclass
class PushedTask(Shaped):
    task: str
    steps: int
    first: bool


@dataclass
class PushResult(Shaped):

    remote: str
    tasks: list[PushedTask]


def _state(store: Store) -> StateDir:
    """Where confirmed first pushes are kept: the repository's shared state (every worktree
    of it pushes the same tasks), or the plain folder's."""
    return store.shared


def _pushed(store: Store) -> dict[str, list[str]]:
    try:
        data = json_input.loads(_state(store).read(PUSHED) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def untracked(tl: Timeline, task: TaskId) -> list[str]:
    """Files of the task's head that the user's git HEAD does not hold (all of them in a
    plain folder): what a push publishes beyond what the repository's own pushes do."""
    store = tl.store
    state = store.git_state()
    theirs: ObjectId | None = None
    if state is not None and state.head:
        theirs = store.read_commit(ObjectId(state.head)).tree
        for part in filter(None, store.prefix.split("/")):
            entry = next((e for e in store.read_tree(theirs) if e.name == part.encode()
                          and e.mode == Mode.TREE), None) if theirs else None
            theirs = entry.id if entry else None
    out: list[str] = []
    _new_paths(store, tl.head(task).tree, theirs, "", out)
    return out


def _new_paths(store: Store, ours: ObjectId, theirs: ObjectId | None, prefix: str,
               out: list[str]) -> None:
    known = {e.name: e for e in store.read_tree(theirs)} if theirs else {}
    for e in store.read_tree(ours):
        other = known.get(e.name)
        if other is not None and other.id == e.id:
            continue  # the same subtree or file: nothing new below
        name = prefix + e.name.decode("utf-8", "surrogateescape")
        if e.mode == Mode.TREE:
            _new_paths(store, e.id, other.id if other and other.mode == Mode.TREE else None,
                       name + "/", out)
        elif other is None:
            out.append(name)


def push(tl: Timeline, remote: str | None, task: str | None = None, *,
         all_tasks: bool = False, as_id: str | None = None, confirm: bool = False
         ) -> PushResult:
    """Push one task (as the remote's task `as_id`, if given), or every task of this
    workspace; a task's first push to a remote needs `confirm`."""
    store = tl.store
    where = default_remote(store, remote, "push")
    shown = where.shown
    if all_tasks:
        if as_id is not None:
            raise InvalidArgument("--as names one task on the remote; it cannot go with --all.",
                                  "Push that task alone: {0}.",
                                  [call("push", remote=shown, task=BLANK, as_id=as_id)])
        tids = _own_tasks(tl)
        if not tids:
            raise InvalidArgument("This workspace has no tasks to push.",
                                  "Start one with {0}.", [call("init", name=BLANK)])
    else:
        tids = [tl.resolve(task)]
    names = {tid: TaskId(as_id) if as_id is not None else tid for tid in tids}
    url = where.url_shown
    theirs = remote_tasks(store, where)
    carried = {tid: _carried(store, where, theirs[names[tid]])
               if _check_not_behind(tl, tid, theirs.get(names[tid]), shown, names[tid]) else {}
               for tid in tids}
    done = _pushed(store).get(url, [])
    first = [tid for tid in tids if names[tid] not in done]
    if first and not confirm:
        raise _confirmation(tl, first, names, url)
    if not confirm:  # transcripts kept since a task's first push are shown before they leave
        fresh = [t for tid in tids if tid not in first
                 for t in _transcripts(tl, [tid], theirs.get(names[tid]))]
        if fresh:
            raise NeedsConfirmation(
                f"Pushing to {url} publishes {len(fresh)} session transcript"
                f"{'s' if len(fresh) != 1 else ''} (redacted) kept since the task's first "
                f"push: {'; '.join(fresh[:_SHOWN])}"
                + (f"; and {len(fresh) - _SHOWN} more" if len(fresh) > _SHOWN else "") + ".",
                "If that remote may hold them, push again with {0}.", [Arg("confirm", True)])
    frozen: dict[str, ObjectId] = {}
    specs: list[str] = []
    leases: list[str] = []
    tasks: list[PushedTask] = []
    with store.lock():  # only while the refs are read and their notes and cards written
        for tid in tids:
            name, prefix = names[tid], f"{REF_ROOT}{tid}/"
            refs = {n: oid for n, oid in store.list_refs(prefix).items()
                    if n[len(prefix):] == "head" or numbered(n[len(prefix):])}
            frozen.update(refs)
            specs += [f"{prefix}*:{REF_ROOT}{name}/*",
                      f"{notes_commit(tl, tid, name, carried[tid])}:{NOTES_ROOT}{name}",
                      f"+{card_commit(tl, tid, name)}:{REF_ROOT}{name}/{CARD}"]
            old = theirs[name].notes if name in theirs else None
            leases.append(f"--force-with-lease={NOTES_ROOT}{name}:{old or ''}")
            tasks.append(PushedTask(name, tl.record(refs[f"{prefix}head"]).n, tid in first))
        store.flush()
    # The refs go as they were read under the lock, so a save meanwhile is not pushed without
    # its note: from a scratch repository that holds those refs alone, by one glob a task, in
    # one atomic push whatever their number (remote_git.frozen_refs).
    where_git = git_dir(store)
    with remote_git.frozen_refs(frozen, store.objects_folder,
                                where_git / "config" if where_git else None,
                                store.state.ensure() if where_git else None) as scratch:
        p = remote_git.run(scratch, "push", "--atomic", "--no-verify", "--porcelain",
                           "--progress", *leases, where.spec, *specs, check=False,
                           cwd=top(store), remote=where)
    if p.returncode != 0:
        _push_refused(p, [t.task for t in tasks], shown)
    with store.lock():  # confirmed for later pushes only once the remote took them
        record = _pushed(store)
        record[url] = sorted({*record.get(url, []), *(t.task for t in tasks)})
        _state(store).write(PUSHED, json.dumps(record).encode())
    return PushResult(url, tasks)


def _own_tasks(tl: Timeline) -> list[TaskId]:
    """The tasks of this workspace (a repository's store may hold other folders' too)."""
    store = tl.store
    return [t for t in tl.task_ids()
            if tl.meta(t).workspace in (None, store.workspace, *store.aliases)]


def _confirmation(tl: Timeline, first: list[TaskId], names: dict[TaskId, TaskId], url: str
                  ) -> NeedsConfirmation:
    files = sorted({p for tid in first for p in untracked(tl, tid)})
    steps = ", ".join(f"{names[tid]} ({tl.head(tid).n} steps)" for tid in first)
    named = "; ".join(files[:_SHOWN]) + (f"; and {len(files) - _SHOWN} more"
                                         if len(files) > _SHOWN else "")
    also = (f" It also publishes {len(files)} files your git does not track: {named}."
            if files else "")
    kept = _transcripts(tl, first)
    said = ("; ".join(kept[:_SHOWN]) + (f"; and {len(kept) - _SHOWN} more"
                                         if len(kept) > _SHOWN else ""))
    talk = (f" And {len(kept)} session transcript{'s' if len(kept) != 1 else ''} (redacted): "
            f"{said}." if kept else "")
    return NeedsConfirmation(
        f"Pushing to {url} publishes task {steps} to everyone who can read that remote."
        f"{also}{talk} Sensitive files were never saved.",
        "If that remote may hold them, push again with {0}.", [Arg("confirm", True)])


def _transcripts(tl: Timeline, tids: list[TaskId], theirs: RemoteTask | None = None
                 ) -> list[str]:
    """Each transcript file the tasks' steps kept ("<task> step <n> <file> (<size> bytes)"),
    but those the remote's task (`theirs`) holds already."""
    store, out = tl.store, []
    held = theirs.refs if theirs is not None else {}
    for tid in tids:
        prefix = f"{REF_ROOT}{tid}/transcripts/"
        for name, oid in sorted(store.list_refs(prefix).items(),
                                key=lambda r: int(r[0][len(prefix):] or 0)):
            if held.get(name[len(REF_ROOT) + len(tid) + 1:]) == oid:
                continue
            for e in store.read_tree(store.read_commit(oid).tree):
                out.append(f"{tid} step {name[len(prefix):]} "
                           f"{e.name.decode('utf-8', 'replace')} "
                           f"({store.object_size(e.id):,} bytes)")
    return out


def _check_not_behind(tl: Timeline, tid: TaskId, theirs: RemoteTask | None, remote: str,
                      name: TaskId) -> bool:
    """Refuse before pushing anything if the remote holds steps, or drifts after a step that
    this store has drifts after too, that this store has not fetched (git would refuse them
    anyway). The remote's drifts this store does not have at all (never fetched, or dropped
    here by `compress`) stay as they are there: returns True if there are any, since their
    notes must then be carried on in the pushed notes commit."""
    if theirs is None:
        return False
    store = tl.store
    head = store.get_ref(head_ref(tid))
    hint = [call("fetch", remote=remote, task=str(name)),
            call("fetch", remote=remote, task=str(name), as_id=f"{name}-2"),
            call("push", remote=remote, task=str(tid), as_id=f"{name}-2")]
    carry = False
    for rest, oid in sorted(theirs.refs.items(), key=lambda r: r[0] != "head"):
        mine = store.get_ref(f"{REF_ROOT}{tid}/{rest}")
        if mine == oid or (mine is not None and reaches(store, mine, oid)):
            continue
        if rest.startswith("drifts/") and mine is None:
            carry = True  # the push leaves this ref alone
            continue
        if rest == "head":
            raise Diverged(f"The remote's task {name} has steps this store does not (remote "
                           f"head {oid[:12]}, here {(head or '?')[:12]}); nothing was pushed.",
                           _AHEAD, hint)
        if rest.startswith(("steps/", "transcripts/")):
            raise Diverged(f"{rest} of task {name} differs here and on the remote; nothing was "
                           "pushed.", _AHEAD, hint)
        raise Diverged(f"The remote has drifts of task {name} after step {rest[7:]} that this "
                       "store has not fetched; nothing was pushed.", _AHEAD, hint)
    return carry


def _push_refused(p: child_process.Completed, names: list[str], remote: str) -> None:
    why = [line.split("\t")[-1] for line in p.stdout.splitlines() if line.startswith("!")]
    real = [w for w in why if "atomic" not in w] or why
    if any("stale info" in w for w in real):
        raise Diverged(f"Another push of task {', '.join(names)} reached the remote while this "
                       f"one ran; nothing of it was pushed.",
                       "Fetch it, then push again: {0}.",
                       [call("fetch", remote=remote, task=names[0])])
    if any("fast-forward" in w or "fetch first" in w for w in real):
        raise Diverged(f"The remote's task {', '.join(names)} moved on; nothing of it was "
                       f"pushed.", "Fetch it, then push again: {0}.",
                       [call("fetch", remote=remote, task=names[0])])
    raise RemoteFailed(f"git push failed: {remote_git.failure(p)}",
                       "Check the remote's name or URL and your access to it (hooks on the "
                       "remote may refuse refs outside refs/heads).")
