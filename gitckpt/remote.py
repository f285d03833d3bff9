"""Checkpoints through ordinary git remotes: push tasks, list the tasks a remote holds, and
fetch one, with the user's own `git` as the transport (`remote_git`).

What travels, by explicit refspecs only (nothing is added to the user's git config):

    refs/checkpoints/<task>/head, steps/<n>, drifts/<n>   the task's refs, as they are here
    refs/checkpoints/<task>/card      a parentless commit over the empty tree whose message
                                      says the task's name, step and last activity, so a
                                      listing reads every task from a few hundred bytes each
    refs/notes/gitckpt/<task>         a parentless notes commit holding the notes of every
                                      commit of the task (fanned out as git writes notes)

A note belongs to its commit and never changes, so the per-task notes commit is replaced whole
on every push of the task, under `--force-with-lease` at the value the push checked, in one
atomic push with the task's refs: a push by another machine in between makes the whole push
fail and nothing moves. Machines pushing different tasks never touch the same ref. A fetch
downloads the task's objects without writing any ref, then under the store lock adds the
notes this store lacks, merges the drift chains (keeping both), and moves `head` forward
only; `steps/<n>` are created, never rewritten.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from gitckpt import remote_git
from gitckpt.calls import BLANK, Arg, call
from gitckpt.errors import (
    Diverged,
    InvalidArgument,
    NeedsConfirmation,
    RemoteFailed,
    TaskNotFound,
)
from gitckpt.ids import ObjectId, TaskId
from gitckpt.objects import EMPTY_TREE, Mode, TreeEntry
from gitckpt.store.base import Store
from gitckpt.timeline import REF_ROOT, Timeline, head_ref

NOTES_ROOT = "refs/notes/gitckpt/"
CARD = "card"
PUSHED = "pushed.json"  # {remote URL: [tasks whose first push there was confirmed]}
DEFAULT = "remote"      # the remote set with `gitckpt config remote NAME`
_SHOWN = 10             # untracked files named in a confirmation; the count says the rest
_FETCH_FIRST = ("Bring the remote's line here first: {0} (drifts are merged, keeping both). "
                "If both sides saved steps, keep the remote's as another task: {1}.")


def git_dir(store: Store) -> Path | None:
    """The store's repository for git, or None while a plain-folder store is not made."""
    return store.refs_folder if store.refs_folder.is_dir() else None


def default_remote(store: Store, remote: str | None, op: str) -> str:
    """`remote`, or the one set with `gitckpt config remote NAME`."""
    if remote:
        return remote_git.check_remote(remote)
    saved = (store.state.read(DEFAULT) or b"").decode("utf-8", "replace").strip()
    if saved:
        return saved
    raise InvalidArgument("No remote given, and none is set for this workspace.",
                          "Name one: {0}. To set it once: gitckpt config remote NAME.",
                          [call(op, remote=BLANK)])


def set_default(store: Store, remote: str | None) -> str | None:
    """Set (or with None, forget) the workspace's default remote; returns it."""
    if remote is None:
        store.state.remove(DEFAULT)
        return None
    store.state.write(DEFAULT, remote_git.check_remote(remote).encode() + b"\n")
    return remote


# -- what a remote holds ----------------------------------------------------------------------

@dataclass
class RemoteTask:
    """One task of a remote, as its refs (and its card, once read) say."""

    task: TaskId
    refs: dict[str, ObjectId] = field(default_factory=dict)  # head, steps/<n>, drifts/<n>
    notes: ObjectId | None = None
    card: ObjectId | None = None
    name: str | None = None
    step: int | None = None
    title: str | None = None
    updated: str | None = None

    @property
    def head(self) -> ObjectId | None:
        return self.refs.get("head")

    def to_dict(self) -> dict:
        steps = sum(r.startswith("steps/") for r in self.refs)
        return {"task": self.task, "name": self.name,
                "steps": self.step if self.step is not None else max(steps - 1, 0),
                "drifts": sum(r.startswith("drifts/") for r in self.refs),
                "title": self.title, "last_activity": self.updated, "head": self.head}


def remote_tasks(store: Store, remote: str) -> dict[TaskId, RemoteTask]:
    """Every task the remote holds, from one `ls-remote` (no round trip per task)."""
    found: dict[TaskId, RemoteTask] = {}
    refs = remote_git.list_refs(git_dir(store), remote, f"{REF_ROOT}*", f"{NOTES_ROOT}*")
    for name, oid in refs.items():
        notes = name.startswith(NOTES_ROOT)
        task, _, rest = name[len(NOTES_ROOT if notes else REF_ROOT):].partition("/")
        try:
            tid = TaskId(task)
        except InvalidArgument:
            continue  # not a task of ours
        t = found.setdefault(tid, RemoteTask(tid))
        if notes:
            t.notes = oid if not rest else t.notes
        elif rest == CARD:
            t.card = oid
        elif rest == "head" or _numbered(rest):
            t.refs[rest] = oid
    return {tid: t for tid, t in sorted(found.items()) if t.head}


def _numbered(rest: str) -> bool:
    kind, _, n = rest.partition("/")
    return kind in ("steps", "drifts") and n.isdigit() and n == str(int(n))


def listing(store: Store, remote: str, url: str) -> dict[TaskId, RemoteTask]:
    """Every task of the remote with what its card says: the refs from one `ls-remote`, and
    while that runs, the cards alone fetched into a throwaway repository (nothing is added
    to the user's). Two calls in all, whatever the number of tasks."""
    with ThreadPoolExecutor(1) as pool:
        cards = pool.submit(_fetch_cards, url)
        tasks = remote_tasks(store, remote)
        for tid, card in cards.result().items():
            t = tasks.get(tid)
            if t is not None:
                t.name = str(card.get("name") or "")[:200] or None
                t.step = card["step"] if isinstance(card.get("step"), int) else None
                t.title = str(card.get("title") or "")[:200] or None
                t.updated = str(card.get("updated") or "")[:40] or None
    return tasks


def _fetch_cards(url: str) -> dict[str, dict]:
    found: dict[str, dict] = {}
    with remote_git.scratch_repository() as scratch:
        remote_git.run(scratch, "fetch", "-q", "--no-tags", "--no-write-fetch-head", url,
                       f"+{REF_ROOT}*/{CARD}:refs/cards/*")
        for name, (_, message) in remote_git.commit_messages(scratch, "refs/cards/").items():
            try:
                card = json.loads(message.partition("\n\n")[2])
            except ValueError:
                continue  # someone else's ref: the listing keeps what the refs said
            if isinstance(card, dict):
                found[name[len("refs/cards/"):]] = card
    return found


def card_commit(tl: Timeline, task: TaskId) -> ObjectId:
    head = tl.head(task)
    tip = tl.tip(task, head)
    meta = head.note if head.n == 0 else tl.meta(task)
    card = {"task": task, "name": meta.name, "step": head.n, "title": head.note.title,
            "updated": tip.note.created_at}
    store = tl.store
    store.write_tree([])  # the empty tree, which a repository need not hold yet
    return store.write_commit(EMPTY_TREE, [], f"card: {meta.name}\n\n{json.dumps(card)}\n",
                              store.read_commit(tip.commit).time)


def notes_commit(tl: Timeline, task: TaskId) -> ObjectId:
    """A notes commit with the notes of every commit of the task's timeline, no parent."""
    store = tl.store
    fans: dict[bytes, list[TreeEntry]] = {}
    for commit in sorted(tl.commits(task)):
        text = store.read_note(commit)
        if text is not None:
            blob = store.write_blob(text.encode())
            fans.setdefault(commit[:2].encode(), []).append(
                TreeEntry(commit[2:].encode(), Mode.FILE, blob))
    root = [TreeEntry(fan, Mode.TREE, store.write_tree(leaves)) for fan, leaves in fans.items()]
    return store.write_commit(store.write_tree(root), [], f"Notes of task {task}\n",
                              store.read_commit(tl.tip(task).commit).time)


# -- push -------------------------------------------------------------------------------------

@dataclass
class PushedTask:
    task: str
    steps: int
    first: bool

    def to_dict(self) -> dict:
        return {"task": self.task, "steps": self.steps, "first": self.first}


@dataclass
class PushResult:
    remote: str
    tasks: list[PushedTask]

    def to_dict(self) -> dict:
        return {"remote": self.remote, "tasks": [t.to_dict() for t in self.tasks]}


def _pushed(store: Store) -> dict[str, list[str]]:
    try:
        data = json.loads(store.state.read(PUSHED) or b"{}")
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
        for part in filter(None, getattr(store, "prefix", "").split("/")):
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
         all_tasks: bool = False, confirm: bool = False) -> PushResult:
    """Push one task (or every task); a task's first push to a remote needs `confirm`."""
    store = tl.store
    remote = default_remote(store, remote, "push")
    tids = _own_tasks(tl) if all_tasks else [tl.resolve(task)]
    if not tids:
        raise TaskNotFound("(any)")
    where = git_dir(store)
    url = remote_git.shown(remote_git.url_of(where, remote))  # kept and shown without secrets
    theirs = remote_tasks(store, remote)
    for tid in tids:
        _check_not_behind(tl, tid, theirs.get(tid), remote)
    done = _pushed(store).get(url, [])
    first = [tid for tid in tids if tid not in done]
    if first and not confirm:
        raise _confirmation(tl, first, url)
    specs, leases = [], []
    with store.lock():
        for tid in tids:
            # the refs as they are now, by id: a save after this lock is not pushed without
            # the note that belongs to it
            prefix = f"{REF_ROOT}{tid}/"
            specs += [f"{oid}:{name}" for name, oid in sorted(store.list_refs(prefix).items())
                      if name[len(prefix):] == "head" or _numbered(name[len(prefix):])]
            notes, card = notes_commit(tl, tid), card_commit(tl, tid)
            specs += [f"{notes}:{NOTES_ROOT}{tid}", f"+{card}:{prefix}{CARD}"]
            old = theirs[tid].notes if tid in theirs else None
            leases.append(f"--force-with-lease={NOTES_ROOT}{tid}:{old or ''}")
        store.flush()
    p = remote_git.run(where, "push", "--atomic", "--no-verify", "--porcelain", *leases,
                       remote, *specs, check=False)
    if p.returncode != 0:
        _push_refused(p, tids, remote)
    with store.lock():
        record = _pushed(store)
        record[url] = sorted({*record.get(url, []), *tids})
        store.state.write(PUSHED, json.dumps(record).encode())
    return PushResult(url, [PushedTask(t, tl.head(t).n, t in first) for t in tids])


def _own_tasks(tl: Timeline) -> list[TaskId]:
    """The tasks of this workspace (a repository's store may hold other folders' too)."""
    store = tl.store
    return [t for t in tl.task_ids()
            if tl.meta(t).workspace in (None, store.workspace, *store.aliases)]


def _confirmation(tl: Timeline, first: list[TaskId], url: str) -> NeedsConfirmation:
    files = sorted({p for tid in first for p in untracked(tl, tid)})
    steps = ", ".join(f"{tid} ({tl.head(tid).n} steps)" for tid in first)
    named = "; ".join(files[:_SHOWN]) + (f"; and {len(files) - _SHOWN} more"
                                         if len(files) > _SHOWN else "")
    also = (f" It also publishes {len(files)} files your git does not track: {named}."
            if files else "")
    return NeedsConfirmation(
        f"Pushing to {url} publishes task {steps} to everyone who can read "
        f"that remote.{also} Sensitive files were never saved.",
        "If that remote may hold them, push again with {0}.", [Arg("confirm", True)])


def _check_not_behind(tl: Timeline, tid: TaskId, theirs: RemoteTask | None,
                      remote: str) -> None:
    """Refuse before pushing anything if the remote holds commits of the task this store
    lacks: the notes commit would replace theirs, and git would refuse anyway."""
    if theirs is None:
        return
    store = tl.store
    head = store.get_ref(head_ref(tid))
    hint = [call("fetch", remote=remote, task=str(tid)),
            call("fetch", remote=remote, task=str(tid), as_id=f"{tid}-2")]
    for rest, oid in sorted(theirs.refs.items(), key=lambda r: r[0] != "head"):
        mine = store.get_ref(f"{REF_ROOT}{tid}/{rest}")
        if mine == oid or (mine is not None and reaches(store, mine, oid)):
            continue
        if rest == "head":
            raise Diverged(f"The remote's task {tid} has steps this store does not (remote head "
                           f"{oid[:12]}, here {(head or '?')[:12]}); nothing was pushed.",
                           _FETCH_FIRST, hint)
        if rest.startswith("steps/"):
            raise Diverged(f"{rest} of task {tid} differs here and on the remote; nothing was "
                           "pushed.", _FETCH_FIRST, hint)
        raise Diverged(f"The remote has drifts of task {tid} after step {rest[7:]} that this "
                       "store has not fetched; nothing was pushed.", _FETCH_FIRST, hint)


def _push_refused(p, tids: list[TaskId], remote: str) -> None:
    why = [line.split("\t")[-1] for line in p.stdout.splitlines() if line.startswith("!")]
    real = [w for w in why if "atomic" not in w] or why
    if any("stale info" in w for w in real):
        raise Diverged(f"Another push of task {', '.join(tids)} reached the remote while this "
                       "one ran; nothing was pushed.", "Fetch it, then push again: {0}.",
                       [call("fetch", remote=remote, task=str(tids[0]))])
    if any("fast-forward" in w or "fetch first" in w for w in real):
        raise Diverged(f"The remote's task {', '.join(tids)} moved on; nothing was pushed.",
                       "Fetch it, then push again: {0}.",
                       [call("fetch", remote=remote, task=str(tids[0]))])
    raise RemoteFailed(f"git push failed: {remote_git.failure(p)}",
                       "Check the remote's name or URL and your access to it (hooks on the "
                       "remote may refuse refs outside refs/heads).")


def reaches(store: Store, start: ObjectId, target: ObjectId, limit: int = 1_000_000) -> bool:
    """True if `target` is `start` or one of its ancestors (every parent is followed)."""
    todo, seen = [start], set()
    while todo and len(seen) < limit:
        commit = todo.pop()
        if commit == target:
            return True
        if commit in seen or not store.has_object(commit):
            continue
        seen.add(commit)
        todo.extend(store.read_commit(commit).parents)
    return False
