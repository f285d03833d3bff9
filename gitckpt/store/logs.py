"""Where gitckpt writes its logs: stderr and a log file, never stdout (stdout is MCP's)."""

from __future__ import annotations

import os
from pathlib import Path


def log_dir() -> Path:
    """`GITCKPT_LOG_DIR`, else `$XDG_STATE_HOME/gitckpt`, else `~/.local/state/gitckpt`."""
    if os.environ.get("GITCKPT_LOG_DIR"):
        return Path(os.environ["GITCKPT_LOG_DIR"])
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(state) / "gitckpt"


def log_file() -> Path:
    return log_dir() / "gitckpt.log"


def write_traceback(header: str) -> Path | None:
    """Append `header` and the traceback of the exception being handled to the log file."""
    import traceback  # a crash's cost, not every command's

    return write_crash(f"{header}\n{traceback.format_exc()}")


def write_crash(text: str) -> Path | None:
    """Append a traceback to the log file; returns where, or None if it cannot be written."""
    from gitckpt.core.errors import GitckptError
    from gitckpt.store.state import StateDir

    path = log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with StateDir(path.parent).open_log(path.name) as f:  # 0600, never through a symlink
            f.write(text)
    except (OSError, GitckptError):
        return None
    return path
