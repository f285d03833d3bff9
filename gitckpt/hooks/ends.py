"""A hook's two ends that need nothing but the standard library: the folder it runs for, and
how its outcome leaves (stdout for the host, one line on stderr and in the log file)."""

from __future__ import annotations

import os
import sys
import time


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


def log_file() -> str:
    """store/logs.py `log_file()`, without pathlib (a hook client loads as little as it can;
    a test keeps the two equal)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    folder = os.environ.get("GITCKPT_LOG_DIR") or os.path.join(state, "gitckpt")
    return os.path.join(folder, "gitckpt.log")


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
        path = log_file()
        folder = os.path.dirname(path)
        if not os.path.isdir(folder) and not os.path.isdir(os.path.expanduser("~")) \
                and not os.environ.get("GITCKPT_LOG_DIR"):
            return  # no home to keep a log in (HOME unset or gone): stderr only
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + line)
    except OSError:
        pass
