"""The hooks' relay, the server side: a Unix socket in a long-lived gitckpt (`mcp`, `watch`)
that serves this user's hooks warm, each request claimed before it is served (the protocol is
in gitckpt.hook_relay). Standard library only, as the hook's side is.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from collections.abc import Callable

from gitckpt.hooks.relay import (
    ACK,
    SEND_WAIT,
    alive,
    claim,
    claims_dir,
    own_dir,
    read_line,
    runtime_dir,
    settings,
)

TYPE_CHECKING = False  # as in relay.py: typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

CLOSE_WAIT = 2.0  # seconds a closing relay waits for the requests it is serving


class Relay:
    """The server side: a daemon thread accepting hook requests for `serve(request) -> dict`,
    each claimed before it is served (see ACK)."""

    def __init__(self, serve: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.serve = serve
        self.path: str | None = None
        self.claims: str | None = None
        self._sock: socket.socket | None = None
        self.settings = settings()  # this process's, as it started
        self._lock = threading.Lock()
        self._busy = 0  # requests claimed and not yet served
        self._closed = False

    def start(self) -> bool:
        """Listen; False (and no socket) where the folder cannot be made safely or the
        path is too long for a Unix socket."""
        import shutil

        folder = runtime_dir()
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return False
        if not own_dir(folder):
            return False
        path = os.path.join(folder, f"{os.getpid()}.sock")
        if len(os.fsencode(path)) > 100:
            return False
        _sweep(folder)
        claims = claims_dir(path)
        try:
            os.unlink(path)
        except OSError:
            pass
        shutil.rmtree(claims, ignore_errors=True)  # an earlier process of this pid: dead
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.path = path  # before bind: a signal's close() right after it takes the socket
        try:
            os.mkdir(claims, 0o700)
            s.bind(path)
            os.chmod(path, 0o600)
            s.listen(16)
        except OSError:
            s.close()
            shutil.rmtree(claims, ignore_errors=True)
            self.path = None
            return False
        self._sock, self.claims = s, claims
        threading.Thread(target=self._accept, args=(s,), name="gitckpt-relay",
                         daemon=True).start()
        return True

    def _accept(self, sock: socket.socket) -> None:
        """Accept until closed. A failure to accept or to start a thread (no descriptors
        left: EMFILE, ENFILE; no memory) is logged and waited out, never the end of the loop:
        the connection waits in the backlog, and the hook gives up on it before it sends."""
        import logging

        log = logging.getLogger("gitckpt.relay")
        pause = 0.0
        while self._sock is sock:
            conn = None
            try:
                conn, _ = sock.accept()
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()
                pause = 0.0
                continue
            except (OSError, RuntimeError) as e:
                if self._sock is not sock:
                    return  # closed
                if conn is not None:
                    conn.close()
                if pause == 0.0:
                    log.warning("the hook relay cannot take a connection (%s); trying again",
                                e)
                pause = min(1.0, max(0.02, pause * 2))
            time.sleep(pause)

    def _take(self, token: object) -> bool:
        """Claim a request for this relay; False if the hook has it (or no claim is possible,
        or the relay is closing)."""
        with self._lock:
            if self._closed or self.claims is None or not isinstance(token, str):
                return False
            try:
                if not claim(self.claims, token):
                    try:
                        os.unlink(os.path.join(self.claims, token))  # the hook's: settled
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
                if not _same_user(conn):
                    return
                conn.sendall(ACK)
                line = read_line(conn)
                from gitckpt.core import json_input  # the serving side has the engine loaded

                try:  # a line cut short (the hook gave up while sending) is no request
                    request = json_input.loads(line) if line.endswith(b"\n") else None
                except (ValueError, RecursionError):
                    request = None
                if not isinstance(request, dict):
                    reply: dict[str, Any] = {"refused": "not a request"}
                elif request.get("settings") != self.settings:
                    reply = {"refused": "other settings"}
                elif not self._take(request.get("claim")):
                    reply = {"refused": "claimed by the hook"}  # it gave up on this relay
                else:
                    try:
                        reply = self.serve(request)
                    finally:
                        with self._lock:
                            self._busy -= 1
                    # not acted on: the hook may try elsewhere (`claims` is set: _take claimed)
                    if reply.get("refused") and self.claims is not None:
                        try:
                            os.unlink(os.path.join(self.claims, request["claim"]))
                        except (OSError, TypeError):
                            pass
                conn.sendall((json.dumps(reply) + "\n").encode())
        except OSError:
            pass

    def close(self) -> None:
        s, self._sock = self._sock, None
        if s is not None:
            try:
                s.close()
            except OSError:
                pass
        if self.path is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.path = None
        with self._lock:
            self._closed = True  # no new claims
        # A request being served is given a moment to finish (its hook counts on it); one
        # still running keeps its claim, and the folder goes when another relay starts and
        # finds this process gone (`_sweep`).
        deadline = time.monotonic() + CLOSE_WAIT
        while self._busy and time.monotonic() < deadline:
            time.sleep(0.02)
        with self._lock:
            if self._busy == 0 and self.claims is not None:
                import shutil

                shutil.rmtree(self.claims, ignore_errors=True)


def _sweep(folder: str) -> None:
    """The claims folders of relays that are gone (killed, or closed while busy)."""
    import shutil

    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = name[: -len(".claims")]
        if name.endswith(".claims") and pid.isdigit() and not alive(pid):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _same_user(conn: socket.socket) -> bool:
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return True  # no peer credentials here (macOS): the 0700 folder is the guard
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    except OSError:
        return False
    uid: int
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()
