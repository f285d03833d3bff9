"""The MCP front end: gitckpt's tools over stdio (official `mcp` SDK). Each tool parses its
arguments, records a boundary drift, calls `service`, and returns the result's `to_dict()`:
the same object the CLI prints with `--json`. Nothing here writes to stdout.
"""

from __future__ import annotations

import logging
import os
from typing import Annotated

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_types import CallToolResult, TextContent

from gitckpt import __version__, mcp_text, service
from gitckpt.errors import GitckptError, NoActiveTask
from gitckpt.mcp_args import check_calls, lean_schemas
from gitckpt.mcp_schemas import (CompressOut, DiffOut, DriftOut, PackageOut, PlanEntry, RestoreOut,
                                 ResumeOut, SaveOut, TaskOut, TimelineOut)
from gitckpt.mcp_text import error_result, printable
from gitckpt.mcp_workspaces import Workspaces, export_target, too_wide
from gitckpt.notes import PlanItem

log = logging.getLogger("gitckpt.mcp")

INSTRUCTIONS = """gitckpt keeps a checkpoint trail for long tasks in this workspace (git commits \
under refs/checkpoints/, never touching the user's branches, index or stash).
The rhythm:
1. Call ckpt_resume first in every session: it says where the task stands and what is next.
2. For a job of more than a few steps, call ckpt_init with a name and a goal.
3. After every finished step, call ckpt_save with a title, a conclusion (what is now true) and \
next (the first action of the next step); add verified for checks you ran.
4. Before going back, call ckpt_restore without apply to preview; apply only after reading the \
plan, and keep the returned safety id: restoring it undoes the restore.
Changes made between calls (shell commands, the user) are captured automatically as drifts.
Every tool takes `root`, the absolute path of the workspace; leave it out to use the \
server's --root, GITCKPT_ROOT or the client's first root."""

Root = Annotated[str | None, Field(description="Workspace path (see instructions).")]
TaskArg = Annotated[str | None, Field(description="Task id (default: the active task).")]
Paths = Annotated[list[str], Field(description="Limit to these paths (relative to the "
                                               "workspace root); empty means everything.")]


def build_server(root: str | None = None) -> MCPServer:
    """The MCP server with every gitckpt tool; `root` is `gitckpt mcp --root`."""
    ws = Workspaces(root)
    server = MCPServer("gitckpt", instructions=INSTRUCTIONS, version=__version__)
    server.workspaces = ws  # type: ignore[attr-defined]  (tests and the runner reach it)

    async def call(root: str | None, ctx: Context | None, fn, *args, boundary: bool = True,
                   text=mcp_text.generic, **kwargs) -> CallToolResult:
        """Resolve, record the boundary drift, run `fn` off the event loop, translate errors.
        The result carries two views: `text(result)`, short and in tool-call terms, and the
        whole result object as structured content (the CLI's `--json` object)."""
        try:
            path = await ws.resolve(root, ctx)

            def work() -> dict:
                if boundary:
                    ws.boundary(path)
                result = printable(fn(path, *args, **kwargs).to_dict())
                try:
                    ws.watch(path)
                except Exception:  # the call succeeded; a watcher that cannot start is logged
                    log.exception("cannot start the watcher for %s", path)
                return result

            result = await anyio.to_thread.run_sync(work)
            return CallToolResult(content=[TextContent(type="text", text=text(result))],
                                  structured_content=result)
        except GitckptError as e:
            return error_result(e)
        except Exception as e:  # a bug: the agent still gets a result it can read
            log.exception("tool failed")
            raise ToolError(f"internal error ({type(e).__name__}: {e}); this is a bug in "
                            "gitckpt.\nhint: the details are in the server's log (mcp.log "
                            "in the store's state folder).") from e

    @server.tool()
    async def ckpt_init(
            name: Annotated[str, Field(description="Short name of the task.")],
            goal: Annotated[str, Field(description="What done looks like.")] = "",
            constraints: Annotated[str, Field(description="Rules the work must keep.")] = "",
            exclude: Annotated[list[str], Field(description="Patterns (.gitignore syntax) to "
                                                            "leave out of snapshots.")] = [],  # noqa: B006
            plan: Annotated[list[PlanEntry], Field(description="The checklist.")] = [],  # noqa: B006
            root: Root = None, ctx: Context | None = None) -> SaveOut:
        """Start a long task here: snapshot 0, and make it the active task. Call it once, when
        a job will take more than a few steps (ckpt_resume says if a task is active already).
        Next: work, then ckpt_save after each finished step."""
        items = [PlanItem(p.item, p.status) for p in plan]
        return await call(root, ctx, service.init, name, goal=goal, constraints=constraints,
                          exclude=exclude, plan=items, boundary=False, text=mcp_text.init)

    @server.tool()
    async def ckpt_save(
            title: Annotated[str, Field(description="The finished step, in a few words.")],
            conclusion: Annotated[str, Field(description="What is true now that was not "
                                                         "before; what you learned.")] = "",
            next: Annotated[str, Field(description="The first action of the next step.")] = "",
            description: Annotated[str, Field(description="Longer notes.")] = "",
            verified: Annotated[list[str], Field(description="Checks that passed, as "
                                                             "'command: result'.")] = [],  # noqa: B006
            open_questions: Annotated[list[str], Field(description="What is still open.")] = [],  # noqa: B006
            decisions: Annotated[list[str], Field(description="Choices made.")] = [],  # noqa: B006
            plan: Annotated[list[PlanEntry], Field(description="Plan items to add or update "
                                                               "(by text).")] = [],  # noqa: B006
            close: Annotated[bool, Field(description="This is the last step: end the task.")]
            = False,
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> SaveOut:
        """Save a finished step: a commit of the whole workspace plus what it meant. Call it
        after every step you could report in one sentence. Saving the same step twice is
        harmless (idempotent). Next: continue with `next`."""
        items = [PlanItem(p.item, p.status) for p in plan]
        return await call(root, ctx, service.save, title, conclusion=conclusion, next=next,
                          description=description, verified=verified,
                          open_questions=open_questions, decisions=decisions, plan=items,
                          close=close, task=task, plan_new=[p.item for p in plan if p.add],
                          text=mcp_text.save)

    @server.tool()
    async def ckpt_resume(task: TaskArg = None, root: Root = None,
                          ctx: Context | None = None) -> ResumeOut:
        """The handoff: goal, step, conclusions, next, open questions, what changed since the
        last step. Call it first in every session. Read-only."""
        result = await call(root, ctx, service.resume, task=task, voice="mcp", boundary=False,
                            text=mcp_text.resume)
        if not result.is_error or (result.structured_content or {}).get("error") != \
                NoActiveTask.code:
            return result
        # No task yet is a normal answer, not an error: say how to start.
        text = ("No active task in this workspace. For a job of more than a few steps, start "
                "one: ckpt_init(name=..., goal=...). Other tasks of this store: "
                "ckpt_log(all_tasks=true).")
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"found": False, "text": text})

    @server.tool()
    async def ckpt_log(
            task: TaskArg = None,
            limit: Annotated[int, Field(ge=1, description="Newest steps shown.")] = 10,
            before: Annotated[int | None, Field(ge=1, description="Only steps older than "
                                                                  "this one (paging).")] = None,
            step: Annotated[int | None, Field(ge=0, description="Only this step, in "
                                                                "full.")] = None,
            all_tasks: Annotated[bool, Field(description="List the tasks instead.")] = False,
            root: Root = None, ctx: Context | None = None) -> TimelineOut:
        """A task's steps, one line each, newest 10 by default; step=N shows one in full with
        its drifts; all_tasks lists every task. Read-only."""
        if all_tasks:
            return await call(root, ctx, service.tasks, text=mcp_text.tasks)
        return await call(root, ctx, service.log, task=task, limit=limit, before=before,
                          step=step, text=mcp_text.log if step is None else mcp_text.step)

    @server.tool()
    async def ckpt_diff(
            base: Annotated[str, Field(description="A step number, commit id prefix, ref, or "
                                                   "'live'.")],
            target: Annotated[str, Field(description="The same kinds; default the live "
                                                     "workspace.")] = "live",
            paths: Paths = [],  # noqa: B006
            patch: Annotated[bool, Field(description="Include the unified patch.")] = False,
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> DiffOut:
        """What changed between two points (or a point and the live workspace): paths with
        +/- line counts, and the patch when asked. Read-only."""
        return await call(root, ctx, service.diff, base, target, paths=paths, patch=patch,
                          task=task)

    @server.tool()
    async def ckpt_restore(
            target: Annotated[str, Field(description="A step number, a commit id prefix (a "
                                                     "drift or safety copy), or a ref.")],
            apply: Annotated[bool, Field(description="Do it. Without it, only the plan is "
                                                     "returned and nothing changes.")] = False,
            paths: Paths = [],  # noqa: B006
            task: TaskArg = None,
            expect: Annotated[str | None, Field(description="live_tree of the preview you "
                                                            "approved.")] = None,
            confirm: Annotated[bool, Field(description="Confirm an apply the preview marked "
                                                       "needs_confirm (many files).")] = False,
            root: Root = None, ctx: Context | None = None) -> RestoreOut:
        """Put the workspace (or some paths) back to a step or drift. Call it first without
        apply and read the plan (create/modify/delete, and what it cannot bring back). With
        apply it saves the current state as a safety copy first: keep the returned `safety`
        id; ckpt_restore(target=<safety>, apply=true) undoes the restore. A plan marked
        needs_confirm (many files) applies only with confirm=true."""
        return await call(root, ctx, service.restore, target, apply=apply, paths=paths,
                          task=task, expect=expect, confirm=confirm, text=mcp_text.restore)

    @server.tool()
    async def ckpt_capture(task: TaskArg = None, root: Root = None,
                           ctx: Context | None = None) -> DriftOut:
        """Record the files as they are now as a drift (before something risky). Changes are
        also captured automatically; this makes it explicit."""
        return await call(root, ctx, service.capture, task=task, boundary=False,
                          text=mcp_text.capture)

    @server.tool()
    async def ckpt_switch(task: Annotated[str, Field(description="The task id to activate.")],
                          root: Root = None, ctx: Context | None = None) -> TaskOut:
        """Make another (suspended) task the active one; the current one is suspended."""
        return await call(root, ctx, service.switch, task)

    @server.tool()
    async def ckpt_export(
            to: Annotated[str, Field(description="A new folder for the package (absolute, or "
                                                 "relative to the workspace).")],
            task: TaskArg = None, root: Root = None, ctx: Context | None = None) -> PackageOut:
        """Write a handoff package of a task (HANDOFF.md, manifest, a bare git repository) so
        another checkout or agent can continue it with ckpt_import."""
        try:
            path = await ws.resolve(root, ctx)
            dest = export_target(path, to)
        except GitckptError as e:
            return error_result(e)
        return await call(path, ctx, service.export, dest, task=task)

    @server.tool()
    async def ckpt_import(
            package: Annotated[str, Field(description="The package folder.")],
            as_id: Annotated[str | None, Field(description="Import under this task id when the "
                                                           "package's id is taken.")] = None,
            root: Root = None, ctx: Context | None = None) -> PackageOut:
        """Continue a packaged task here; it becomes the active task. Everything is checked
        before anything is written. Next: ckpt_resume."""
        try:
            path = await ws.resolve(root, ctx)
            source = export_target(path, package)  # packages come from where they may go
        except GitckptError as e:
            return error_result(e)
        return await call(path, ctx, service.import_, source, as_id=as_id)

    @server.tool()
    async def ckpt_compress(
            keep: Annotated[str, Field(description="Keep drifts newer than this (7d, 12h).")]
            = "7d",
            dry_run: Annotated[bool, Field(description="Only report.")] = False,
            min_steps: Annotated[int, Field(ge=0, description="Always keep the drifts after the "
                                                              "newest N steps.")] = 3,
            root: Root = None, ctx: Context | None = None) -> CompressOut:
        """Reclaim space from old drifts (never a step, never a restore's safety copy)."""
        return await call(root, ctx, service.compress, keep=keep, min_steps=min_steps,
                          dry_run=dry_run)

    check_calls(server, error_result)
    lean_schemas(server)
    return server


def run(root: str | None = None) -> None:
    """Serve over stdio until the client goes away; the watcher starts with the server."""
    if root is not None and not os.path.isabs(root):
        root = os.path.abspath(root)
    server = build_server(root)
    ws: Workspaces = server.workspaces  # type: ignore[attr-defined]
    try:
        first = (ws.configured() or [os.getcwd()])[0]
        if not too_wide(os.path.realpath(first)):
            ws.watch(first)
        server.run("stdio")
    finally:
        ws.close()
