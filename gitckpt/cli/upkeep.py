"""The CLI's commands that look after the store: scope, adopt, doctor, compress, and gitckpt's
own settings (`config remote`, `config transcripts`)."""

from __future__ import annotations

import click

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.render import render_compress, render_doctor, render_scope
from gitckpt.cli.render_remote import render_remote_setting, render_transcripts
from gitckpt.core import operations as ops


@command(ops.ScopeRequest)
def scope(c: Ctx, r: ops.ScopeRequest) -> None:
    c.emit(c.perform(r), render_scope)


@command(ops.AdoptRequest)
def adopt(c: Ctx, r: ops.AdoptRequest) -> None:
    c.emit(c.perform(r), lambda a: f"{a.store} is now the store of {a.workspace}"
           + (f" (tasks of {', '.join(a.earlier)} continue here).\n" if a.earlier else ".\n"))


@command(ops.DoctorRequest)
def doctor(c: Ctx, r: ops.DoctorRequest) -> None:
    from gitckpt.engine.doctor import Finding
    from gitckpt.hooks.install import untrusted_codex

    result = c.perform(r)
    # the hosts' side: hooks installed that a host will not run (Codex: until trusted)
    result.checked.append("hooks")
    result.findings += [Finding("hooks", problem, "Start Codex here and trust the project, "
                                "then open /hooks and trust gitckpt's hooks.")
                        for problem in untrusted_codex(c.root)]
    c.emit(result, render_doctor)
    if not result.healthy:
        raise SystemExit(1)


@command(ops.CompressRequest)
def compress(c: Ctx, r: ops.CompressRequest) -> None:
    c.emit(c.perform(r), render_compress)


@click.group()
def config() -> None:
    """gitckpt's own settings for this workspace (kept in its state, never in git's config)."""


@command(ops.RemoteSettingRequest)
def remote(c: Ctx, r: ops.RemoteSettingRequest) -> None:
    c.emit(c.perform(r), render_remote_setting)


@command(ops.TranscriptsRequest)
def transcripts(c: Ctx, r: ops.TranscriptsRequest) -> None:
    c.emit(c.perform(r), render_transcripts)


config.add_command(remote)
config.add_command(transcripts)

COMMANDS = (scope, adopt, doctor, compress, config)
