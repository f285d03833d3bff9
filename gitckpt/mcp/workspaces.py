"""Where an MCP call acts: each call's workspace, confined to the server's roots, and one
background watcher per workspace with an active task."""

from __future__ import annotations

import logging
import os
import re
import warnings
from typing import Any
from urllib.parse import unquote, urlparse

from gitckpt.core.errors import InvalidArgument, WorkspaceError
from gitckpt.service.watchers import Watchers

log = logging.getLogger("gitckpt.mcp")
BOUNDARY_WAIT = 2.0  # seconds a tool call waits for the store lock to record its boundary drift


class Workspaces:
    """Resolves each call's workspace and keeps one background watcher per workspace that has
    an active task (unless GITCKPT_WATCH=off)."""

    def __init__(self, root: str | None, *, cwd: str | None = None, fixed: str | None = None,
                 export_dir: str | None = None, watchers: Watchers | None = None) -> None:
        """`root` is `--root`; `fixed` the session's GITCKPT_ROOT and `export_dir` its
        GITCKPT_EXPORT_DIR, `cwd` its working folder (this process's when None: a session
        the service runs for a bridge brings its own); `watchers` the process's, shared."""
        self.cli_root = root
        self.fixed = fixed if cwd is not None else os.environ.get("GITCKPT_ROOT")
        self.export_dir = export_dir if cwd is not None else os.environ.get(
            "GITCKPT_EXPORT_DIR")
        self.cwd = cwd
        self.client_roots: list[str] | None = None  # asked once, when first needed
        self.owns_watchers = watchers is None
        self.watchers = watchers if watchers is not None else Watchers()

    def here(self) -> str:
        """The session's working folder."""
        return self.cwd if self.cwd is not None else os.getcwd()

    def configured(self) -> list[str]:
        """The folders this server may act in: --root, else GITCKPT_ROOT, else the client's
        file:// roots; empty when none is known."""
        fixed = self.cli_root or self.fixed
        return [fixed] if fixed else list(self.client_roots or [])

    async def resolve(self, root: str | None, session: Any = None) -> str:
        """The workspace of a call: `root`, which must lie in a configured root, else the
        first configured root, else the server's working folder. A configured root confines
        every call; without one, `/`, the home folder and system folders are refused."""
        if not self.cli_root and not self.fixed \
                and self.client_roots is None and session is not None:
            self.client_roots = await _client_roots(session)
        allowed = self.configured()
        for given in (*allowed, *([root] if root is not None else [])):
            unexpanded = _UNEXPANDED.search(given)
            if unexpanded and not os.path.exists(given):  # (a real folder may hold a $)
                raise WorkspaceError(
                    f"The workspace {given!r} holds {unexpanded.group(0)}, a variable nobody "
                    "filled in (a host expands it only in its own configuration: "
                    "${CLAUDE_PROJECT_DIR} only inside a plugin).",
                    "Set GITCKPT_ROOT (or --root) to the project's absolute path, or leave it "
                    "unset: the client's roots, else the server's working folder, are used.")
        path = root if root is not None else allowed[0] if allowed else self.here()
        if not os.path.isabs(path):
            raise WorkspaceError(f"The workspace {path!r} is not an absolute path.",
                                 "Pass root as an absolute path, e.g. /home/me/project.")
        if not os.path.isdir(path):
            raise WorkspaceError(f"The workspace {path} does not exist.",
                                 "Pass the absolute path of an existing folder as root.")
        real = os.path.realpath(path)
        if allowed and not any(_inside(real, os.path.realpath(a)) for a in allowed):
            raise WorkspaceError(
                f"The workspace {path} is outside this server's root ({', '.join(allowed)}).",
                "Pass a root inside it, or start the server with --root for that folder.")
        if too_wide(real):  # a client root of ~ must not checkpoint the whole home either
            raise WorkspaceError(
                f"gitckpt will not checkpoint {path}: it is the home folder, / or a system "
                "folder.",
                "Pass root: the absolute path of the project folder, or start the server with "
                "--root PROJECT.")
        return path

    def watch(self, root: str) -> None:
        """Start the watcher for `root` if it has an active task and none runs yet."""
        self.watchers.watch(root)

    def close(self) -> None:
        """The watchers go with the server that owns them (not with a service's session)."""
        if self.owns_watchers:
            self.watchers.close()


async def _client_roots(session: Any) -> list[str]:
    """The client's file:// roots, where the client offers roots (`session`: the SDK's
    server session of the call)."""
    caps = session.client_capabilities
    if caps is None or getattr(caps, "roots", None) is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = await session.list_roots()
    except Exception as e:  # a client that declared roots but cannot answer
        log.info("roots/list failed: %s", e)
        return []
    out = []
    for r in result.roots:
        uri = urlparse(str(r.uri))
        if uri.scheme == "file":
            out.append(unquote(uri.path))
    return out


def export_target(workspace: str, to: str, export_dir: str | None = None) -> str:
    """Where a package may be written over MCP: inside `export_dir` (the session's
    GITCKPT_EXPORT_DIR), or else inside the
    workspace's parent folder (service.export keeps it out of the store)."""
    dest = os.path.realpath(os.path.join(workspace, to))
    allowed = os.path.realpath(export_dir or os.path.dirname(
        os.path.realpath(workspace)))
    inside = os.path.relpath(dest, allowed).split(os.sep)
    if (not _inside(os.path.dirname(dest), allowed) or dest == allowed
            or any(part in (".git", ".gitckpt") for part in inside)):
        raise InvalidArgument(f"A package cannot be written to or read from {dest}: only a "
                              f"folder inside {allowed}, outside any store.",
                              "Pass to as a new folder name there, or set GITCKPT_EXPORT_DIR "
                              "for the server.")
    return dest


#: `${NAME}` or `$NAME` left as written: the variable of a host's configuration, not a path.
_UNEXPANDED = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# Folders no checkpoint belongs in: a task there would take (and a restore rewrite) everything.
SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
          "/run", "/sbin", "/sys", "/usr", "/var", "/tmp", "/var/tmp")


def too_wide(real: str) -> bool:
    """`/`, the home folder or a folder above it, a system folder itself, or anything below
    /proc, /sys, /dev, /etc, /usr, /boot and /bin."""
    home = os.path.realpath(os.path.expanduser("~"))
    if real in ("/", home) or real in SYSTEM or _inside(home, real):
        return True
    return any(_inside(real, f) for f in ("/proc", "/sys", "/dev", "/etc", "/usr", "/boot",
                                         "/bin", "/sbin", "/lib"))
