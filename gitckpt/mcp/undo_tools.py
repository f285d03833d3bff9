"""The MCP tools that put files back or drop old drifts: restore, revert, compress."""

from __future__ import annotations

from gitckpt.core import operations as ops
from gitckpt.engine.compress import CompressResult
from gitckpt.mcp import text
from gitckpt.mcp.tools import Tool
from gitckpt.service import results as r

TOOLS = (
    Tool(ops.RestoreRequest, text.restore, (r.RestoreResult,), (False, True, True, False),
         exact=True),
    Tool(ops.RevertRequest, text.revert, (r.RevertResult,), (False, True, False, False),
         exact=True),
    Tool(ops.CompressRequest, text.compress, (CompressResult,), (False, True, True, False),
         core=False),
)
