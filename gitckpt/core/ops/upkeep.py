"""The requests of the store and its settings: scope, adopt, doctor, config remote, config
transcripts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gitckpt.core.ops.fields import task
from gitckpt.core.request import Opening, Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from gitckpt.engine.doctor import DoctorResult  # noqa: F401
    from gitckpt.service import results  # noqa: F401


@dataclass(frozen=True)
class ScopeRequest(Request["results.ScopeResult"]):
    """Say for each PATH whether snapshots take it, and the rule that decided.

    Like `git check-ignore -v`: a sensitive file names the rule (a folder, a name, a marker
    in its content); a `!PATH` line in .ckptignore brings back a file wrongly left out."""

    op = "scope"
    command = "scope"

    paths: tuple[str, ...] = arg(positional=True, path="workspace")
    task: str | None = task("Use this task's excludes.")


@dataclass(frozen=True)
class AdoptRequest(Request["results.AdoptResult"]):
    """Adopt this folder's .gitckpt store after moving or copying the folder here.

    A store is used only for the folder it was made for; adopt records the new path, and the
    tasks of the old one continue here."""

    op = "adopt"
    command = "adopt"
    opening = Opening.TAKE


@dataclass(frozen=True)
class DoctorRequest(Request["DoctorResult"]):
    """Check the store: say what is wrong and how to fix it (exit 1 if anything is)."""

    op = "doctor"
    command = "doctor"
    opening = Opening.ADOPT

    fix: bool = arg("Repair what can be repaired without losing data.", default=False)


@dataclass(frozen=True)
class RemoteSettingRequest(Request["results.RemoteSetting"]):
    """Show, set (NAME: a git remote's name or a URL) or --unset the remote that push and
    fetch use when given none."""

    op = "config_remote"
    command = "config remote"
    opening = Opening.STORE

    name: str | None = arg(positional=True, default=None)
    unset: bool = arg("Forget the remote.", default=False)

    def usage(self) -> str | None:
        return "{name} and {unset} do not go together." if self.unset and self.name else None


@dataclass(frozen=True)
class TranscriptsRequest(Request["results.TranscriptSetting"]):
    """Show, or turn on or off, the keeping of each step's session transcripts. Off (the
    default), a step keeps its prompts, sessions, models and token usage, and no transcript.
    On, it also keeps what each session's transcript gained since the step before, redacted
    and at most 512 KiB a session, under refs/checkpoints/<task>/transcripts/<n> (not in the
    workspace's tree); a push lists new ones and asks before they leave; compress removes
    them."""

    op = "config_transcripts"
    command = "config transcripts"
    opening = Opening.STORE

    state: Literal["on", "off"] | None = arg(positional=True, default=None)
