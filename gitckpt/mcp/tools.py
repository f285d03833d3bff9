"""An MCP tool as a registration: its request (the tool's name, description and input schema
come from the declaration, core/operations.py), the text an agent reads of its result, the
result types its output schema is made of, what it does to the world, and how a call of it is
made. The tool groups (step_tools, undo_tools, transfer_tools) are lists of these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitckpt.core.request import Request
from gitckpt.service.dispatch import perform
from gitckpt.service.workspace import Workspace


def never(request: object) -> bool:
    return False


@dataclass(frozen=True)
class Tool:
    """One tool. `hints` are MCP's annotations (read_only, destructive, idempotent,
    open_world); a read-only tool writes nothing, not even a boundary drift. `boundary`: the
    changes made since the last call are first recorded as a drift; `exact`: that drift
    stats every file (a call that sends or rewrites the workspace). `perform` answers the
    request (default: the service's function of it); `text` is what the agent reads of the
    answer; `whole`: the answer carries the result's whole object as structured content
    even without GITCKPT_MCP_RESULTS=full (text.full_results). `confined` names path inputs
    that must lie inside the call's workspace."""

    request: type[Request[Any]]
    text: Callable[[Any], str]
    outputs: tuple[type, ...]
    hints: tuple[bool, bool, bool, bool]
    boundary: bool = True
    exact: bool = False
    perform: Callable[[Workspace, Any], Any] = perform
    whole: Callable[[Any], bool] = never
    confined: tuple[str, ...] = ()
    core: bool = True

    @property
    def name(self) -> str:
        return str(self.request.tool)


READ_ONLY = (True, False, True, False)
