"""The CLI's own writes (gitckpt/cli/output.py): the bytes click.echo writes, file names that
are not UTF-8 as their bytes, and the colours of the change tags."""

from __future__ import annotations

import io
import sys

import click
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.cli import output, render


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
    """click.echo of what the CLI lets reach a terminal (output.terminal_safe)."""
    click.echo(output.terminal_safe(text), nl=False, err=err, color=color)


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
    safe = output.terminal_safe(text)
    stripped = click.unstyle(safe) if (not tty if color is None else not color) else safe
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


@given(st.text(alphabet=st.sampled_from(["\x1b", "[", "]", "P", "\\", "\x07", "\x9b", "m",
                                         "1", ";", "a", "\n", "\t", "\r", "\x00", "H"]),
               max_size=60))
def test_nothing_reaches_a_terminal_but_text_and_colours(text):
    """Whatever a note, a file name or a command holds (fetched from elsewhere, where nothing
    cleaned it), what the CLI prints holds no control sequence but a colour (SGR) and no
    control character but tab and newline."""
    import re

    safe = output.terminal_safe(text)
    rest = re.sub(r"\x1b\[[0-9;]*m", "", safe)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", rest), repr(safe)


def test_a_megabyte_of_unterminated_sequences_is_cleaned_in_one_pass():
    for text in ("\x1b]" + "a" * 1_000_000, "\x1b[" + "1;" * 500_000, "\x1bP" + "x" * 999_999):
        assert "\x1b" not in output.terminal_safe(text)


def test_an_escape_sequence_in_a_file_name_does_not_reach_the_terminal(repo):
    """A file named with an OSC sequence (a window title) and a cursor move, saved and then
    listed by `diff`, with its patch too: printed without either."""
    from conftest import run_cli

    assert run_cli("-C", str(repo), "init", "t").code == 0
    (repo / "a\x1b]0;pwned\x07\x1b[2Jb.txt").write_text("x\n")
    assert run_cli("-C", str(repo), "save", "named").code == 0
    for args in (("diff", "0", "1"), ("diff", "0", "1", "--patch")):
        r = run_cli("-C", str(repo), *args)
        assert r.code == 0, r.err
        assert "ab.txt" in r.out
        assert "\x1b" not in r.out, repr(r.out)
        assert "\x07" not in r.out, repr(r.out)


def test_a_save_says_once_per_file_what_it_left_out_and_how_to_keep_it(repo):
    """Every save repeated "Left out 3 file(s)" with no way shown to keep one: a file is
    named by the save that first leaves it out, with the line that keeps it."""
    from conftest import run_cli

    (repo / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_abc\n")
    first = run_cli("-C", str(repo), "init", "t")
    assert "Left out 1 file(s): .npmrc" in first.out, first.out
    assert "echo '!.npmrc' >> .ckptignore" in first.out
    (repo / "a.txt").write_text("a\n")
    again = run_cli("-C", str(repo), "save", "one")
    assert again.code == 0, again.err
    assert "Left out" not in again.out, again.out
    (repo / ".pypirc").write_text("[pypi]\npassword = x\n")
    (repo / "a.txt").write_text("b\n")
    third = run_cli("-C", str(repo), "save", "two")
    assert "Left out 1 file(s): .pypirc" in third.out, third.out
    assert ".npmrc" not in third.out


def test_log_says_a_runs_drift_holds_what_came_before_the_run(repo):
    """An edit made before `gitckpt run` was listed as "drift (run)", as if the command made
    it: the drift `run` records first holds what came before it."""
    from conftest import run_cli

    assert run_cli("-C", str(repo), "init", "t").code == 0
    (repo / "edited.txt").write_text("by hand, before the run\n")
    assert run_cli("-C", str(repo), "run", "--", "true").code == 0
    out = run_cli("-C", str(repo), "log").out
    assert "drift (before a run): 1 file(s) (edited.txt)" in out, out
    assert "drift (run)" not in out
