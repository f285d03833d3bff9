"""What a long-lived process keeps of each store's timelines between calls: the step records
read (commit, tree, parsed note) and the task memory folded at recent steps, so a resume of a
long task reads what changed since the last call, not the whole history.

Commits are immutable; a note is not, so what is kept is checked against the notes ref at
each call: the notes that changed since (a diff of two notes trees, costing what changed)
drop their records, and a changed note of a step already kept drops the memories too (a
memory folds every step before it). A new step's note is new, not changed: memories stay.
The service's calls run in threads: every change of what is kept holds one lock."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from gitckpt.core.errors import CHECK_STORE, StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.engine.memory import Memory, recall
from gitckpt.engine.records import StepRecord
from gitckpt.store.base import Store

#: Stores kept at once (the newest used); per store: records, memories, step lists.
STORES = 16
RECORDS = 20_000
MEMORIES = 64
CHAINS = 8
_LOCK = threading.RLock()


@dataclass
class Kept:
    """One store's kept records and memories, valid under notes commit `notes`."""

    notes: ObjectId | None = None
    records: OrderedDict[ObjectId, StepRecord] = field(default_factory=OrderedDict)
    memories: OrderedDict[ObjectId, Memory] = field(default_factory=OrderedDict)
    chains: OrderedDict[ObjectId, list[StepRecord]] = field(default_factory=OrderedDict)
    #: Work done, for tests that count it instead of timing it.
    folded: int = 0
    parsed: int = 0

    def sync(self, store: Store, head: ObjectId | None) -> None:
        """Drop what notes commit `head` changed since the one kept."""
        if head == self.notes:
            return
        changed = store.changed_notes(self.notes, head) if self.notes is not None else None
        with _LOCK:
            self._drop(changed, head)

    def _drop(self, changed: set[ObjectId] | None, head: ObjectId | None) -> None:
        if changed is None:
            self.records.clear()
            self.memories.clear()
            self.chains.clear()
        else:
            if any(c in self.records for c in changed):
                self.memories.clear()
                self.chains.clear()
            for c in changed:
                self.records.pop(c, None)
        self.notes = head

    def record(self, commit: ObjectId) -> StepRecord | None:
        return self.records.get(commit)

    def keep(self, record: StepRecord, under: ObjectId | None) -> None:
        """Keep `record`, read under notes commit `under` (a record read under other notes
        than the ones kept, while another call moved them, is not kept)."""
        with _LOCK:
            if under == self.notes:
                self._keep(record)

    def _keep(self, record: StepRecord) -> None:
        self.parsed += 1
        self.records[record.commit] = record
        if len(self.records) > RECORDS:
            self.records.popitem(last=False)
            self.memories.clear()  # their steps must stay checked against their notes
            self.chains.clear()

    def walk(self, head: StepRecord, since: int,
             record: Callable[[ObjectId], StepRecord]) -> list[StepRecord]:
        """The steps from the newest at or before `since` to `head`, oldest first, following
        first parents (`record` reads one): the part walked before is taken as kept."""
        walked: list[StepRecord] = []
        base: list[StepRecord] = []
        at = head
        while True:
            chain = self.chains.get(at.commit)
            if chain is not None:  # the steps up to there were walked by an earlier call
                base = chain
                break
            walked.append(at)
            if at.note.step <= since:
                break
            if not at.parents:
                raise StoreCorrupt(f"Step {at.n} of {at.note.task} has no parent", CHECK_STORE)
            at = self.records.get(at.parents[0]) or record(at.parents[0])
        out = base + walked[::-1]
        if out[0].note.step == 0:
            with _LOCK:
                self.chains[out[-1].commit] = out
                self.chains.move_to_end(out[-1].commit)
                if len(self.chains) > CHAINS:
                    self.chains.popitem(last=False)
        first = 0
        if since > 0:  # from the newest step at or before `since`
            first = max((i for i, s in enumerate(out) if s.note.step <= since), default=0)
        return out[first:] if first else list(out)

    def memory(self, steps: list[StepRecord]) -> Memory:
        """The memory folded through `steps` (a task's steps, oldest first): from the newest
        step whose memory is kept, only the steps after it are folded."""
        start, at = None, 0
        for i in range(len(steps) - 1, -1, -1):
            kept = self.memories.get(steps[i].commit)
            if kept is not None:
                start, at = _copy(kept), i + 1
                break
        self.folded += len(steps) - at
        m = recall(steps[at:], start=start)
        if steps:
            with _LOCK:
                self.memories[steps[-1].commit] = _copy(m)
                self.memories.move_to_end(steps[-1].commit)
                if len(self.memories) > MEMORIES:
                    self.memories.popitem(last=False)
        return m


def _copy(m: Memory) -> Memory:
    """A memory whose lists the next fold may change (their items are frozen)."""
    return Memory(list(m.decisions), list(m.gotchas), list(m.questions), list(m.answered),
                  list(m.commands), list(m.files))


_KEPT: OrderedDict[str, Kept] = OrderedDict()


def kept(store: Store) -> Kept:
    """The kept records of `store` (by where its objects live), checked against its notes."""
    key = f"{type(store).__name__}:{store.location}"
    with _LOCK:
        found = _KEPT.get(key)
        if found is None:
            found = _KEPT[key] = Kept()
            if len(_KEPT) > STORES:
                _KEPT.popitem(last=False)
        _KEPT.move_to_end(key)
    found.sync(store, store.notes_head())
    return found


def current(found: Kept, store: Store) -> Kept:
    """`found` brought up to the notes this store last read or wrote (no read of the ref):
    a call that rewrote notes reads its own writes."""
    found.sync(store, store.notes_head(again=False))
    return found
