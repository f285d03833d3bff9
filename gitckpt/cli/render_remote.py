"""Text for people of what push, fetch and `config remote` did."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitckpt.core.hints import BLANK, CLI, call

if TYPE_CHECKING:
    from gitckpt.service.results import RemoteSetting, TranscriptSetting
    from gitckpt.transfer.fetch import FetchResult
    from gitckpt.transfer.push import PushResult


def _cmd(op: str, **args: object) -> str:
    """The command that comes next, as core/hints spells every suggestion."""
    return call(op, **args).spell(CLI)


def render_push(r: PushResult) -> str:
    lines = [f"Pushed to {r.remote}:"]
    for t in r.tasks:
        first = " (its first push there)" if t.first else ""
        lines.append(f"  {t.task}  {t.steps} steps{first}")
    return "\n".join(lines) + "\n"


def render_fetch(r: FetchResult) -> str:
    if r.task is None:
        if not r.tasks:
            return f"{r.remote} holds no checkpoints.\n"
        width = max(len(t.task) for t in r.tasks)
        out = [f"{r.remote} holds {len(r.tasks)} task(s):",
               f"  {'TASK':<{width}}  {'STEPS':>5}  {'LAST ACTIVITY':<20}  NAME"]
        out += [f"  {t.task:<{width}}  {t.steps:>5}  "
                f"{(t.last_activity or '?')[:19]:<20}  {t.name or '?'}" for t in r.tasks]
        out.append(f"Bring one here: {_cmd('fetch', remote=r.remote, task=BLANK)}")
        return "\n".join(out) + "\n"
    came = f" as {r.task}" if r.source else ""
    how = ("new here" if r.created else "moved forward" if r.moved else "head up to date")
    kept = f", {r.drifts_kept} of the remote's drifts kept after this store's" \
        if r.drifts_kept else ""
    return (f"Fetched task {r.source or r.task}{came} from {r.remote}: {how}, at step "
            f"{r.steps}{kept}.\n"
            f"Next: {_cmd('resume', task=r.task)}; its files: {_cmd('switch', task=r.task)} "
            f"&& {_cmd('restore', target='head', apply=True)}\n")


def render_remote_setting(r: RemoteSetting) -> str:
    if r.remote is None:
        return f"No remote is set; push and fetch need one: {_cmd('config_remote', name=BLANK)}\n"
    out = f"push and fetch use {r.remote} when given no remote.\n"
    if r.holds_credentials:
        out += ("The saved remote holds credentials (shown as ***); gitckpt keeps none any "
                "more. Set it again without them (gitckpt config remote URL) and let git's "
                "credential helper supply them.\n")
    return out


def render_transcripts(r: TranscriptSetting) -> str:
    held = (f"; {r.steps} step{'' if r.steps == 1 else 's'} hold{'s' if r.steps == 1 else ''} "
            f"transcripts ({r.bytes:,} bytes)" if r.steps else "")
    if r.on:
        return (f"Steps keep their sessions' transcripts, redacted{held}. Turn it off: "
                f"{_cmd('config_transcripts', state='off')}\n")
    return (f"Steps keep no transcripts (prompts, sessions, models and token usage only)"
            f"{held}. Turn it on: {_cmd('config_transcripts', state='on')}\n")

