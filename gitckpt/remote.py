"""Checkpoints through ordinary git remotes: push a task's refs and notes, list and fetch the
tasks a remote holds. The transport is the user's own `git` command line.

Only checkpoints travel, by explicit refspecs: `refs/checkpoints/<task>/*`, and the task's notes
as a notes commit of its own on the remote, `refs/notes/gitckpt/<task>`, so machines pushing
different tasks never fight over one notes ref (`git log --notes=gitckpt/<task>
refs/checkpoints/<task>/head` on any clone shows the steps' meaning). A note belongs to its
commit and is never changed, so the per-task notes commit is replaced whole on every push of
the task, in the same atomic push as the task's refs: if a ref is refused, nothing moves.
A fetch brings the task's refs into `refs/gitckpt-incoming/<task>/` and its notes commit
beside them, then under the store lock moves the task forward (a fast-forward of the step
chain only), adds the notes this store lacks, and deletes the incoming refs.

git runs with no hooks (`core.hooksPath=/dev/null`, `--no-verify`), no terminal prompt, and
an environment without the variables that would point it at another repository; nothing is
written to the user's git config. Credentials in a URL are never shown.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field

from gitckpt.calls import Arg
from gitckpt.errors import Diverged, InvalidArgument, NeedsConfirmation, RemoteFailed
from gitckpt.ids import ObjectId, TaskId
from gitckpt.objects import Mode, TreeEntry
from gitckpt.store.base import NOTES_REF, Store
from gitckpt.timeline import REF_ROOT, Timeline, head_ref

NOTES_ROOT = "refs/notes/gitckpt/"
INCOMING = "refs/gitckpt-incoming/"
PUSHED = "pushed.json"  # (remote URL, task) pairs already confirmed, in gitckpt's state
_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR",
          "GIT_PREFIX", "GIT_QUARANTINE_PATH")
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


def shown(text: str) -> str:
    """`text` with any credentials in URLs taken out."""
    return _USERINFO.sub("***@", text)


def git(store: Store, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The user's git on the store's repository: their transport settings, no hooks."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env["GIT_TERMINAL_PROMPT"] = "0"
    cmd = ["git", "-c", "core.hooksPath=/dev/null", f"--git-dir={store.refs_folder}", *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL)
    except OSError as e:
        raise RemoteFailed(f"Cannot run git: {e.strerror or e}.",
                           "Install git; push and fetch use its transports.") from e
    if check and p.returncode != 0:
        raise RemoteFailed(f"git {args[0]} failed: {shown(p.stderr.strip())[-600:]}",
                           "Check the remote's name or URL and your access to it.")
    return p


def remote_url(store: Store, remote: str) -> str:
    """What `remote` (a name of the repository's remotes, or a URL) resolves to."""
    if not remote or remote.startswith("-"):
        raise InvalidArgument(f"Not a remote: {remote!r}.",
                              "Pass a remote's name (origin) or a URL.")
    return git(store, "ls-remote", "--get-url", remote).stdout.strip() or remote


@dataclass(frozen=True)
class RemoteTask:
    task: str
    head: ObjectId
    steps: int
    drifts: int

    def to_dict(self) -> dict:
        return {"task": self.task, "head": self.head, "steps": self.steps,
                "drifts": self.drifts}


def remote_tasks(store: Store, remote: str) -> list[RemoteTask]:
    """Every task the remote holds, from one `ls-remote` (no round trip per task)."""
    out = git(store, "ls-remote", remote, f"{REF_ROOT}*").stdout
    found: dict[str, dict] = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        parts = name[len(REF_ROOT):].split("/")
        if not name.startswith(REF_ROOT) or len(parts) < 2:
            continue
        t = found.setdefault(parts[0], {"head": None, "steps": 0, "drifts": 0})
        if parts[1:] == ["head"]:
            t["head"] = ObjectId(oid)
        elif parts[1] in ("steps", "drifts") and len(parts) == 3:
            t[parts[1]] += 1
    return [RemoteTask(k, v["head"], v["steps"], v["drifts"])
            for k, v in sorted(found.items()) if v["head"]]


def notes_commit(tl: Timeline, task: TaskId) -> ObjectId:
    """A notes commit holding the notes of every commit of the task's timeline (fanned out
    as git writes notes), with no parent: it is replaced whole on each push."""
    store = tl.store
    fans: dict[bytes, list[TreeEntry]] = {}
    for commit in sorted(tl.commits(task)):
        text = store.read_note(commit)
        if text is not None:
            blob = store.write_blob(text.encode())
            fans.setdefault(commit[:2].encode(), []).append(
                TreeEntry(commit[2:].encode(), Mode.FILE, blob))
    root = [TreeEntry(fan, Mode.TREE, store.write_tree(leaves)) for fan, leaves in fans.items()]
    return store.write_commit(store.write_tree(root), [], f"Notes of task {task}\n", 0)


@dataclass
class PushResult:
    remote: str
    task: str
    steps: int
    pushed: bool
    first: bool
    untracked: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"remote": self.remote, "task": self.task, "steps": self.steps,
                "pushed": self.pushed, "first": self.first, "untracked": self.untracked}


def _pushed(store: Store) -> dict[str, list[str]]:
    try:
        data = json.loads(store.state.read(PUSHED) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def published_untracked(tl: Timeline, task: TaskId) -> list[str]:
    """Files the task's head holds that the user's git HEAD does not track."""
    head = tl.head(task)
    tracked: set[str] = set()
    state = tl.store.git_state()
    if state is not None and state.head:
        tracked = set(_paths(tl.store, tl.store.read_commit(ObjectId(state.head)).tree))
    return sorted(p for p in _paths(tl.store, head.tree) if p not in tracked)


def _paths(store: Store, tree: ObjectId, prefix: str = "") -> list[str]:
    out = []
    for e in store.read_tree(tree):
        name = prefix + e.name.decode("utf-8", "surrogateescape")
        if e.mode == Mode.TREE:
            out += _paths(store, e.id, name + "/")
        else:
            out.append(name)
    return out


def push(tl: Timeline, remote: str, task: str | None = None, confirm: bool = False
         ) -> PushResult:
    """Push one task. The first push of a task to a remote needs `confirm`."""
    store = tl.store
    tid = tl.resolve(task)
    url = remote_url(store, remote)
    head = tl.head(tid)
    first = tid not in _pushed(store).get(url, [])
    if first and not confirm:
        untracked = published_untracked(tl, tid)
        more = f" and {len(untracked)} files your git does not track" if untracked else ""
        raise NeedsConfirmation(
            f"Pushing task {tid} to {shown(url)} publishes its {head.n + 1} checkpoints{more} "
            "to everyone who can read that remote.",
            "Push again with {0} if that remote may hold them.", [Arg("confirm", True)])
    with store.lock():
        notes = notes_commit(tl, tid)
        store.flush()
    spec = [f"{REF_ROOT}{tid}/*:{REF_ROOT}{tid}/*", f"+{notes}:{NOTES_ROOT}{tid}"]
    p = git(store, "push", "--atomic", "--no-verify", "--porcelain", remote, *spec,
            check=False)
    if p.returncode != 0:
        if "non-fast-forward" in p.stdout or "fetch first" in p.stdout + p.stderr:
            theirs = next((t.head for t in remote_tasks(store, remote) if t.task == tid), None)
            raise Diverged(
                f"The remote's task {tid} has steps this one does not (remote head "
                f"{(theirs or '?')[:12]}, here {head.commit[:12]}); nothing was pushed.",
                "Fetch it first (gitckpt fetch REMOTE --task ID), or fetch it under another "
                "id with --as NEW_ID.")
        raise RemoteFailed(f"git push failed: {shown(p.stderr.strip())[-600:]}",
                           "Check the remote's name or URL and your access to it.")
    with store.lock():
        done = _pushed(store)
        done.setdefault(url, [])
        if tid not in done[url]:
            done[url].append(tid)
        store.state.write(PUSHED, json.dumps(done).encode())
    return PushResult(shown(url), tid, head.n, True, first)


@dataclass
class FetchResult:
    remote: str
    tasks: list[RemoteTask]
    task: str | None = None
    moved: bool = False
    head: str | None = None
    notes_added: int = 0

    def to_dict(self) -> dict:
        return {"remote": self.remote, "tasks": [t.to_dict() for t in self.tasks],
                "task": self.task, "moved": self.moved, "head": self.head,
                "notes_added": self.notes_added}


def _descends(store: Store, commit: ObjectId, ancestor: ObjectId) -> bool:
    """True if `ancestor` is on `commit`'s first-parent chain (the step chain)."""
    seen = 0
    while commit and seen < 1_000_000:
        if commit == ancestor:
            return True
        parents = store.read_commit(commit).parents
        commit = parents[0] if parents else None
        seen += 1
    return False


def fetch(tl: Timeline, remote: str, task: str | None = None) -> FetchResult:
    """Without `task`: what tasks the remote holds. With it: bring that task here."""
    store = tl.store
    url = shown(remote_url(store, remote))
    listing = remote_tasks(store, remote)
    if task is None:
        return FetchResult(url, listing)
    tid = TaskId(task)
    if not any(t.task == tid for t in listing):
        raise InvalidArgument(f"The remote {url} holds no task {tid}.",
                              "Fetch without --task to list what it holds.")
    incoming = f"{INCOMING}{tid}/"
    spec = [f"+{REF_ROOT}{tid}/*:{incoming}refs/*", f"+{NOTES_ROOT}{tid}:{incoming}notes"]
    git(store, "fetch", "--no-tags", "--no-write-fetch-head", remote, *spec)
    try:
        with store.lock():
            moved, added = _merge(tl, tid, incoming)
    finally:
        for name, oid in store.list_refs(incoming).items():
            store.delete_ref(name, oid)
    return FetchResult(url, listing, tid, moved, tl.head(tid).commit, added)


def _merge(tl: Timeline, tid: TaskId, incoming: str) -> tuple[bool, int]:
    """Under the lock: notes first, then the task's refs, its head last (the commit point)."""
    store = tl.store
    theirs = {name[len(incoming) + len("refs/"):]: oid
              for name, oid in store.list_refs(incoming + "refs/").items()}
    remote_head = theirs.get("head")
    if remote_head is None:
        return False, 0
    mine = {name[len(REF_ROOT) + len(tid) + 1:]: oid
            for name, oid in store.list_refs(f"{REF_ROOT}{tid}/").items()}
    local_head = mine.get("head")
    if local_head and local_head != remote_head and not _descends(store, remote_head,
                                                                  local_head):
        if _descends(store, local_head, remote_head):
            remote_head = None  # we are ahead: only what we lack comes in
        else:
            raise Diverged(
                f"Task {tid} has steps here and on the remote after the same step (here "
                f"{local_head[:12]}, remote {remote_head[:12]}); nothing was changed.",
                "Keep both by fetching the remote's line as another task with --as NEW_ID.")
    added = _merge_notes(store, store.get_ref(incoming + "notes"))
    for name, oid in sorted(theirs.items()):
        if name == "head":
            continue
        if name not in mine:
            store.create_ref(f"{REF_ROOT}{tid}/{name}", oid)
        elif mine[name] != oid and name.startswith("steps/"):
            raise Diverged(f"Step ref {name} of task {tid} differs here and on the remote.",
                           "Keep both by fetching the remote's line as another task with "
                           "--as NEW_ID.")
    if remote_head is not None and remote_head != local_head:
        store.cas_ref(head_ref(tid), remote_head, local_head)
        return True, added
    return False, added


def _merge_notes(store: Store, commit: ObjectId | None) -> int:
    """Add the notes of a fetched notes commit that this store lacks (notes never change)."""
    if commit is None:
        return 0
    lacking: dict[ObjectId, str] = {}
    for fan in store.read_tree(store.read_commit(commit).tree):
        if fan.mode != Mode.TREE:
            continue
        for leaf in store.read_tree(fan.id):
            oid = ObjectId((fan.name + leaf.name).decode())
            if store.read_note(oid) is None:
                lacking[oid] = store.read_blob(leaf.id).decode("utf-8", "replace")
    store.update_notes(lacking, "Notes fetched by 'gitckpt'\n")
    return len(lacking)


__all__ = ["NOTES_REF", "fetch", "push", "remote_tasks"]
