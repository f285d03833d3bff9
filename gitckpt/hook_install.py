"""`gitckpt hook install --host NAME`: gitckpt's hooks merged into a host's project config,
shown as a diff before anything is written; every other key and hook in the file is kept."""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gitckpt.errors import InvalidArgument, WorkspaceError
from gitckpt.hook_hosts import HOSTS


@dataclass(frozen=True)
class InstallPlan:
    host: str
    path: Path
    old: str  # "" for a new file
    new: str
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        name = str(self.path)
        return "".join(difflib.unified_diff(
            self.old.splitlines(keepends=True), self.new.splitlines(keepends=True),
            "/dev/null" if not self.old else f"a/{name}", f"b/{name}"))

    def to_dict(self) -> dict:
        return {"host": self.host, "path": str(self.path), "changed": self.changed,
                "written": self.written, "diff": self.diff()}


def project_root(folder: str | Path) -> Path:
    """The project a host's config belongs to: the git work tree `folder` is in, else the
    folder itself."""
    start = Path(folder).resolve()
    if not start.is_dir():
        raise WorkspaceError(f"{folder} is not a folder.", "Pass an existing folder with -C.")
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


def plan(folder: str | Path, host: str) -> InstallPlan:
    """What `install` would write; nothing is changed."""
    spec = HOSTS.get(host)
    if spec is None:
        raise InvalidArgument(f"No host {host!r}.", f"Use one of: {', '.join(HOSTS)}.")
    path = project_root(folder) / spec.config
    try:
        old = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        old = ""
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"Cannot read {path}: {e}.",
                              "Fix the file's permissions or encoding, then run again.") from e
    try:
        config = json.loads(old) if old.strip() else {}
    except ValueError as e:
        raise InvalidArgument(f"{path} is not valid JSON ({e}).",
                              "Fix the file by hand, or use --dry-run and merge the snippet "
                              "yourself.") from e
    if not isinstance(config, dict):
        raise InvalidArgument(f"{path} does not hold a JSON object.",
                              "Fix the file by hand, or merge the --dry-run snippet yourself.")
    new = json.dumps(spec.merged(config), indent=2, ensure_ascii=False) + "\n"
    if old and json.loads(old) == json.loads(new):
        new = old  # the same hooks already: keep the user's formatting
    return InstallPlan(host, path, old, new)


def write(p: InstallPlan) -> InstallPlan:
    """Write the plan's file (atomically: a temporary file renamed over it)."""
    if not p.changed:
        return p
    p.path.parent.mkdir(parents=True, exist_ok=True)
    mode = p.path.stat().st_mode & 0o777 if p.path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=p.path.parent, prefix=f".{p.path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(p.new)
        os.chmod(tmp, mode)
        os.replace(tmp, p.path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return InstallPlan(p.host, p.path, p.old, p.new, written=True)
