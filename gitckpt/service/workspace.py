"""A workspace opened once for one front-end call: its timeline (the store, the tasks), the
caller's folder that relative paths are read from, and the boundary drift that records what
changed since the last call. Every service function takes one; none opens another."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import TaskId
from gitckpt.core.request import Opening, Request
from gitckpt.engine.records import DriftResult
from gitckpt.engine.timeline import Clock, Timeline
from gitckpt.store.base import Store
from gitckpt.store.discover import open_store


class Workspace:
    """An opened workspace: `timeline` of its store, and `cwd`, the folder the caller stands
    in (the CLI's `-C`, a hook's folder), which relative paths are read from."""

    def __init__(self, timeline: Timeline, cwd: str) -> None:
        self.timeline = timeline
        self.cwd = cwd

    @property
    def store(self) -> Store:
        return self.timeline.store

    @property
    def root(self) -> Path:
        return self.timeline.store.root

    def active(self) -> TaskId | None:
        """The task a call here acts on by default, or None (read-only: a host's hook asks
        this in any folder, and nothing is created in one without a store)."""
        try:
            return self.timeline.active_id()
        except GitckptError:
            return None

    @contextmanager
    def boundary(self, *, lock_wait: float, exact: bool = False
                 ) -> Iterator[DriftResult | None]:
        """The changes made since the last call, recorded first as a `boundary` drift, under
        a hold of the lock that lasts until the block ends, so the call's own snapshot is
        the boundary's (one scan per call). Yields that drift, or None if none was taken: no
        active task, or the store was busy for `lock_wait` seconds (the call then scans on
        its own). `exact`: the boundary stats every file, for calls that send or rewrite the
        workspace (see `Store.snapshot`). Errors here are the call's to meet later."""
        tl = self.timeline
        with ExitStack() as held:
            try:
                tid = tl.resolve(None)
                held.enter_context(tl.store.one_scan(lock_wait))
                drift: DriftResult | None = tl.capture("boundary", tid, exact=exact)
            except GitckptError:
                drift = None
            yield drift


def open_workspace(folder: str | Path, opening: Opening = Opening.FIND, *,
                   cwd: str | None = None, store: str | None = None,
                   clock: Clock = time.time) -> Workspace:
    """The workspace at `folder`, opened as `opening` says (`store`: a plain folder's store
    elsewhere, init --store). `cwd` is the caller's folder (default `folder`)."""
    here = os.path.abspath(cwd if cwd is not None else folder)
    if opening is Opening.FIND:
        return Workspace(_found(folder, clock), here)
    ancestors = opening in (Opening.FIND, Opening.STORE, Opening.ADOPT)
    found = open_store(folder, store=store, ancestors_too=ancestors,
                       adopt=opening in (Opening.ADOPT, Opening.TAKE))
    tl = Timeline(found, clock)
    if opening is Opening.ADOPT:  # a folder whose active task is above it: that one's store
        tl = _above(tl, clock) or tl
    return Workspace(tl, here)


def opened(folder: str | Path, request: Request[Any], *, cwd: str | None = None,
           clock: Clock = time.time) -> Workspace:
    """The workspace `request` acts on, opened as it declares (a store folder it names is
    read from the caller's folder)."""
    store = request.store_folder()
    if store is not None:
        store = os.path.join(cwd if cwd is not None else folder, os.path.expanduser(store))
    return open_workspace(folder, request.opened(), cwd=cwd, store=store, clock=clock)


def _found(folder: str | Path, clock: Clock) -> Timeline:
    """The timeline of the store at `folder`; a folder without an active task of its own
    resolves to the nearest enclosing workspace of the same store that has one, so commands
    work from any subfolder (as git does)."""
    tl = Timeline(open_store(folder), clock)
    if tl.active_id() is not None:
        return tl
    return _above(tl, clock) or tl


def _above(tl: Timeline, clock: Clock) -> Timeline | None:
    for parent in tl.store.root.parents:
        if parent == Path.home() or parent == Path(parent.anchor):
            break
        try:
            other = Timeline(open_store(parent), clock)
        except GitckptError:
            break
        if other.store.lock_path != tl.store.lock_path:
            break  # another store: the workspace ends here
        if other.active_id() is not None:
            return other
    return None
