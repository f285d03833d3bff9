"""The console entry point: `--version` and `--help` are answered before anything is imported,
as a git command answers them; every other command line goes to the click front end.

`usage.txt` is click's own `gitckpt --help` at 80 columns; a test keeps it equal to click's,
and `python -m gitckpt.entry --write-usage` writes it again after a change to the commands.
"""

from __future__ import annotations

import os
import sys

from gitckpt import __version__

TYPE_CHECKING = False  # typing itself is not imported: `--version` starts as `python -c pass`
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from gitckpt.core.ops.fields import Voice

USAGE = os.path.join(os.path.dirname(__file__), "usage.txt")


def _wide_enough() -> bool:
    """click wraps help to the terminal when it is narrower than 80 columns."""
    if "COLUMNS" in os.environ:
        return os.environ["COLUMNS"].isdigit() and int(os.environ["COLUMNS"]) >= 80
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns >= 80
    except (OSError, ValueError):
        return True  # not a terminal: click uses 80 columns


def _standard_fds() -> None:
    """As git does first (sanitize_stdfds): a closed 0, 1 or 2 (`gitckpt resume >&-`) is
    opened on /dev/null, so that no file opened later (a lock, a log, an object) takes its
    number and receives what is written to the stream, or by a child that inherits it; what
    is written there is dropped, as git drops it. Python made no stream for a closed one."""
    filled = []
    try:
        fd = os.open(os.devnull, os.O_RDWR)
        while fd <= 2:  # the lowest free number: a hole in 0-2 that it filled
            filled.append(fd)
            fd = os.dup(fd)
        os.close(fd)
    except OSError:
        pass  # no /dev/null: nothing gitckpt can repair
    for number in filled:
        name, mode = (("stdin", "r"), ("stdout", "w"), ("stderr", "w"))[number]
        if getattr(sys, name) is None:
            setattr(sys, name, open(number, mode, encoding="utf-8",  # noqa: SIM115 (for life)
                                    errors="backslashreplace", closefd=False))


def main(argv: list[str] | None = None) -> None:
    _standard_fds()
    try:
        _main(argv)
    finally:
        try:
            if sys.stdout is not None:
                sys.stdout.flush()  # here, not in the interpreter's exit (its status 120)
        except OSError as e:
            from gitckpt.cli.output import written

            written(e, sys.stdout)  # what is left of it goes to /dev/null


def _print(text: str) -> NoReturn:
    """Write `text` and exit: 0, or as gitckpt/cli/invocation.py `finish` ends a command whose
    output cannot be written (141 silently for a reader gone, 1 with a line on stderr)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        sys.exit(_unwritten(e, sys.stdout))
    sys.exit(0)


def _unwritten(e: OSError, stream: Any) -> int:
    """The exit code for a write of `stream` that failed with `e`, the error said on stderr."""
    from gitckpt.cli.output import PIPE_CLOSED, ReaderGone, written

    what = written(e, stream)
    if isinstance(what, ReaderGone):
        return PIPE_CLOSED
    try:
        sys.stderr.write(f"gitckpt: error: {what.message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return 1


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        _print(f"gitckpt, version {__version__}\n")
    if args in (["--help"], ["-h"]) and _wide_enough():
        try:
            with open(USAGE, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            text = ""  # an install without it: click says the same, only later
        if text:
            _print(text)
    if len(args) >= 2 and args[0] == "hook" and _hook(args[1:]):
        return
    _relayed(args)  # returns when no running gitckpt takes the command
    if args == ["--write-usage"] and argv is None and __name__ == "__main__":
        _write_usage()
        return
    from gitckpt.cli.main import main as cli_main

    cli_main(args)


def _hook(args: list[str]) -> bool:
    """`gitckpt hook EVENT [--host NAME] [--cli]` runs without click, and is handed to a running
    gitckpt when there is one (gitckpt.hook_relay): a host runs it on every tool call.
    Anything else (help, a typo) goes to click, which says what is wrong."""
    from gitckpt.hooks import EVENTS, HOST_NAMES
    from gitckpt.hooks.relay import ask, emit, hook_folder

    kind, rest = args[0], args[1:]
    if kind in ("install", "uninstall", "commit-msg", "-h", "--help") or "-h" in rest \
            or "--help" in rest:  # click's commands of the group, and help
        return False
    voice: Voice = "cli" if "--cli" in rest else "mcp"  # texts name commands, not tools
    rest = [a for a in rest if a != "--cli"]
    if rest[:1] == ["--host"] and len(rest) == 2:
        host = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--host="):
        host = rest[0][7:]
    else:
        host = "claude" if not rest else ""
    if kind not in EVENTS or host not in HOST_NAMES:
        # A host runs this line on every tool call: a typo in its config must not block the
        # agent (exit 2 blocks in Claude Code), so it is a log line and exit 0, as any failure.
        emit("", f"hook: unknown hook command `{' '.join(['hook', *args])}`; events: "
                 f"{', '.join(EVENTS)}; hosts: {', '.join(HOST_NAMES)} (gitckpt hook --help)")
        sys.exit(0)
    stream = getattr(sys.stdin, "buffer", None)  # None when the host closed stdin
    try:
        raw = stream.read().decode("utf-8", "replace") if stream is not None else ""
    except (OSError, ValueError):
        raw = ""
    reply = None
    if os.environ.get("GITCKPT_RELAY", "on") != "off":
        try:
            from gitckpt.core.ops.events import HookCall

            call = HookCall(host, kind, raw, hook_folder(host), voice)
            reply = ask({"op": call.op, "request": call.to_wire()})
        except Exception:
            reply = None  # any trouble with a relay: the hook runs here
    if reply is not None:
        log = str(reply.get("log") or "")
        emit(str(reply.get("stdout") or ""), log and f"hook {host} {kind}: {log} (relayed)")
        sys.exit(0)
    from gitckpt.hooks.run import main as hook_main

    hook_main(host, kind, raw, voice)
    return True


#: The commands a running gitckpt (`mcp`, `watch`) serves for the CLI (gitckpt/cli/relayed.py):
#: there they cost what its watcher saw change, here a cold start and a scan of every file.
RELAYED = ("save", "capture")


def _relayed(args: list[str]) -> None:
    """`gitckpt save` or `capture` handed to a running gitckpt over the hooks' relay; its
    output is printed and the process exits with its code. Returns when none takes it (none
    runs, or it refused: another git environment, a command line that does not parse)."""
    if os.environ.get("GITCKPT_RELAY", "on") == "off" or os.environ.get("_GITCKPT_COMPLETE") \
            or not any(a in RELAYED for a in args) \
            or any(a in ("-h", "--help", "--version") for a in args):
        return
    try:
        from gitckpt.core.ops.events import CommandCall
        from gitckpt.hooks.relay import COMMAND_WAIT, answer_wait, ask, listening

        call = CommandCall(
            tuple(args), os.getcwd(), sys.stdout.isatty(),
            {k: os.environ[k] for k in ("NO_COLOR", "TERM") if k in os.environ},
            {k: v for k, v in os.environ.items() if k.startswith("GIT_")})
        reply = ask({"op": call.op, "request": call.to_wire()}, wait=answer_wait(COMMAND_WAIT))
    except Exception:
        return  # any trouble with a relay: the command runs here
    if reply is None:
        return
    if not isinstance(reply.get("code"), int):  # it took the command and did not answer
        if not listening(str(reply.get("socket", ""))):
            return  # it died: the command runs here (it is idempotent)
        sys.stderr.write(f"gitckpt: the running gitckpt (pid {reply.get('pid')}) took the "
                         f"command and did not answer in {reply.get('waited')} s; it finishes "
                         "it there, and `gitckpt log` shows its outcome (GITCKPT_RELAY=off "
                         "runs commands here)\n")
        sys.exit(1)
    code = reply["code"]
    for stream, text in ((sys.stdout, reply.get("stdout")), (sys.stderr, reply.get("stderr"))):
        if isinstance(text, str) and text:
            try:
                stream.flush()
                stream.buffer.write(text.encode("utf-8", "surrogateescape"))
                stream.flush()
            except OSError as e:  # its reader gone, or a full disk: as a command run here
                failed = _unwritten(e, stream) if stream is sys.stdout else 1
                code = code or failed
            except (ValueError, AttributeError):
                pass
    sys.exit(code)


def click_usage() -> str:
    """`gitckpt --help` as click prints it to a pipe (a terminal of 80 columns or more gets
    the same): the click front end run in a child process."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    code = "from gitckpt.cli.main import main; main(['-h'])"
    return subprocess.run([sys.executable, "-c", code],
                          env=env, capture_output=True, text=True, check=True).stdout


def _write_usage() -> None:
    with open(USAGE, "w", encoding="utf-8") as f:
        f.write(click_usage())


if __name__ == "__main__":
    main()
