"""Hooks handed to a running gitckpt: a long-lived process (`gitckpt mcp`, `gitckpt watch`)
listens on a Unix socket in the user's runtime folder, and a hook that finds one sends it the
host's event instead of loading the engine itself (a cold start costs more than a hook's
budget; a warm process answers in a few milliseconds).

Contract: the client side imports only the standard library. A relay serves only its own user
(the folder is 0700 and the peer's uid is checked) and only a hook whose GITCKPT_* settings
equal its own; anything else, or no answer in time, and the hook runs in its own process.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable

#: The hook commands and the hosts (gitckpt.hook_hosts has one entry per name), known here so a
#: hook is parsed before anything else loads.
EVENTS = ("session-start", "post-tool", "pre-compact", "stop")
HOST_NAMES = ("claude", "codex", "cursor", "gemini", "windsurf")

#: One request per connection. The relay first sends a line of its own (`ACK`) from the
#: connection's thread: a relay that is stopped (Ctrl-Z) or wedged never says it, and the hook
#: gives up on it before it has sent anything, so no request is acted on twice. Only then does
#: the hook send its request (a JSON line) and wait for the answer (a JSON line).
ACK = b"gitckpt-relay 1\n"
_MAX = 1 << 22
CONNECT_WAIT = 0.2
ACK_WAIT = 0.5  # all relays together: a hook never waits longer for one that is not there
ANSWER_WAIT = 20.0

#: The settings that change what a hook does; a relay acts only for a hook whose values equal
#: its own. Server-only ones (GITCKPT_ROOT, GITCKPT_WATCH, ...) do not count: the plugin's
#: server has GITCKPT_ROOT set and the host's hooks do not.
SETTINGS = ("HOME", "XDG_STATE_HOME", "GITCKPT_STORE", "GITCKPT_MAX_FILE_SIZE",
            "GITCKPT_BUILTIN_IGNORE", "GITCKPT_LOCK_TIMEOUT", "GITCKPT_LOG_DIR")


def runtime_dir() -> str:
    """GITCKPT_RUNTIME_DIR, else $XDG_RUNTIME_DIR/gitckpt, else the log folder's `run`."""
    if os.environ.get("GITCKPT_RUNTIME_DIR"):
        return os.environ["GITCKPT_RUNTIME_DIR"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "gitckpt")
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(state, "gitckpt", "run")


def settings() -> dict[str, str]:
    """What must be equal for a relay to act for a hook (see SETTINGS)."""
    return {k: os.environ[k] for k in SETTINGS if k in os.environ}


def _own_dir(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def ask(request: dict) -> dict | None:
    """A relay's answer to `request`, or None if no relay took it (the hook then runs in its
    own process). A relay that acknowledged the request but did not answer in ANSWER_WAIT
    is an answer too: `{"log": ...}`, so the hook does not act a second time."""
    folder = runtime_dir()
    if not _own_dir(folder):
        return None
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".sock")]
    except OSError:
        return None
    payload = (json.dumps({**request, "settings": settings()}) + "\n").encode()
    deadline = time.monotonic() + ACK_WAIT
    for name in sorted(names, reverse=True):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        path = os.path.join(folder, name)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(min(CONNECT_WAIT, left))
            s.connect(path)
        except OSError:
            s.close()
            _drop_stale(path, name)
            continue
        try:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            if _read_line(s, len(ACK)) != ACK:
                continue  # not a relay, or one that cannot answer now: try the next
            s.settimeout(ANSWER_WAIT)
            s.sendall(payload)
            try:
                answer = _read_line(s)
            except OSError:
                return {"log": f"the relay {name} took the hook but did not answer in "
                               f"{ANSWER_WAIT:g} s"}
        except OSError:
            continue
        finally:
            s.close()
        try:
            reply = json.loads(answer) if answer else None  # our own relay's (same user)
        except (ValueError, RecursionError):
            reply = None
        if isinstance(reply, dict) and reply.get("refused"):
            continue
        if isinstance(reply, dict):
            return reply
        return {"log": f"the relay {name} took the hook but gave no answer"}
    return None


def _drop_stale(path: str, name: str) -> None:
    """A socket whose server is gone (killed) is removed, so later hooks skip it at once."""
    pid = name[:-5]
    if pid.isdigit():
        try:
            os.kill(int(pid), 0)
            return  # alive, only slow or busy
        except PermissionError:
            return
        except OSError:
            pass
    try:
        os.unlink(path)
    except OSError:
        pass


def _read_line(s: socket.socket, limit: int = _MAX) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = s.recv(min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(chunks)


class Relay:
    """The server side: a daemon thread accepting hook requests for `serve(request) -> dict`."""

    def __init__(self, serve: Callable[[dict], dict]) -> None:
        self.serve = serve
        self.path: str | None = None
        self._sock: socket.socket | None = None
        self.settings = settings()  # this process's, as it started

    def start(self) -> bool:
        """Listen; False (and no socket) where the folder cannot be made safely or the
        path is too long for a Unix socket."""
        folder = runtime_dir()
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return False
        if not _own_dir(folder):
            return False
        path = os.path.join(folder, f"{os.getpid()}.sock")
        if len(os.fsencode(path)) > 100:
            return False
        try:
            os.unlink(path)
        except OSError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(path)
            os.chmod(path, 0o600)
            s.listen(16)
        except OSError:
            s.close()
            return False
        self._sock, self.path = s, path
        threading.Thread(target=self._accept, name="gitckpt-relay", daemon=True).start()
        return True

    def _accept(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(5.0)
                if not _same_user(conn):
                    return
                conn.sendall(ACK)
                from gitckpt import json_input  # the serving side has the engine loaded

                try:
                    request = json_input.loads(_read_line(conn))
                except ValueError:
                    request = None
                if not isinstance(request, dict):
                    reply: dict = {"refused": "not a request"}
                elif request.get("settings") != self.settings:
                    reply = {"refused": "other settings"}
                else:
                    reply = self.serve(request)
                conn.settimeout(ANSWER_WAIT)
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


def _same_user(conn: socket.socket) -> bool:
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return True  # no peer credentials here (macOS): the 0700 folder is the guard
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def emit(stdout: str, log: str) -> None:
    """A hook's end: `stdout` for the host, `log` as one line on stderr (a host's debug log)
    and in gitckpt's log file. Nothing here may fail the host."""
    if stdout:
        try:
            sys.stdout.write(stdout)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    if not log:
        return
    # One line, whatever a folder name or a host's field holds: no newline can forge a log
    # line and no escape sequence reaches a terminal.
    log = "".join(c if c.isprintable() else repr(c)[1:-1] for c in log)
    line = f"gitckpt: {log}\n"
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    try:
        from gitckpt.logs import log_file

        path = log_file()
        if not path.parent.is_dir() and not os.path.isdir(os.path.expanduser("~")) \
                and not os.environ.get("GITCKPT_LOG_DIR"):
            return  # no home to keep a log in (HOME unset or gone): stderr only
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + line)
    except OSError:
        pass
