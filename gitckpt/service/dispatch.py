"""Every request to the service function that answers it: the one table the front ends, and
the processes that serve them, dispatch through."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gitckpt.core import operations as ops
from gitckpt.core.request import Request
from gitckpt.engine.timeline import Clock
from gitckpt.service import api, events, search, settings
from gitckpt.service.workspace import Workspace, opened

R = TypeVar("R")

#: Each operation's function, `(workspace, request) -> result`.
HANDLERS: dict[type[Request[Any]], Callable[[Workspace, Any], Any]] = {
    ops.InitRequest: api.init, ops.SaveRequest: api.save, ops.ResumeRequest: api.resume,
    ops.LogRequest: api.log, ops.TasksRequest: api.tasks, ops.CaptureRequest: api.capture,
    ops.SwitchRequest: api.switch, ops.RunRequest: api.run, ops.DiffRequest: api.diff,
    ops.WhyRequest: api.why, ops.BlameRequest: api.blame, ops.ExplainRequest: api.explain,
    ops.SearchRequest: search.search, ops.ReportRequest: search.report,
    ops.RestoreRequest: api.restore, ops.RevertRequest: api.revert,
    ops.CompressRequest: api.compress, ops.ScopeRequest: api.scope, ops.AdoptRequest: api.adopt,
    ops.DoctorRequest: api.doctor, ops.RemoteSettingRequest: settings.config_remote,
    ops.TranscriptsRequest: settings.config_transcripts, ops.PushRequest: api.push,
    ops.FetchRequest: api.fetch, ops.ExportRequest: api.export, ops.ImportRequest: api.import_,
    ops.SessionStartRequest: events.session_start, ops.PromptRequest: events.prompted,
    ops.ToolRanRequest: events.tool_ran, ops.CompactingRequest: events.compacting,
    ops.StoppingRequest: events.stopping,
}


def perform(ws: Workspace, request: Request[R]) -> R:
    """The result of `request` on `ws`."""
    result: R = HANDLERS[type(request)](ws, request)
    return result


def call(folder: str | Path, request: Request[R], *, cwd: str | None = None,
         clock: Clock = time.time) -> R:
    """`request` on the workspace at `folder`, opened for it (`cwd`: the caller's folder, by
    default `folder`): what a front end does that records no boundary drift."""
    return perform(opened(folder, request, cwd=cwd, clock=clock), request)
