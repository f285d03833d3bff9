"""The git store's stat cache: its private libgit2 index under `<git-dir>/gitckpt/` and the
side state that says which tree and rules that index stands for."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pygit2

from gitckpt.core import json_input
from gitckpt.core.errors import GitckptError, InternalError, StoreNotWritable
from gitckpt.store.git import hinted
from gitckpt.store.git.libgit2 import bind, open_index
from gitckpt.store.state import StateDir, unsafe

SCAN_STATE = "scan.json"  # the scanner's side state in the workspace's state folder


class StatCache:
    """The private index of one workspace, opened as a standalone libgit2 index (never through
    `repo.index`, so the user's `.git/index` cannot be read or written by accident)."""

    def __init__(self, repo: pygit2.Repository, state: StateDir, user_index: Path) -> None:
        self.repo = repo
        self.state = state
        self.path = state.path / "index"
        if not self.path.is_symlink() and self.path.resolve() == user_index.resolve():
            raise InternalError(f"private index {self.path} is the user's index")

    def open(self, update_cache: bool, fresh: bool) -> pygit2.Index:
        # libgit2 reads and writes the index through a symlink: one planted there (a
        # downloaded repository) could name another repository's index.
        if self.path.is_symlink():
            raise unsafe(self.path)
        return self._open(update_cache, fresh)

    def _open(self, update_cache: bool, fresh: bool) -> pygit2.Index:
        if fresh:
            index = pygit2.Index()
            if update_cache:
                self.state.ensure()
                self.state.remove("index")
                index = open_index(str(self.path))
            return bind(index, self.repo)
        if update_cache:
            self.prepare_write()
        try:
            index = open_index(str(self.path))
        except pygit2.GitError:
            # A corrupt stat cache costs a re-read, never data: start from empty.
            if not update_cache:
                index = pygit2.Index()
            else:
                self.state.remove("index")
                index = open_index(str(self.path))
        return bind(index, self.repo)  # the diff needs the repository; ownership stays None

    def prepare_write(self) -> None:
        if self.path.is_symlink():
            raise unsafe(self.path)
        try:
            self.state.ensure()  # libgit2 writes the index itself: no symlinked folder
            # Left by a killed writer: the caller holds the store lock.
            self.state.remove("index.lock")
        except OSError as e:
            raise StoreNotWritable(f"Cannot write {self.path.parent}: {e.strerror}.",
                                   "Check the permissions of the .git folder.") from e

    def write(self, index: pygit2.Index) -> None:
        try:
            index.write()
            os.chmod(self.path, 0o600)  # libgit2 writes 0644; state files are private
        except (pygit2.GitError, OSError) as e:
            raise StoreNotWritable(f"Cannot write the stat cache {self.path}: {e}.",
                                   "Check the permissions of the repository's .git folder."
                                   ) from e

    def attributes(self) -> set[str]:
        """Folders holding a .gitattributes file, as the last scan found them."""
        return set(self.read_state().get("attributes", []))

    def read_state(self) -> dict[str, Any]:  # JSON as scan.py wrote it
        try:
            data = json_input.loads(self.state.read(SCAN_STATE) or b"{}")
        except (OSError, ValueError, GitckptError):
            return {}
        return data if isinstance(data, dict) else {}

    def looked_elsewhere(self, elsewhere: bool) -> None:
        """The files were read outside any watcher's journal and nothing was cached (a held
        scan): caches in memory here, and with `elsewhere` in other processes, can no longer
        stand for them. The caller holds the lock."""
        hinted.forget(self.path)
        state = self.read_state() if elsewhere else None
        if state:
            self.write_state({**state, "by": os.urandom(8).hex()})

    def write_state(self, state: dict[str, Any]) -> None:
        self.state.write(SCAN_STATE, json.dumps(state).encode())
