"""What a commit of the user's holds of the agents' work (`gitckpt explain COMMIT`): for each
file the commit changed, the task checkpoint where exactly that content first appeared at
that path, found by content (no hook needed), with the step that saved it, the prompt behind
it and what was run on it: what a reviewer reads before a pull request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitckpt.core.errors import InvalidArgument, Unsupported
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode
from gitckpt.core.shape import Shaped
from gitckpt.engine.timeline import Timeline
from gitckpt.engine.why import TreeReader, _Context, _Version, chronological


@dataclass(frozen=True)
class FileStory(Shaped):
    """One file the commit changed, and where in the tasks its content comes from."""

    path: str
    task: str | None  # None: in no checkpoint of any task (written outside them)
    checkpoint: str | None
    label: str  # "step 3", "drift after step 3", "in no checkpoint"
    saved_in: int | None
    conclusion: str | None
    prompt: str | None
    tool: dict[str, Any] | None
    verified: str


@dataclass(frozen=True)
class ExplainResult(Shaped):
    commit: str
    subject: str
    tasks: list[str]  # the tasks whose work the commit holds
    files: list[FileStory]


def explain(tl: Timeline, rev: str) -> ExplainResult:
    """The stories of the files commit `rev` (of the user's repository) changed."""
    if tl.store.git_state() is None:  # a plain folder's store: no commits of the user's
        raise Unsupported("This workspace is a plain folder: it has no commits to explain.",
                          "Run it in a git repository.")
    found = tl.store.user_commit(rev)
    if found is None:
        raise InvalidArgument(f"{rev!r} is not a commit of this repository.",
                              "Pass a commit id, a branch or HEAD.")
    commit, subject, tree, base = found
    prefix = getattr(tl.store, "prefix", "")
    if base is not None:
        changed = tl.store.diff_trees(base, tree)
        paths = sorted({*changed.added, *changed.modified})
    else:  # a root commit: every file is new
        paths = sorted(_files(tl, tree))  # (a walk: TreeReader looks up one path)
    histories = {tid: chronological(tl, tid) for tid in tl.task_ids()}
    trees = TreeReader(tl.store)
    contexts: dict[str, _Context] = {}
    files, tasks = [], []
    for path in paths:
        if prefix and not path.startswith(prefix + "/"):
            continue  # outside the workspace
        rel = path[len(prefix) + 1:] if prefix else path
        blob = trees.entry(tree, path)
        if blob is None:
            continue  # a link or a nested repository: no content to trace
        story = None
        for tid, records in histories.items():
            first = next((i for i, r in enumerate(records)
                          if trees.entry(r.tree, rel) == blob), None)
            if first is None or first == 0:
                continue  # not this task's, or there before it began
            if tid not in contexts:
                contexts[tid] = _Context(tl, records, [_Version(r, rel, None) for r in records])
            o = contexts[tid].origin(1, b"", first, 0)
            story = FileStory(rel, str(tid), o.commit, o.label, o.saved_in, o.conclusion,
                              o.prompt, o.tool, o.verified.replace("this line", "this file"))
            tasks.append(str(tid)) if str(tid) not in tasks else None
            break
        files.append(story or FileStory(rel, None, None, "in no checkpoint", None, None, None,
                                        None, "no checkpoint holds it"))
    return ExplainResult(commit, subject, tasks, files)


def _files(tl: Timeline, tree: ObjectId, prefix: str = "") -> list[str]:
    """Every path of a regular file in `tree`."""
    out = []
    for e in tl.store.read_tree(tree):
        name = prefix + e.name.decode("utf-8", "surrogateescape")
        if e.mode == Mode.TREE:
            out += _files(tl, e.id, name + "/")
        elif e.mode in (Mode.FILE, Mode.EXECUTABLE):
            out.append(name)
    return out
