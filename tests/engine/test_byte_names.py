"""File names that are any bytes a POSIX file system takes (not UTF-8, control bytes, newlines,
backslashes, quotes), in both stores: every command that reads or writes files by name works
on them, byte for byte, and what it says can be shown as text and as JSON."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import RepoGuard, make_plain, make_repo, service
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.cli.render import render_diff, render_export, render_log, render_restore
from gitckpt.cli.render_remote import render_push
from gitckpt.cli.render_revert import render_revert
from gitckpt.engine.notes import json_text

pytestmark = pytest.mark.slow

#: A name's own bytes: anything but "/" and NUL, between a prefix and a suffix that keep it
#: out of what gitckpt leaves out by rule (dot files, `.env`, keys), which is tested elsewhere.
MIDDLE = st.binary(min_size=1, max_size=10).filter(lambda b: b"/" not in b and b"\0" not in b)
NAMES = st.lists(MIDDLE, min_size=1, max_size=3, unique=True)
_COUNT = itertools.count()


def _names(middles: list[bytes]) -> list[bytes]:
    """File paths (bytes, relative): the first in a folder of an odd name too."""
    paths = [b"f" + m + b".txt" for m in middles]
    return [b"d" + middles[0] + b"/" + paths[0], *paths[1:]]


def _write(root: bytes, rel: bytes, data: bytes) -> None:
    full = os.path.join(root, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)


def _read(root: bytes, rel: bytes) -> bytes | None:
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _shown(result, render=None) -> str:
    """What the CLI prints of a result, as JSON and (given its renderer) as text."""
    json.loads(json_text(result.to_dict()))
    return render(result) if render is not None else ""


@pytest.mark.parametrize("kind", ["git", "dir"])
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(middles=NAMES)
def test_every_command_works_on_names_of_any_bytes(kind, middles, tmp_path, hermetic):
    n = next(_COUNT)
    if kind == "git":
        top = make_repo(tmp_path / f"repo{n}")
        guard = RepoGuard(top)
    else:
        top, guard = make_plain(hermetic / f"plain{n}"), None
    root = os.fsencode(top)
    names = _names(middles)
    try:
        service.init(top, "bytes")
        for i, rel in enumerate(names):
            _write(root, rel, b"one %d\n" % i)
        one = service.save(top, "one")
        for i, rel in enumerate(names):
            _write(root, rel, b"one %d\ntwo\n" % i)
        os.unlink(os.path.join(root, names[-1]))
        two = service.save(top, "two")
        assert one.tree != two.tree

        paths = [os.fsdecode(rel) for rel in names]
        diff = service.diff(top, "1", "2", patch=True)
        _shown(diff, render_diff)
        assert sorted(f.path for f in diff.files) == sorted(paths)
        for path in paths[:-1]:
            why = service.why(top, path)
            _shown(why)
            assert why.lines, path
            _shown(service.blame(top, path))
        _shown(service.search(top, "two"))
        _shown(service.log(top), render_log)
        for fmt in ("markdown", "html"):
            _shown(service.report(top, format=fmt))

        # restore step 1 (the deleted file back, the others as they were), then undo it
        plan = service.restore(top, "1")
        assert paths[-1] in _shown(plan, lambda r: render_restore(r, [], ()))
        service.restore(top, "1", apply=True, confirm=True)
        for i, rel in enumerate(names):
            assert _read(root, rel) == b"one %d\n" % i, rel
        service.restore(top, "2", apply=True, confirm=True)
        for i, rel in enumerate(names[:-1]):
            assert _read(root, rel) == b"one %d\ntwo\n" % i, rel
        assert _read(root, names[-1]) is None

        # revert step 2, keeping nothing after it: the files of step 1 again
        _shown(service.revert(top, "2"), lambda r: render_revert(r, [], ()))
        service.revert(top, "2", apply=True, confirm=True)
        for i, rel in enumerate(names):
            assert _read(root, rel) == b"one %d\n" % i, rel

        out = tmp_path / f"pkg{n}"
        _shown(service.export(top, str(out)), render_export)
        assert out.exists() or list(tmp_path.glob(f"pkg{n}*"))
        if kind == "git":
            remote = tmp_path / f"remote{n}.git"
            subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
            _shown(service.push(top, str(remote), confirm=True), render_push)
            fsck = subprocess.run(["git", "-C", str(top), "fsck", "--no-progress"],
                                  capture_output=True, text=True)
            assert fsck.returncode == 0, fsck.stderr
    finally:
        if guard is not None:
            guard.check(status_changes=True)
        shutil.rmtree(Path(os.fsdecode(root)), ignore_errors=True)
