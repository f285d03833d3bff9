"""Hooks handed to a running gitckpt, the hook's side: a long-lived process (`gitckpt mcp`,
`gitckpt watch`) listens on a Unix socket in the user's runtime folder (its side is
gitckpt.hook_relay_server), and a hook that finds one sends it the host's event instead of
loading the engine itself (a cold start costs more than a hook's budget; a warm process
answers in a few milliseconds).

Contract: the client side imports only the standard library. A relay serves only its own user
(the folder is 0700 and the peer's uid is checked) and only a hook whose GITCKPT_* settings
equal its own; anything else, or no answer in time, and the hook runs in its own process.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported: a hook loads as little as it can
if TYPE_CHECKING:
    from typing import Any

#: One request per connection. The relay first sends a line of its own (`ACK`) from the
#: connection's thread: a relay that is stopped (Ctrl-Z) or wedged never says it, and the hook
#: gives up on it before it has sent anything. Only then does the hook send its request (a JSON
#: line) and wait for the answer (a JSON line).
#:
#: A relay that goes silent after the request (stopped, wedged, or only slow) is settled by a
#: claim: the request names a token, and whoever first creates `<pid>.claims/<token>` next to
#: the relay's socket (O_EXCL, one atomic step) does the work. The relay claims before it acts;
#: a hook whose answer did not come in time claims too: if it wins, the relay never acts and the
#: hook runs in its own process; if it loses, the relay has it and finishes it. So no event is
#: lost and none is acted on twice. The version in ACK changes with the protocol: a hook and a
#: relay of different versions never work together (the hook then runs itself).
ACK = b"gitckpt-relay 3\n"
_MAX = 1 << 22
CONNECT_WAIT = 0.2
ACK_WAIT = 0.5  # all relays together: a hook never waits longer for one that is not there
ANSWER_WAIT = 1.5  # after the request is sent; GITCKPT_RELAY_WAIT sets it (seconds)
COMMAND_WAIT = 120.0  # the same for a CLI command: a person waits for its answer
SEND_WAIT = 5.0  # the relay's side: reading a request, writing an answer


def answer_wait(default: float = ANSWER_WAIT) -> float:
    """How long a hook waits for a relay's answer once its request is sent (GITCKPT_RELAY_WAIT
    seconds, else `default`) before it claims the request back."""
    try:
        wait = float(os.environ.get("GITCKPT_RELAY_WAIT", default))
    except ValueError:
        return default
    return wait if 0 < wait < 3600 else default


def hook_folder(host: str) -> str:
    """The folder a hook runs for, where the host's input names none: Devin's hooks are told
    their project in DEVIN_PROJECT_DIR; every other host runs its hooks in the project ("" if
    that folder is gone)."""
    if host == "devin":
        given = os.environ.get("DEVIN_PROJECT_DIR", "")
        if os.path.isabs(given):
            return given
    try:
        return os.getcwd()
    except OSError:  # the folder was deleted under the host: none, and the hook does nothing
        return ""


def claims_dir(sock_path: str) -> str:
    """The claims folder of the relay listening at `sock_path` (`<pid>.sock`)."""
    return sock_path[:-5] + ".claims" if sock_path.endswith(".sock") else sock_path + ".claims"


def claim(folder: str, token: str) -> bool:
    """Take request `token` for this side: True for whoever comes first, False for the other.
    Raises OSError when the folder cannot be written (gone, full): then neither side can
    claim, and the relay does not act."""
    if len(token) != 32 or token.strip("0123456789abcdef"):
        raise OSError(f"not a claim token: {token[:40]!r}")
    try:
        fd = os.open(os.path.join(folder, token), os.O_WRONLY | os.O_CREAT | os.O_EXCL
                     | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    return True


#: The settings that change what a hook does; a relay acts only for a hook whose values equal
#: its own. Server-only ones (GITCKPT_ROOT, GITCKPT_WATCH, ...) do not count: the plugin's
#: server has GITCKPT_ROOT set and the host's hooks do not.
SETTINGS = ("HOME", "XDG_STATE_HOME", "GITCKPT_STORE", "GITCKPT_MAX_FILE_SIZE",
            "GITCKPT_BUILTIN_IGNORE", "GITCKPT_LOCK_TIMEOUT", "GITCKPT_LOG_DIR",
            "GITCKPT_TOOL_PREFIX")  # (the tool names a hook's text suggests: the host's own)


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


def own_dir(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def ask(request: dict[str, Any], wait: float | None = None) -> dict[str, Any] | None:
    """A relay's answer to `request`, or None when the hook is to run in its own process (no
    relay took it, or the hook claimed it back from a silent one). A relay that claimed the
    request but did not answer in time (`wait` seconds, default `answer_wait()`) is an answer
    too, `{"log": ..., "pid": ...}`: it finishes the work, and the hook must not act a second
    time (unless that process is gone: a CLI command, which is idempotent, then runs itself)."""
    folder = runtime_dir()
    if not own_dir(folder):
        return None
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".sock")]
    except OSError:
        return None
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
        token = os.urandom(16).hex()
        payload = (json.dumps({**request, "settings": settings(), "claim": token})
                   + "\n").encode()
        try:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            if read_line(s, len(ACK)) != ACK:
                continue  # not a relay of this version, or one that cannot answer now
            wait = answer_wait() if wait is None else wait
            s.settimeout(wait)
            try:
                s.sendall(payload)
                answer = read_line(s)
            except OSError:
                answer = b""  # it may have the request: the claim below settles it
        except OSError:
            continue  # nothing sent: this relay never saw the request
        finally:
            s.close()
        try:
            reply = json.loads(answer) if answer else None  # our own relay's (same user)
        except (ValueError, RecursionError):
            reply = None
        mine = os.path.join(claims_dir(path), token)
        if isinstance(reply, dict) and reply.get("refused"):
            continue  # it did not act (and holds no claim): try the next
        if isinstance(reply, dict):
            try:
                os.unlink(mine)  # the relay's claim, answered: nobody asks for it again
            except OSError:
                pass
            return reply
        try:
            if claim(claims_dir(path), token):
                return None  # the relay never took it and now never will: the hook runs it
        except OSError:
            return None  # no claims folder (a relay gone or closing): it cannot act either
        return {"log": f"the relay {name} took the hook but did not answer in {wait:g} s; "
                       "it finishes it there", "pid": name[:-5], "socket": path,
                "waited": wait}
    return None


def listening(path: str) -> bool:
    """Whether a relay still answers at `path`: it accepts and says ACK (a killed one's
    socket refuses, or closes at once while its process exits)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(ACK_WAIT)
        s.connect(path)
        return read_line(s, len(ACK)) == ACK
    except OSError:
        return False
    finally:
        s.close()


def alive(pid: str) -> bool:
    """Whether process `pid` is running (a process of another user counts)."""
    try:
        os.kill(int(pid), 0)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return True


def _drop_stale(path: str, name: str) -> None:
    """A socket whose server is gone (killed) is removed, so later hooks skip it at once."""
    pid = name[:-5]
    if pid.isdigit() and alive(pid):
        return  # alive, only slow or busy
    try:
        os.unlink(path)
    except OSError:
        pass


def read_line(s: socket.socket, limit: int = _MAX) -> bytes:
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
        from gitckpt.store.logs import log_file

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
