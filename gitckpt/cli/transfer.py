"""The CLI's commands that move a task elsewhere: export and import (handoff packages, and the
tools gitckpt replaces), push and fetch (git remotes)."""

from __future__ import annotations

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.render import render_export, render_import, render_migrate
from gitckpt.cli.render_remote import render_fetch, render_push
from gitckpt.core import operations as ops


@command(ops.ExportRequest)
def export(c: Ctx, r: ops.ExportRequest) -> None:
    c.emit(c.perform(r), render_export)


@command(ops.ImportRequest)
def import_(c: Ctx, r: ops.ImportRequest) -> None:
    c.emit(c.perform(r), render_migrate if r.source is not None else render_import)


@command(ops.PushRequest)
def push(c: Ctx, r: ops.PushRequest) -> None:
    c.emit(c.perform(r), render_push)


@command(ops.FetchRequest)
def fetch(c: Ctx, r: ops.FetchRequest) -> None:
    c.emit(c.perform(r), render_fetch)


COMMANDS = (export, import_, push, fetch)
