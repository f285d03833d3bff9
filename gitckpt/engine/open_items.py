"""The decisions, gotchas and open questions a task holds at its newest step, kept in the
store's state with the step they are of, so that a save that answers or drops one checks it
without reading every step's note: the steps saved since are folded in, and a memory of
another line of steps (or a damaged one) is made again from all of them. A cache: the notes
are the truth, and `recall` over them gives the same lists."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from gitckpt.core import json_input
from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import TaskId
from gitckpt.engine.memory import Entry, Memory, recall
from gitckpt.engine.records import StepRecord

if TYPE_CHECKING:
    from gitckpt.engine.timeline import Timeline

_GROUPS = ("decisions", "gotchas", "questions")


def _file(tid: TaskId) -> str:
    return f"open-items-{tid}.json"


def _read(tl: Timeline, tid: TaskId) -> tuple[str, int, Memory] | None:
    try:
        data = json_input.loads(tl.store.state.read(_file(tid)) or b"null")
        if not isinstance(data, dict):
            return None
        groups = {g: [Entry(str(t), int(n)) for t, n in data[g]] for g in _GROUPS}
        m = Memory(decisions=groups["decisions"], gotchas=groups["gotchas"],
                   questions=groups["questions"])
        return str(data["head"]), int(data["step"]), m
    except (ValueError, KeyError, TypeError):
        return None


def current(tl: Timeline, tid: TaskId, head: StepRecord) -> Memory:
    """The task's decisions, gotchas and open questions at `head` (the caller holds the
    store's lock); the memory is written back for the next save."""
    kept = _read(tl, tid)
    m: Memory | None = None
    if kept is not None and kept[1] <= head.n:
        since = tl.steps(tid, since=kept[1])  # the kept step and those after it
        if since and since[0].commit == kept[0]:
            m = recall(since[1:], start=kept[2])
    if m is None:
        m = recall(tl.steps(tid))
    try:
        tl.store.state.write(_file(tid), json.dumps({
            "head": head.commit, "step": head.n,
            **{g: [[e.text, e.step] for e in getattr(m, g)] for g in _GROUPS}}).encode())
    except (OSError, GitckptError):
        pass  # a memory that cannot be kept is made again next time
    return m
