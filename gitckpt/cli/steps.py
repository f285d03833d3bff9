"""The CLI's commands of a task's steps: init, save, resume, log, tasks, capture, switch, run
and watch. Each command's options are its request's (core/operations.py)."""

from __future__ import annotations

import sys

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx, ShownUntilUnread
from gitckpt.cli.output import echo
from gitckpt.cli.render import (
    render_capture,
    render_init,
    render_log,
    render_save,
    render_switch,
    render_tasks,
)
from gitckpt.core import operations as ops
from gitckpt.engine.notes import json_text


@command(ops.InitRequest)
def init(c: Ctx, r: ops.InitRequest) -> None:
    c.emit(c.perform(r), render_init)


@command(ops.SaveRequest)
def save(c: Ctx, r: ops.SaveRequest) -> None:
    c.emit(c.perform(r), render_save)


@command(ops.ResumeRequest)
def resume(c: Ctx, r: ops.ResumeRequest) -> None:
    c.emit(c.perform(r), lambda result: result.text)


@command(ops.LogRequest)
def log(c: Ctx, r: ops.LogRequest) -> None:
    c.emit(c.perform(r), render_log, "log")


@command(ops.TasksRequest)
def tasks(c: Ctx, r: ops.TasksRequest) -> None:
    c.emit(c.perform(r), render_tasks)


@command(ops.CaptureRequest)
def capture(c: Ctx, r: ops.CaptureRequest) -> None:
    c.emit(c.perform(r), render_capture)


@command(ops.SwitchRequest)
def switch(c: Ctx, r: ops.SwitchRequest) -> None:
    c.emit(c.perform(r), render_switch)


@command(ops.RunRequest, ignore_unknown_options=True, allow_interspersed_args=False)
def run(c: Ctx, r: ops.RunRequest) -> None:
    result = c.perform(r)
    if result.failure:
        echo(f"gitckpt run: {result.failure}\n", err=True)
    if c.json:
        echo(json_text(result.to_dict()) + "\n")
    echo(f"gitckpt: `{result.command}` exited {result.exit_code} after "
         f"{result.duration_s:g} s; the next save records it (tree {result.tree[:7]}).\n",
         err=True)
    code = result.exit_code
    raise SystemExit(code if 0 <= code <= 255 else 128 - code if code < 0 else 1)


@command(ops.WatchRequest)
def watch(c: Ctx, r: ops.WatchRequest) -> int:
    import signal

    from gitckpt.engine.watch import run_until_stopped, stop_signals_waited
    from gitckpt.service.api import watch as watching

    # Signals are blocked before any thread starts, so every thread inherits the mask.
    with stop_signals_waited() as waits:
        shown = ShownUntilUnread(c, render_capture)
        session = watching(c.open(r), r, on_drift=shown)
        shown.stop = session.stop
        who = f"task {r.task}" if r.task else f"the active task (now {session.task})"
        echo(f"Watching {session.root} for {who} ({session.watcher.mode}); "
             "Ctrl-C stops.\n", err=True)
        if waits:
            run_until_stopped(session.run, session.stop)
        else:
            signal.signal(signal.SIGTERM, lambda *_: session.stop())
            try:
                session.run()
            except KeyboardInterrupt:
                session.stop()
    echo("Stopped watching.\n", err=True)
    code = shown.ended()
    if waits:  # the watcher's work is done or abandoned: no interpreter shutdown may hang it
        import logging
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    return code


COMMANDS = (init, save, resume, log, tasks, capture, switch, run, watch)
