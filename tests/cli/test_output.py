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
