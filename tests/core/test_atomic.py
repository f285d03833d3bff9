"""core/atomic.py, the one way a file is replaced: whole or not at all, never through a
symlink, no temporary file left behind, the mode asked for."""

from __future__ import annotations

import os
import stat

import pytest

from gitckpt.core import atomic


def test_a_file_is_replaced_whole_and_nothing_else_is_left(tmp_path):
    (tmp_path / "f").write_bytes(b"old")
    atomic.replace_path(tmp_path / "f", b"new" * 10_000)
    assert (tmp_path / "f").read_bytes() == b"new" * 10_000
    assert sorted(os.listdir(tmp_path)) == ["f"]
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o600


def test_a_symlink_at_the_name_is_replaced_never_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "f").symlink_to(outside)
    atomic.replace_path(folder / "f", b"mine")
    assert outside.read_bytes() == b"keep"
    assert not (folder / "f").is_symlink()
    assert (folder / "f").read_bytes() == b"mine"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    (tmp_path / "f").write_bytes(b"old")

    def fail(fd: int) -> None:
        raise OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space"):
        atomic.replace_path(tmp_path / "f", b"new", before_rename=fail)
    assert (tmp_path / "f").read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["f"]


def test_names_in_bytes_and_a_prefix_and_the_mode_given(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        atomic.replace(b"run.sh", b"#!/bin/sh\n", dir_fd=fd, mode=0o755, sync=False,
                       prefix=b".gitckpt-", before_rename=lambda f: os.fchmod(f, 0o755))
    finally:
        os.close(fd)
    assert stat.S_IMODE((tmp_path / "run.sh").stat().st_mode) == 0o755
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]


def test_a_temporary_name_taken_by_someone_else_is_passed_over(tmp_path, monkeypatch):
    tokens = iter([b"\xaa" * 8, b"\xbb" * 8])  # the temporary names' random parts, in turn
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(tokens))
    planted = tmp_path / f".f.{'a' * 16}.tmp"
    planted.symlink_to(tmp_path / "target")  # a link where the first temporary name falls
    atomic.replace_path(tmp_path / "f", b"x")
    assert (tmp_path / "f").read_bytes() == b"x"
    assert not (tmp_path / "target").exists()
    assert planted.is_symlink()
