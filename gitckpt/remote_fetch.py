"""Fetching a task from a git remote: its objects without any ref, then under the store
lock its notes, its drift chains (merged, keeping both) and its head (only forward), checked
first as somebody else's data. See `remote` for what travels."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gitckpt import remote_git
from gitckpt.calls import Arg, call
from gitckpt.errors import Diverged, InvalidArgument, RemoteFailed, StoreCorrupt
from gitckpt.ids import ObjectId, TaskId
from gitckpt.notes import Note
from gitckpt.objects import Mode
from gitckpt.remote import (
    NOTES_ROOT,
    RemoteTask,
    default_remote,
    git_dir,
    listing,
    reaches,
    remote_tasks,
)
from gitckpt.store.base import Store
from gitckpt.timeline import REF_ROOT, Timeline, head_ref, step_ref

# -- fetch ------------------------------------------------------------------------------------

@dataclass
class FetchResult:
    remote: str
    tasks: list[RemoteTask]
    task: str | None = None
    source: str | None = None   # the remote's task id, when fetched --as another
    created: bool = False       # the task is new here
    moved: bool = False         # head moved forward
    steps: int = 0              # the head's step number
    drifts_kept: int = 0        # the remote's drifts added after this store's own

    def to_dict(self) -> dict:
        return {"remote": self.remote, "tasks": [t.to_dict() for t in self.tasks],
                "task": self.task, "source": self.source, "created": self.created,
                "moved": self.moved, "steps": self.steps, "drifts_kept": self.drifts_kept}


def fetch(tl: Timeline, remote: str | None, task: str | None = None,
          as_id: str | None = None) -> FetchResult:
    """Without `task`: the tasks the remote holds. With it: bring that task here, as `as_id`
    if given (a task of its own, e.g. for a line that diverged from this store's)."""
    store = tl.store
    remote = default_remote(store, remote, "fetch")
    url = remote_git.url_of(git_dir(store), remote)
    if task is None:
        return FetchResult(remote_git.shown(url), list(listing(store, remote, url).values()))
    held = remote_tasks(store, remote)
    source = TaskId(task)
    theirs = held.get(source)
    if theirs is None:
        raise InvalidArgument(f"{remote_git.shown(url)} holds no task {source}.",
                              "See what it holds: {0}.", [call("fetch", remote=remote)])
    dest = TaskId(as_id) if as_id else source
    if as_id and store.list_refs(f"{REF_ROOT}{dest}/"):
        raise InvalidArgument(f"Task {dest} exists in this store already.",
                              "Pick another id: {0}.", [Arg("as_id", f"{dest}-2")])
    store.prepare()  # a plain folder's store is made by its first fetch
    wanted = [f"{REF_ROOT}{source}/{rest}" for rest in theirs.refs]
    wanted += [f"{NOTES_ROOT}{source}"] if theirs.notes else []
    remote_git.run(git_dir(store), "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                   remote, *wanted)
    missing = [o for o in [*theirs.refs.values(), theirs.notes] if o and not store.has_object(o)]
    if missing:
        raise RemoteFailed(f"The remote's task {source} changed while it was fetched; "
                           "nothing was changed here.", "Fetch again.")
    with store.lock():
        result = _merge(tl, dest, theirs)
    result.remote, result.tasks = remote_git.shown(url), [theirs]
    result.source = source if dest != source else None
    return result


def _merge(tl: Timeline, tid: TaskId, theirs: RemoteTask) -> FetchResult:
    """Under the lock, in commit order: notes, drifts, head (only forward), then steps/<n>
    (head is the truth: a writer killed before its steps refs leaves what `_repair` and
    doctor re-create). Everything is checked before the first write."""
    store = tl.store
    remote_head = theirs.head
    assert remote_head is not None
    notes = _remote_notes(store, theirs)
    _check_chain(store, theirs, notes)
    local_head = store.get_ref(head_ref(tid))
    new = local_head is None
    if not new and local_head != remote_head and not reaches(store, remote_head, local_head):
        if not reaches(store, local_head, remote_head):
            raise Diverged(
                f"Task {tid} has steps here and on the remote after the same step (here "
                f"{local_head[:12]}, remote {remote_head[:12]}); nothing was changed.",
                "Keep both: fetch the remote's line as a task of its own with {0}.",
                [Arg("as_id", f"{tid}-2")])
        remote_head = local_head  # this store is ahead: only what it lacks comes in
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
            kept += merge_drifts(tl, f"{REF_ROOT}{tid}/{rest}", oid)
    moved = remote_head != local_head
    if moved:
        store.cas_ref(head_ref(tid), remote_head, local_head)
    head = tl.head(tid)
    for rest, oid in sorted(theirs.refs.items()):
        if (rest.startswith("steps/") and int(rest[6:]) <= head.n
                and store.get_ref(f"{REF_ROOT}{tid}/{rest}") is None):
            store.create_ref(step_ref(tid, int(rest[6:])), oid)
    return FetchResult("", [], tid, created=new, moved=moved, steps=head.n, drifts_kept=kept)


def _remote_notes(store: Store, theirs: RemoteTask) -> dict[ObjectId, str]:
    """The notes of the fetched notes commit, for the commits of the remote's task only."""
    if theirs.notes is None:
        return {}
    commits: set[ObjectId] = set()
    todo = list(theirs.refs.values())
    while todo:
        c = todo.pop()
        if c not in commits:
            commits.add(c)
            todo.extend(store.read_commit(c).parents)
    found: dict[ObjectId, str] = {}
    for fan in store.read_tree(store.read_commit(theirs.notes).tree):
        if fan.mode != Mode.TREE or len(fan.name) != 2:
            continue
        for leaf in store.read_tree(fan.id):
            oid = (fan.name + leaf.name).decode("ascii", "replace")
            if oid in commits and leaf.mode == Mode.FILE:
                found[ObjectId(oid)] = store.read_blob(leaf.id).decode("utf-8", "replace")
    return found


def _note(store: Store, commit: ObjectId, fetched: dict[ObjectId, str] | None = None
          ) -> Note | None:
    text = store.read_note(commit)
    if text is None and fetched:
        text = fetched.get(commit)
    return Note.parse(text, commit) if text is not None else None


def _check_chain(store: Store, theirs: RemoteTask, notes: dict[ObjectId, str]) -> None:
    """The remote's head must be a chain of steps numbered down to 0, and each steps/<n> the
    chain's step n: a remote is somebody else's data."""
    chain: dict[int, ObjectId] = {}
    commit: ObjectId | None = theirs.head
    while commit is not None:
        note = _note(store, commit, notes)
        if note is None or note.kind not in ("init", "step") or note.step in chain:
            raise StoreCorrupt(f"The remote's task {theirs.task} is damaged at {commit[:12]} "
                               "(a step without its note).", "Push it again from a good copy.")
        chain[note.step] = commit
        parents = store.read_commit(commit).parents
        commit = parents[0] if parents and note.step > 0 else None
    if set(chain) != set(range(len(chain))):
        raise StoreCorrupt(f"The remote's task {theirs.task} has gaps in its steps.",
                           "Push it again from a good copy.")
    for rest, oid in theirs.refs.items():
        if rest.startswith("steps/") and chain.get(int(rest[6:])) != oid:
            raise StoreCorrupt(f"The remote's {rest} of task {theirs.task} is not its step "
                               f"{rest[6:]}.", "Push it again from a good copy.")


def _add_notes(store: Store, theirs: RemoteTask, notes: dict[ObjectId, str], new: bool
               ) -> int:
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


def merge_drifts(tl: Timeline, ref: str, theirs: ObjectId) -> int:
    """Merge the remote's drift chain `theirs` into `ref`, keeping both: a fast-forward when
    one contains the other; otherwise the remote's drifts this chain lacks are added after
    this chain's newest, oldest first, each a copy (same tree, message, time and note) whose
    second parent is the remote's original, so both chains stay reachable and the next push
    is a fast-forward. Returns how many were added."""
    store = tl.store
    mine = store.get_ref(ref)
    if mine is None:
        store.create_ref(ref, theirs)
        return 0
    if reaches(store, mine, theirs):
        return 0
    if reaches(store, theirs, mine):
        store.cas_ref(ref, theirs, mine)
        return 0
    ours: set[ObjectId] = set()
    todo = [mine]
    while todo:
        c = todo.pop()
        if c not in ours:
            ours.add(c)
            todo.extend(store.read_commit(c).parents)
    lacking: list[ObjectId] = []
    commit: ObjectId | None = theirs
    while commit is not None and commit not in ours:
        note = _note(store, commit)
        if note is None or note.kind in ("init", "step"):
            break
        lacking.append(commit)
        parents = store.read_commit(commit).parents
        commit = parents[0] if parents else None
    tip, notes = mine, {}
    for original in reversed(lacking):
        c = store.read_commit(original)
        tip = store.write_commit(c.tree, [tip, original], c.message, c.time)
        notes[tip] = store.read_note(original)
    store.update_notes(notes, "Drifts fetched by gitckpt\n")
    store.cas_ref(ref, tip, mine)
    return len(lacking)
