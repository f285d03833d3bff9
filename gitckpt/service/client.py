"""How every gitckpt process reaches its user's service: one address per user, a request per
connection (claimed, so none is acted on twice), a stream for an MCP session, and the start of
the service when none answers. Standard library only: a hook or a CLI client loads nothing
else until it must work alone.

The address depends on the uid and gitckpt's version and settings, never on what a host left
in the environment: `GITCKPT_RUNTIME_DIR` (tests), else `/run/user/<uid>/gitckpt` where that
folder is the user's, else `/tmp/gitckpt-<uid>`. The folder is 0700 and the user's, or it is
not used; the service checks each peer's uid. Clients of another version or other settings
have another socket, so they never meet a service that would serve them differently.

Protocol, one connection each: the service says ACK first (from the connection's thread: a
stopped or wedged service never says it, and the client gives up before it has sent
anything), the client sends one JSON line, the service answers one JSON line (or, for `mcp`,
the connection becomes the session's stdio). A command's output follows its answer's line as
raw bytes, `stdout_bytes` of them, so no output is too long to pass and none is escaped
twice. A request that needs acting on names a claim token: whoever first creates
`<address>.claims/<token>` (O_EXCL) acts. The service claims before it acts; a client whose
answer did not come in time claims too, and runs the request itself if it wins. So a service
killed at any moment loses nothing and does nothing twice.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import zlib

from gitckpt import __version__

TYPE_CHECKING = False  # typing itself is not imported: a client loads as little as it can
if TYPE_CHECKING:
    from typing import Any

#: The protocol's version: a client and a service that differ in it never work together.
ACK = b"gitckpt-service 2\n"
_MAX = 1 << 22
CONNECT_WAIT = 0.2
ACK_WAIT = 0.5
ANSWER_WAIT = 1.5  # a hook, after its request is sent; GITCKPT_SERVICE_WAIT sets it (s)
COMMAND_WAIT = 120.0  # the same for a CLI command: a person waits for its answer
START_WAIT = 15.0  # how long an MCP bridge waits for a service it started to answer
SEND_WAIT = 5.0  # the service's side: reading a request, writing an answer
#: How long a client whose connection was cut looks for the service's death: the kernel
#: closes a killed process's sockets before the process shows as dead.
DEATH_WAIT = 2.0

#: What a client's environment may hold that is its own, not the service's: the session's
#: workspace, the client's waits and switches. Every other GITCKPT_* setting is in the key.
CLIENT_ONLY = ("GITCKPT_ROOT", "GITCKPT_EXPORT_DIR", "GITCKPT_SERVICE", "GITCKPT_SERVICE_WAIT",
               "GITCKPT_SERVICE_IDLE", "GITCKPT_RUNTIME_DIR", "GITCKPT_RELAY_WAIT",
               "GITCKPT_TOOL_PREFIX")


#: The CLI commands the service serves (cli/relayed.py): each is idempotent (a save saved twice
#: is "nothing new", a capture taken twice "no change", a restore applied twice finds the files
#: restored, the rest only read), so a client whose service died mid-command may run it again.
#: A restore applied there plans on the watcher's view of the workspace, with the paths it
#: restores read as they are.
SERVED = ("save", "capture", "resume", "log", "diff", "why", "blame", "explain", "search",
          "restore")
#: Of those, the ones whose output is paged on a terminal: there they run in the client,
#: which owns the terminal and its pager.
PAGED = ("log", "diff", "why", "blame", "explain", "search", "restore")


#: The CLI's global options that take a value (cli/main.py): what follows one is no command.
_VALUED = ("-C", "--color")


def served(argv: list[str], tty: bool) -> bool:
    """Whether a command line may go to the service: its command (the first word after the
    global options) is SERVED, no help, and no pager on a terminal (an applied restore's
    output is not paged)."""
    if any(a in ("-h", "--help", "--version") for a in argv):
        return False
    words = iter(argv)
    command = None
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            command = word
            break
    if command not in SERVED:
        return False
    paged = command in PAGED and not (command == "restore" and "--apply" in argv)
    return not (tty and paged and "--no-pager" not in argv and "--json" not in argv)


def hook_message(host: str, event: str, raw: str, here: str, voice: str,
                 prefix: str = "") -> dict[str, Any]:
    """A hook's request as the service reads it: core/ops/events.py HookCall's wire form,
    written here without loading the declarations (tests keep the two equal)."""
    return {"op": "hook", "request": {"host": host, "event": event, "raw": raw, "here": here,
                                      "voice": voice, "prefix": prefix}}


def command_message(argv: list[str], here: str, tty: bool, env: dict[str, str],
                    git: dict[str, str]) -> dict[str, Any]:
    """A command line's request as the service reads it: CommandCall's wire form (as above)."""
    return {"op": "command", "request": {"argv": list(argv), "here": here, "tty": tty,
                                         "env": env, "git": git}}


def enabled() -> bool:
    """Whether this process may use (and start) the service: not with GITCKPT_SERVICE=off."""
    return os.environ.get("GITCKPT_SERVICE", "on") != "off"


def answer_wait(default: float = ANSWER_WAIT) -> float:
    """How long a client waits for an answer once its request is sent (GITCKPT_SERVICE_WAIT
    seconds, else `default`) before it claims the request back."""
    try:
        wait = float(os.environ.get("GITCKPT_SERVICE_WAIT", default))
    except ValueError:
        return default
    return wait if 0 < wait < 3600 else default


def runtime_dir() -> str:
    """The user's service folder (see the module's docstring)."""
    if os.environ.get("GITCKPT_RUNTIME_DIR"):
        return os.environ["GITCKPT_RUNTIME_DIR"]
    uid = os.getuid()
    run = f"/run/user/{uid}"
    if own_dir(run, private=False):
        return os.path.join(run, "gitckpt")
    return f"/tmp/gitckpt-{uid}"


def settings() -> dict[str, str]:
    """What a service must share with a client to serve it: the home and state folders as
    they resolve (a host that drops HOME still finds the user's home in the password
    database), and every GITCKPT_* setting that is not the client's own."""
    out = {"home": os.path.expanduser("~"), "state": os.environ.get("XDG_STATE_HOME", ""),
           "config": os.environ.get("XDG_CONFIG_HOME", "")}
    out.update({k: v for k, v in os.environ.items()
                if k.startswith("GITCKPT_") and k not in CLIENT_ONLY})
    return out


def address() -> str:
    """The socket of the service for this user, version and settings."""
    # (a checksum, not a hash: two settings that met in it would still be refused, as the
    # service compares the settings themselves; zlib loads faster than hashlib)
    key = f"{zlib.crc32(json.dumps(settings(), sort_keys=True).encode()):08x}"
    return os.path.join(runtime_dir(), f"{__version__}-{key}.sock")


def lock_path(sock: str) -> str:
    """The lock the running service holds for its life (its pid inside)."""
    return sock[:-5] + ".lock"


def claims_dir(sock: str) -> str:
    return sock[:-5] + ".claims"


def own_dir(path: str, private: bool = True) -> bool:
    """A folder (not a link) of this user; with `private`, one nobody else may enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not (
        private and st.st_mode & 0o077)


def claim(folder: str, token: str) -> bool:
    """Take request `token` for this side: True for whoever comes first. Raises OSError when
    the folder cannot be written (gone, full): then neither side can claim it."""
    if len(token) != 32 or token.strip("0123456789abcdef"):
        raise OSError(f"not a claim token: {token[:40]!r}")
    try:
        fd = os.open(os.path.join(folder, token), os.O_WRONLY | os.O_CREAT | os.O_EXCL
                     | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def _connect(path: str, wait: float) -> socket.socket | None:
    """A connection whose service said ACK within `wait`, or None."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(min(CONNECT_WAIT, wait))
        s.connect(path)
        s.settimeout(wait)
        if read_line(s, len(ACK)) == ACK:
            return s
    except OSError:
        pass
    s.close()
    return None


def ask(request: dict[str, Any], wait: float | None = None,
        start: bool = False) -> dict[str, Any] | None:
    """The service's answer to `request`, or None when the caller is to act alone (no
    service, or the caller claimed the request back from a silent one). With `start` (a
    client process, not a library caller), a missing service is started as this process
    exits, for the next caller. A service
    that claimed the request but did not answer in `wait` seconds is an answer too,
    `{"log": ..., "pid": ..., "socket": ...}`: it finishes the work, and the caller must not
    act a second time."""
    if not enabled():
        return None
    path = address()
    s = _connect(path, ACK_WAIT) if own_dir(os.path.dirname(path)) else None
    if s is None:
        if start:  # for the next client, once this one's own work is done
            import atexit

            atexit.register(start_service, path)
        return None
    serving = running_pid(path)  # who took it, should it not answer
    token = os.urandom(16).hex()
    payload = (json.dumps({**request, "settings": settings(), "claim": token}) + "\n").encode()
    wait = answer_wait() if wait is None else wait
    reply = None
    cut = False  # the connection ended before the wait did: the service closed or died
    try:
        s.settimeout(wait)
        try:
            s.sendall(payload)
            with s.makefile("rb") as answer:
                reply = _reply(answer)
            cut = reply is None
        except TimeoutError:
            reply = None  # it may have the request: the claim below settles it
        except OSError:
            reply, cut = None, True
    finally:
        s.close()
    mine = os.path.join(claims_dir(path), token)
    if isinstance(reply, dict) and reply.get("refused"):
        return None  # it did not act, and holds no claim
    if isinstance(reply, dict):
        try:
            os.unlink(mine)  # the service's claim, answered: nobody asks for it again
        except OSError:
            pass
        return reply
    try:
        if claim(claims_dir(path), token):
            return None  # the service never took it and now never will: the caller acts
    except OSError:
        return None  # no claims folder (a service gone or closing): it cannot act either
    if serving is not None and cut:  # a process's sockets close before it is seen dead
        deadline = time.monotonic() + DEATH_WAIT
        while alive(serving) and time.monotonic() < deadline:
            time.sleep(0.005)
    if serving is None or not alive(serving):  # it took the request, then died
        return {"log": "the service took the request and stopped before it answered",
                "pid": serving, "socket": path, "waited": wait, "died": True}
    return {"log": f"the service took the request but did not answer in {wait:g} s; it "
                   "finishes it there", "pid": serving, "socket": path, "waited": wait}


def _reply(answer: Any) -> Any:
    """The service's answer read from `answer` (a buffered reader of the connection): its
    JSON line, with the output bytes that follow it as `stdout`; None when it is cut short."""
    line = answer.readline(_MAX)
    try:
        reply = json.loads(line) if line.endswith(b"\n") else None  # our service's (same user)
    except (ValueError, RecursionError):
        return None
    if not isinstance(reply, dict):
        return reply
    size = reply.pop("stdout_bytes", None)
    if isinstance(size, int) and size >= 0:
        body = answer.read(size)
        if len(body) != size:
            return None
        reply["stdout"] = body.decode("utf-8", "surrogateescape")
    return reply


def alive(pid: int) -> bool:
    """Whether process `pid` runs (stopped counts: it goes on when continued; a zombie, dead
    and not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return True  # no /proc here: the signal said it exists
    return state not in ([b"Z"], [b"X"])


#: Served commands that a client may run itself when its service died with the request:
#: each only reads, or records nothing when nothing changed. A save is not among them: the
#: service may have saved it, and a second save is a second step.
RERUNNABLE = ("capture", "resume", "log", "diff", "why", "blame", "explain", "search",
              "restore")


def stream(header: dict[str, Any], start: bool = True,
           wait: float = START_WAIT) -> socket.socket | None:
    """A connection that the service serves as a stream (an MCP session) after `header`;
    a missing service is started and waited for up to `wait` seconds. None: act alone."""
    if not enabled():
        return None
    path = address()
    deadline = time.monotonic() + wait
    started = False
    while True:
        s = _connect(path, ACK_WAIT) if own_dir(os.path.dirname(path)) else None
        if s is not None:
            try:
                s.settimeout(SEND_WAIT)
                s.sendall((json.dumps({**header, "settings": settings()}) + "\n").encode())
                s.settimeout(None)
                return s
            except OSError:
                s.close()
        if not start or time.monotonic() >= deadline:
            return None
        if not started:
            # None runs: start one, unless one is starting or leaving (it holds the lock:
            # wait, and start one once it has left)
            started = start_service(path, reap=True)
            if not started and not _locked(lock_path(path)):
                return None  # it cannot be started here (a folder not ours, no python)
        time.sleep(0.02)


def listening(path: str) -> bool:
    """Whether a service still answers at `path`."""
    s = _connect(path, ACK_WAIT)
    if s is None:
        return False
    s.close()
    return True


def start_service(path: str | None = None, reap: bool = False) -> bool:
    """Start the service for this user and settings, detached (its own session, stdio on the
    null device, its log in the log folder), unless one runs or is starting. True if one was
    started here."""
    path = path or address()
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    if not own_dir(folder) or len(os.fsencode(path)) > 100 or _locked(lock_path(path)):
        return False
    env = {k: v for k, v in os.environ.items()
           if k not in ("GITCKPT_ROOT", "GITCKPT_EXPORT_DIR")}  # a session's, not the service's
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:  # (posix_spawn: no subprocess module to import; Python's own files do not inherit)
        pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "gitckpt", "service",
                                              "run", "--detach"], env,
                             file_actions=null, setsid=True)
    except (OSError, ValueError):
        return False
    if reap:
        _reap_later(pid)
    return True


def _reap_later(pid: int) -> None:
    """The started service is this process's child until this process ends: a client that
    lives on (an MCP bridge) reaps it when it exits, so no zombie is left behind."""
    import threading

    def wait() -> None:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass

    threading.Thread(target=wait, daemon=True).start()


def _locked(path: str) -> bool:
    """Whether a service holds its lock at `path` (runs, or is starting)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def running_pid(path: str | None = None) -> int | None:
    """The pid of the service holding the lock of `path`, or None when none runs."""
    lock = lock_path(path or address())
    if not _locked(lock):
        return None
    try:
        with open(lock, encoding="ascii") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


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
