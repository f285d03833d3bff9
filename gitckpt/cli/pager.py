"""Colour and paging as git does them: long output (log, patches, restore and revert previews)
goes through the user's pager when stdout is a terminal, and colour follows `--color` and
NO_COLOR. Only the CLI uses this; MCP and --json output are never coloured or paged."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping

COLORS = ("auto", "always", "never")

_RESET = "\x1b[m"
_STYLE = {"add": "\x1b[32m", "del": "\x1b[31m", "hunk": "\x1b[36m", "meta": "\x1b[1m",
          "id": "\x1b[33m", "mod": "\x1b[33m", "bad": "\x1b[1;31m", "dim": "\x1b[2m"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{7})(?![0-9a-f])")
# A preview's or a diff summary's line of one file: "  modify  path", "  M  path".
_PLAN = re.compile(r"^(\s+)(create|modify|delete|conflict\S*|unrestorable|A|M|D|R|T)(\s+)")
_PLAN_STYLE = {"create": "add", "A": "add", "delete": "del", "D": "del", "modify": "mod",
               "M": "mod", "R": "mod", "T": "mod", "unrestorable": "bad"}


def wants_color(choice: str, tty: bool, env: Mapping[str, str] | None = None) -> bool:
    """`--color`: always, never, or auto (a terminal that is not dumb, and no NO_COLOR, in
    `env`: this process's environment unless another's is given)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if env is None else env
    return tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def plain(text: str) -> str:
    """`text` without the renderers' own styles."""
    return _ANSI.sub("", text)


def colorize(text: str, kind: str) -> str:
    """`text` of a `kind` of output (patch, log, plan) with git's colours."""
    out = []
    in_patch = False  # a patch follows its summary lines
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            in_patch = True
        out.append(_line(line, kind, in_patch))
    return "\n".join(out)


def _line(line: str, kind: str, in_patch: bool) -> str:
    def paint(style: str, s: str) -> str:
        return f"{_STYLE[style]}{s}{_RESET}" if s else s

    if in_patch:
        if line.startswith(("diff --git ", "--- ", "+++ ", "index ", "Binary files ")):
            return paint("meta", line)
        if line.startswith("@@"):
            return paint("hunk", line)
        if line.startswith("+"):
            return paint("add", line)
        if line.startswith("-"):
            return paint("del", line)
        return line
    m = _PLAN.match(line)
    if m and kind in ("plan", "patch"):
        word = m.group(2)
        style = "bad" if word.startswith("conflict") else _PLAN_STYLE.get(word, "mod")
        return m.group(1) + paint(style, word) + line[m.end(2):]
    if kind == "log":
        return _ID.sub(lambda i: paint("id", i.group(1)), line, count=1)
    return line


def pager_command(root: str) -> str | None:
    """GITCKPT_PAGER, then git's own order (GIT_PAGER, core.pager, PAGER), then `less -FRX`;
    None for none (an empty value or `cat`, as git reads them)."""
    for value in (os.environ.get("GITCKPT_PAGER"), os.environ.get("GIT_PAGER"),
                  _core_pager(root), os.environ.get("PAGER")):
        if value is not None:
            return None if value.strip() in ("", "cat") else value
    return "less -FRX" if shutil.which("less") else None


def _core_pager(root: str) -> str | None:
    if "GITCKPT_PAGER" in os.environ or "GIT_PAGER" in os.environ or not shutil.which("git"):
        return None
    import subprocess  # here, as below: output that is not paged (most of it) never needs it

    try:
        p = subprocess.run(["git", "config", "--get", "core.pager"], cwd=root,
                           capture_output=True, text=True, timeout=5,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.rstrip("\n") if p.returncode == 0 else None


def show(text: str, kind: str | None, *, color: str, paging: bool, root: str) -> None:
    """Print `text` (colour as `color` says; a `kind` of long output gets git's colours),
    through the pager when `paging` is allowed, stdout is a terminal and `kind` is given."""
    from gitckpt.cli.output import echo, terminal_safe

    text = terminal_safe(text)  # (before the colours of its own)
    tty = sys.stdout.isatty()
    colored = wants_color(color, tty)
    if colored and kind is not None:
        text = colorize(text, kind)
    elif not colored:
        text = _ANSI.sub("", text)  # the renderers' own styles too
    command = pager_command(root) if paging and tty and kind is not None else None
    if command is None:
        echo(text, color=colored)
        return
    if not _runnable(command):
        echo(f"gitckpt: cannot run the pager {command!r}; showing the output unpaged\n",
             err=True)
        echo(text, color=colored)
        return
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # as git sets them for its pager
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        p = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        echo(text, color=colored)
        return
    assert p.stdin is not None  # stdin=PIPE
    try:
        p.stdin.write(text.encode("utf-8", "surrogateescape"))
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the reader quit early, as `q` in less does
    finally:
        try:
            p.stdin.close()  # closed even when its last flush finds no reader
        except BrokenPipeError:
            pass
    while True:
        try:
            code = p.wait()
            break
        except KeyboardInterrupt:
            continue  # the pager owns the terminal until it exits
    if code in (126, 127):  # the shell could not run it: nothing was shown
        echo(text, color=colored)


def _runnable(command: str) -> bool:
    """The pager's program exists (a command with shell syntax is left to the shell)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return True
    if not words or any(c in command for c in "|;&$`<>()"):
        return True
    first = next((w for w in words if "=" not in w.split("/")[0]), "")  # past VAR=value
    return bool(first) and shutil.which(first) is not None
