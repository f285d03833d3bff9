"""The MCP front end: gitckpt's tools over stdio (official `mcp` SDK). Each tool parses its
arguments, records a boundary drift, calls `service`, and returns the result's `to_dict()`:
the same object the CLI prints with `--json`. Nothing here writes to stdout.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import unquote, urlparse

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_types import CallToolResult, TextContent

from gitckpt import __version__, mcp_text, service
from gitckpt.errors import (GitckptError, InvalidArgument, NoActiveTask, TaskClosed,
                            WorkspaceError)
from gitckpt.mcp_schemas import (CompressOut, DiffOut, DriftOut, PackageOut, PlanEntry, RestoreOut,
                                 ResumeOut, SaveOut, TaskOut, TimelineOut)
from gitckpt.notes import PlanItem
from gitckpt.watch import Settings

if TYPE_CHECKING:
    from gitckpt.store.state import StateDir

log = logging.getLogger("gitckpt.mcp")
BOUNDARY_WAIT = 2.0  # seconds a tool call waits for the store lock to record its boundary drift

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


class Workspaces:
    """Resolves each call's workspace and keeps one background watcher per workspace that has
    an active task (unless GITCKPT_WATCH=off)."""

    def __init__(self, root: str | None) -> None:
        self.cli_root = root
        self.client_roots: list[str] | None = None  # asked once, when first needed
        self.sessions: dict[Path, service.WatchSession] = {}
        self.logged: set[Path] = set()
        self.watched: set[str] = set()  # folders whose workspace has its watcher
        self.lock = threading.Lock()

    def configured(self) -> list[str]:
        """The folders this server may act in: --root, else GITCKPT_ROOT, else the client's
        file:// roots; empty when none is known."""
        fixed = self.cli_root or os.environ.get("GITCKPT_ROOT")
        return [fixed] if fixed else list(self.client_roots or [])

    async def resolve(self, root: str | None, ctx: Context | None) -> str:
        """The workspace of a call: `root`, which must lie in a configured root, else the
        first configured root, else the server's working folder. A configured root confines
        every call; without one, `/`, the home folder and system folders are refused."""
        if not self.cli_root and not os.environ.get("GITCKPT_ROOT"):
            if self.client_roots is None and ctx is not None:
                self.client_roots = await _client_roots(ctx)
        allowed = self.configured()
        path = root if root is not None else allowed[0] if allowed else os.getcwd()
        if not os.path.isabs(path):
            raise WorkspaceError(f"The workspace {path!r} is not an absolute path.",
                                 "Pass root as an absolute path, e.g. /home/me/project.")
        if not os.path.isdir(path):
            raise WorkspaceError(f"The workspace {path} does not exist.",
                                 "Pass the absolute path of an existing folder as root.")
        real = os.path.realpath(path)
        if allowed and not any(_inside(real, os.path.realpath(a)) for a in allowed):
            raise WorkspaceError(
                f"The workspace {path} is outside this server's root ({', '.join(allowed)}).",
                "Pass a root inside it, or start the server with --root for that folder.")
        if too_wide(real):  # a client root of ~ must not checkpoint the whole home either
            raise WorkspaceError(
                f"gitckpt will not checkpoint {path}: it is the home folder, / or a system "
                "folder.",
                "Pass root: the absolute path of the project folder, or start the server with "
                "--root PROJECT.")
        return path

    def boundary(self, root: str) -> None:
        """Attribute the changes made since the last call: a drift if files moved. Best
        effort: a busy store or a task of another workspace must not fail the tool itself."""
        try:
            drift = service.capture(root, trigger="boundary", lock_timeout=BOUNDARY_WAIT)
        except (NoActiveTask, TaskClosed):
            return
        except GitckptError as e:
            log.info("no boundary drift: %s", e.message)
            return
        if drift.recorded:
            log.info("boundary drift %s: %d paths", drift.commit[:7], len(drift.changes.paths()))

    def watch(self, root: str) -> None:
        """Start the watcher for `root` if it has an active task and none runs yet."""
        if root in self.watched or not Settings.from_env().enabled:
            return  # checked once per folder: no store is opened again on every call
        try:
            tl = service.open_timeline(root)
            tl.resolve(None)
        except GitckptError:
            return
        key = tl.store.root
        with self.lock:
            self._log_to_store(tl.store.state)
            if key in self.sessions:
                self.watched.add(root)
                return
            try:
                session = service.watch(root, on_drift=lambda r: log.info(
                    "drift %s (%s): %d paths", r.commit[:7], r.trigger, len(r.changes.paths())))
            except GitckptError as e:
                log.warning("no watcher for %s: %s", root, e.message)
                return
            self.sessions[key] = session
            self.watched.add(root)
        threading.Thread(target=session.run, name=f"gitckpt-watch {key}", daemon=True).start()
        log.info("watching %s for task %s (%s)", key, session.task, session.watcher.mode)

    def _log_to_store(self, state: StateDir) -> None:
        state_dir = state.path
        if state_dir in self.logged:
            return
        try:
            handler = logging.StreamHandler(state.open_log("mcp.log"))
        except (OSError, GitckptError) as e:  # a symlink planted there is refused
            log.warning("no log file in %s: %s", state_dir, getattr(e, "message", e))
            return
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.getLogger("gitckpt").addHandler(handler)
        self.logged.add(state_dir)

    def close(self) -> None:
        for session in self.sessions.values():
            session.stop()


async def _client_roots(ctx: Context) -> list[str]:
    """The client's file:// roots, where the client offers roots."""
    caps = ctx.client_capabilities
    if caps is None or getattr(caps, "roots", None) is None:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = await ctx.session.list_roots()
    except Exception as e:  # a client that declared roots but cannot answer
        log.info("roots/list failed: %s", e)
        return []
    out = []
    for r in result.roots:
        uri = urlparse(str(r.uri))
        if uri.scheme == "file":
            out.append(unquote(uri.path))
    return out


def printable(value):
    """`value` with file names that are not UTF-8 (lone surrogates) written as `\\xNN`: the
    protocol carries UTF-8 only, and a result must never fail after the work was done."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    return value


def export_target(workspace: str, to: str) -> str:
    """Where a package may be written over MCP: inside GITCKPT_EXPORT_DIR, or else inside the
    workspace's parent folder (service.export keeps it out of the store)."""
    dest = os.path.realpath(os.path.join(workspace, to))
    allowed = os.path.realpath(os.environ.get("GITCKPT_EXPORT_DIR") or os.path.dirname(
        os.path.realpath(workspace)))
    inside = os.path.relpath(dest, allowed).split(os.sep)
    if (not _inside(os.path.dirname(dest), allowed) or dest == allowed
            or any(part in (".git", ".gitckpt") for part in inside)):
        raise InvalidArgument(f"A package cannot be written to or read from {dest}: only a "
                              f"folder inside {allowed}, outside any store.",
                              "Pass to as a new folder name there, or set GITCKPT_EXPORT_DIR "
                              "for the server.")
    return dest


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# Folders no checkpoint belongs in: a task there would take (and a restore rewrite) everything.
SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
          "/run", "/sbin", "/sys", "/usr", "/var", "/tmp", "/var/tmp")


def too_wide(real: str) -> bool:
    """`/`, the home folder or a folder above it, a system folder itself, or anything below
    /proc, /sys, /dev, /etc, /usr, /boot and /bin."""
    home = os.path.realpath(os.path.expanduser("~"))
    if real in ("/", home) or real in SYSTEM or _inside(home, real):
        return True
    return any(_inside(real, f) for f in ("/proc", "/sys", "/dev", "/etc", "/usr", "/boot",
                                         "/bin", "/sbin", "/lib"))


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
            raise ToolError(f"{e.message}\nhint: {e.hint}" if e.hint else e.message) from e
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
        try:
            return await call(root, ctx, service.resume, task=task, voice="mcp",
                              boundary=False, text=mcp_text.resume)
        except ToolError as e:
            if not isinstance(e.__cause__, NoActiveTask):
                raise
        # No task yet is a normal answer, not an error: say how to start.
        text = ("No active task in this workspace. For a job of more than a few steps, start "
                "one: ckpt_init(name=..., goal=...). Other tasks of this store: "
                "ckpt_log(all_tasks=true).")
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"found": False, "text": text})

    @server.tool()
    async def ckpt_log(task: TaskArg = None,
                       all_tasks: Annotated[bool, Field(description="List every task instead "
                                                                    "of one timeline.")] = False,
                       root: Root = None, ctx: Context | None = None) -> TimelineOut:
        """The timeline of a task (steps and drifts, oldest first), or with all_tasks every task
        with its status. Read-only."""
        if all_tasks:
            return await call(root, ctx, service.tasks, text=mcp_text.log)
        return await call(root, ctx, service.log, task=task, text=mcp_text.log)

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
            raise ToolError(f"{e.message}\nhint: {e.hint}") from e
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
            raise ToolError(f"{e.message}\nhint: {e.hint}") from e
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

    _hint_unknown_tools(server)
    _lean_schemas(server)
    return server


_EXAMPLE = {"string": '"text"', "boolean": "true", "integer": "3", "array": '["a", "b"]',
            "object": "{...}"}
_PYTHON = {"string": str, "boolean": bool, "integer": int, "array": list, "object": dict}


def _strict(tool: str, schema: dict, arguments: dict) -> dict:
    """Strict where a mistake loses work, forgiving where it cannot: an unknown argument is
    refused with the closest real one (a misspelled `conclusion` must not save a step without
    it), a boolean must be a boolean (`"yes"` must not close a task), and a step number may
    be an integer where a string is expected."""
    props = schema.get("properties", {})
    for key in arguments:
        if key not in props:
            close = difflib.get_close_matches(key, list(props), 1, 0.5)
            guess = f' Did you mean "{close[0]}"?' if close else ""
            raise ToolError(f'{tool} has no argument "{key}".{guess}\nhint: its arguments are '
                            f"{', '.join(props)}.")
    for key, value in list(arguments.items()):
        want = props[key].get("type")
        if want == "string" and isinstance(value, int) and not isinstance(value, bool):
            arguments[key] = str(value)  # target=1 is step 1
            continue
        kind = _PYTHON.get(want)
        if kind is None or value is None:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            article = "an" if want[0] in "aeiou" else "a"
            raise ToolError(f"{key} takes {article} {want}, not {json.dumps(value)[:40]}; for "
                            f"example {tool}({key}={_EXAMPLE[want]}).")
    return arguments


def _lean(schema, *, output: bool = False):
    """`schema` as an agent needs it, which every session pays for before its first call:
    no pydantic `title` keys, `X | None = None` as an optional X, no empty defaults, one-space
    descriptions (and none on single fields of output schemas)."""
    if isinstance(schema, list):
        return [_lean(v, output=output) for v in schema]
    if not isinstance(schema, dict):
        return schema
    any_of = schema.get("anyOf")
    if (isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of
            and schema.get("default", 0) is None):
        kept = next(a for a in any_of if a != {"type": "null"})
        schema = {**{k: v for k, v in schema.items() if k not in ("anyOf", "default")}, **kept}
    out = {}
    for k, v in schema.items():
        if k == "title" and isinstance(v, str):
            continue
        if k == "default" and v in ("", [], False, None):
            continue
        if k == "description" and isinstance(v, str):
            if output and "type" in schema:
                continue
            v = " ".join(v.split())
        out[k] = {n: _lean(p, output=output) for n, p in v.items()} if k == "properties" \
            else _lean(v, output=output)
    return out


def _lean_schemas(server: MCPServer) -> None:
    for tool in server._tool_manager.list_tools():
        tool.parameters = _lean(tool.parameters)
        tool.description = " ".join((tool.description or "").split())
        meta = tool.fn_metadata
        if meta.output_schema is not None:
            object.__setattr__(meta, "output_schema", _lean(meta.output_schema, output=True))


def _hint_unknown_tools(server: MCPServer) -> None:
    """An unknown tool name gets the closest real one and the list, not just "Unknown tool".
    (The SDK raises that error inside its tool manager, so the hint is added there.)"""
    manager = server._tool_manager
    original = manager.call_tool

    async def call_tool(name, arguments, context, convert_result=False):
        tool = manager.get_tool(name)
        if tool is None:
            names = sorted(t.name for t in manager.list_tools())
            close = difflib.get_close_matches(name, names, 1, 0.5)
            guess = f' Did you mean "{close[0]}"?' if close else ""
            raise ToolError(f"Unknown tool {name!r}.{guess}\nhint: gitckpt's tools are "
                            f"{', '.join(names)}; start with ckpt_resume.")
        arguments = _strict(name, tool.parameters, dict(arguments or {}))
        return await original(name, arguments, context, convert_result=convert_result)

    manager.call_tool = call_tool


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
