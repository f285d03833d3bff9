"""The user's gitckpt service: one long-lived process per user (and version and settings) that
serves the hooks, the CLI commands of cli/relayed.py and every MCP session over one socket
(service/client.py), warm, and holds one watcher per workspace in use. A client that finds
none starts it; it leaves after `GITCKPT_SERVICE_IDLE` seconds (default 600) with no
connection open, on SIGTERM or SIGINT, and on `gitckpt service stop`.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
from typing import Any, BinaryIO

import click

from gitckpt import __version__
from gitckpt.service import client

log = logging.getLogger("gitckpt.service")

IDLE = 600.0


def idle_limit() -> float:
    try:
        value = float(os.environ.get("GITCKPT_SERVICE_IDLE", IDLE))
    except ValueError:
        return IDLE
    return value if value > 0 else IDLE


class Service:
    """The process's state: its listener, its watchers, and when it stops."""

    def __init__(self, cli: click.Group) -> None:
        from gitckpt.service.listener import Listener
        from gitckpt.service.watchers import Watchers

        self.cli = cli
        self.watchers = Watchers(log_name="service.log")
        self.listener = Listener(client.address(), self.serve, self.stream)
        self.stopping = threading.Event()
        self.started = time.time()
        self.sessions = 0
        self.conns: set[socket.socket] = set()  # the MCP sessions' connections

    def serve(self, message: dict[str, Any]) -> dict[str, Any]:
        """One request: a hook, a CLI command line, or a question about the service."""
        from gitckpt.cli.relayed import serve as command
        from gitckpt.hooks.run import answer

        op = message.get("op")
        if op == "status":
            return self.status()
        if op == "stop":
            self.stopping.set()
            return {"stopping": os.getpid()}
        reply = answer(message, lambda call: command(self.cli, call))
        here = _here(message) if op == "hook" else ""  # an agent's session: watched
        if here and not reply.get("refused"):
            try:
                self.watchers.watch(here)  # the next request here is served from its journal
            except Exception:
                log.exception("cannot start the watcher for %s", here)
        return reply

    def stream(self, message: dict[str, Any], conn: socket.socket, reader: BinaryIO) -> None:
        from gitckpt.mcp.server import serve_session

        header = message.get("request")
        self.sessions += 1
        self.conns.add(conn)
        try:
            serve_session(conn, reader, header if isinstance(header, dict) else {},
                          self.watchers)
        except Exception:
            log.exception("an MCP session failed")
        finally:
            self.sessions -= 1
            self.conns.discard(conn)

    def status(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "version": __version__, "socket": self.listener.path,
                "started": int(self.started), "served": self.listener.served,
                "sessions": self.sessions, "connections": self.listener.open,
                "watching": sorted(str(k) for k in self.watchers.sessions)}

    def run(self) -> int:
        """Serve until idle, stopped or signalled; 0, or 1 where the address cannot be
        taken (another service has it: then nothing is wrong, and the caller says so)."""
        if not self.listener.start():
            return 1
        # a client's own settings are each request's (client.CLIENT_ONLY), never the
        # service's, whichever client started it: the tool names' prefix is one of them
        os.environ.pop("GITCKPT_TOOL_PREFIX", None)
        log.info("gitckpt %s service (pid %d) at %s", __version__, os.getpid(),
                 self.listener.path)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stopping.set())
        limit = idle_limit()
        try:
            while not self.stopping.wait(min(1.0, limit / 4)):
                if self.listener.idle() >= limit:
                    log.info("idle for %g s: the service leaves", limit)
                    break
        finally:
            self.listener.close()  # no new client; then the sessions' bridges reconnect
            for conn in list(self.conns):  # (to the next service, which they start)
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.watchers.close()
            log.info("the service (pid %d) stopped", os.getpid())
        return 0


def _here(message: dict[str, Any]) -> str:
    request = message.get("request")
    here = request.get("here") if isinstance(request, dict) else None
    return here if isinstance(here, str) and os.path.isabs(here) else ""


def log_path() -> str:
    from gitckpt.store.logs import log_dir

    return str(log_dir() / "service.log")


def run_service(cli: click.Group, detach: bool) -> int:
    """`gitckpt service run`: the service in this process, logging to the log folder (and
    stderr unless `detach`)."""
    path = log_path()
    handlers: list[logging.Handler] = []
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        handlers.append(logging.FileHandler(path, encoding="utf-8"))
    except OSError:
        pass
    if not detach:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger("gitckpt")
    for h in handlers:
        h.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s "
                                         "%(message)s"))
        root.addHandler(h)
    root.setLevel(logging.INFO)
    if detach and handlers:
        try:  # a crash's traceback goes to the log too
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            os.dup2(fd, 2)
            os.close(fd)
        except OSError:
            pass
    return Service(cli).run()


def stop(wait: float = 10.0) -> int | None:
    """Stop the running service; its pid, or None when none runs."""
    pid = client.running_pid()
    if pid is None:
        return None
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return None
    deadline = time.monotonic() + wait
    while client.alive(pid) and time.monotonic() < deadline:  # gone, watchers and all
        time.sleep(0.02)
    return pid


@click.group("service")
def service_group() -> None:
    """The user's gitckpt service: hooks, CLI commands and MCP sessions served warm."""


@service_group.command("run")
@click.option("--detach", is_flag=True, hidden=True, help="Log to the log file only.")
@click.pass_context
def service_run(ctx: click.Context, detach: bool) -> None:
    """Run the service in this process (a client starts it when none runs)."""
    group = ctx.find_root().command
    assert isinstance(group, click.Group)
    if run_service(group, detach) and not detach:
        pid = client.running_pid()
        path = client.address()
        click.echo(f"gitckpt: a service already runs for these settings (pid {pid})."
                   if pid is not None else
                   f"gitckpt: error: cannot listen at {path}\nhint: its folder must be yours "
                   "and private (mode 0700), and the path at most 100 bytes "
                   "(GITCKPT_RUNTIME_DIR moves it).", err=True)
        sys.exit(1)


@service_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def service_status(as_json: bool) -> None:
    """Whether the service runs, where, and what it serves; exit 1 when none runs."""
    import json

    reply = client.ask({"op": "status"}, wait=5.0, start=False) \
        if client.running_pid() is not None else None
    if as_json:
        click.echo(json.dumps(reply or {"running": False, "socket": client.address()}))
    elif reply is None:
        off = "" if client.enabled() else " (GITCKPT_SERVICE=off: commands run alone)"
        click.echo(f"No gitckpt service runs for these settings{off}; the first hook, MCP "
                   f"session or served command starts one at {client.address()}.")
    else:
        watching = ", ".join(reply.get("watching") or []) or "nothing"
        click.echo(f"gitckpt {reply.get('version')} service, pid {reply.get('pid')}, at "
                   f"{reply.get('socket')}\n  {reply.get('sessions')} MCP session(s), "
                   f"{reply.get('served')} request(s) served; watching {watching}\n"
                   f"  log: {log_path()}")
    if reply is None:
        sys.exit(1)


@service_group.command("stop")
def service_stop() -> None:
    """Stop the service (the next client starts a new one)."""
    pid = stop()
    click.echo(f"Stopped the gitckpt service (pid {pid})." if pid is not None
               else "No gitckpt service runs for these settings.")


@service_group.command("log")
@click.option("-n", "lines", default=20, show_default=True, help="How many last lines.")
def service_log(lines: int) -> None:
    """Print the last lines of the service's log."""
    try:
        with open(log_path(), encoding="utf-8", errors="replace") as f:
            tail = f.readlines()[-lines:] if lines > 0 else []
    except OSError:
        click.echo(f"No service log yet ({log_path()}).")
        return
    click.echo("".join(tail), nl=False)
