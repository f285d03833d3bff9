"""The one check of a task that comes from elsewhere (a package to import, a remote's task to
fetch), made on its objects before any of them is written here: it must be a task a save here
could have made.

Checked, in this order: its refs are a task's (head, steps/<n>, drifts/<n>, transcripts/<n>);
every object the
refs reach is whole, of its kind, and under the size limit a save here keeps (FileTooLarge),
and no tree names a path that a checkout could not write safely; the head is a chain of step
commits numbered down to 0 without gaps; each steps/<n> is that chain's step n; each
drifts/<n> leads back through drifts to step n; each transcripts/<n> is a parentless commit of
step n's transcript files (a flat tree of `.jsonl` blobs); every other commit has a note within
the limits a save keeps.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gitckpt.core import limits
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Commit
from gitckpt.core.progress import Meter
from gitckpt.engine.notes import Note
from gitckpt.engine.reach import reachable
from gitckpt.safety.scope import max_file_size

TASK_REF = re.compile(r"(head|steps/[0-9]+|drifts/[0-9]+|transcripts/[0-9]+)")


class Refused(Exception):
    """The task is not one a save here could have made; `message` says what is wrong, in
    words that follow "the task is refused:"."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Foreign:
    """One task as a source holds it, and how to read it there."""

    refs: dict[str, ObjectId]  # relative to the task: head, steps/<n>, drifts/<n>
    read_object: Callable[[ObjectId], tuple[str, bytes]]  # (kind, body), hashed to its id
    read_commit: Callable[[ObjectId], Commit]
    object_size: Callable[[ObjectId], int]  # from the header, before the body is read
    note: Callable[[ObjectId], Note | None]  # a commit's note (None: it has none)
    # blobs checked by existence and size only, where something already hashed them (git's
    # fetch did); None: each blob is read
    blob_exists: Callable[[ObjectId], bool] | None = None


def verify(task: Foreign, hint: str) -> dict[ObjectId, str]:
    """Every object the task's refs reach, with its kind, once every check passed. Refused
    says what failed; StoreCorrupt (with `hint`) a damaged or missing object; FileTooLarge a
    file over the size limit."""
    odd = sorted(r for r in task.refs if not TASK_REF.fullmatch(r))
    if odd:
        raise Refused(f"it holds the ref {odd[0]!r}, which no task has")
    if "head" not in task.refs:
        raise Refused("it has no head")
    # the objects first: the walks below read commits, which must be whole to be believed
    kinds = reachable(task.read_object, list(task.refs.values()), blob_exists=task.blob_exists,
                      check_names=True, hint=hint, blob_size=task.object_size,
                      max_blob=max_file_size())
    chain = _steps(task)
    transcripts: set[ObjectId] = set()
    for rest, oid in sorted(task.refs.items()):
        kind, _, n = rest.partition("/")
        if kind == "steps" and chain.get(int(n)) != oid:
            raise Refused(f"{rest} is not its step {n}")
        if kind == "drifts":
            _drifts(task, rest, oid, chain.get(int(n)))
        if kind == "transcripts":
            if oid in chain.values():  # a step's commit must keep its note checked
                raise Refused(f"{rest} is not a step's transcripts")
            _transcripts(task, rest, oid, int(n) in chain)
            transcripts.add(oid)
    commits = [oid for oid, kind in kinds.items() if kind == "commit" and oid not in transcripts]
    with Meter("Checking the task's notes", "commits", len(commits)) as meter:
        for commit in commits:
            note = task.note(commit)
            if note is None:
                raise Refused(f"commit {commit[:12]} has no note")
            try:  # what a save here would refuse, a task from elsewhere cannot bring
                limits.check_written(note)
            except InvalidArgument as e:
                raise Refused(f"commit {commit[:12]}: {e.message}") from e
            meter.advance()
    return kinds


def _steps(task: Foreign) -> dict[int, ObjectId]:
    """The head's chain of steps by number, checked to run down to step 0 without gaps."""
    chain: dict[int, ObjectId] = {}
    commit: ObjectId | None = task.refs["head"]
    while commit is not None:
        note = task.note(commit)
        if note is None or note.kind not in ("init", "step") or note.step in chain:
            raise Refused(f"step commit {commit[:12]} has no step note")
        chain[note.step] = commit
        parents = task.read_commit(commit).parents
        commit = parents[0] if parents and note.step > 0 else None
    if set(chain) != set(range(len(chain))):
        raise Refused("its steps have gaps")
    return chain


def _drifts(task: Foreign, rest: str, tip: ObjectId, step: ObjectId | None) -> None:
    commit: ObjectId | None = tip
    while commit is not None and commit != step:
        note = task.note(commit)
        if note is None or note.kind in ("init", "step"):
            raise Refused(f"{rest} does not lead back to its step")
        parents = task.read_commit(commit).parents
        commit = parents[0] if parents else None
    if commit is None:
        raise Refused(f"{rest} does not lead back to its step")


def _transcripts(task: Foreign, rest: str, oid: ObjectId, has_step: bool) -> None:
    """transcripts/<n>: step n exists; a parentless commit over a flat tree of `.jsonl` files."""
    from gitckpt.core.objects import Mode, decode_tree

    commit = task.read_commit(oid)
    kind, body = task.read_object(commit.tree)
    entries = decode_tree(body) if kind == "tree" else []
    if not has_step or commit.parents or kind != "tree" or not all(
            e.mode == Mode.FILE and e.name.endswith(b".jsonl") for e in entries):
        raise Refused(f"{rest} is not a step's transcripts")
    for e in entries:  # what a step keeps of a session here: the newest 512 KiB
        size = task.object_size(e.id)
        if size is not None and size > limits.TRANSCRIPT:
            raise Refused(f"{rest} holds a transcript of {size:,} bytes; a step keeps at most "
                          f"{limits.TRANSCRIPT:,}")

