"""What gitckpt can be asked: one request per operation, each declared once (core/request.py),
by family in core/ops/. The CLI's commands and the MCP tools are derived from these classes,
and so are the calls a hint suggests (core/hints.py) and the forms a request takes between
processes. A class's docstring is its CLI command's help; `summary` is its MCP tool's
description."""

from __future__ import annotations

from typing import Any

from gitckpt.core.inputs import CommandRun, FileNote, PlanEntry, PlanUpdate, ToolCall
from gitckpt.core.ops.events import (
    CommandCall,
    CompactingRequest,
    HookCall,
    PromptRequest,
    SessionStartRequest,
    StoppingRequest,
    ToolRanRequest,
)
from gitckpt.core.ops.fields import KINDS
from gitckpt.core.ops.history import (
    BlameRequest,
    DiffRequest,
    ExplainRequest,
    ReportRequest,
    SearchRequest,
    WhyRequest,
)
from gitckpt.core.ops.steps import (
    CaptureRequest,
    InitRequest,
    LogRequest,
    ResumeRequest,
    RunRequest,
    SaveRequest,
    SwitchRequest,
    TasksRequest,
    WatchRequest,
)
from gitckpt.core.ops.transfer import ExportRequest, FetchRequest, ImportRequest, PushRequest
from gitckpt.core.ops.undo import CompressRequest, RestoreRequest, RevertRequest
from gitckpt.core.ops.upkeep import (
    AdoptRequest,
    DoctorRequest,
    RemoteSettingRequest,
    ScopeRequest,
    TranscriptsRequest,
)
from gitckpt.core.request import Request

#: Every operation's request class, by its `op`.
OPERATIONS: dict[str, type[Request[Any]]] = {r.op: r for r in (
    InitRequest, SaveRequest, ResumeRequest, LogRequest, TasksRequest, CaptureRequest,
    SwitchRequest, RunRequest, WatchRequest, DiffRequest, WhyRequest, BlameRequest,
    ExplainRequest, SearchRequest, ReportRequest, RestoreRequest, RevertRequest,
    CompressRequest, ScopeRequest, AdoptRequest, DoctorRequest, RemoteSettingRequest,
    TranscriptsRequest, PushRequest, FetchRequest, ExportRequest, ImportRequest,
    SessionStartRequest, PromptRequest, ToolRanRequest, CompactingRequest, StoppingRequest)}

#: The MCP tools, in the order the server lists them, each with its request class.
TOOLS: tuple[type[Request[Any]], ...] = (
    InitRequest, SaveRequest, ResumeRequest, LogRequest, DiffRequest, WhyRequest,
    SearchRequest, CaptureRequest, SwitchRequest, RestoreRequest, RevertRequest,
    CompressRequest, PushRequest, FetchRequest, ExportRequest, ImportRequest)


#: What a client process hands to a running gitckpt (not operations of their own).
CALLS: tuple[type[Request[Any]], ...] = (HookCall, CommandCall)

__all__ = [
    "CALLS",
    "KINDS",
    "OPERATIONS",
    "TOOLS",
    "AdoptRequest",
    "BlameRequest",
    "CaptureRequest",
    "CommandCall",
    "CommandRun",
    "CompactingRequest",
    "CompressRequest",
    "DiffRequest",
    "DoctorRequest",
    "ExplainRequest",
    "ExportRequest",
    "FetchRequest",
    "FileNote",
    "HookCall",
    "ImportRequest",
    "InitRequest",
    "LogRequest",
    "PlanEntry",
    "PlanUpdate",
    "PromptRequest",
    "PushRequest",
    "RemoteSettingRequest",
    "ReportRequest",
    "RestoreRequest",
    "ResumeRequest",
    "RevertRequest",
    "RunRequest",
    "SaveRequest",
    "ScopeRequest",
    "SearchRequest",
    "SessionStartRequest",
    "StoppingRequest",
    "SwitchRequest",
    "TasksRequest",
    "ToolCall",
    "ToolRanRequest",
    "TranscriptsRequest",
    "WatchRequest",
    "WhyRequest",
]
