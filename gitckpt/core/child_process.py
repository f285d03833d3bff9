"""The git processes gitckpt starts: each in a process group of its own that dies with
gitckpt, killed whole when it stays silent too long, on Ctrl-C, or on any error.

Silence is measured on everything the process writes: its stdout, its stderr (progress, when
the caller asks git for it) and, when `watch_packets` is set, git's packet trace
(GIT_TRACE_PACKET, into an unlinked private file), which shows every line the remote answers
before any progress starts. Until the trace shows the first packet received from the remote,
`connect` bounds the silence; after it, `idle` does. A local helper's error message does not
count as an answer (`git remote-fd` prints one and then waits forever).
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_RECEIVED = re.compile(rb"packet:\s+\S+< ")  # a trace line of a packet read from the peer
_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of a group that is told to end
_DRAIN = 0.2  # seconds to collect the last output once git exited (a daemon may hold a pipe)
_POLL = 0.25  # seconds between two looks at the trace file


@dataclass(frozen=True)
class Limits:
    """Seconds of silence allowed (None: no limit)."""

    connect: float | None
    idle: float | None


class Silent(Exception):
    """The process was killed: it said nothing for `seconds` in `phase` (connect or idle)."""

    def __init__(self, phase: str, seconds: float) -> None:
        super().__init__(f"{phase}: silent for {seconds:g} s")
        self.phase = phase
        self.seconds = seconds


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str
    secrets: tuple[str, ...] = ()  # what a message made of this output must not show


_prctl: list[Callable[..., int] | None] = []  # libc's prctl, looked up once (None: none)


def _parent_death_signal() -> Callable[[], None] | None:
    """A preexec function that makes the child receive SIGTERM when gitckpt dies (Linux:
    prctl PR_SET_PDEATHSIG; elsewhere None, and the process group is all there is). The
    signal follows the thread that started the child: every caller waits for its child in
    that thread, so the child never outlives its thread while gitckpt lives."""
    if not _prctl:
        found = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                found = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                pass
        _prctl.append(found)
    prctl = _prctl[0]
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: no allocation to speak of
        prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)  # gitckpt died before the prctl took effect
    return preexec


def run(argv: list[str], *, env: dict[str, str], cwd: str, stdin: str | None = None,
        limits: Limits | None = None, watch_packets: bool = False) -> Completed:
    """Run `argv` to its end and return its output; Silent if a limit passed (the whole
    process group is killed first), OSError if it cannot start."""
    with _packet_trace(watch_packets) as trace:
        if trace is not None:
            env = {**env, "GIT_TRACE_PACKET": trace[0]}
        proc = subprocess.Popen(argv, env=env, cwd=cwd, start_new_session=True,
                                preexec_fn=_parent_death_signal(),
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = _collect(proc, stdin, limits or Limits(None, None), _Trace(trace))
        except BaseException:
            end_group(proc)
            raise
    return Completed(proc.returncode, out.decode("utf-8", "replace"),
                     err.decode("utf-8", "replace"))


@contextlib.contextmanager
def _packet_trace(wanted: bool) -> Iterator[tuple[str, int] | None]:
    """(the path git is given, a descriptor here) of a private, already unlinked file for
    git's packet trace, or None. A file, not a pipe: git never waits for its reader (a
    reader woken per line doubles the time of a large ref advertisement). On Linux git opens
    it as /proc/<pid>/fd/<n>, so a killed gitckpt leaves no file behind; elsewhere it sits in
    a private temporary folder while git runs."""
    if not wanted:
        yield None
        return
    if os.path.isdir(f"/proc/{os.getpid()}/fd"):
        with tempfile.TemporaryFile(prefix="gitckpt-trace-") as f:
            yield f"/proc/{os.getpid()}/fd/{f.fileno()}", f.fileno()
        return
    with tempfile.TemporaryDirectory(prefix="gitckpt-trace-") as tmp:
        path = os.path.join(tmp, "packets")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            yield path, fd
        finally:
            os.close(fd)


class _Trace:
    """What the trace file says: whether the remote answered, and whether it grew."""

    def __init__(self, trace: tuple[str, int] | None) -> None:
        self.fd = trace[1] if trace is not None else None
        self.size, self.answered = 0, False

    def grew(self) -> bool:
        if self.fd is None:
            return False
        size = os.fstat(self.fd).st_size
        if size <= self.size:
            return False
        if not self.answered:  # read what is new until the first answer shows
            at = max(self.size - 200, 0)  # a line may straddle the last look
            self.answered = bool(_RECEIVED.search(os.pread(self.fd, size - at, at)))
        self.size = size
        return True


def _collect(proc: subprocess.Popen[bytes], stdin: str | None,  # noqa: C901 (baseline)
             limits: Limits, trace: _Trace) -> tuple[bytes, bytes]:
    """(stdout, stderr) of `proc` once it ended; Silent (the group killed) past a limit."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    reading = {out_fd, err_fd}
    sel = selectors.DefaultSelector()
    for fd in (out_fd, err_fd):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview((stdin or "").encode())
    in_fd = proc.stdin.fileno() if proc.stdin is not None else None
    if in_fd is not None:
        os.set_blocking(in_fd, False)
        sel.register(in_fd, selectors.EVENT_WRITE)
    connected = limits.connect is None
    last = time.monotonic()
    exited_at: float | None = None
    try:
        while True:
            if trace.grew():
                last = time.monotonic()
                connected = connected or trace.answered
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and (not reading or now - exited_at > _DRAIN):
                break  # done; a daemon it left holding its pipes is not waited for
            limit = limits.idle if connected else limits.connect
            wait = _DRAIN if exited_at is not None else _POLL
            if limit is not None and exited_at is None:
                left = last + limit - now
                if left <= 0:
                    end_group(proc)
                    raise Silent("idle" if connected else "connect", limit)
                wait = min(wait, left)
            if not reading:  # its output ended: wait for its exit
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(wait)
                continue
            for key, _ in sel.select(wait):
                if key.fd == in_fd:
                    try:
                        pending = pending[os.write(in_fd, pending[:1 << 16]):]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]  # it stopped reading: its exit code says why
                    if not pending:
                        sel.unregister(in_fd)
                        assert proc.stdin is not None  # in_fd is its descriptor
                        proc.stdin.close()
                    continue
                try:
                    data = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if data:
                    chunks[key.fd].append(data)
                    last = time.monotonic()
                else:
                    sel.unregister(key.fd)
                    reading.discard(key.fd)
        proc.wait()
    finally:
        sel.close()
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None and not stream.closed:
                stream.close()
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """End the process and everything it started in its group: SIGTERM (git removes its lock
    and temporary files), then SIGKILL for whatever is left after a grace period."""
    for sig, grace in ((signal.SIGTERM, _GRACE), (signal.SIGKILL, _GRACE)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            continue
        if not _group_alive(proc.pid):
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_GRACE)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
