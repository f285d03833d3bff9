"""One background watcher per workspace with an active task, shared by everything a process
serves (the service's hooks, CLI commands and MCP sessions, or one MCP server alone)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from gitckpt.core.errors import GitckptError
from gitckpt.core.operations import WatchRequest
from gitckpt.engine.session import WatchSession
from gitckpt.engine.watch import Settings
from gitckpt.service import api
from gitckpt.service.results import Watchable
from gitckpt.service.workspace import open_workspace

log = logging.getLogger("gitckpt.service")


class Watchers:
    """The watchers of one process, by workspace root (unless GITCKPT_WATCH=off). Thread-safe:
    any thread may ask for a folder to be watched."""

    def __init__(self, log_name: str = "mcp.log") -> None:
        self.sessions: dict[Path, WatchSession] = {}
        self.logged: set[Path] = set()
        self.watched: set[str] = set()  # folders whose workspace has its watcher
        self.log_name = log_name  # the log file each watched store gets in its state folder
        self.lock = threading.Lock()

    def watch(self, root: str) -> None:
        """Start the watcher for `root` if it has an active task and none runs yet."""
        if root in self.watched or not Settings.from_env().enabled:
            return  # checked once per folder: no store is opened again on every call
        try:
            workspace = open_workspace(root)
        except GitckptError:
            return
        found = api.watchable(workspace)
        if found is None:
            return
        key = found.key
        with self.lock:
            self._log_to_store(found)
            if key in self.sessions:
                self.watched.add(root)
                return
            try:
                session = api.watch(workspace, WatchRequest(), on_drift=lambda r: log.info(
                    "drift %s (%s): %d paths", r.commit[:7], r.trigger, len(r.changes.paths())))
            except GitckptError as e:
                log.warning("no watcher for %s: %s", root, e.message)
                return
            self.sessions[key] = session
            self.watched.add(root)
        threading.Thread(target=session.run, name=f"gitckpt-watch {key}", daemon=True).start()
        log.info("watching %s for task %s (%s)", key, session.task, session.watcher.mode)

    def _log_to_store(self, found: Watchable) -> None:
        if found.state in self.logged:
            return
        try:
            handler = logging.StreamHandler(found.log(self.log_name))
        except (OSError, GitckptError) as e:  # a symlink planted there is refused
            log.warning("no log file in %s: %s", found.state, getattr(e, "message", e))
            return
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.getLogger("gitckpt").addHandler(handler)
        self.logged.add(found.state)

    def close(self) -> None:
        with self.lock:
            sessions = list(self.sessions.values())
        for session in sessions:
            session.stop()
