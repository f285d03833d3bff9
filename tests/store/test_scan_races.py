"""Files that change while a snapshot reads them, and folders deeper than libgit2 enters: a
save never fails for them and never stores a torn mix; on both stores alike."""

from __future__ import annotations

import itertools
import os
import re
import threading

import pytest
from conftest import service

from gitckpt.store.files import FileChanging, read_regular

pytestmark = pytest.mark.settling  # files read as writers write them: real waits

WHOLE = re.compile(rb"(?:(v\d{5}\|)\1*)?")  # one version of the churned file, or empty


def test_a_read_that_never_settles_is_refused_not_torn():
    """/proc files say size 0 and hold more: no read agrees with the stat."""
    with pytest.raises(FileChanging):
        read_regular("/proc/self/status")


def test_a_read_of_a_settled_file(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"settled\n")
    assert read_regular(str(f)) == b"settled\n"


@pytest.mark.slow  # a 40-second stress of writer threads: the full suite's, not the fast loop's
def test_saves_while_files_are_rewritten_never_fail(ws):
    """A writer truncates and rewrites files all the time (libgit2 once failed every save
    with "error reading file for hashing"); each save succeeds and stores each churned file
    as one whole version, or leaves it out as `changing`."""
    for i in range(20):
        (ws.root / f"churn{i}.txt").write_bytes(b"v00000|" * 4000)
    service.init(ws.root, "churn")
    stop = threading.Event()

    def churn() -> None:
        for n in itertools.count(1):
            if stop.is_set():
                return
            for i in range(0, 20, 3):
                with open(ws.root / f"churn{i}.txt", "r+b") as f:
                    f.truncate(0)
                    f.write(f"v{n % 100000:05d}|".encode() * (3000 + n % 2000))

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        results = [service.save(ws.root, f"save {k}") for k in range(20)]
    finally:
        stop.set()
        writer.join()
    store = service.open_timeline(ws.root).store
    for r in results:
        left_out = {s["path"]: s["reason"] for s in r.to_dict()["skipped"]}
        entries = {e.name.decode(): e for e in store.read_tree(r.tree)}
        for i in range(0, 20, 3):
            name = f"churn{i}.txt"
            if name in entries:
                assert WHOLE.fullmatch(store.read_blob(entries[name].id)), name
            else:
                assert left_out.get(name) == "changing", (name, left_out)
    assert service.save(ws.root, "settled").tree == service.save(ws.root, "again").tree


def deep_folder(root, levels: int = 101):
    d = root
    for _ in range(levels):
        d = d / "d"
    d.mkdir(parents=True)
    (d / "deep.txt").write_text("too deep\n")
    return d


def test_folders_too_deep_stay_out_after_an_ignore_change(ws):
    (ws.root / "top.txt").write_text("top\n")
    deep_folder(ws.root)
    service.init(ws.root, "deep")
    first = service.save(ws.root, "first")
    assert [s["reason"] for s in first.to_dict()["skipped"]] == ["too_deep"]
    (ws.root / ".gitignore").write_text("*.log\nbuild/\n*.tmp\n")  # the rules changed
    second = service.save(ws.root, "rules changed")
    (ws.root / "sub").mkdir()
    (ws.root / "sub" / ".gitignore").write_text("*.o\n")
    third = service.save(ws.root, "a nested rule")
    for r in (second, third):
        assert [s["reason"] for s in r.to_dict()["skipped"]] == ["too_deep"]
    assert os.path.basename(third.to_dict()["skipped"][0]["path"]) == "d"
