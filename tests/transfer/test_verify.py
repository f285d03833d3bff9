"""transfer/verify.py is the one check of a task from elsewhere: the checks a fetch made of a
remote's task and an import did not make of a package (the chain of steps, each steps/<n>,
each drift chain) now refuse a package too, before anything is written."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import Workspace, make_plain, service

from gitckpt.core.errors import StoreCorrupt


def _task(ws) -> str:
    task = service.init(ws.root, "verified", goal="g").save.task
    for n in (1, 2):
        (ws.root / "src" / f"m{n}.py").write_text(f"{n}\n")
        service.save(ws.root, f"step {n}")
    (ws.root / "scratch.txt").write_text("a drift\n")
    service.capture(ws.root)
    return task


def _moved(pkg, task: str, ref: str, to: str) -> None:
    """Point the package's ref `ref` at the commit of its ref `to`, manifest included: a
    package whose checksums hold, and whose task a save here could not have made."""
    refs = pkg / "checkpoints.git" / "refs" / "checkpoints" / task
    oid = (refs / to).read_text().strip()
    (refs / ref).write_text(oid + "\n")
    manifest = json.loads((pkg / "manifest.json").read_text())
    manifest["refs"][f"refs/checkpoints/{task}/{ref}"] = oid
    (pkg / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(("ref", "to", "why"), [
    ("steps/1", "steps/2", "steps/1 is not its step 1"),
    ("head", "steps/1", "does not lead back|is not its step"),  # a head behind its steps
    ("drifts/2", "steps/1", "drifts/2 does not lead back to its step"),
])
def test_a_package_whose_task_no_save_could_make_is_refused(ws, tmp_path, ref, to, why):
    task = _task(ws)
    pkg = tmp_path / "pkg"
    service.export(ws.root, pkg)
    bad = tmp_path / "bad"
    shutil.copytree(pkg, bad)
    _moved(bad, task, ref, to)
    there = Workspace("dir", make_plain(tmp_path / "there"))
    with pytest.raises(StoreCorrupt, match=why):
        service.import_(there.root, bad, dry_run=True)
    with pytest.raises(StoreCorrupt, match=why):
        service.import_(there.root, bad)
    assert not (there.root / ".gitckpt").exists() or not list(
        (there.root / ".gitckpt").rglob("refs/checkpoints/*"))
    assert service.import_(there.root, pkg).steps == 2  # the untouched package goes in


@pytest.mark.parametrize(("ref", "to"), [("transcripts/1", "steps/1"),  # a commit with parents
                                         ("transcripts/7", "steps/0")])  # no step 7
def test_a_package_whose_transcripts_are_not_a_steps_is_refused(ws, tmp_path, ref, to):
    task = _task(ws)
    pkg = tmp_path / "pkg"
    service.export(ws.root, pkg)
    (pkg / "checkpoints.git" / "refs" / "checkpoints" / task / "transcripts").mkdir()
    _moved(pkg, task, ref, to)
    there = Workspace("dir", make_plain(tmp_path / "there"))
    with pytest.raises(StoreCorrupt, match=f"{ref} is not a step's transcripts"):
        service.import_(there.root, pkg)


def _note(**fields):
    from gitckpt.engine.notes import Note

    return Note(kind="step", task="t-1", step=1, created_at="2026-12-01T00:00:00Z", **fields)


@pytest.mark.parametrize(("fields", "why"), [
    ({"tool": {"name": "Bash", "command": "x" * 1_000_000}}, "tool command"),
    ({"prompts": [{"text": "p"}] * 100_000}, "prompts has 100,000 entries"),
    ({"prompts": [{"text": "p" * 40_000}]}, "An entry of prompts"),
    ({"gotchas": ["g" * 10_000]}, "An entry of gotchas"),
    ({"commands": [{"command": "c" * 10_000, "exit_code": 0}]}, "An entry of commands"),
    ({"title": "a \x1b]0;owned\x07 title"}, "The title holds a control character"),
    ({"prompts": [{"text": "hi \x1b[2J"}]}, "The prompts holds a control character"),
    ({"files": [{"path": "a", "note": "n" * 5_000}]}, "An entry of files"),
])
def test_a_note_from_elsewhere_is_bounded_field_by_field_as_a_save(fields, why):
    """Fetch and import checked the size of a few fields only: a fetched tool command of a
    million characters and a hundred thousand prompts went in, and search and the terminal
    read them. Each field has the bound a save here has, and no text a save cleans may hold
    a control character."""
    from gitckpt.core import limits
    from gitckpt.core.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match=why):
        limits.check_written(_note(**fields))


def test_a_note_a_save_writes_passes_the_checks_of_a_note_from_elsewhere(ws):
    from gitckpt.core import limits

    service.init(ws.root, "fine", goal="g")
    (ws.root / "a.txt").write_text("a\n")
    service.save(ws.root, "a step", conclusion="c\twith a tab\nand a line", next="n",
                 verified=["v"] * 50, gotchas=["g" * 2_000],
                 commands=[{"command": "c" * 2_000, "exit_code": 0}])
    tl = service.open_timeline(ws.root)
    for s in tl.steps(tl.resolve(None)):
        limits.check_written(s.note)
