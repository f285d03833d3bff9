"""The console entry point: `--version` is answered before anything is imported, as a git
command answers it; a hook, a served command and `gitckpt mcp` go to the user's service
(service/client.py) and run here only where it cannot serve them; every other command line
goes to the click front end.
"""

from __future__ import annotations

import os
import sys

from gitckpt import __version__

TYPE_CHECKING = False  # typing itself is not imported: `--version` starts as `python -c pass`
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from gitckpt.core.ops.fields import Voice

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


def _whole_writes() -> None:
    """A stream Python left unbuffered (PYTHONUNBUFFERED, `python -u`) writes to its raw
    file, which may take part of a write and drop the rest unsaid (a reader that leaves in
    the middle of one: `| head`); each is put behind a buffered writer, which writes all or
    raises, flushed at each line as an unbuffered stream would be."""
    import io

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        raw = getattr(stream, "buffer", None)
        if isinstance(raw, io.FileIO):
            setattr(sys, name, io.TextIOWrapper(
                io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                line_buffering=True, write_through=True))


def main(argv: list[str] | None = None) -> None:
    _standard_fds()
    _whole_writes()
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
    if len(args) >= 2 and args[0] == "hook" and _hook(args[1:]):
        return
    mcp = _mcp_root(args)
    if mcp is not None:
        from gitckpt.mcp.bridge import main as bridge

        bridge(mcp or None)
        return
    _served(args)  # returns when the service does not take the command
    from gitckpt.cli.main import main as cli_main

    cli_main(args)


def _hook(args: list[str]) -> bool:
    """`gitckpt hook EVENT [--host NAME] [--cli]` runs without click, and is handed to the
    user's service (started for the next hook when none runs): a host runs it on every tool
    call.
    Anything else (help, a typo) goes to click, which says what is wrong."""
    from gitckpt.hooks import EVENTS, HOST_NAMES
    from gitckpt.hooks.ends import emit, hook_folder
    from gitckpt.service.client import ask, hook_message

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
    try:
        reply = ask(hook_message(host, kind, raw, hook_folder(host), voice,
                                 os.environ.get("GITCKPT_TOOL_PREFIX", "")), start=True)
    except Exception:
        reply = None  # any trouble with the service: the hook runs here
    if reply is not None and not reply.get("died"):
        log = str(reply.get("log") or "")
        emit(str(reply.get("stdout") or ""), log and f"hook {host} {kind}: {log} (served)")
        sys.exit(0)
    # (a service that died with the request: the hook runs here; a post-tool hook whose drift
    # the service did record finds nothing left to record)
    from gitckpt.hooks.run import main as hook_main

    hook_main(host, kind, raw, voice)
    return True


def _mcp_root(args: list[str]) -> str | None:
    """For `gitckpt [-C DIR] mcp [--root DIR]`, its root ("" when none is given), after a
    change to DIR; None for any other command line (help, a typo: click says what is wrong)."""
    rest = list(args)
    folder = None
    while len(rest) >= 2 and rest[0] == "-C":
        folder = rest[1] if folder is None else os.path.join(folder, rest[1])
        rest = rest[2:]
    if not rest or rest[0] != "mcp":
        return None
    if rest[1:] == []:
        root = ""
    elif len(rest) == 3 and rest[1] == "--root":
        root = rest[2]
    elif len(rest) == 2 and rest[1].startswith("--root="):
        root = rest[1][7:]
    else:
        return None
    if folder is not None:
        try:
            os.chdir(folder)  # -C DIR: as if started in DIR
        except OSError:
            return None  # click says what is wrong with DIR
    if root and "$" not in root:  # (an unexpanded $VAR is refused at the first call)
        root = os.path.abspath(root)  # from DIR, as the click command reads it
    return root


def _served(args: list[str]) -> None:
    """A command the service serves (service/client.py SERVED) handed to it; its output is
    printed and the process exits with its code. Returns when the service does not take it
    (GITCKPT_SERVICE=off, none answers, it refused: another git environment, a command line
    that does not parse), and the command runs here."""
    from gitckpt.service import client

    if not client.enabled() or os.environ.get("_GITCKPT_COMPLETE") \
            or not client.served(args, sys.stdout.isatty()):
        return
    try:
        message = client.command_message(
            args, os.getcwd(), sys.stdout.isatty(),
            {k: os.environ[k] for k in ("NO_COLOR", "TERM") if k in os.environ},
            {k: v for k, v in os.environ.items() if k.startswith("GIT_")})
        reply = client.ask(message, wait=client.answer_wait(client.COMMAND_WAIT), start=True)
    except Exception:
        return  # any trouble with the service: the command runs here
    if reply is None:
        return
    if not isinstance(reply.get("code"), int):  # it took the command and did not answer
        command = next((a for a in args if a in client.SERVED), "")
        if reply.get("died") and command in client.RERUNNABLE:
            return  # it died: the command runs here (it only reads, or finds nothing new)
        if reply.get("died"):
            sys.stderr.write(f"gitckpt: the gitckpt service (pid {reply.get('pid')}) took the "
                             f"command and stopped before it answered; `gitckpt log` shows "
                             "whether it was done (run it again if not)\n")
        else:
            sys.stderr.write(f"gitckpt: the gitckpt service (pid {reply.get('pid')}) took the "
                             f"command and did not answer in {reply.get('waited')} s; it "
                             "finishes it there, and `gitckpt log` shows its outcome "
                             "(GITCKPT_SERVICE=off runs commands here)\n")
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


if __name__ == "__main__":
    main()
