"""The real CLI in subprocesses: the user's session, output, --json, exit codes, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import filelock
import pytest
from conftest import git, run_cli, service

from gitckpt import __version__


def test_the_session_from_the_issue(repo, guard):
    r = run_cli("-C", str(repo), "init", "Refactor auth", "--goal", "move sessions to JWT",
                "--exclude", "*.log")
    assert r.code == 0, r.err
    assert "Started task refactor-auth-" in r.out
    assert r.err == ""
    task = r.out.split("Started task ")[1].split()[0]
    guard.check()
    (repo / "src" / "auth.py").write_text("def sign(): ...\n")
    guard.reset()
    r = run_cli("save", "Extract token signing", "--conclusion", "signing centralised",
                "--next", "switch the views", "--verified",
                "pytest tests/test_auth.py: 12 passed", "--question", "refresh tokens too?",
                cwd=repo)
    assert r.code == 0, r.err
    assert r.out.startswith(f"Saved step 1 of {task} as ")
    assert "1 added, 0 modified, 0 deleted" in r.out
    guard.check()
    (repo / "src" / "app.py").write_text("print('unsaved')\n")
    guard.reset()
    r = run_cli("resume", cwd=repo)
    assert r.code == 0, r.err
    for text in ("Refactor auth", "Goal: move sessions to JWT", "step 1",
                 "Conclusion: signing centralised", "Next: switch the views",
                 "refresh tokens too?", "M src/app.py"):
        assert text in r.out
    r = run_cli("log", cwd=repo)
    assert r.code == 0
    assert "Extract token signing" in r.out
    assert "init: Refactor auth" not in r.out
    assert "  1  " in r.out
    assert "  0  " in r.out
    r = run_cli("tasks", cwd=repo)
    assert r.code == 0
    assert f"* {task}" in r.out
    assert "active" in r.out
    plain = git(repo, "log", "--notes=checkpoints", f"refs/checkpoints/{task}/head")
    assert "step 1: Extract token signing" in plain
    assert '"conclusion": "signing centralised"' \
        in plain
    guard.check()


def test_json_output_is_the_service_result(repo):
    r = run_cli("--json", "init", "t", "--plan", "a=done", cwd=repo)
    data = json.loads(r.out)
    assert data["step"] == 0
    assert data["active"] is True
    assert data["plan"] == [
        {"item": "a", "status": "done"}]
    r = run_cli("--json", "resume", cwd=repo)
    assert json.loads(r.out) == json.loads(json.dumps(service.resume(repo).to_dict()))
    r = run_cli("--json", "log", cwd=repo)
    assert json.loads(r.out) == json.loads(json.dumps(service.log(repo).to_dict()))
    r = run_cli("--json", "save", "s", cwd=repo)
    assert json.loads(r.out)["step"] == 1


def test_user_errors_exit_1_with_a_hint(repo, tmp_path):
    cases = [
        (["save", "x"], "No active task", "gitckpt init"),
        (["resume"], "No active task", "gitckpt init"),
        (["log", "--task", "nope-0000"], "No task named", "gitckpt tasks"),
        (["log", "--task", "BAD ID"], "Not a valid task id", "lowercase"),
        (["init", "t", "--exclude", "[z-a]"], "Bad --exclude pattern", ".gitignore"),
        (["init", "t", "--plan", "x=later"], "Unknown plan status", "pending"),
    ]
    for args, message, hint in cases:
        r = run_cli("-C", str(repo), *args)
        assert r.code == 1, (args, r)
        assert message in r.err, (args, r.err)
        assert hint in r.err, (args, r.err)
        assert "Traceback" not in r.err, (args, r.err)
        assert r.out == ""
    r = run_cli("-C", str(repo), "--json", "save", "x")
    assert r.code == 1
    assert json.loads(r.out)["error"] == "no_active_task"


def test_closed_task_refuses_saves(repo):
    run_cli("init", "t", cwd=repo)
    assert run_cli("save", "done", "--close", cwd=repo).code == 0
    r = run_cli("save", "more", cwd=repo)
    assert r.code == 1
    assert "closed" in r.err
    assert "hint:" in r.err


def test_bad_workspaces(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    for where, message in [(f, "not a directory"), (tmp_path / "missing", "does not exist")]:
        r = run_cli("-C", str(where), "tasks")
        assert r.code == 1, r
        assert message in r.err, r
        assert "hint:" in r.err, r
    r = run_cli("-C", str(tmp_path), "tasks")  # a plain folder: no store until init
    assert r.code == 0
    assert "No tasks yet" in r.out
    assert not (tmp_path / ".gitckpt").exists()


def test_inside_dot_git_is_refused(repo):
    r = run_cli("-C", str(repo / ".git"), "tasks")
    assert r.code == 1
    assert "inside a git directory" in r.err


def test_store_that_cannot_be_written(repo, guard):
    (repo / ".git" / "gitckpt").write_text("in the way\n")  # a file where our folder goes
    r = run_cli("init", "t", cwd=repo)
    assert r.code == 1
    assert "Cannot" in r.err
    assert "hint:" in r.err
    assert "Traceback" not in r.err
    (repo / ".git" / "gitckpt").unlink()
    guard.check()


def test_usage_errors_exit_2(repo):
    assert run_cli("frobnicate", cwd=repo).code == 2
    assert run_cli("save", cwd=repo).code == 2
    assert run_cli("init", "t", "--bogus", cwd=repo).code == 2


def test_version_and_help():
    r = run_cli("--version")
    assert r.code == 0
    assert __version__ in r.out
    r = run_cli("--help")
    assert r.code == 0
    assert "init" in r.out
    assert "resume" in r.out


def test_a_bug_exits_3_with_the_traceback_in_the_log(repo, hermetic):
    code = ("import sys, gitckpt.cli.main as c, gitckpt.service.dispatch as d\n"
            "from gitckpt.core.operations import TasksRequest\n"
            "d.HANDLERS[TasksRequest] = lambda *a, **k: {}['boom']\n"
            "c.main(['tasks'])\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert p.returncode == 3
    assert p.stderr.count("\n") == 1
    assert "internal error" in p.stderr
    assert "KeyError" in p.stderr
    logfile = hermetic / ".state" / "gitckpt" / "gitckpt.log"
    assert "Traceback" in logfile.read_text()
    assert "boom" in logfile.read_text()


def _tasks_raising(repo, exception: str) -> subprocess.CompletedProcess:
    """`gitckpt tasks` in its own process, its service call raising `exception` (source)."""
    code = ("import sys, gitckpt.cli.main as c, gitckpt.service.dispatch as d\n"
            "from gitckpt.core.operations import TasksRequest\n"
            "def boom(*a, **k):\n"
            f"    raise {exception}\n"
            "d.HANDLERS[TasksRequest] = boom\n"
            "c.main(['tasks'])\n")
    return subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True)


def test_a_bug_whose_message_is_not_utf8_is_still_logged(repo, hermetic):
    """A file name that is not UTF-8 reaches a message as surrogates; the log escapes them."""
    p = _tasks_raising(repo, "ValueError('caf\\udce9')")
    assert p.returncode == 3, p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr
    logfile = hermetic / ".state" / "gitckpt" / "gitckpt.log"
    assert "caf\\udce9" in logfile.read_text()


def _closed_reader(args: list[str], cwd, given: str = "") -> subprocess.CompletedProcess:
    """The CLI writing to a pipe whose reader has gone (`gitckpt log | head -1`, after head)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=cwd, stdout=write,
                              stderr=subprocess.PIPE, input=given, text=True, timeout=60)
    finally:
        os.close(write)


def test_a_reader_that_goes_away_ends_the_command_quietly_after_its_work(repo, guard):
    run_cli("init", "t", "--goal", "g", cwd=repo)
    (repo / "new.txt").write_text("x\n")
    guard.reset()
    # resume and save by the quick parser, log and --json by click's, --version and --help
    # before either
    for args in (["resume"], ["log"], ["--json", "resume"], ["--json", "log"], ["--version"],
                 ["--help"], ["log", "--help"], ["save", "piped", "--conclusion", "c"]):
        p = _closed_reader(args, repo)
        assert (p.returncode, p.stderr) == (141, ""), args  # git's code under SIGPIPE
    r = run_cli("--json", "log", cwd=repo)
    assert [s["title"] for s in json.loads(r.out)["steps"]].count("piped") == 1  # work done
    start = json.dumps({"session_id": "s1", "cwd": str(repo), "source": "startup",
                        "hook_event_name": "SessionStart"})
    p = _closed_reader(["hook", "session-start"], repo, start)  # its handoff on stdout
    assert (p.returncode, "Traceback" in p.stderr) == (0, False), p.stderr  # never fail a host
    assert "handoff" in p.stderr, p.stderr
    p = _closed_reader(["--json", "resume", "--task", "nope"], repo)
    assert p.returncode == 1  # an error is still said where it can be read
    assert "No task named 'nope'" in p.stderr
    assert "Traceback" not in p.stderr
    guard.check()


#: Every command that writes to standard output, as a user pipes it into `head`.
PIPED = [["diff", "1"], ["diff", "0", "1", "--patch"], ["why", "a.txt"], ["blame", "a.txt"],
         ["search", "piped"], ["report"], ["report", "--html"], ["restore", "0"],
         ["revert", "1"], ["tasks"], ["doctor"], ["completion", "bash"], ["service", "status"],
         ["--json", "diff", "1"], ["capture"]]


@pytest.mark.parametrize("relay", ["on", "off"])
def test_a_reader_gone_ends_every_command_with_141(repo, guard, relay, hermetic):
    """Every command that writes to standard output, served or run here, ends with git's 141
    and says nothing when its reader has gone, its work done."""
    run_cli("init", "piped", cwd=repo)
    (repo / "a.txt").write_text("one\n")
    run_cli("save", "piped one", cwd=repo)
    (repo / "a.txt").write_text("two\n")
    guard.reset()
    env = {**os.environ, "GITCKPT_SERVICE": relay}
    for args in PIPED:
        read, write = os.pipe()
        os.close(read)
        try:
            p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=repo, stdout=write,
                               stderr=subprocess.PIPE, text=True, timeout=120, env=env)
        finally:
            os.close(write)
        assert (p.returncode, p.stderr) == (141, ""), args
    r = run_cli("--json", "log", cwd=repo)
    assert json.loads(r.out)["drifts"], r.out  # `capture` recorded the edit
    guard.check()


def test_a_broken_pipe_in_a_commands_work_is_still_a_bug(repo, hermetic):
    """Only gitckpt's own output going nowhere ends quietly; a broken pipe elsewhere (a socket,
    a child) is reported as the bug it is."""
    p = _tasks_raising(repo, "BrokenPipeError(32, 'a socket of its own')")
    assert p.returncode == 3, p.stderr
    assert "internal error (BrokenPipeError" in p.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_an_output_that_cannot_be_written_is_one_error_line(repo, guard):
    run_cli("init", "t", cwd=repo)
    guard.reset()
    with open("/dev/full", "w") as full:
        for args, says in ((["resume"], "output"), (["log"], "output"), (["--version"], "output"),
                           (["--help"], "output"), (["log", "--help"], "output"),
                           (["--json", "resume", "--task", "nope"], "No task named 'nope'")):
            p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=repo, stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            assert p.returncode == 1, (args, p.stderr)
            assert says in p.stderr, (args, p.stderr)
            assert "Traceback" not in p.stderr, p.stderr
            assert "Exception ignored" not in p.stderr, p.stderr
            if says == "output":
                assert p.stderr.startswith("gitckpt: error: cannot write to standard output: ")
    guard.check()


def test_an_install_whose_diff_no_one_reads_is_written_whole(tmp_path):
    (tmp_path / "w").mkdir()
    p = _closed_reader(["hook", "install", "--host", "claude", "--mcp", "--yes"], tmp_path / "w")
    assert (p.returncode, p.stderr) == (141, "")
    assert json.loads((tmp_path / "w" / ".claude" / "settings.json").read_text())["hooks"]
    assert "gitckpt" in json.loads((tmp_path / "w" / ".mcp.json").read_text())["mcpServers"]


def test_a_hook_in_a_folder_deleted_under_it_does_nothing_and_exits_0(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
            "sys.argv = ['gitckpt', 'hook', 'session-start']; "
            "from gitckpt.entry import main; main()")
    p = subprocess.run([sys.executable, "-c", code], input="{}", capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert (p.returncode, p.stdout) == (0, ""), p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    assert "nothing done" in p.stderr, p.stderr


def test_a_closed_stdout_is_dev_null_and_no_file_takes_its_number(repo, guard):
    run_cli("init", "t", cwd=repo)
    (repo / "new.txt").write_text("x\n")
    guard.reset()
    for args in ("resume", "log", "--json resume", "save closed --conclusion c"):
        p = subprocess.run(f"exec {sys.executable} -m gitckpt {args} >&-", shell=True,
                           cwd=repo, capture_output=True, text=True, timeout=60)
        assert (p.returncode, p.stderr) == (0, ""), args
    r = run_cli("--json", "log", cwd=repo)
    assert [s["title"] for s in json.loads(r.out)["steps"]].count("closed") == 1
    assert run_cli("doctor", cwd=repo).code == 0
    kept = (repo / ".git" / "gitckpt").rglob("*")  # no output went into a file it opened
    assert not [f for f in kept if f.is_file() and b"Saved step" in f.read_bytes()]
    guard.check()


def test_busy_store_and_interrupt(repo):
    run_cli("init", "t", cwd=repo)
    lock = filelock.FileLock(str(repo / ".git" / "gitckpt" / "lock"))
    with lock:
        r = run_cli("save", "blocked", cwd=repo, env={"GITCKPT_LOCK_TIMEOUT": "0.5"})
        assert r.code == 1
        assert "busy" in r.err
        assert "Retry" in r.err
        p = subprocess.Popen([sys.executable, "-m", "gitckpt", "save", "waiting"], cwd=repo,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 8  # where /proc has no wchan, a plain wait
        while not _sleeping(p.pid) and time.monotonic() < deadline:
            assert p.poll() is None  # filelock's poll loop: it waits for the lock now
            time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 130, err
        assert "interrupted" in err
    assert run_cli("log", cwd=repo).out.count("blocked") == 0


def _sleeping(pid: int) -> bool:
    """True once the process sleeps in a timer (the first sleep of a save is the lock wait)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return "nanosleep" in f.read()
    except OSError:
        return False


def test_python_dash_m_and_logs_never_on_stdout_for_errors(repo):
    r = run_cli("save", "x", cwd=repo)
    assert r.out == ""
    assert r.err


def test_demo(tmp_path):
    where = tmp_path / "demo"
    r = run_cli("demo", "--dir", str(where))
    assert r.code == 0, r.err
    assert str(where) in r.out
    assert "Changed after step 2, re-read before editing" in r.out
    assert "step 2: Add tests" in r.out
    assert '"kind": "init"' in r.out
    assert "Restored greet.py from step 2" in r.out
    assert "--apply --yes` undoes it" in r.out
    assert "capitalize" in (where / "greet.py").read_text()  # put back from step 2
    assert "Usage" in (where / "README.md").read_text()  # outside the path filter: kept
    assert (where / ".git").is_dir()
    assert "not-a-real-token" not in git(where, "log", "-p", "--notes=checkpoints",
                                         "--glob=refs/checkpoints/*")
    r = run_cli("demo", "--dir", str(where))
    assert r.code == 1
    assert "not an empty folder" in r.err
    assert os.environ.get("GIT_INDEX_FILE") is None


def test_a_note_from_a_newer_gitckpt_is_refused_cleanly(repo):
    run_cli("init", "t", cwd=repo)
    task = service.tasks(repo).active
    git(repo, "notes", "--ref=checkpoints", "add", "-f", "-m", '{"schema": 99, "kind": "init"}',
        f"refs/checkpoints/{task}/head")
    for args in (["resume"], ["log"], ["save", "x"], ["tasks"]):
        r = run_cli(*args, cwd=repo)
        assert r.code == 1, (args, r)
        assert "format version 99" in r.err, (args, r)
        assert "Upgrade" in r.err, (args, r)


def test_json_errors_follow_the_parsed_option_not_the_word(tmp_path):
    """`--json` as the value of another option is that value, not the output format."""
    (tmp_path / "w").mkdir()
    r = run_cli("-C", str(tmp_path / "w"), "save", "--conclusion", "--json", "title")
    assert r.code == 1
    assert r.out == ""
    assert "No active task" in r.err
    r = run_cli("-C", str(tmp_path / "w"), "--json", "save", "title")
    assert r.code == 1
    assert json.loads(r.out)["error"] == "no_active_task"
    assert run_cli("--version").code == 0
    assert run_cli("--help").code == 0
