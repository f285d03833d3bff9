"""What a warm process keeps between calls: a resume after a save reads the new step, not the
task's history (counted: notes parsed, steps folded), and what is kept never outlives a note
that changed under it, in this process or another."""

from __future__ import annotations

import random
from dataclasses import replace

from conftest import service

from gitckpt.engine import kept, resume
from gitckpt.engine.memory import recall
from gitckpt.engine.notes import Note
from gitckpt.engine.records import StepRecord


def _long_task(root, steps: int) -> str:
    tid = service.init(root, f"base {steps}").save.task
    tl = service.open_timeline(root)
    tree = tl.head(tid).tree
    made = [(tree, Note(kind="step", task=tid, step=k, title=f"step {k}",
                        decisions=[f"decision {k}"] if k % 5 == 0 else [],
                        open_questions=[f"question {k}"] if k % 7 == 0 else [],
                        answered=[f"question {k - 7}"] if k % 14 == 0 else [],
                        commands=[{"command": f"make t{k % 4}", "exit_code": k % 2,
                                   "tree": tree}] if k % 3 == 0 else [],
                        created_at="2026-12-01T10:00:00Z"))
            for k in range(1, steps + 1)]
    return str(tl.create_task(Note(kind="init", task=tid, step=0, name="long",
                                   created_at="2026-12-01T09:00:00Z"), made, activate=True))


def _resume(root):
    tl = service.open_timeline(root)
    return resume.gather(tl, None, "cli"), kept.kept(tl.store)


def _fresh(root):
    """The memory and steps read with nothing kept: every commit and note read again."""
    tl = service.open_timeline(root)
    store = tl.store
    commit = store.get_ref(f"refs/checkpoints/{tl.resolve(None)}/head")
    steps = []
    while commit is not None:
        c = store.read_commit(commit)
        steps.append(StepRecord(commit, c.tree, Note.parse(store.read_note(commit), commit),
                                c.parents))
        commit = c.parents[0] if c.parents and steps[-1].n > 0 else None
    steps.reverse()
    return recall(steps), steps


def test_a_resume_after_a_save_reads_the_new_step_only(ws):
    """However long the task, the resume after a save parses a few notes and folds one
    step: the same counts at 300 steps as at 600 (a walk of the history would double)."""
    spent = {}
    for steps in (300, 600):
        kept._KEPT.clear()
        _long_task(ws.root, steps)
        _, k = _resume(ws.root)
        assert k.parsed >= steps
        assert k.folded == steps + 1
        parsed, folded = k.parsed, k.folded
        service.save(ws.root, f"one more after {steps}", decisions=["late decision"])
        h, k = _resume(ws.root)
        spent[steps] = (k.parsed - parsed, k.folded - folded)
        assert h.steps[-1].note.title == f"one more after {steps}"
        assert len(h.steps) == steps + 2
        assert "late decision" in [e.text for e in h.memory.decisions]
        memory, fresh = _fresh(ws.root)
        assert h.memory.decisions == memory.decisions
        assert h.memory.questions == memory.questions
        assert [s.commit for s in h.steps] == [s.commit for s in fresh]
    assert spent[300] == spent[600]
    assert spent[600][0] <= 4, spent
    assert spent[600][1] == 1, spent


def test_what_is_kept_follows_every_change_of_the_notes(ws):
    """Saves, notes of old steps rewritten (as a compress or a fetch does) or removed, another
    task's saves, another process's writes (the registry emptied stands for one): after each,
    the kept memory and steps equal a read with nothing kept."""
    rnd = random.Random(7)
    tid = _long_task(ws.root, 60)
    other = None
    for i in range(40):
        op = rnd.choice(["save", "save", "edit", "drop", "other", "forget"])
        if op == "save":
            (ws.root / "f.txt").write_text(f"{i}\n")
            service.save(ws.root, f"step {i}", decisions=[f"d{i}"],
                         open_questions=[f"q{i}"], task=tid)
        elif op in ("edit", "drop"):
            tl = service.open_timeline(ws.root)
            steps = tl.steps(tl.resolve(tid))
            victim = rnd.choice(steps[1:-1])
            note = replace(victim.note, decisions=[f"rewritten {i}"],
                           dropped=[f"d{i - 1}"] if op == "drop" else [])
            with tl.store.lock():
                tl.store.update_notes({victim.commit: note.dump()})
        elif op == "other":
            if other is None:
                other = service.init(ws.root, f"other {i}").save.task
                service.switch(ws.root, tid)
            service.save(ws.root, f"other step {i}", decisions=[f"o{i}"], task=other)
        else:
            kept._KEPT.clear()
        h, _ = _resume(ws.root)
        memory, fresh = _fresh(ws.root)
        assert h.memory == memory, (i, op)
        assert [(s.commit, s.note) for s in h.steps] == [(s.commit, s.note) for s in fresh]
