"""The CLI on a terminal: git's pager order and switches, colour after --color and NO_COLOR,
and shell completion of task ids and step numbers from the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import read_terminal, run_cli, service

from gitckpt.cli import pager

ESC = "\x1b["


def on_a_tty(args: list[str], cwd: Path, **env: str) -> str:
    """The CLI with stdout on a pseudo-terminal (as a user's shell runs it): what it shows."""
    import pty

    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "gitckpt", *args], cwd=cwd, stdout=slave,
                         stderr=slave, stdin=subprocess.DEVNULL, env={**os.environ, **env})
    os.close(slave)
    text = read_terminal(master)
    p.wait(30)
    os.close(master)
    return text.replace("\r\n", "\n")


@pytest.fixture
def task(ws):
    service.init(ws.root, "paged")
    (ws.root / "src" / "app.py").write_text("print('v3')\n")
    service.save(ws.root, "one", conclusion="c")
    (ws.root / "src" / "app.py").write_text("print('v4')\n")
    return ws


def test_the_pager_pages_log_patches_and_previews_on_a_terminal(task):
    paged = {"GITCKPT_PAGER": "sed s/^/PAGED:/"}
    for args in (["log"], ["diff", "1", "--patch"], ["restore", "0"], ["revert", "1"]):
        out = on_a_tty(args, task.root, **paged)
        assert out.startswith("PAGED:"), (args, out)
    assert "PAGED:" not in on_a_tty(["--no-pager", "log"], task.root, **paged)
    assert "PAGED:" not in on_a_tty(["diff", "1"], task.root, **paged)  # short: no --patch
    assert "PAGED:" not in on_a_tty(["resume"], task.root, **paged)
    r = run_cli("log", cwd=task.root, env=paged)  # stdout not a terminal
    assert r.code == 0
    assert "PAGED:" not in r.out


def test_the_pager_order(task, hermetic, monkeypatch):
    root = str(task.root)
    for k in ("GITCKPT_PAGER", "GIT_PAGER", "PAGER"):
        monkeypatch.delenv(k, raising=False)
    assert pager.pager_command(root) in ("less -FRX", None)
    monkeypatch.setenv("PAGER", "more")
    assert pager.pager_command(root) == "more"
    (hermetic / ".gitconfig").write_text("[core]\n\tpager = most\n")  # the fake global config
    assert pager.pager_command(root) == "most"
    monkeypatch.setenv("GIT_PAGER", "nl")  # git's own first choice, over core.pager
    assert pager.pager_command(root) == "nl"
    monkeypatch.setenv("GITCKPT_PAGER", "tac")
    assert pager.pager_command(root) == "tac"
    monkeypatch.setenv("GITCKPT_PAGER", "cat")
    assert pager.pager_command(root) is None
    monkeypatch.setenv("GITCKPT_PAGER", "")
    assert pager.pager_command(root) is None


def test_colour_follows_the_switch_and_no_color(task):
    always = run_cli("--color=always", "diff", "1", "--patch", cwd=task.root)
    assert always.code == 0
    assert f"{ESC}32m+print('v4')" in always.out
    assert f"{ESC}31m-print('v3')" in always.out
    assert f"{ESC}36m@@" in always.out
    plain = run_cli("diff", "1", "--patch", cwd=task.root)
    assert ESC not in plain.out  # auto, not a terminal
    tty = on_a_tty(["--no-pager", "log"], task.root)
    assert f"{ESC}33m" in tty  # commit ids, as git log colours them
    assert ESC not in on_a_tty(["--no-pager", "log"], task.root, NO_COLOR="1")
    assert ESC not in on_a_tty(["--no-pager", "--color=never", "restore", "0"], task.root)
    assert ESC in on_a_tty(["--no-pager", "restore", "0"], task.root)
    json_out = run_cli("--color=always", "--json", "log", cwd=task.root)
    assert ESC not in json_out.out


def complete(words: str, cwd: Path, shell: str = "bash") -> list[str]:
    env = {"_GITCKPT_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    r = run_cli(cwd=cwd, env=env)
    assert r.code == 0, r.err
    return [line.split(",", 1)[1] for line in r.out.splitlines() if "," in line]


def test_completion_scripts(ws):
    for shell in ("bash", "zsh", "fish"):
        r = run_cli("completion", shell, cwd=ws.root)
        assert r.code == 0, r.err
        assert "_GITCKPT_COMPLETE" in r.out, r.err
    assert run_cli("completion", "tcsh", cwd=ws.root).code == 2


def test_completion_of_tasks_and_steps(task):
    tid = service.tasks(task.root).active
    service.save(task.root, "two")
    assert complete("gitckpt log --task ", task.root) == [tid]
    assert complete(f"gitckpt log --task {tid[:3]}", task.root) == [tid]
    assert complete("gitckpt switch ", task.root) == [tid]
    assert complete("gitckpt restore ", task.root) == ["2", "1", "0", "head", "tip"]
    assert complete("gitckpt diff 1 ", task.root)[-1] == "live"
    assert complete("gitckpt revert ", task.root)[:1] == ["2"]
    assert complete(f"gitckpt -C {task.root} restore ", Path("/")) == ["2", "1", "0", "head",
                                                                        "tip"]


def test_completion_outside_a_store_completes_nothing(hermetic):
    folder = hermetic / "none"
    folder.mkdir()
    assert complete("gitckpt restore ", folder) == []
    assert complete("gitckpt log --task ", folder) == []
    assert os.listdir(folder) == []


def test_a_pager_that_cannot_run_still_shows_the_output(task):
    out = on_a_tty(["log"], task.root, GITCKPT_PAGER="no-such-pager-xyz")
    assert "cannot run the pager" in out
    assert "paged" in out
    assert "one" in out


def test_a_pager_that_quits_before_reading_leaves_nothing_behind(task):
    (task.root / "big.txt").write_text("".join(f"{n}\n" for n in range(30_000)))  # > a pipe
    out = on_a_tty(["diff", "head", "--patch"], task.root, GITCKPT_PAGER="true",
                   PYTHONDEVMODE="1")  # dev mode shows a pipe left unclosed (ResourceWarning)
    assert out == "", out


def test_a_terminal_that_goes_away_ends_the_bar_not_the_work(monkeypatch):
    import click

    from gitckpt.cli.invocation import TerminalProgress
    from gitckpt.core.progress import Report

    def gone(*a, **k):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(click, "echo", gone)
    bar = TerminalProgress()
    bar(Report("Scanning files", 10, None, "files"))  # raises nothing
    bar(Report("Scanning files", 20, None, "files", final=True))
    assert bar.broken
