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
