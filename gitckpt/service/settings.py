"""gitckpt's own settings of a workspace, kept in its state (never in git's config): the
remote push and fetch use when given none, and whether steps keep their sessions' transcripts."""

from __future__ import annotations

from pathlib import Path

from gitckpt.service.results import RemoteSetting, TranscriptSetting
from gitckpt.service.workspace import open_timeline


def set_remote(root: str | Path, remote: str | None) -> RemoteSetting:
    """Set (None: forget) the remote push and fetch use when given none; kept in gitckpt's
    state for this workspace, never in git's config."""
    from gitckpt.transfer import remotes

    store = open_timeline(root, discover=False).store
    return RemoteSetting(remotes.set_default(store, remote))


def remote_setting(root: str | Path) -> RemoteSetting:
    from gitckpt.transfer import remotes

    store = open_timeline(root, discover=False).store
    return RemoteSetting(*remotes.shown_default(store))


def transcripts(root: str | Path, on: bool | None = None) -> TranscriptSetting:
    """Show, or turn on or off, the keeping of each step's transcript segments (redacted,
    under refs/checkpoints/<task>/transcripts/<n>); with what the store holds of them."""
    from gitckpt.engine import sessions

    store = open_timeline(root, discover=False).store
    if on is not None:
        sessions.set_enabled(store, on)
    kept = sessions.kept(store)
    return TranscriptSetting(sessions.enabled(store), len(kept), sum(kept.values()))
