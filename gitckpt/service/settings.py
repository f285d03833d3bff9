"""gitckpt's own settings of a workspace, kept in its state (never in git's config): the
remote push and fetch use when given none, and whether steps keep their sessions' transcripts."""

from __future__ import annotations

from gitckpt.core.operations import RemoteSettingRequest, TranscriptsRequest
from gitckpt.service.results import RemoteSetting, TranscriptSetting
from gitckpt.service.workspace import Workspace


def config_remote(ws: Workspace, r: RemoteSettingRequest) -> RemoteSetting:
    """Show the remote push and fetch use when given none; set it (`name`) or forget it
    (`unset`), in gitckpt's state for this workspace, never in git's config."""
    from gitckpt.transfer import remotes

    if r.name is None and not r.unset:
        return RemoteSetting(*remotes.shown_default(ws.store))
    return RemoteSetting(remotes.set_default(ws.store, None if r.unset else r.name))


def config_transcripts(ws: Workspace, r: TranscriptsRequest) -> TranscriptSetting:
    """Show, or turn on or off, the keeping of each step's transcript segments (redacted,
    under refs/checkpoints/<task>/transcripts/<n>); with what the store holds of them."""
    from gitckpt.engine import sessions

    if r.state is not None:
        sessions.set_enabled(ws.store, r.state == "on")
    kept = sessions.kept(ws.store)
    return TranscriptSetting(sessions.enabled(ws.store), len(kept), sum(kept.values()))
