"""`gitckpt save`, `capture` and the other served commands are served by the user's service,
through its watcher's journal where one runs: the same output and exit code as run here,
trees equal to git's own, and the command runs here whenever the service refuses it, dies, or
lives elsewhere.

Where a test must know that the command was served elsewhere, its process cannot load the
engine at all (a `pygit2` that fails to import comes first on its path): it can only succeed
through the service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import RepoGuard, git_tree, make_repo, run_cli, service

from gitckpt.cli import relayed
from gitckpt.cli.main import cli as gitckpt_cli
from gitckpt.hooks.run import answer
from gitckpt.service import client
from gitckpt.service.listener import Listener
from gitckpt.store import journal as journals

pytestmark = pytest.mark.service


def Relay(serve):  # the service's listener in this process, serving requests only
    return Listener(client.address(), serve, lambda request, conn: None)


def no_engine(tmp_path: Path) -> dict:
    """An environment whose `python -m gitckpt` cannot import pygit2."""
    fake = tmp_path / "no-engine"
    fake.mkdir(exist_ok=True)
    (fake / "pygit2.py").write_text("raise ImportError('no engine in this process')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), *sys.path])}


def cli(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A repository and a real service process listening for this user."""
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    service.init(root, "relayed")
    server = subprocess.Popen([sys.executable, "-m", "gitckpt", "service", "run"], cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not client.listening(client.address()):  # it listens, or it ends and says why
        assert server.poll() is None, server.stderr.read()
        time.sleep(0.05)
    yield root, server
    server.terminate()
    server.wait(30)
    guard.check(status_changes=True)


def test_a_save_and_a_capture_are_served_by_the_running_watcher(served, tmp_path):
    root, _ = served
    (root / "new.txt").write_text("made before the save\n")
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "deep.py").write_text("x = 1\n")
    env = no_engine(tmp_path)
    p = cli(root / "src", "save", "served", "--conclusion", "it was served", "--next", "on",
            env=env)  # from a subfolder: the workspace is found from there, as here
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Saved step 1 of relayed-"), p.stdout
    [step] = service.log(root).steps[-1:]
    assert step.note.title == "served"
    assert step.tree == git_tree(root)  # the files as they are, however the server saw them
    (root / "new.txt").unlink()
    p = cli(root, "--json", "capture", env=env)
    assert p.returncode == 0, p.stderr
    drift = json.loads(p.stdout)
    assert drift["recorded"]
    assert drift["changes"]["deleted"] == ["new.txt"]
    assert drift["tree"] == git_tree(root)
    p = cli(root, "capture", env=env)
    assert (p.returncode, p.stdout) == (0, f"No change since {drift['commit'][:7]} (task "
                                           f"{drift['task']}); nothing recorded.\n")
    # The same command run here says the same: a full scan finds nothing the relay missed.
    here = run_cli("-C", str(root), "capture", env={**os.environ, "GITCKPT_SERVICE": "off"})
    assert (here.code, here.out) == (0, p.stdout)


def test_a_restore_of_a_file_is_applied_there_and_says_what_its_copy_holds(served, tmp_path):
    """`restore N --apply -- FILE` is served (this client has no engine): the file is the
    step's again, its safety copy holds the file as it was, and undoing it puts it back."""
    root, _ = served
    (root / "src" / "app.py").write_text("print('step one')\n")
    service.save(root, "one")
    (root / "src" / "app.py").write_text("print('unsaved edit')\n")
    env = no_engine(tmp_path)
    p = cli(root, "restore", "1", "--apply", "--", "src/app.py", env=env)
    assert p.returncode == 0, p.stderr
    assert (root / "src" / "app.py").read_text() == "print('step one')\n"
    assert "holds src/app.py exactly as they were" in p.stdout
    copy = p.stdout.split("Safety copy: ")[1].split()[0]
    u = cli(root, "restore", copy[:12], "--apply", "--", "src/app.py", env=env)
    assert u.returncode == 0, u.stderr
    assert (root / "src" / "app.py").read_text() == "print('unsaved edit')\n"


def test_an_error_there_reads_as_it_does_here(served, tmp_path):
    root, _ = served
    env = no_engine(tmp_path)
    p = cli(root, "save", "t", "--task", "nosuch", env=env)
    local = cli(root, "save", "t", "--task", "nosuch", env={**os.environ, "GITCKPT_SERVICE": "off"})
    assert (p.returncode, p.stdout, p.stderr) == (1, "", local.stderr)
    assert p.stderr.startswith("gitckpt: error: ")
    assert "\nhint: " in p.stderr
    j = cli(root, "--json", "save", "t", "--task", "nosuch", env=env)
    assert j.returncode == 1
    assert json.loads(j.stdout)["error"]


def test_a_reader_that_goes_away_ends_a_served_save_as_it_ends_one_run_here(served, tmp_path):
    root, _ = served
    env = no_engine(tmp_path)
    for relay in ("on", "off"):
        read, write = os.pipe()
        os.close(read)  # `gitckpt save ... | head -0`, after head
        try:
            p = subprocess.run([sys.executable, "-m", "gitckpt", "save", f"gone {relay}"],
                               cwd=root, stdout=write, stderr=subprocess.PIPE, text=True,
                               timeout=120, env=env if relay == "on" else
                               {**os.environ, "GITCKPT_SERVICE": "off"})
        finally:
            os.close(write)
        assert (p.returncode, p.stderr) == (141, ""), relay
    assert [s.note.title for s in service.log(root).steps][-2:] == ["gone on", "gone off"]


def test_an_output_of_any_length_passes_whole_and_a_reader_leaving_midway_is_141(
        served, tmp_path):
    """A command's output is not bounded by the service's answer (a patch of 5 MB, longer than
    any answer line the client reads), it arrives byte for byte as run here, and a reader that
    takes a little and leaves in the middle of the write (`| head -c 10`) ends the command with
    git's 141, also where Python's streams are unbuffered (PYTHONUNBUFFERED: a raw write takes
    part of the text and used to drop the rest unsaid, exit 0)."""
    root, _ = served
    big = root / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(200_000)))
    service.save(root, "one")
    big.write_text("".join(f"LINE {i}\n" for i in range(200_000)))
    service.save(root, "two")
    here = {**os.environ, "GITCKPT_SERVICE": "off"}
    args = ["diff", "1", "2", "--patch"]
    want = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=root, env=here,
                          capture_output=True, timeout=120)
    assert want.returncode == 0, want.stderr
    assert len(want.stdout) > 4 << 20
    got = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=root,
                         env=no_engine(tmp_path), capture_output=True, timeout=120)
    assert (got.returncode, got.stderr) == (0, b"")
    assert got.stdout == want.stdout
    for env in (no_engine(tmp_path), here):
        for unbuffered in ("1", ""):
            p = subprocess.Popen([sys.executable, "-m", "gitckpt", *args], cwd=root,
                                 env={**env, "PYTHONUNBUFFERED": unbuffered},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert p.stdout.read(10) == want.stdout[:10]
            p.stdout.close()
            err = p.stderr.read()
            assert (p.wait(120), err) == (141, b""), (env is here, unbuffered)


def test_what_the_relay_refuses_runs_here(served, tmp_path):
    root, _ = served
    env = no_engine(tmp_path)
    # a command line that does not parse: click's own message, from this process
    p = cli(root, "save", env={**os.environ})
    assert p.returncode == 2
    assert "Missing argument 'TITLE'" in p.stderr
    # help is never relayed (it would print in the server)
    assert cli(root, "save", "--help").stdout.startswith("Usage: gitckpt save")
    # another git environment: not served, so this process (without its engine) fails
    other = {**env, "GIT_CONFIG_GLOBAL": str(tmp_path / "other.gitconfig")}
    p = cli(root, "save", "elsewhere", env=other)
    assert p.returncode != 0
    assert "no engine in this process" in p.stderr
    # a command the service does not serve, whose words hold one it does
    p = cli(root, "init", "save", env={**os.environ, "PYTHONPATH": env["PYTHONPATH"]})
    assert p.returncode != 0
    assert "no engine in this process" in p.stderr
    assert "elsewhere" not in [s.note.title for s in service.log(root).steps]


def test_a_service_that_dies_mid_command_is_never_done_twice(tmp_path):
    """A service that took a save and died before it answered: the save is not run again
    here (the dead one may have saved it: a second save is a second step); the command says
    so and exits 1. A capture, which records nothing twice, does run here."""
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    service.init(root, "t")
    (root / "x.txt").write_text("x\n")
    dying = tmp_path / "dying.py"
    dying.write_text(textwrap.dedent("""
        import os, signal, sys, time
        from gitckpt.service.client import address
        from gitckpt.service.listener import Listener
        relay = Listener(address(), lambda request: os.kill(os.getpid(), signal.SIGKILL),
                         lambda request, conn: None)
        assert relay.start()
        print(relay.path, flush=True)
        time.sleep(120)
    """))
    server = subprocess.Popen([sys.executable, str(dying)], stdout=subprocess.PIPE, text=True)
    try:
        sock = server.stdout.readline().strip()
        assert sock.endswith(".sock")
        p = cli(root, "save", "once", "--conclusion", "c")
        assert p.returncode == 1, p.stderr
        assert "stopped before it answered; `gitckpt log` shows whether it was done" \
            in p.stderr, p.stderr
        assert server.wait(30) == -signal.SIGKILL  # it took the request, and died with it
    finally:
        server.kill()
        server.wait()
    assert "once" not in [s.note.title for s in service.log(root).steps]  # died before
    env = {**os.environ, "GITCKPT_SERVICE": "off"}
    assert cli(root, "save", "once", "--conclusion", "c", env=env).returncode == 0
    assert [s.note.title for s in service.log(root).steps].count("once") == 1
    guard.check(status_changes=True)


def test_a_relay_that_took_the_command_and_is_only_slow_is_left_to_finish(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo")
    service.init(root, "t")
    seen = []
    relay = Relay(lambda request: seen.append(request) or time.sleep(3) or {"code": 0})
    assert relay.start()
    try:
        p = cli(root, "save", "slow", env={**os.environ, "GITCKPT_SERVICE_WAIT": "0.5"})
    finally:
        relay.close()
    assert p.returncode == 1
    assert "did not answer in 0.5 s" in p.stderr
    assert "gitckpt log" in p.stderr
    assert [r["request"]["argv"] for r in seen] == [["save", "slow"]]
    assert "slow" not in [s.note.title for s in service.log(root).steps]  # not saved here too


# -- the journal's property, across processes ------------------------------------------------

@pytest.mark.slow
def test_relayed_saves_are_the_files_as_they_are(tmp_path, monkeypatch):
    """The watcher's property test (tests/store/test_journal.py), each save typed in another
    process and served through this one's journal: every tree is git's own."""
    import importlib.util

    from hypothesis import HealthCheck, given, settings

    spec = importlib.util.spec_from_file_location(
        "journal_edits", Path(__file__).parents[1] / "store" / "test_journal.py")
    edits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(edits)
    EDITS, QUIET, apply_edit = edits.EDITS, edits.QUIET, edits.apply_edit
    from gitckpt.safety.sensitive import is_sensitive

    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)
    root = make_repo(tmp_path / "repo")
    (root / "pkg").mkdir()
    for i in range(6):
        (root / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    service.init(root, "watched")
    session = service.watch(root, settings=QUIET)
    if session.watcher.mode != "events":
        session.stop()
        pytest.skip("no file events on this machine")
    relay = Relay(lambda m: answer(m, lambda call: relayed.serve(gitckpt_cli, call)))
    assert relay.start()
    journal = journals.for_root(str(root))
    env = no_engine(tmp_path)

    @settings(max_examples=12, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(batch=EDITS)
    def check(batch):
        for kind, n in batch:
            apply_edit(root, kind, n)
        served = sum(journal.counts.values())
        p = cli(root, "--json", "save", "after edits", env=env)
        assert p.returncode == 0, p.stderr
        expected = git_tree(root, *(str(q.relative_to(root)) for q in root.rglob("*")
                                    if is_sensitive(str(q.relative_to(root)))))
        assert json.loads(p.stdout)["tree"] == expected, batch
        assert sum(journal.counts.values()) == served + 1  # served here, by the journal

    service.capture(root)  # the full scan that makes the journal trusted
    assert journal.trusted

    try:
        check()
        assert journal.counts["hinted"] >= 12  # narrowed, not full scans
    finally:
        relay.close()
        session.watcher.source.stop()
