"""The service's side of the socket (service/client.py holds the protocol): it holds the lock
of its address for its life, accepts this user's connections only, claims each request before
it acts, hands a stream request its connection, and says how long it has been idle.
Standard library only, as the client's side is."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from gitckpt.core import json_input
from gitckpt.service.client import (
    ACK,
    SEND_WAIT,
    claim,
    claims_dir,
    lock_path,
    own_dir,
    settings,
)

CLOSE_WAIT = 2.0  # seconds a closing service waits for the requests it is serving

Serve = Callable[[dict[str, Any]], dict[str, Any]]
Stream = Callable[[dict[str, Any], socket.socket, BinaryIO], None]
MAX_REQUEST = 1 << 22


class Listener:
    """Accepts on `path` in daemon threads: a request is claimed, then `serve(request)`
    answers it; a request whose op is in `streams` gets the connection (`stream(request,
    conn, reader)`, which returns when the stream ends; `reader` holds what was read past
    the request)."""

    def __init__(self, path: str, serve: Serve, stream: Stream,
                 streams: tuple[str, ...] = ("mcp",)) -> None:
        self.path, self.serve, self.stream, self.streams = path, serve, stream, streams
        self.claims = claims_dir(path)
        self.settings = settings()  # this process's, as it started
        self._sock: socket.socket | None = None
        self._lock_fd: int | None = None
        self._guard = threading.Lock()
        self._busy = 0  # requests claimed and not yet served
        self.open = 0  # connections open now (streams included)
        self.last = time.monotonic()  # when the last connection ended or began
        self.served = 0
        self._closed = False

    def start(self) -> bool:
        """Take the address: False (nothing changed) when another service holds it, or where
        the folder cannot be made safely or the path is too long for a Unix socket."""
        import fcntl

        folder = os.path.dirname(self.path)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return False
        if not own_dir(folder) or len(os.fsencode(self.path)) > 100:
            return False
        try:
            fd = os.open(lock_path(self.path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False  # another service has it
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        # Ours now: whatever a killed service left (its socket, its claims) goes.
        try:
            os.unlink(self.path)
        except OSError:
            pass
        shutil.rmtree(self.claims, ignore_errors=True)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.mkdir(self.claims, 0o700)
            s.bind(self.path)
            os.chmod(self.path, 0o600)
            s.listen(64)
        except OSError:
            s.close()
            self._release()
            return False
        self._sock = s
        threading.Thread(target=self._accept, args=(s,), name="gitckpt-accept",
                         daemon=True).start()
        return True

    def idle(self) -> float:
        """Seconds since the last connection, 0 while one is open."""
        with self._guard:
            return 0.0 if self.open else time.monotonic() - self.last

    def _accept(self, sock: socket.socket) -> None:
        """Accept until closed. A failure to accept or to start a thread (no descriptors
        left, no memory) is logged and waited out, never the end of the loop."""
        import logging

        log = logging.getLogger("gitckpt.service")
        pause = 0.0
        while self._sock is sock:
            conn = None
            try:
                conn, _ = sock.accept()
                with self._guard:
                    self.open += 1
                    self.last = time.monotonic()
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()
                pause = 0.0
                continue
            except (OSError, RuntimeError) as e:
                if self._sock is not sock:
                    return  # closed
                if conn is not None:
                    conn.close()
                    self._ended()
                if pause == 0.0:
                    log.warning("the service cannot take a connection (%s); trying again", e)
                pause = min(1.0, max(0.02, pause * 2))
            time.sleep(pause)

    def _ended(self) -> None:
        with self._guard:
            self.open -= 1
            self.last = time.monotonic()

    def _take(self, token: object) -> bool:
        """Claim a request; False if its client has it, or the service is closing."""
        with self._guard:
            if self._closed or not isinstance(token, str):
                return False
            try:
                if not claim(self.claims, token):
                    try:
                        os.unlink(os.path.join(self.claims, token))  # the client's: settled
                    except OSError:
                        pass
                    return False
            except OSError:
                return False
            self._busy += 1
            return True

    def _answer(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(SEND_WAIT)
                if not same_user(conn):
                    return
                conn.sendall(ACK)
                # Buffered: a stream's first lines may come in the same read as its header,
                # and go on to the stream with the reader.
                reader = conn.makefile("rb")
                line = reader.readline(MAX_REQUEST)
                try:  # a line cut short (the client gave up while sending) is no request
                    request = json_input.loads(line) if line.endswith(b"\n") else None
                except (ValueError, RecursionError):
                    request = None
                if isinstance(request, dict) and request.get("settings") == self.settings \
                        and request.get("op") in self.streams and not self._closed:
                    conn.settimeout(None)
                    self.stream(request, conn, reader)
                    return
                reply, body = self._reply(request), b""
                out = reply.get("stdout")
                if isinstance(out, str):  # a command's output: raw after the line
                    body = out.encode("utf-8", "surrogateescape")
                    reply = {**reply, "stdout": None, "stdout_bytes": len(body)}
                conn.sendall((json.dumps(reply) + "\n").encode() + body)
        except OSError:
            pass
        finally:
            self._ended()

    def _reply(self, request: object) -> dict[str, Any]:
        if not isinstance(request, dict):
            return {"refused": "not a request"}
        if request.get("settings") != self.settings:
            return {"refused": "other settings"}
        if not self._take(request.get("claim")):
            return {"refused": "claimed by the client"}  # it gave up on this service
        try:
            reply = self.serve(request)
        finally:
            with self._guard:
                self._busy -= 1
                self.served += 1
        if reply.get("refused"):  # not acted on: the client acts alone
            try:
                os.unlink(os.path.join(self.claims, request["claim"]))
            except (OSError, TypeError):
                pass
        return reply

    def close(self) -> None:
        """Stop accepting; requests being served get a moment to finish (their clients count
        on them), then the address is released."""
        s, self._sock = self._sock, None
        if s is not None:
            try:
                os.unlink(self.path)  # first: a client from now on starts a new service
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        with self._guard:
            self._closed = True  # no new claims
        deadline = time.monotonic() + CLOSE_WAIT
        while self._busy and time.monotonic() < deadline:
            time.sleep(0.02)
        if self._busy == 0:
            shutil.rmtree(self.claims, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # the lock goes with it


def same_user(conn: socket.socket) -> bool:
    """Whether the peer runs as this process's uid (SO_PEERCRED; where there is none, the
    0700 folder is the guard)."""
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return True
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    except OSError:
        return False
    uid: int
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()
