"""The MCP tools that move a task elsewhere: push, fetch, export, import."""

from __future__ import annotations

from gitckpt.core import operations as ops
from gitckpt.mcp import text
from gitckpt.mcp.tools import Tool
from gitckpt.transfer.fetch import FetchResult
from gitckpt.transfer.package import ExportResult, ImportResult
from gitckpt.transfer.push import PushResult

TOOLS = (
    Tool(ops.PushRequest, text.push, (PushResult,), (False, False, True, True), exact=True,
         core=False),
    Tool(ops.FetchRequest, text.fetch, (FetchResult,), (False, False, True, True), core=False),
    # a package is written to, and read from, where the workspace may go
    Tool(ops.ExportRequest, text.export, (ExportResult,), (False, False, False, False),
         exact=True, confined=("to",), core=False),
    Tool(ops.ImportRequest, text.import_, (ImportResult,), (False, False, False, False),
         exact=True, confined=("package",), core=False),
)
