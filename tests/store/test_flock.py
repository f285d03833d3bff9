"""The lock files (store/flock.py): exclusive against filelock's lock in another process both
ways, re-entrant within a thread, waited for by other threads, and filelock's own lock where
a filesystem has no flock."""

from __future__ import annotations

import errno
import subprocess
import sys
import threading
import time

import filelock
import pytest

from gitckpt.store import flock

HOLD = ("import {mod} as m, sys, time; l = m.FileLock(sys.argv[1]); l.acquire({args}); "
        "print('held', flush=True); sys.stdin.readline(); l.release()")


def _holder(path, mod: str):
    args = "timeout=5" if mod == "gitckpt.store.flock" else ""
    p = subprocess.Popen([sys.executable, "-c", HOLD.format(mod=mod, args=args), str(path)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def _free(p) -> None:
    p.stdin.write("\n")
    p.stdin.flush()
    assert p.wait(10) == 0


def test_filelock_in_another_process_holds_it_against_ours(tmp_path):
    path = tmp_path / "lock"
    p = _holder(path, "filelock")
    lock = flock.FileLock(str(path))
    started = time.monotonic()
    with pytest.raises(flock.Timeout):
        lock.acquire(timeout=0.3)
    assert time.monotonic() - started >= 0.3
    assert not lock.is_locked
    _free(p)
    lock.acquire(timeout=5)  # free once it is released
    assert lock.is_locked
    lock.release()
    assert not lock.is_locked


def test_ours_in_another_process_holds_it_against_filelock(tmp_path):
    path = tmp_path / "lock"
    p = _holder(path, "gitckpt.store.flock")
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(path)).acquire(timeout=0.2)
    with pytest.raises(flock.Timeout):
        flock.FileLock(str(path)).acquire(timeout=0)  # 0: one try
    _free(p)
    theirs = filelock.FileLock(str(path))
    theirs.acquire(timeout=5)
    theirs.release()


def test_nested_in_a_thread_and_waited_for_by_another(tmp_path):
    path = str(tmp_path / "lock")
    lock = flock.FileLock.shared(path)
    assert flock.FileLock.shared(path) is lock
    lock.acquire(timeout=0)
    lock.acquire(timeout=0)  # the same thread: a count, no second flock
    got: list[float] = []

    def other() -> None:
        lock.acquire(timeout=5)
        got.append(time.monotonic())
        lock.release()

    t = threading.Thread(target=other)
    t.start()
    time.sleep(0.3)
    assert not got  # it waits while this thread holds it
    lock.release()
    time.sleep(0.3)
    assert not got  # one acquire is still held
    released = time.monotonic()
    lock.release()
    t.join(5)
    assert got
    assert got[0] >= released
    lock.release()  # not held: a no-op
    assert not lock.is_locked


def test_the_lock_file_stays_with_its_mode_and_a_symlink_is_refused(tmp_path):
    path = tmp_path / "lock"
    lock = flock.FileLock(str(path))
    lock.acquire(timeout=0)
    lock.release()
    assert path.is_file()
    assert path.stat().st_mode & 0o777 == 0o600
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        flock.FileLock(str(link)).acquire(timeout=0)


def test_a_filesystem_without_flock_gets_filelocks_lock(tmp_path, monkeypatch):
    # fault injection: flock(2) failing as on a filesystem without it (ENOSYS)
    real = flock.fcntl.flock

    def no_flock(fd, op):
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(flock.fcntl, "flock", no_flock)
    path = str(tmp_path / "lock")
    lock = flock.FileLock(path)
    with pytest.warns(UserWarning, match="flock not supported"):
        lock.acquire(timeout=1)
    lock.acquire(timeout=1)
    assert isinstance(lock._fallback, filelock.FileLock)
    with pytest.raises(flock.Timeout):  # another process's would wait: so does another object
        flock.FileLock(path).acquire(timeout=0.1)
    assert lock._fallback.is_locked
    lock.release()
    assert lock._fallback.is_locked
    lock.release()
    assert not lock._fallback.is_locked
    monkeypatch.setattr(flock.fcntl, "flock", real)
