"""The MCP tools of a task's steps: init, save, resume, log, diff, why, search, capture,
switch."""

from __future__ import annotations

from typing import Any

from gitckpt.core import operations as ops
from gitckpt.engine.records import DriftResult, SaveResult, TaskSummary
from gitckpt.engine.search import SearchResult
from gitckpt.engine.why import WhyResult
from gitckpt.mcp import text
from gitckpt.mcp.tools import READ_ONLY, Tool
from gitckpt.service import api
from gitckpt.service import results as r
from gitckpt.service.dispatch import perform
from gitckpt.service.workspace import Workspace


def _log(ws: Workspace, request: ops.LogRequest) -> Any:
    """ckpt_log: the task's steps, or (all_tasks) the tasks."""
    if request.all_tasks:
        return api.tasks(ws, ops.TasksRequest())
    return perform(ws, request)


def _log_text(result: Any) -> str:
    if isinstance(result, r.TasksResult):
        return text.tasks(result)
    return text.step(result) if result.full else text.log(result)


TOOLS = (
    Tool(ops.InitRequest, text.init, (r.InitResult,), (False, False, False, False),
         boundary=False),
    Tool(ops.SaveRequest, text.save, (SaveResult,), (False, False, True, False)),
    Tool(ops.ResumeRequest, text.resume, (r.ResumeResult,), READ_ONLY, boundary=False,
         whole=lambda request: request.format == "full"),
    Tool(ops.LogRequest, _log_text, (r.LogResult, r.TasksResult), READ_ONLY, boundary=False,
         perform=_log),
    Tool(ops.DiffRequest, text.diff, (r.DiffResult,), READ_ONLY, boundary=False),
    Tool(ops.WhyRequest, text.why, (WhyResult,), READ_ONLY, boundary=False),
    Tool(ops.SearchRequest, text.search, (SearchResult,), READ_ONLY, boundary=False),
    Tool(ops.CaptureRequest, text.capture, (DriftResult,), (False, False, True, False),
         boundary=False, core=False),
    Tool(ops.SwitchRequest, text.switch, (TaskSummary,), (False, False, True, False),
         core=False),
)
