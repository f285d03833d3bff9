"""What a git remote holds of gitckpt's: the refs that travel, the tasks a remote has, their
cards, and which remote a workspace uses. Pushing is `remote_push`, fetching `remote_fetch`,
and the transport is the user's own `git` (`remote_git`).

What travels, by explicit refspecs only (nothing is added to the user's git config):

    refs/checkpoints/<task>/head, steps/<n>, drifts/<n>   the task's refs, as they are here
    refs/checkpoints/<task>/transcripts/<n>               (and step n's transcripts, if kept)
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

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitckpt.core import json_input
from gitckpt.core.errors import InvalidArgument, RemoteFailed
from gitckpt.core.hints import BLANK, call
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.shape import HIDDEN, Shaped
from gitckpt.engine.timeline import REF_ROOT
from gitckpt.safety import url_secrets
from gitckpt.store.base import Store
from gitckpt.transfer import git as remote_git
from gitckpt.transfer.git import Remote

NOTES_ROOT = "refs/notes/gitckpt/"
CARD = "card"
log = logging.getLogger("gitckpt.transfer.remotes")
DEFAULT = "remote"  # the remote set with `gitckpt config remote NAME`
_CARD_BYTES = 64 * 1024  # a card is a few hundred bytes; a remote is somebody else's data


def git_dir(store: Store) -> Path | None:
    """The store's repository for git, or None while a plain-folder store is not made."""
    return store.refs_folder if store.refs_folder.is_dir() else None


def top(store: Store) -> Path:
    """Where git runs: the repository's top folder (where it resolves the relative URLs of
    its config), or the plain folder."""
    return store.top


def default_remote(store: Store, remote: str | None, op: str) -> Remote:
    """`remote` (a path made absolute from the workspace, as `git -C` does), or the one set
    with `gitckpt config remote NAME`, with the URL git resolves it to."""
    if remote is not None:
        spec = remote_git.local_path(remote_git.check_remote(remote), Path(store.root))
    else:
        spec = _saved(store)
        if not spec:
            raise InvalidArgument("No remote given, and none is set for this workspace.",
                                  "Name one: {0}. To set it once: {1}.",
                                  [call(op, remote=BLANK), call("config_remote", name=BLANK)])
    return remote_git.resolve(git_dir(store), spec, top(store))


def _saved(store: Store) -> str:
    return (store.state.read(DEFAULT) or b"").decode("utf-8", "replace").strip()


def set_default(store: Store, remote: str | None) -> str | None:
    """Set (or with None, forget) the workspace's default remote; returns it as shown. A URL
    with credentials is refused: gitckpt keeps none (git's credential helpers do)."""
    if remote is None:
        store.state.remove(DEFAULT)
        return None
    remote = remote_git.local_path(remote_git.check_remote(remote), Path(store.root))
    if url_secrets.has_credentials(remote):
        raise InvalidArgument(
            f"{remote_git.shown(remote, url_secrets.secrets_of(remote))} holds credentials; "
            "gitckpt keeps none, so nothing was set.",
            "Set the URL without them: {0}, and let git's credential helper supply them "
            "(`git help credential`; e.g. `git config --global credential.helper store`).",
            [call("config_remote", name=url_secrets.without_credentials(remote))])
    store.prepare()  # a plain folder's store is made by its first setting
    store.state.write(DEFAULT, remote.encode() + b"\n")
    return remote_git.shown(remote)


def shown_default(store: Store) -> tuple[str | None, bool]:
    """The default remote as shown (credentials taken out), and whether the saved one holds
    credentials (set by an earlier gitckpt: it is used, never shown)."""
    saved = _saved(store)
    if not saved:
        return None, False
    return (remote_git.shown(saved, url_secrets.secrets_of(saved)),
            url_secrets.has_credentials(saved))


# -- what a remote holds ----------------------------------------------------------------------

@dataclass
class RemoteTask(Shaped):
    """One task of a remote, as its refs (and its card, once read) say."""

    task: TaskId
    # head, steps/<n>, drifts/<n>
    refs: dict[str, ObjectId] = field(default_factory=dict, metadata=HIDDEN)
    notes: ObjectId | None = field(default=None, metadata=HIDDEN)
    card: ObjectId | None = field(default=None, metadata=HIDDEN)
    name: str | None = None
    step: int | None = field(default=None, metadata=HIDDEN)  # the card's newest step
    title: str | None = None
    updated: str | None = field(default=None, metadata=HIDDEN)
    derived = ("steps", "drifts", "last_activity", "head")

    @property
    def head(self) -> ObjectId | None:
        return self.refs.get("head")

    @property
    def steps(self) -> int:
        """The newest step's number: the card's, else counted from the refs."""
        counted = sum(r.startswith("steps/") for r in self.refs)
        return self.step if self.step is not None else max(counted - 1, 0)

    @property
    def drifts(self) -> int:
        return sum(r.startswith("drifts/") for r in self.refs)

    @property
    def last_activity(self) -> str | None:
        return self.updated


def remote_tasks(store: Store, remote: Remote) -> dict[TaskId, RemoteTask]:
    """Every task the remote holds refs of (a head, or only notes or a card), from one
    `ls-remote`: no round trip per task."""
    found: dict[TaskId, RemoteTask] = {}
    refs = remote_git.list_refs(git_dir(store), remote, f"{REF_ROOT}*", f"{NOTES_ROOT}*",
                                cwd=top(store))
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
        elif rest == "head" or numbered(rest):
            t.refs[rest] = oid
    return dict(sorted(found.items()))


def numbered(rest: str) -> bool:
    kind, _, n = rest.partition("/")
    return kind in ("steps", "drifts", "transcripts") and n.isdigit() and n == str(int(n))


def listing(store: Store, remote: Remote) -> dict[TaskId, RemoteTask]:
    """Every task of the remote with a head, and what its card says: the refs from one
    `ls-remote` and, while that runs, the cards alone fetched into a throwaway repository
    that has the user's repository's settings (nothing is added to the user's). Two calls in
    all, whatever the number of tasks."""
    with ThreadPoolExecutor(1) as pool:
        cards = pool.submit(_fetch_cards, store, remote)
        tasks = {tid: t for tid, t in remote_tasks(store, remote).items() if t.head}
        found = cards.result()
        for tid, t in tasks.items():
            card = found.get(tid)
            if card is not None:
                t.name = _line(card.get("name"), 200)
                t.title = _line(card.get("title"), 200)
                t.updated = _line(card.get("updated"), 40)
                step = card.get("step")
                t.step = step if isinstance(step, int) and not isinstance(step, bool) \
                    and step >= 0 else None
    return tasks


def _line(value: object, most: int) -> str | None:
    """A card's text as one printable line (a remote is somebody else's data)."""
    if not isinstance(value, str):
        return None
    return "".join(c if c.isprintable() else " " for c in value)[:most].strip() or None


def _fetch_cards(store: Store, remote: Remote) -> dict[str, dict[str, Any]]:
    """Every card of the remote by task id; none (the listing shows the refs alone) if they
    cannot be fetched while the refs can."""
    found: dict[str, dict[str, Any]] = {}  # task id -> its card (JSON)
    where = git_dir(store)
    under = store.state.ensure() if where is not None else None
    with remote_git.scratch_repository(where / "config" if where else None, under) as scratch:
        try:
            remote_git.run(scratch, "fetch", "-q", "--progress", "--no-tags",
                           "--no-write-fetch-head", "--refmap=", remote.spec,
                           f"+{REF_ROOT}*/{CARD}:refs/cards/*", cwd=top(store), remote=remote)
        except RemoteFailed as e:
            log.warning("the cards of %s could not be read: %s", remote.url_shown, e.message)
            return found
        for name, (_, message) in remote_git.commit_messages(scratch, "refs/cards/").items():
            try:
                card = json_input.loads(message.partition("\n\n")[2], max_bytes=_CARD_BYTES)
            except ValueError:
                continue  # someone else's ref: the listing keeps what the refs said
            if isinstance(card, dict):
                found[name[len("refs/cards/"):]] = card
    return found


def reaches(store: Store, start: ObjectId, target: ObjectId, limit: int = 1_000_000) -> bool:
    """True if `target` is `start` or one of its ancestors (every parent is followed)."""
    todo = [start]
    seen: set[ObjectId] = set()
    while todo and len(seen) < limit:
        commit = todo.pop()
        if commit == target:
            return True
        if commit in seen or not store.has_object(commit):
            continue
        seen.add(commit)
        todo.extend(store.read_commit(commit).parents)
    return False
