"""The MCP front end: gitckpt's tools over stdio (the official `mcp` SDK's server). A call's
arguments are read into the tool's request through its declaration (core/decode.py), a
boundary drift is recorded, the service answers, and the answer is the typed result's short
text (mcp/text.py) over its `to_dict()`, the object the CLI prints with `--json`; each tool's
input schema is its request's and its output schema its result types' (core/shape.py).
Nothing here writes to stdout.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import socket
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, cast

import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from gitckpt import __version__
from gitckpt.core import hints, shape
from gitckpt.core import progress as progressing
from gitckpt.core.decode import decode
from gitckpt.core.errors import GitckptError, InvalidArgument, NoActiveTask
from gitckpt.core.request import schema
from gitckpt.engine.watch import release_memory
from gitckpt.mcp import step_tools, transfer_tools, undo_tools
from gitckpt.mcp.args import lean
from gitckpt.mcp.handshake import INSTRUCTIONS, Held, Wire, claim
from gitckpt.mcp.text import error_result, full_results, printable
from gitckpt.mcp.tools import Tool
from gitckpt.mcp.wire import Out, Replay
from gitckpt.mcp.workspaces import BOUNDARY_WAIT, Workspaces, export_target, too_wide
from gitckpt.service.watchers import Watchers
from gitckpt.service.workspace import opened

if TYPE_CHECKING:
    from typing import BinaryIO

    from anyio import AsyncFile

log = logging.getLogger("gitckpt.mcp")

#: Every tool, in the order the server lists them.
TOOLS: tuple[Tool, ...] = (*step_tools.TOOLS, *undo_tools.TOOLS, *transfer_tools.TOOLS)

Context = ServerRequestContext[Any, Any]


class Rising:
    """One call's progress as MCP wants it: each notification's progress greater than the
    last (the spec's MUST). A call's phases each count from 0 on a meter of their own (an
    export scans, then writes objects, then bytes), so each phase continues from where the
    last one ended; a report that would not rise is not sent."""

    def __init__(self) -> None:
        self.base = 0.0  # where the current phase started
        self.phase: tuple[str, str] | None = None
        self.done = 0  # the current phase's count
        self.sent = 0.0

    def __call__(self, r: progressing.Report) -> tuple[float, float | None] | None:
        """(progress, total) to send for `r`, or None."""
        if self.phase != (r.what, r.unit) or r.done < self.done:
            self.base, self.phase = self.sent, (r.what, r.unit)
        self.done = r.done
        progress = self.base + r.done
        if progress <= self.sent:
            return None
        self.sent = progress
        return progress, (self.base + r.total if r.total else None)


def listed(tool: Tool, full: bool = False) -> types.Tool:
    """What `tools/list` says of `tool`: its request's input schema,
    with `full` its result types' output schema, and only the annotations that differ from
    the spec's defaults (a read-only tool says nothing of destruction or idempotence, which
    the spec defines for tools that write)."""
    inputs = schema(tool.request)  # (`root`, which every tool takes, is said once: INSTRUCTIONS)
    read_only, destructive, idempotent, open_world = tool.hints
    writes = not read_only
    return types.Tool(
        name=tool.name, description=" ".join(tool.request.summary.split()),
        input_schema=inputs,
        output_schema=lean(shape.schema(*tool.outputs), output=True) if full else None,
        annotations=ToolAnnotations(
            read_only_hint=True if read_only else None,
            destructive_hint=False if writes and not destructive else None,
            idempotent_hint=True if writes and idempotent else None,
            open_world_hint=False if not open_world else None))


class GitckptServer(Server[Any]):
    """The SDK's server, with the workspaces its calls act in (the runner and tests reach
    them)."""

    workspaces: Workspaces


def build_server(root: str | None = None, ws: Workspaces | None = None) -> GitckptServer:
    """The MCP server with every gitckpt tool; `root` is `gitckpt mcp --root` (or `ws`, the
    workspaces of a session the service runs)."""
    ws = ws if ws is not None else Workspaces(root)
    by_name = {t.name: t for t in TOOLS}
    every = os.environ.get("GITCKPT_MCP_TOOLS", "").strip().lower() == "all"
    tools = [listed(t, full_results()) for t in TOOLS if t.core or every]

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            return error_result(_unknown(params.name, sorted(by_name)))
        try:
            arguments = dict(params.arguments or {})
            root = arguments.pop("root", None)
            if root is not None and not isinstance(root, str):
                raise InvalidArgument(f"root takes a string, not {root!r:.40}.",
                                      f'For example {tool.name}(root="/home/me/project").')
            request = decode(tool.request, arguments, front="mcp", shared=("root",))
        except InvalidArgument as e:
            return error_result(e)
        return await answer(ws, tool, request, root, ctx)

    server = GitckptServer("gitckpt", version=__version__, instructions=INSTRUCTIONS,
                           on_list_tools=list_tools, on_call_tool=call_tool)
    server.workspaces = ws
    return server


def _unknown(name: str, names: list[str]) -> InvalidArgument:
    import difflib

    close = difflib.get_close_matches(name, names, 1, 0.5)
    guess = f' Did you mean "{close[0]}"?' if close else ""
    return InvalidArgument(f"Unknown tool {name!r}.{guess}",
                           f"gitckpt's tools are {', '.join(names)}; start with ckpt_resume.")


async def answer(ws: Workspaces, tool: Tool, request: Any, root: str | None,
                 ctx: Context | None) -> CallToolResult:
    """One call: its workspace resolved and opened once, its boundary drift, the service's
    result off the event loop, errors translated. The answer carries two views of the one
    typed result: the tool's text, short and in tool-call terms, and its `to_dict()` as
    structured content (the CLI's `--json`)."""
    try:
        path = await ws.resolve(root, ctx.session if ctx is not None else None)
        for name in tool.confined:  # a package goes, and comes from, where the workspace may
            request = _with(request, name,
                            export_target(path, getattr(request, name), ws.export_dir))
        whole = full_results() or tool.whole(request)
        rising = Rising()

        def report(r: progressing.Report) -> None:
            # a no-op unless the client sent a progress token with its request
            sent = rising(r)
            if sent is None or ctx is None:
                return
            try:
                anyio.from_thread.run(ctx.session.report_progress, *sent, r.message())
            except Exception:  # progress is a courtesy: the call goes on without it
                log.debug("progress not sent", exc_info=True)

        def work() -> tuple[dict[str, Any] | None, str]:
            with progressing.reporting(report if ctx is not None else None):
                workspace = opened(path, request, cwd=path)
                held = workspace.boundary(lock_wait=BOUNDARY_WAIT, exact=tool.exact) \
                    if tool.boundary else nullcontext(None)
                with held as d:
                    if d is not None and d.recorded:
                        log.info("boundary drift %s: %d paths", d.commit[:7],
                                 len(d.changes.paths()))
                    result = tool.perform(workspace, request)
                    said = printable(tool.text(result))
                    content = printable(result.to_dict()) if whole else None
            try:
                ws.watch(path)
            except Exception:  # the call succeeded; a watcher that cannot start is logged
                log.exception("cannot start the watcher for %s", path)
            # A long-lived server gives a call's memory back at once: pygit2's Repository is
            # a reference cycle (its `branches`), freed only by the cycle collector, and
            # glibc keeps freed pages. Only the young generations: cheap.
            gc.collect(1)
            release_memory()
            return content, said

        content, said = await anyio.to_thread.run_sync(work)
        return CallToolResult(content=[TextContent(type="text", text=said)],
                              structured_content=content)
    except NoActiveTask as e:
        if tool.request.op != "resume":
            return error_result(e)
        # No task yet is a normal answer to a resume, not an error: say how to start.
        said = ("No active task in this workspace. For a job of more than a few steps, start "
                f"one: {hints.call('init', name=hints.BLANK, goal=hints.BLANK).spell(hints.MCP)}"
                f". Other tasks of this store: {hints.call('tasks').spell(hints.MCP)}.")
        return CallToolResult(content=[TextContent(type="text", text=said)],
                              structured_content={"found": False} if full_results() else None)
    except GitckptError as e:
        return error_result(e)
    except Exception as e:  # a bug: the agent still gets a result it can read
        log.exception("tool failed")
        return CallToolResult(
            content=[TextContent(type="text", text=(
                f"internal error ({type(e).__name__}: {e}); this is a bug in gitckpt.\nhint: "
                "the details are in the server's log (mcp.log in the store's state folder)."))],
            is_error=True)


def _with(request: Any, name: str, value: str) -> Any:
    from dataclasses import replace

    return replace(request, **{name: value})


def run(root: str | None = None, wire: Wire | None = None, held: Held | None = None,
        on_exit: Callable[[], None] | None = None) -> None:
    """Serve over stdio until the client goes away. `wire` and `held` come from
    mcp_handshake (the first message read, and maybe answered, before the SDK loaded); the
    watcher starts after the handshake."""
    leave_on_signals(on_exit)
    if root is not None and not os.path.isabs(root) and "$" not in root:
        root = os.path.abspath(root)  # (an unexpanded $VAR is refused at the first call)
    server = build_server(root)
    ws = server.workspaces
    try:
        first = (ws.configured() or [os.getcwd()])[0]
        if "$" not in first and not too_wide(os.path.realpath(first)):
            ws.watch(first)
        # Always through our wire (mcp_wire): it answers what the SDK would drop.
        anyio.run(_serve, server, wire or claim(), held or Held())
    except* (BrokenPipeError, ConnectionResetError):
        # The client closed its end of stdout: the session is over, as when it closes stdin
        # (what the other tasks raised, if anything, is still raised).
        log.info("the client stopped reading; the server ends")
    finally:
        ws.close()


def serve_session(conn: socket.socket, reader: BinaryIO, header: dict[str, Any],
                  watchers: Watchers) -> None:
    """An MCP session the service runs for a bridge (mcp/bridge.py) over `conn` (read through
    `reader`, which may hold the first lines already), until the bridge goes. `header` is the
    bridge's: its folder, `--root`, GITCKPT_ROOT and GITCKPT_EXPORT_DIR, the lines it read
    while it answered the handshake, and the ids it answered (the SDK's second answers to
    them are dropped)."""
    def text(name: str) -> str | None:
        value = header.get(name)
        return value if isinstance(value, str) and value else None

    cwd = text("cwd") or "/"
    ws = Workspaces(text("root"), cwd=cwd, fixed=text("fixed"), export_dir=text("export_dir"),
                    watchers=watchers)
    server = build_server(ws=ws)
    lines = [str(x).encode() for x in header.get("lines") or [] if isinstance(x, str)]
    answered: set[object] = {x for x in header.get("answered") or []
                             if isinstance(x, (str, int))}
    held = Held(lines, answered)
    # the names this session's host gives the tools, in every text of the session's calls
    # (anyio's worker threads run in a copy of this context)
    hints.HOST_PREFIX.set(text("prefix") or "")
    first = (ws.configured() or [cwd])[0]
    if "$" not in first and os.path.isabs(first) and not too_wide(os.path.realpath(first)):
        watchers.watch(first)
    # (SocketIO is a raw binary file: what Out writes)
    wire = Wire(reader, cast("BinaryIO", conn.makefile("wb", buffering=0)))
    try:
        anyio.run(_serve, server, wire, held)
    except* (BrokenPipeError, ConnectionResetError, OSError):
        log.info("an MCP session's bridge went away")


def leave_on_signals(on_exit: Callable[[], object] | None) -> None:
    """SIGINT or SIGTERM, a host ending its session: `on_exit`,
    then the process, at once. The SDK reads stdin in a thread that an orderly exit would wait
    on for ever (SIGINT was once ignored, and SIGTERM left the socket behind)."""
    def leave(signum: int, frame: object) -> None:
        try:
            if on_exit is not None:
                on_exit()
        finally:
            os._exit(0)

    try:
        signal.signal(signal.SIGINT, leave)
        signal.signal(signal.SIGTERM, leave)
    except ValueError:  # not the main thread (a test's server): the caller ends it
        pass


async def _serve(server: GitckptServer, wire: Wire, held: Held) -> None:
    from mcp.server.stdio import stdio_server

    out = Out(wire.out, held)
    # Replay and Out are the async text files the SDK reads and writes (readline, iteration,
    # write, flush), as anyio's AsyncFile is
    inp = cast("AsyncFile[str]", Replay(held.lines, wire.inp, out))
    async with stdio_server(stdin=inp, stdout=cast("AsyncFile[str]", out)) as (read, write):
        await server.run(read, write, server.create_initialization_options())
