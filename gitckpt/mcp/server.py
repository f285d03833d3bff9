"""The MCP front end: gitckpt's tools over stdio (official `mcp` SDK). Each tool parses its
arguments, records a boundary drift, calls `service`, and answers with the typed result's short
text (mcp/text.py) over its `to_dict()`, the object the CLI prints with `--json`; each tool's
output schema is its result types' (core/shape.py). Nothing here writes to stdout.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
from collections.abc import Callable
from typing import Annotated, Literal

import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from gitckpt import __version__
from gitckpt.core import hints
from gitckpt.core import progress as progressing
from gitckpt.core.errors import GitckptError, NoActiveTask
from gitckpt.engine.watch import release_memory
from gitckpt.mcp import text as mcp_text
from gitckpt.mcp.args import annotate, check_calls, lean_schemas, publish_outputs
from gitckpt.mcp.handshake import INSTRUCTIONS, Held, Wire, claim
from gitckpt.mcp.inputs import CommandIn, FileIn, NewPlanEntry, PlanEntry
from gitckpt.mcp.text import error_result, printable
from gitckpt.mcp.wire import Out, Replay
from gitckpt.mcp.workspaces import BOUNDARY_WAIT, Workspaces, export_target, too_wide
from gitckpt.service import api as service

log = logging.getLogger("gitckpt.mcp")

# root, task, paths, apply, expect and confirm mean the same in every tool: the server's
# instructions say it once.
Root = str | None
TaskArg = str | None
Paths = list[str]  # shared, like root and task
Remote = Annotated[str | None, Field(description="Git remote or URL.")]


#: Calls that send or rewrite the workspace: their boundary drift stats every file, since
#: the watcher's events cannot show everything (see Store.snapshot).
EXACT = frozenset({service.restore, service.revert, service.export, service.push,
                   service.import_})


#: Clients that show the model a result's structured content instead of its text (Claude
#: Code hands over JSON.stringify(structuredContent) whenever there is one): they get the
#: text and the few keys an agent acts on (each result's `brief`), within the text's budget.
STRUCTURED_READERS = frozenset({"claude-code"})


def reads_structured(ctx: Context | None) -> bool:
    """Whether this call's answer should be brief: GITCKPT_MCP_RESULTS=brief or full says so,
    else the client's declared name does."""
    setting = os.environ.get("GITCKPT_MCP_RESULTS", "").strip().lower()
    if setting in ("brief", "full"):
        return setting == "brief"
    try:
        params = ctx.session.client_params if ctx is not None else None
        name = params.client_info.name if params is not None else None
    except Exception:  # no session (a direct call in a test): the whole object
        return False
    return name in STRUCTURED_READERS


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


class ToolCall:
    """One tool call of the server's workspaces: `await call(root, ctx, service_fn, ...)`."""

    def __init__(self, ws: Workspaces) -> None:
        self.ws = ws

    async def __call__(self, root: str | None, ctx: Context | None, fn, *args,
                       boundary: bool = True, whole: bool = False, text,
                       **kwargs) -> CallToolResult:
        """Resolve, record the boundary drift, run `fn` off the event loop, translate errors.
        The answer carries two views of the one typed result: `text(result)`, short and in
        tool-call terms, and its `to_dict()` as structured content (the CLI's `--json`)."""
        try:
            path = await self.ws.resolve(root, ctx)
            brief = not whole and reads_structured(ctx)
            rising = Rising()

            def report(r: progressing.Report) -> None:
                # a no-op unless the client sent a progress token with its request
                sent = rising(r)
                if sent is None:
                    return
                try:
                    anyio.from_thread.run(ctx.report_progress, *sent, r.message())
                except Exception:  # progress is a courtesy: the call goes on without it
                    log.debug("progress not sent", exc_info=True)

            def work() -> tuple[dict, str]:
                with progressing.reporting(report if ctx is not None else None), \
                        service.one_call(path, boundary=boundary, lock_wait=BOUNDARY_WAIT,
                                         exact=fn in EXACT) as d:
                    if d is not None and d.recorded:
                        log.info("boundary drift %s: %d paths", d.commit[:7],
                                 len(d.changes.paths()))
                    result = fn(path, *args, **kwargs)
                    said = printable(text(result))
                    content = printable(result.to_dict())
                    if brief:
                        content = {"text": said, **{k: content[k] for k in result.brief
                                                    if k in content}}
                    answer = content, said
                try:
                    self.ws.watch(path)
                except Exception:  # the call succeeded; a watcher that cannot start is logged
                    log.exception("cannot start the watcher for %s", path)
                # A long-lived server gives a call's memory back at once: pygit2's Repository
                # is a reference cycle (its `branches`), freed only by the cycle collector,
                # and glibc keeps freed pages. Only the young generations: cheap.
                gc.collect(1)
                release_memory()
                return answer

            content, said = await anyio.to_thread.run_sync(work)
            return CallToolResult(content=[TextContent(type="text", text=said)],
                                  structured_content=content)
        except GitckptError as e:
            return error_result(e)
        except Exception as e:  # a bug: the agent still gets a result it can read
            log.exception("tool failed")
            raise ToolError(f"internal error ({type(e).__name__}: {e}); this is a bug in "
                            "gitckpt.\nhint: the details are in the server's log (mcp.log "
                            "in the store's state folder).") from e


def build_server(root: str | None = None) -> MCPServer:
    """The MCP server with every gitckpt tool; `root` is `gitckpt mcp --root`."""
    ws = Workspaces(root)
    server = MCPServer("gitckpt", instructions=INSTRUCTIONS, version=__version__)
    server.workspaces = ws  # type: ignore[attr-defined]  (tests and the runner reach it)
    call = ToolCall(ws)
    for register in (_step_tools, _undo_tools, _transfer_tools):
        register(server, call)
    check_calls(server, error_result)
    lean_schemas(server)
    publish_outputs(server, _outputs())
    annotate(server, ANNOTATIONS)
    return server


#: The most lines ckpt_why answers for at once (a whole large file would be megabytes).
SEARCH_HITS = 10  # a search's answer: the best hits, one line each
WHY_LINES = 200

#: What each tool does to the world, as MCP's annotations say it (hosts decide from them which
#: calls to confirm and which may run side by side). Only what differs from the spec's
#: defaults (not read-only, destructive, not idempotent, open world) is sent; a read-only
#: tool writes nothing at all (no boundary drift either), as tests/mcp/test_server.py checks.
#: (read_only, destructive, idempotent, open_world)
ANNOTATIONS: dict[str, tuple[bool, bool, bool, bool]] = {
    "ckpt_resume": (True, False, True, False), "ckpt_log": (True, False, True, False),
    "ckpt_diff": (True, False, True, False), "ckpt_why": (True, False, True, False),
    "ckpt_search": (True, False, True, False),
    "ckpt_init": (False, False, False, False), "ckpt_save": (False, False, True, False),
    "ckpt_capture": (False, False, True, False), "ckpt_switch": (False, False, True, False),
    "ckpt_restore": (False, True, True, False), "ckpt_revert": (False, True, False, False),
    "ckpt_compress": (False, True, True, False),
    "ckpt_push": (False, False, True, True), "ckpt_fetch": (False, False, True, True),
    "ckpt_export": (False, False, False, False), "ckpt_import": (False, False, False, False),
}


def _outputs() -> dict[str, tuple[type, ...]]:
    """Each tool's result types: its output schema is theirs (core/shape.py)."""
    from gitckpt.engine.compress import CompressResult
    from gitckpt.engine.records import DriftResult, SaveResult, TaskSummary
    from gitckpt.engine.search import SearchResult
    from gitckpt.engine.why import WhyResult
    from gitckpt.service import results as r
    from gitckpt.transfer.fetch import FetchResult
    from gitckpt.transfer.package import ExportResult, ImportResult
    from gitckpt.transfer.push import PushResult

    return {"ckpt_init": (r.InitResult,), "ckpt_save": (SaveResult,),
            "ckpt_resume": (r.ResumeResult,), "ckpt_log": (r.LogResult, r.TasksResult),
            "ckpt_diff": (r.DiffResult,), "ckpt_why": (WhyResult,),
            "ckpt_search": (SearchResult,),
            "ckpt_capture": (DriftResult,),
            "ckpt_switch": (TaskSummary,), "ckpt_restore": (r.RestoreResult,),
            "ckpt_revert": (r.RevertResult,), "ckpt_compress": (CompressResult,),
            "ckpt_push": (PushResult,), "ckpt_fetch": (FetchResult,),
            "ckpt_export": (ExportResult,), "ckpt_import": (ImportResult,)}


def _step_tools(server: MCPServer, call: ToolCall) -> None:
    """The tools of a task's steps: start, save, resume, read the history, capture, switch."""
    @server.tool()
    async def ckpt_init(
            name: Annotated[str, Field(description="Short task name.")],
            goal: Annotated[str, Field(description="What done looks like.")] = "",
            constraints: Annotated[str, Field(description="Rules to keep.")] = "",
            exclude: Annotated[list[str], Field(description=".gitignore patterns to leave "
                                                            "out.")] = [],  # noqa: B006
            plan: Annotated[list[NewPlanEntry], Field(description="Checklist.")] = [],  # noqa: B006
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Start a task: step 0 snapshots the workspace; the task becomes active. Once per
        job of several steps."""
        return await call(root, ctx, service.init, name, goal=goal, constraints=constraints,
                          exclude=exclude, plan=[p.as_item() for p in plan], boundary=False,
                          text=mcp_text.init)

    @server.tool()
    async def ckpt_save(
            title: Annotated[str, Field(description="The step, in a few words.")],
            conclusion: Annotated[str, Field(description="What is now true or learned.")] = "",
            next: Annotated[str | list[str], Field(description="Next action(s), in order.")]
            = "",
            description: Annotated[str, Field(description="Longer notes.")] = "",
            verified: Annotated[list[str], Field(description="Checks that passed.")] = [],  # noqa: B006
            commands: Annotated[list[CommandIn], Field(description="Commands run on these "
                                                                   "files.")] = [],  # noqa: B006
            files: Annotated[list[FileIn], Field(description="Files that matter.")] = [],  # noqa: B006
            open_questions: Annotated[list[str], Field(description="Newly open.")] = [],  # noqa: B006
            answered: Annotated[list[str], Field(description="Questions now answered.")] = [],  # noqa: B006
            decisions: Annotated[list[str], Field(description="Choices made.")] = [],  # noqa: B006
            gotchas: Annotated[list[str], Field(description="Traps to remember.")] = [],  # noqa: B006
            drop: Annotated[list[str], Field(description="Retire decisions, gotchas or "
                                                         "questions.")] = [],  # noqa: B006
            plan: Annotated[list[PlanEntry], Field(description="Items to update, by "
                                                               "text.")] = [],  # noqa: B006
            close: Annotated[bool, Field(description="Last step: end the task.")] = False,
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Save a finished step: a commit of the workspace and what it meant. After every
        step you could report in one sentence. Decisions, gotchas and questions accumulate
        until answered or dropped."""
        return await call(root, ctx, service.save, title, conclusion=conclusion, next=next,
                          description=description, verified=verified,
                          commands=[c.model_dump(exclude_none=True) for c in commands],
                          files=[f.model_dump() for f in files],
                          open_questions=open_questions, answered=answered,
                          decisions=decisions, gotchas=gotchas, drop=drop,
                          plan=[p.as_item() for p in plan],
                          plan_new=[p.item for p in plan if p.add], close=close, task=task,
                          text=mcp_text.save)

    @server.tool()
    async def ckpt_resume(task: TaskArg = None,
                          format: Annotated[Literal["brief", "full"], Field(
                              description="full: everything, no length limit.")] = "brief",
                          root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """The handoff: goal, step, conclusions, next, questions, unsaved files. Read-only."""
        result = await call(root, ctx, service.resume, task=task, voice="mcp", boundary=False,
                            whole=format == "full",
                            full=format == "full", text=mcp_text.resume)
        if not result.is_error or (result.structured_content or {}).get("error") != \
                NoActiveTask.code:
            return result
        # No task yet is a normal answer, not an error: say how to start.
        text = ("No active task in this workspace. For a job of more than a few steps, start "
                f"one: {hints.call('init', name=hints.BLANK, goal=hints.BLANK).spell(hints.MCP)}."
                f" Other tasks of this store: {hints.call('tasks').spell(hints.MCP)}.")
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"found": False, "text": text})

    @server.tool()
    async def ckpt_log(
            task: TaskArg = None,
            limit: Annotated[int, Field(ge=1, description="Steps shown.")] = 10,
            before: Annotated[int | None, Field(ge=1, description="Page: steps older than "
                                                                  "this.")] = None,
            step: Annotated[int | None, Field(ge=0, description="One step in full.")] = None,
            all_tasks: Annotated[bool, Field(description="List the tasks.")] = False,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """A task's steps, newest first, one line each. Read-only."""
        if all_tasks:
            return await call(root, ctx, service.tasks, boundary=False, text=mcp_text.tasks)
        return await call(root, ctx, service.log, task=task, limit=limit, before=before,
                          step=step, boundary=False,
                          text=mcp_text.log if step is None else mcp_text.step)

    @server.tool()
    async def ckpt_diff(
            base: Annotated[str, Field(description="Step number, commit id or 'live'.")],
            target: Annotated[str, Field(description="Default: live.")] = "live",
            paths: Paths = [],  # noqa: B006
            patch: Annotated[bool, Field(description="Add the patch.")] = False,
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Paths changed between two points, with line counts. Read-only."""
        return await call(root, ctx, service.diff, base, target, paths=paths, patch=patch,
                          task=task, boundary=False, text=mcp_text.diff)

    @server.tool()
    async def ckpt_why(
            path: Annotated[str, Field(description="PATH[:LINE[-LINE]]")],
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Who wrote these lines and why: checkpoint, tool call, prompt, step, checks.
        Read-only."""
        return await call(root, ctx, service.why, path, task=task, limit=WHY_LINES,
                          boundary=False, text=mcp_text.why)

    @server.tool()
    async def ckpt_search(
            query: Annotated[str, Field(description="Words, all of them.")],
            task: TaskArg = None,
            kind: Annotated[list[str] | None, Field(description="decision, command, ...")] = None,
            since: Annotated[str | None, Field(description="7d, a date")] = None,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Was it tried before? Every task's notes, best first. Read-only."""
        return await call(root, ctx, service.search, query, task=task, kinds=kind or (),
                          since=since, limit=SEARCH_HITS, boundary=False, text=mcp_text.search)

    @server.tool()
    async def ckpt_capture(task: TaskArg = None, root: Root = None,
                           ctx: Context | None = None) -> CallToolResult:
        """Record the files now as a drift, e.g. before something risky."""
        return await call(root, ctx, service.capture, task=task, boundary=False,
                          text=mcp_text.capture)

    @server.tool()
    async def ckpt_switch(task: str,
                          root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Make a suspended task active; the active one is suspended."""
        return await call(root, ctx, service.switch, task, text=mcp_text.switch)


def _undo_tools(server: MCPServer, call: ToolCall) -> None:
    """The tools that put files back or drop old drifts: restore, revert, compress."""
    @server.tool()
    async def ckpt_restore(
            target: Annotated[str, Field(description="Step number, head, or commit id.")],
            apply: bool = False, paths: Paths = [],  # noqa: B006
            task: TaskArg = None,
            expect: str | None = None, confirm: bool = False,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Put files back as a step or drift had them; previews unless apply (then a safety
        copy first)."""
        return await call(root, ctx, service.restore, target, apply=apply, paths=paths,
                          task=task, expect=expect, confirm=confirm, text=mcp_text.restore)

    @server.tool()
    async def ckpt_revert(
            target: Annotated[str, Field(description="Step, drift id, or A..B.")],
            apply: bool = False, paths: Paths = [],  # noqa: B006
            conflicts: Annotated[Literal["markers", "ours", "theirs"] | None,
                                 Field(description="Settles conflicts.")] = None,
            task: TaskArg = None, expect: str | None = None, confirm: bool = False,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Undo one step's or drift's changes, keeping all later work (3-way merge);
        previews unless apply."""
        return await call(root, ctx, service.revert, target, apply=apply, paths=paths,
                          task=task, expect=expect, conflicts=conflicts, confirm=confirm,
                          text=mcp_text.revert)

    @server.tool()
    async def ckpt_compress(
            keep: Annotated[str, Field(description="Keep newer drifts (7d, 12h).")] = "7d",
            dry_run: Annotated[bool, Field(description="Only report.")] = False,
            min_steps: Annotated[int, Field(ge=0, description="Keep those of the newest N "
                                                              "steps.")] = 3,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Drop old drifts (never steps or safety copies)."""
        return await call(root, ctx, service.compress, keep=keep, min_steps=min_steps,
                          dry_run=dry_run, text=mcp_text.compress)


def _transfer_tools(server: MCPServer, call: ToolCall) -> None:
    """The tools that move a task elsewhere: push, fetch, export, import."""
    @server.tool()
    async def ckpt_push(
            remote: Remote = None, task: TaskArg = None,
            as_id: Annotated[str | None, Field(description="Push as this id.")] = None,
            confirm: Annotated[bool, Field(description="First push there.")] = False,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Push a task's checkpoints to a git remote."""
        return await call(root, ctx, service.push, remote, task=task, as_id=as_id,
                          confirm=confirm, text=mcp_text.push)

    @server.tool()
    async def ckpt_fetch(
            remote: Remote = None, task: TaskArg = None,
            as_id: Annotated[str | None, Field(description="As this new id.")] = None,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """List a git remote's tasks, or fetch one."""
        return await call(root, ctx, service.fetch, remote, task=task, as_id=as_id,
                          text=mcp_text.fetch)

    @server.tool()
    async def ckpt_export(
            to: Annotated[str, Field(description="A new folder.")],
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Write a task as a package that ckpt_import continues elsewhere."""
        try:
            path = await call.ws.resolve(root, ctx)
            dest = export_target(path, to)
        except GitckptError as e:
            return error_result(e)
        return await call(path, ctx, service.export, dest, task=task, text=mcp_text.export)

    @server.tool()
    async def ckpt_import(
            package: Annotated[str, Field(description="The package folder.")],
            as_id: Annotated[str | None, Field(description="Task id if taken.")] = None,
            root: Root = None, ctx: Context | None = None) -> CallToolResult:
        """Continue a packaged task here, checked before any write."""
        try:
            path = await call.ws.resolve(root, ctx)
            source = export_target(path, package)  # packages come from where they may go
        except GitckptError as e:
            return error_result(e)
        return await call(path, ctx, service.import_, source, as_id=as_id,
                          text=mcp_text.import_)


def run(root: str | None = None, wire: Wire | None = None, held: Held | None = None,
        on_exit: Callable[[], None] | None = None) -> None:
    """Serve over stdio until the client goes away. `wire` and `held` come from
    mcp_handshake (the first message read, and maybe answered, before the SDK loaded); the
    watcher starts after the handshake."""
    leave_on_signals(on_exit)
    if root is not None and not os.path.isabs(root) and "$" not in root:
        root = os.path.abspath(root)  # (an unexpanded $VAR is refused at the first call)
    server = build_server(root)
    ws: Workspaces = server.workspaces  # type: ignore[attr-defined]
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


def leave_on_signals(on_exit: Callable[[], object] | None) -> None:
    """SIGINT or SIGTERM, a host ending its session: `on_exit` (the relay's socket goes),
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


async def _serve(server: MCPServer, wire: Wire, held: Held) -> None:
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    out = Out(wire.out, held)
    async with stdio_server(stdin=Replay(held.lines, wire.inp, out), stdout=out) as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
