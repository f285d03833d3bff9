"""A CLI that starts like a tool: `--version` and `--help` load no engine, and the stored
help text is click's own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gitckpt.entry import USAGE, click_usage

pytestmark = pytest.mark.slow

HEAVY = ("pygit2", "mcp", "click", "gitckpt.service.api", "gitckpt.cli.main", "filelock",
         "watchdog")


def modules_after(*argv: str) -> tuple[str, set[str]]:
    """What `gitckpt ARGV` prints, and every module it imported (read at exit)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules)))\n"
            f"sys.argv = ['gitckpt', *{list(argv)!r}]\n"
            "from gitckpt.entry import main\nmain()\n")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout, set(p.stderr.rpartition("MODULES ")[2].split())


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("-h",)])
def test_version_and_help_import_no_engine(argv):
    out, mods = modules_after(*argv)
    assert out.startswith("gitckpt, version " if argv == ("--version",) else "Usage: gitckpt")
    loaded = {m for m in mods if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}
              and any(m == h or m.startswith(h + ".") for h in HEAVY)}
    assert not loaded, loaded


def test_the_stored_help_is_clicks_own():
    with open(USAGE, encoding="utf-8") as f:
        stored = f.read()
    assert stored == click_usage(), (
        "gitckpt/usage.txt is stale: run python -m gitckpt.entry --write-usage")


def test_other_command_lines_go_to_click(tmp_path):
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--version", "extra"],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stdout.startswith("gitckpt, version")
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--no-such-option"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "No such option" in p.stderr
    p = subprocess.run([sys.executable, "-m", "gitckpt", "save", "--help"],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert "Usage: gitckpt save" in p.stdout


def test_a_narrow_terminal_gets_clicks_wrapping():
    env = {**os.environ, "COLUMNS": "50"}
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--help"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 50


def test_a_plain_folder_resume_loads_no_pygit2(hermetic):
    from conftest import service

    root = hermetic / "plain"
    root.mkdir()
    (root / "notes.md").write_text("# notes\n")
    service.init(root, "no git here")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write(\n"
            "    '\\nPYGIT2 %s' % ('pygit2' in sys.modules)))\n"
            f"sys.argv = ['gitckpt', '-C', {str(root)!r}, 'resume']\n"
            "from gitckpt.entry import main\nmain()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "no git here" in p.stdout, p.stderr
    assert p.stderr.rstrip().endswith("PYGIT2 False"), p.stderr
