"""Which workspace a call works on, and one front-end call's opening of it: the timeline it
opened (reused by every service function inside the call) and its boundary drift."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from pathlib import Path

from gitckpt.core.errors import GitckptError
from gitckpt.engine.records import DriftResult
from gitckpt.engine.timeline import Clock, Timeline
from gitckpt.store.discover import open_store


def open_timeline(root: str | Path, clock: Clock = time.time, store: str | None = None,
                  *, discover: bool = True, ancestors: bool = True, adopt: bool = False
                  ) -> Timeline:
    """The timeline of the workspace at `root`. With `discover`, a folder without an active
    task of its own resolves to the nearest enclosing workspace of the same store that has
    one, so commands work from any subfolder (as git does). Inside `one_call(root)`, the
    timeline that call opened."""
    opened = _CALL.get()
    if (opened is not None and opened[0] == str(root) and clock is time.time and store is None
            and discover and ancestors and not adopt):
        return opened[1]
    tl = Timeline(open_store(root, store=store, ancestors_too=ancestors, adopt=adopt), clock)
    if not discover or tl.active_id() is not None:
        return tl
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
    return tl


#: The workspace a `one_call` opened: (root as given, its timeline).
_CALL: ContextVar[tuple[str, Timeline] | None] = ContextVar("gitckpt_call", default=None)


@contextmanager
def one_call(root: str | Path, *, boundary: bool = True, lock_wait: float = 2.0,
             exact: bool = False) -> Iterator[DriftResult | None]:
    """One front-end call on `root`: the service functions called inside open the workspace
    once, and with `boundary` the changes made since the last call are first recorded as a
    `boundary` drift, under a hold of the lock that lasts the whole call, so the call's own
    snapshot is the boundary's (one scan per call). Yields that drift, or None if none was
    taken: no active task, or the store was busy for `lock_wait` seconds (the call then
    scans on its own). `exact`: the boundary is a full stat of the workspace, for calls that
    send or rewrite it (see `Store.snapshot`). Errors in opening or in the drift are the
    call's to meet later."""
    try:
        tl = open_timeline(root)
    except GitckptError:
        yield None  # the call itself will say what is wrong
        return
    token = _CALL.set((str(root), tl))
    try:
        with ExitStack() as held:
            yield _boundary(tl, held, lock_wait, exact) if boundary else None
    finally:
        _CALL.reset(token)


def _boundary(tl: Timeline, held: ExitStack, lock_wait: float,
              exact: bool) -> DriftResult | None:
    """The boundary drift of `one_call`; the lock stays held by `held` until the call ends."""
    try:
        tid = tl.resolve(None)
        held.enter_context(tl.store.one_scan(lock_wait))
        return tl.capture("boundary", tid, exact=exact)
    except GitckptError:
        return None
