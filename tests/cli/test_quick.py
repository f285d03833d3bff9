"""`gitckpt resume` and `save` without click (gitckpt/cli/quick.py): the parser declines or
agrees with click on every command line, the output is click's to the byte, and neither
command imports click."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys

import click
import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.cli import output, quick, render
from gitckpt.cli.main import cli

# -- the parser ------------------------------------------------------------------------------


def click_parse(argv: list[str]):
    """(group parameters, command, its parameters) as click parses `argv`, or None where
    click refuses it (a usage error, --help, --version) or the command's body would."""
    try:
        with cli.make_context("gitckpt", list(argv)) as ctx:
            rest = [*(getattr(ctx, "_protected_args", None) or ctx.protected_args), *ctx.args]
            name, command, args = cli.resolve_command(ctx, rest)
            if name not in quick.COMMANDS:
                return "another command"
            with command.make_context(name, args, parent=ctx) as sub:
                params = dict(sub.params)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        return None
    if name == "save" and len(params["ran"]) != len(params["exits"]):
        return None  # the command's own UsageError
    return dict(ctx.params), name, params


def test_the_tables_are_clicks_commands():
    """Every option of `resume`, `save` and of the group before them, as click declares it:
    a new option in gitckpt/cli/main.py fails here until quick.py knows it."""
    for name, command in quick.COMMANDS.items():
        declared = {}
        for p in cli.commands[name].params:
            if isinstance(p, click.Argument):
                declared[p.name] = ("argument",)
                continue
            assert len(p.opts) == 1, p.opts
            assert not p.secondary_opts, p.opts
            kind = ("flag" if p.is_flag else "multiple" if p.multiple else "value")
            declared[p.name] = (kind, p.opts[0], p.type.name == "integer")
        ours = {**{p: ("argument",) for p in command.positional},
                **{p: ("value", o, p in command.ints) for o, p in command.values.items()},
                **{p: ("multiple", o, p in command.ints) for o, p in command.multiple.items()},
                **{p: ("flag", o, False) for o, p in command.flags.items()}}
        assert ours == declared, name
    group = {p.opts[0]: (p.name, not p.is_flag) for p in cli.params
             if p.expose_value and p.name != "help"}
    assert group == quick.GLOBAL
    color = next(p for p in cli.params if p.name == "color")
    assert tuple(color.type.choices) == quick.COLORS


WORDS = ["-C", "--json", "--color", "--no-pager", "--version", "-h", "--help", "resume",
         "save", "log", "--task", "--full", "--conclusion", "--next", "--description",
         "--verified", "--ran", "--exit", "--question", "--answered", "--decision",
         "--gotcha", "--drop", "--file", "--plan", "--close", "--nope", "-C.", "-C=x",
         "--json=1", "--close=yes", "--task=", "--task=t1", "--exit=3", "--exit=x",
         "--color=never", "--color=", "--color=Auto", "--", "-", "-x", "--x", "", " ",
         "auto", "always", "never", "3", " 4 ", "+5", "1_0", "0x1", "a=b", "title", "é",
         "a\udcff", "--next=", "--conclusion=--x"]


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=4), max_size=9))
def test_any_command_line_is_declined_or_read_as_click_reads_it(argv):
    ours = quick.parse(argv)
    if ours is not None:
        assert ours == click_parse(argv), argv


def _typical(data: st.DataObject) -> list[str]:
    """Command lines as agents and people write them."""
    argv: list[str] = []
    for opt in data.draw(st.lists(st.sampled_from(["-C", "--json", "--color", "--no-pager"]),
                                  max_size=3)):
        argv += [opt] if opt in ("--json", "--no-pager") else \
            [opt, data.draw(st.sampled_from(["." if opt == "-C" else "never", "always"]))]
    name = data.draw(st.sampled_from(sorted(quick.COMMANDS)))
    command = quick.COMMANDS[name]
    units = [[data.draw(st.text(st.characters(blacklist_characters="-"), min_size=1,
                                max_size=6))] for _ in command.positional]
    for _ in range(data.draw(st.integers(0, 6))):
        opt = data.draw(st.sampled_from(sorted({*command.values, *command.multiple,
                                                *command.flags} - {"--ran", "--exit"})))
        if opt in command.flags:
            units.append([opt])
        elif data.draw(st.booleans()):
            units.append([f"{opt}={data.draw(st.sampled_from(['x', 'a b', '', '=']))}"])
        else:
            units.append([opt, data.draw(st.sampled_from(["x", "a b", "", "+plan=done"]))])
    if name == "save" and data.draw(st.booleans()):
        units += [["--ran", "pytest -q"],
                  ["--exit", data.draw(st.sampled_from(["0", "1", "-1"]))]]
    return [*argv, name, *(w for unit in data.draw(st.permutations(units)) for w in unit)]


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_a_typical_command_line_is_taken_and_read_as_click_reads_it(data):
    argv = _typical(data)
    theirs = click_parse(argv)
    ours = quick.parse(argv)
    if "-1" in argv:  # a value that starts with `-`: click's to read
        assert ours is None
        return
    assert ours is not None, argv
    assert ours == theirs, argv


@pytest.mark.parametrize("argv", [
    ["resume"], ["resume", "--full"], ["-C", "/w", "--json", "resume", "--task", "t"],
    ["save", "Extract token signing", "--conclusion", "signing centralised", "--next",
     "switch the views", "--verified", "pytest: 12 passed", "--question", "refresh?"],
    ["save", "--task=t", "t", "--ran", "make", "--exit", "0", "--close"],
    ["save", "x", "--plan", "+write docs=doing", "--file", "a.py=why"],
])
def test_what_agents_type_is_taken(argv):
    assert quick.parse(argv) is not None
    assert quick.parse(argv) == click_parse(argv)


# -- the output ------------------------------------------------------------------------------


class Stream(io.TextIOWrapper):
    """A standard stream over bytes, a terminal or not."""

    def __init__(self, tty: bool, encoding: str = "utf-8") -> None:
        super().__init__(io.BytesIO(), encoding=encoding, errors="strict")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def written(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


def written(monkeypatch, write, text: str, err: bool, color: bool | None, tty: bool,
            encoding: str = "utf-8") -> bytes:
    out, errs = Stream(tty, encoding), Stream(tty, encoding)
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", errs)
        write(text, err, color)
    assert (out if err else errs).written() == b""
    return (errs if err else out).written()


def by_click(text: str, err: bool, color: bool | None) -> None:
    click.echo(text, nl=False, err=err, color=color)


TEXTS = st.lists(st.sampled_from(["a", "é", "\n", "\x1b", "[", "3", "1", "m", ";", "?", " ",
                                  "~", "K", "\x1b[32m", "\x1b[0m", "\x1b[?25l", "\x1b[K"]),
                 max_size=12).map("".join)


@settings(max_examples=600, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS, st.booleans(), st.sampled_from([None, True, False]), st.booleans())
def test_echo_writes_what_click_echo_writes(monkeypatch, text, err, color, tty):
    assert written(monkeypatch, output.echo, text, err, color, tty) == \
        written(monkeypatch, by_click, text, err, color, tty)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS, st.booleans(), st.sampled_from([None, True, False]), st.booleans())
def test_a_file_name_that_is_not_utf8_goes_out_as_its_bytes(monkeypatch, text, err, color,
                                                            tty):
    text = f"{text}\udcff{text}"  # os.fsdecode of the byte 0xff
    stripped = click.unstyle(text) if (not tty if color is None else not color) else text
    assert written(monkeypatch, output.echo, text, err, color, tty) == \
        stripped.encode("utf-8", "surrogateescape")


def test_a_stream_click_rewraps_is_clicks_to_write(monkeypatch):
    for text in ("plain", "é \x1b[32mgreen\x1b[0m"):
        assert written(monkeypatch, output.echo, text, False, None, False, "ascii") == \
            written(monkeypatch, by_click, text, False, None, False, "ascii")


def test_the_change_tags_are_clicks_colours():
    names = {"create": "green", "modify": "yellow", "delete": "red", "mode": "cyan",
             "unrestorable": "magenta", "kept": "blue", "blocked": "magenta",
             "clean": "green", "conflict": "red", "already": "blue"}
    assert set(names) == set(render._STYLE)
    for kind, colour in names.items():
        tag = click.style(f"{'restore':<12}", fg=colour)
        assert render.group(kind, ["a.py"], "restore") == [f"  {tag}a.py"]


# -- the real CLI ----------------------------------------------------------------------------


def both(*argv: str, cwd, env: dict | None = None):
    """The same command line through the quick parser and through click."""
    quick_run = run_cli(*argv, cwd=cwd, env={"GITCKPT_RELAY": "off", **(env or {})})
    click_run = run_cli(*argv, cwd=cwd,
                        env={"GITCKPT_RELAY": "off", "_GITCKPT_CLICK": "1", **(env or {})})
    return quick_run, click_run


IDS = re.compile(r"\b[0-9a-f]{7,40}\b|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@pytest.mark.slow
def test_resume_and_save_print_what_click_prints(repo, guard):
    assert run_cli("-C", str(repo), "init", "Quick", "--goal", "parse without click",
                   "--plan", "write it").code == 0
    assert run_cli("save", "first", "--conclusion", "works", "--next", "more",
                   cwd=repo).code == 0
    (repo / "src" / "new.py").write_text("x = 1\n")
    guard.reset()
    for argv in (["resume"], ["resume", "--full"], ["--json", "resume"],
                 ["--color", "always", "resume"], ["resume", "--task", "nope"],
                 ["--json", "resume", "--task", "nope"],
                 ["save", ""], ["save", "x", "--file", "../out=n"],
                 ["save", "x", "--plan", "=bogus"], ["save", "x", "--exit", "1"],
                 ["--json", "save", "x", "--task", "nope"],
                 ["save", "x", "--ran", "make", "--exit", "0", "--exit", "1"]):
        ours, theirs = both(*argv, cwd=repo)
        assert ours == theirs, argv
        assert ours.code in (0, 1, 2)
        if argv == ["resume"]:
            assert "src/new.py" in ours.out  # what is unsaved, in the handoff
        guard.check()
    again = ["save", "first", "--conclusion", "works", "--next", "more"]
    assert run_cli(*again, cwd=repo).code == 0
    ours, theirs = both(*again, cwd=repo)
    assert ours == theirs
    assert "Nothing new" in ours.out
    # A new step in two copies of the same workspace: the same text, ids and times apart.
    copy = repo.parent / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    argv = ["save", "second", "--conclusion", "c", "--verified", "v", "--plan",
            "write it=done", "--file", "src/new.py=the new one"]
    ours = run_cli(*argv, cwd=repo, env={"GITCKPT_RELAY": "off"})
    theirs = run_cli(*argv, cwd=copy, env={"GITCKPT_RELAY": "off", "_GITCKPT_CLICK": "1"})
    assert ours.code == theirs.code == 0, (ours, theirs)
    assert IDS.sub("ID", ours.out) == IDS.sub("ID", theirs.out)
    assert ours.err == theirs.err
    assert "Saved step 3" in ours.out


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["resume"], ["save", "again", "--next", "n"]])
def test_resume_and_save_import_no_click(repo, argv):
    assert run_cli("-C", str(repo), "init", "Quick").code == 0
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules)))\n"
            f"sys.argv = ['gitckpt', *{argv!r}]\n"
            "from gitckpt.entry import main\nmain()\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, "GITCKPT_RELAY": "off"})
    assert p.returncode == 0, p.stderr
    mods = set(p.stderr.rpartition("MODULES ")[2].split())
    assert not {m for m in mods if m == "click" or m.startswith(("click.", "gitckpt.cli.main"))}
    assert "subprocess" not in mods  # nothing here pages or runs git
