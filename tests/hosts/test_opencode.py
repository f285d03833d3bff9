"""OpenCode (opencode-ai, pinned in hostlib.PINNED), the real binary, driven through scripted
sessions against a fake OpenAI Chat Completions endpoint on 127.0.0.1, with gitckpt's plugin
(`gitckpt hook install --host opencode`) and its MCP server (`opencode.json` `mcp`) in the
project: no account, no internet.

Two sessions, each run once for the module (`opencode run`, non-interactive):

- `work`: a task with one saved step; the model runs a file-changing shell command, a `write`,
  a failing file-changing shell command, an `ls`, then `ckpt_save`, `ckpt_resume`, `ckpt_log`,
  then changes a file again and ends its turn unsaved (the idle reminder's moment);
- `long`: a task with 30 steps saved by the CLI; the model calls `ckpt_resume`, `ckpt_log`,
  `ckpt_save`: what the model reads of each, at 30 steps.

Each test reads the record of a session: the requests the fake model got, the store (its
notes, read with stock git), the host's stderr (its log, `--print-logs`, and the plugin's
gitckpt hooks' lines, whose stderr OpenCode inherits).

OpenCode's setup, all in the test's temp folders: a provider `fake` of the bundled
`@ai-sdk/openai-compatible` package (nothing is installed from npm), `model`/`small_model`
naming it, `permission: "allow"`, autoupdate and sharing off, XDG_{CONFIG,DATA,CACHE,STATE}_HOME
in the session's home, `PWD` set to the project (`opencode run` takes its folder from PWD, not
from the process's working folder), `--title` given (else a title request to the small model
races the first turn), `OPENCODE_DISABLE_DEFAULT_PLUGINS`, `OPENCODE_DISABLE_MODELS_FETCH`,
`OPENCODE_DISABLE_LSP_DOWNLOAD`, `OPENCODE_DISABLE_CLAUDE_CODE` (no `.claude` files read).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_model import Call, FakeModel, Seen, Step, Turn
from hostlib import gitckpt_bin, host_binary
from proto_chat import ChatCompletions

# one worker runs the module's sessions once where the run groups tests (--dist loadgroup)
pytestmark = [pytest.mark.hosts, pytest.mark.xdist_group("opencode")]

import conftest as root  # noqa: E402  (tests/conftest.py: RepoGuard, make_repo, ...)

#: A fake GitHub token in the user's prompt: gitckpt must keep the prompt without it.
SECRET = "ghp_" + "Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4"
PROMPT = f"Create the files a.txt, b.txt and c.txt. The deploy token is {SECRET}; keep it safe."
STEP_TITLE = "Wire the parser module"  # the step saved before the session: the handoff names it
SAVE_TITLE = "Made the three files"  # the step the model saves through ckpt_save
MODEL_ID = "fake-model"
#: What identifies gitckpt's texts in a request: the handoff's head, the reminder's middle.
HANDOFF_MARK = "gitckpt: the task below was in progress"
REMINDER_MARK = "are not saved as a step"
INSTRUCTIONS_MARK = "gitckpt keeps this task's steps as git commits"
#: Budgets of what the model reads (chars).
BUDGET = {"ckpt_save": 300, "ckpt_resume": 2000, "ckpt_log": 3000, "always": 6000}
HOST_TIMEOUT = 180  # s: a safety net only, never asserted on


# -- the session -------------------------------------------------------------------------------


@dataclass
class Session:
    """The record of one OpenCode session: what the tests read."""

    name: str
    project: Path
    env: dict[str, str]
    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    requests: list[Seen] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    install: list[tuple[list[str], int, str]] = field(default_factory=list)  # hook install's
    # runs: (extra arguments, exit code, what it said)
    task: str = ""
    script_errors: list[str] = field(default_factory=list)  # a scripted step that failed
    mcp_during: list[int] = field(default_factory=list)  # `gitckpt mcp` pids seen mid-session
    mcp_at_exit: list[int] = field(default_factory=list)  # of those, alive as opencode ended
    mcp_after: list[int] = field(default_factory=list)  # of those, alive 5 s later
    guard_error: str | None = None
    calls: dict[str, str] = field(default_factory=dict)  # bare tool -> name the model used
    session_id: str = ""

    def git(self, *args: str) -> str:
        return root.git(self.project, *args)

    def cli(self, *args: str) -> Any:
        """`gitckpt --json ARGS` in the project, with the session's environment."""
        p = subprocess.run([gitckpt_bin(), "--json", *args], cwd=self.project, env=self.env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"gitckpt {' '.join(args)} failed: {p.stderr}"
        return json.loads(p.stdout)

    def notes(self) -> list[dict[str, Any]]:
        """Every note gitckpt keeps (steps and drifts), read with stock git."""
        out = []
        listing = self.git("notes", "--ref=refs/notes/checkpoints", "list")
        for line in listing.splitlines():
            _, obj = line.split()
            text = self.git("notes", "--ref=refs/notes/checkpoints", "show", obj)
            try:
                note = json.loads(text)
            except ValueError:
                continue
            if isinstance(note, dict):
                note["_commit"] = obj
                out.append(note)
        return out

    def drifts(self) -> list[dict[str, Any]]:
        return [n for n in self.notes() if n.get("kind") == "drift"]

    def steps(self) -> list[dict[str, Any]]:
        return [n for n in self.notes() if n.get("kind") != "drift"]

    def pending_prompts(self) -> list[dict[str, Any]]:
        """The prompts heard since the newest step (the store's state, not yet in a note)."""
        out = []
        for path in (self.project / ".git" / "gitckpt").rglob("prompts-*.json"):
            data = json.loads(path.read_text() or "[]")
            out += [p for p in data if isinstance(p, dict)]
        return out

    def stored_prompts(self) -> list[str]:
        """Every prompt text gitckpt keeps: in the step notes and pending in its state."""
        texts = [p.get("text", "") for p in self.pending_prompts()]
        for note in self.steps():
            for p in note.get("prompts") or []:
                texts.append(p.get("text", "") if isinstance(p, dict) else str(p))
        return texts

    def with_text(self, mark: str) -> list[int]:
        """The indexes of the model requests whose body holds `mark`."""
        return [i for i, r in enumerate(self.requests) if mark in r.everything()]

    def results(self, bare: str) -> list[str]:
        """The results of every call of gitckpt's tool `bare`, as the host sent them back."""
        name = self.calls.get(bare)
        if not name or not self.requests:
            return []
        return _results_by_name(self.requests[-1].body, name)


def _results_by_name(body: Any, name: str) -> list[str]:
    """In a Chat Completions request, the result text of each call of tool `name`."""
    ids = []
    messages = [m for m in (body or {}).get("messages") or [] if isinstance(m, dict)]
    for m in messages:
        for c in m.get("tool_calls") or []:
            if (c.get("function") or {}).get("name") == name:
                ids.append(c.get("id"))
    proto = ChatCompletions()
    return [r for r in (proto.tool_result_of(body, i) for i in ids) if r is not None]


def _mcp_pids(runtime: str) -> list[int]:
    """The `gitckpt mcp` processes of this session (their environment names its service
    folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        is_mcp = any(w.endswith("gitckpt") and i + 1 < len(words) and words[i + 1] == "mcp"
                     for i, w in enumerate(words))
        if is_mcp and f"GITCKPT_RUNTIME_DIR={runtime}".encode() in env:
            found.append(int(entry.name))
    return sorted(found)


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def _env(home: Path, runtime: str) -> dict[str, str]:
    """The session's environment: tests/conftest.py's hermetic one (a module's session cannot
    use that function's fixture), plus OpenCode's own folders and switches."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITCKPT_", "OPENCODE_", "XDG_")) and k != "PWD"}
    env.update(root.IDENTITY)
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1", "GITCKPT_RUNTIME_DIR": runtime,
        "GITCKPT_SERVICE_IDLE": "60",
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "NO_COLOR": "1",
    })
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
    return env


def _config(url: str) -> dict[str, Any]:
    """The project's opencode.json: the fake provider, every tool allowed, gitckpt's server."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": f"{url}/v1", "apiKey": "fake-key"},
            "models": {MODEL_ID: {"name": "Fake", "tool_call": True,
                                  "limit": {"context": 200000, "output": 4096}}}}},
        "model": f"fake/{MODEL_ID}",
        "small_model": f"fake/{MODEL_ID}",
        "permission": "allow",
        "mcp": {"gitckpt": {"type": "local", "command": ["gitckpt", "mcp"], "enabled": True}},
    }


def _opencode_run(s: Session, binary: Path) -> None:
    """`opencode run PROMPT`: one turn of the model, then OpenCode ends."""
    proc = subprocess.Popen(
        [str(binary), "run", "--print-logs", "--log-level", "INFO",
         "--title", "gitckpt host test", "--model", f"fake/{MODEL_ID}", PROMPT],
        cwd=s.project, env={**s.env, "PWD": str(s.project)}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        s.stdout, s.stderr = proc.communicate(timeout=HOST_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        s.stdout, s.stderr = proc.communicate()
        s.stderr += f"\n[test] opencode did not end within {HOST_TIMEOUT} s; killed"
    s.code = proc.returncode


def _http(url: str, body: Any = None, timeout: float = HOST_TIMEOUT) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        text = r.read().decode()
    return json.loads(text) if text.strip() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(s: Session, binary: Path, model: FakeModel) -> None:
    """`opencode serve`, as the TUI and the IDEs use it: the session lives on after its turn,
    so a message the plugin sends on `session.idle` is a turn of its own. The test sends the
    prompt over OpenCode's HTTP API, waits until the model has been asked with the idle
    reminder and the session is quiet again, then stops the server with SIGINT (Ctrl-C)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    where = urllib.parse.urlencode({"directory": str(s.project)})
    proc = subprocess.Popen(
        [str(binary), "serve", "--print-logs", "--log-level", "INFO", "--port", str(port)],
        cwd=s.project, env={**s.env, "PWD": str(s.project)}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for _ in range(300):  # until it listens (a safety net of 30 s)
            try:
                _http(f"{base}/session?{where}", timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        session = _http(f"{base}/session?{where}", {"title": "gitckpt host test"})
        s.session_id = session["id"]
        _http(f"{base}/session/{session['id']}/message?{where}", {
            "parts": [{"type": "text", "text": PROMPT}],
            "model": {"providerID": "fake", "modelID": MODEL_ID}})
        # the idle reminder's turn, if it comes: gitckpt's log names each stop hook; the
        # first idle's hook either reminded (then its turn ends in a second idle, a second
        # stop hook) or said nothing (then there is no second turn). Counted, not timed: the
        # deadline is a safety net only.
        log = Path(s.env["XDG_STATE_HOME"]) / "gitckpt" / "gitckpt.log"
        deadline = time.monotonic() + HOST_TIMEOUT
        while time.monotonic() < deadline:
            stops = [ln for ln in (log.read_text() if log.exists() else "").splitlines()
                     if "hook opencode stop:" in ln]
            if stops and ("reminded" not in stops[0] or len(stops) >= 2):
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        s.stdout, s.stderr = proc.communicate(timeout=HOST_TIMEOUT)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        s.stdout, s.stderr = proc.communicate()
        raise
    s.code = proc.returncode


def _run(tmp: Path, name: str, prepare: Callable[[Session], None],
         script: Callable[[Session], list[Step]], serve: bool = False) -> Session:
    """One OpenCode session in a fresh project, its record."""
    binary = host_binary("opencode")
    gitckpt = gitckpt_bin()
    home = tmp / "home"
    home.mkdir()
    runtime = tempfile.mkdtemp(prefix="oc", dir="/tmp")
    env = _env(home, runtime)
    env["PATH"] = f"{Path(gitckpt).parent}{os.pathsep}{env.get('PATH', '')}"
    project = root.make_repo(tmp / "project")
    s = Session(name, project, env)
    try:
        with FakeModel([ChatCompletions()]) as model:
            (project / "opencode.json").write_text(json.dumps(_config(model.url), indent=2))
            prepare(s)
            # the recipe as documented (`--mcp`); where it is refused, the plugin alone (the
            # server is declared in opencode.json above), so the session's checks still run
            for extra in (["--mcp"], []):
                p = subprocess.run([gitckpt, "hook", "install", "--host", "opencode", *extra,
                                    "--yes"], cwd=project, env=env, capture_output=True,
                                   text=True, timeout=60)
                s.install.append((extra, p.returncode, p.stdout + p.stderr))
                if p.returncode == 0:
                    break
            assert p.returncode == 0, f"hook install failed: {s.install}"
            guard = root.RepoGuard(project)
            model.script = script(s)
            if serve:
                _serve(s, binary, model)
            else:
                _opencode_run(s, binary)
            s.mcp_at_exit = _alive(s.mcp_during)
            deadline = time.monotonic() + 5  # a safety net for the report, not asserted on
            while _alive(s.mcp_during) and time.monotonic() < deadline:
                time.sleep(0.1)
            s.mcp_after = _alive(s.mcp_during)
            s.requests = list(model.requests)
            # kept beside the session for a reader of a failure (pytest's temp folder)
            (tmp / "opencode-stderr.txt").write_text(s.stderr)
            (tmp / "requests.json").write_text(json.dumps([r.body for r in s.requests],
                                                          indent=1, ensure_ascii=False))
            s.unknown = list(model.unknown)
            try:
                guard.check(status_changes=True)
            except AssertionError as e:
                s.guard_error = str(e)
    finally:
        for pid in _alive(s.mcp_during):  # the test's own leftovers, by pid
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        root.stop_services(runtime)
    return s


def _step(s: Session, make: Callable[[Seen], Turn]) -> Step:
    """A scripted turn made from the request: a failure is recorded, and the model ends its
    turn instead of leaving the host waiting for an answer that never comes."""
    def turn(seen: Seen) -> Turn:
        if not s.mcp_during:
            s.mcp_during = _mcp_pids(s.env["GITCKPT_RUNTIME_DIR"])
        try:
            return make(seen)
        except Exception as e:  # recorded, and asserted on by the tests
            s.script_errors.append(f"request {len(s.script_errors)}: {e}")
            return Turn(text="Stopping: the script failed.")
    return turn


def _gitckpt_call(s: Session, bare: str, args: dict[str, Any]) -> Step:
    """A call of gitckpt's tool `bare` under the name this request offers it."""
    def make(seen: Seen) -> Turn:
        name = seen.tool(bare)
        s.calls[bare] = name
        return Turn(calls=(Call(name, args),))
    return _step(s, make)


def _shell(s: Session, command: str) -> Step:
    return _step(s, lambda seen: Turn(calls=(Call("bash", {
        "command": command, "description": "Run a command for the test"}),)))


def _cli(s: Session, *args: str) -> str:
    p = subprocess.run([gitckpt_bin(), *args], cwd=s.project, env=s.env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, f"gitckpt {' '.join(args)} failed: {p.stdout}{p.stderr}"
    return p.stdout


def _task(s: Session) -> str:
    return s.cli("log", "--steps", "--limit", "1")["task"]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Session:
    """The `work` session (see the module's text)."""
    def prepare(s: Session) -> None:
        _cli(s, "init", "parser", "--goal", "Build the parser")
        (s.project / "parser.py").write_text("def parse(text):\n    return text.split()\n")
        _cli(s, "save", STEP_TITLE, "--conclusion", "parse() splits words",
             "--next", "Create the files a.txt, b.txt and c.txt")
        s.task = _task(s)

    def script(s: Session) -> list[Step]:
        return [
            _shell(s, "echo x > a.txt"),
            _step(s, lambda seen: Turn(calls=(Call("write", {
                "filePath": str(s.project / "c.txt"), "content": "written by write\n"}),))),
            _shell(s, "echo y > b.txt; exit 3"),
            _shell(s, "ls"),
            _gitckpt_call(s, "ckpt_save", {"title": SAVE_TITLE,
                                           "conclusion": "a.txt, b.txt, c.txt exist",
                                           "next": "Check their contents"}),
            _gitckpt_call(s, "ckpt_resume", {}),
            _gitckpt_call(s, "ckpt_log", {}),
            _shell(s, "echo z > d.txt"),
            Turn(text="The files are made."),
        ]

    return _run(tmp_path_factory.mktemp("oc-work"), "work", prepare, script)


@pytest.fixture(scope="module")
def long(tmp_path_factory) -> Session:
    """The `long` session: 30 steps before it."""
    def prepare(s: Session) -> None:
        _cli(s, "init", "long", "--goal", "A task of many steps")
        for n in range(1, 31):
            (s.project / f"step{n}.txt").write_text(f"step {n}\n")
            _cli(s, "save", f"Step number {n} of the long task",
                 "--conclusion", f"step {n} wrote step{n}.txt", "--next", f"Write step {n + 1}")
        s.task = _task(s)

    def script(s: Session) -> list[Step]:
        return [
            _gitckpt_call(s, "ckpt_resume", {}),
            _gitckpt_call(s, "ckpt_log", {}),
            _gitckpt_call(s, "ckpt_save", {"title": "Step 31", "conclusion": "one more",
                                           "next": "Stop here"}),
            Turn(text="Saved."),
        ]

    return _run(tmp_path_factory.mktemp("oc-long"), "long", prepare, script)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Session:
    """The `served` session: `opencode serve`; the model changes a file and ends its turn
    unsaved; OpenCode goes idle and the plugin sends gitckpt's reminder as the session's
    next message; the model, reminded, saves."""
    def prepare(s: Session) -> None:
        _cli(s, "init", "served", "--goal", "Serve a session")
        (s.project / "parser.py").write_text("def parse(text):\n    return text.split()\n")
        _cli(s, "save", STEP_TITLE, "--conclusion", "parse() splits words",
             "--next", "Create the files")
        s.task = _task(s)

    def script(s: Session) -> list[Step]:
        return [
            _shell(s, "echo s > s.txt"),
            Turn(text="The file is made."),
            _gitckpt_call(s, "ckpt_save", {"title": "Saved after the reminder",
                                           "conclusion": "s.txt exists", "next": "Stop"}),
            Turn(text="Saved."),
        ]

    return _run(tmp_path_factory.mktemp("oc-served"), "served", prepare, script, serve=True)


def _gitckpt_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "gitckpt" in ln]


# -- 1. the recipe installs and the session runs to its end -------------------------------


def test_recipe_installs_with_mcp(work):
    extra, code, said = work.install[0]
    assert extra == ["--mcp"]
    assert code == 0, (
        "`gitckpt hook install --host opencode --mcp --yes` is refused (exit "
        f"{code}) although opencode.json already declares `gitckpt mcp`; it said: {said}")


def test_recipe_installs_the_plugin(work):
    plugin = work.project / ".opencode" / "plugins" / "gitckpt.js"
    assert plugin.is_file(), f"hook install wrote no plugin file; it said: {work.install}"
    text = plugin.read_text()
    assert text.startswith("// gitckpt's "), "the plugin file is not gitckpt's"
    assert 'const ARGS = []' in text, (
        "the plugin's texts name CLI commands (--cli) although opencode.json declares "
        f"gitckpt's MCP server; install said: {work.install}")


def test_session_runs_to_its_end(work, long, served):
    for s in (work, long, served):
        # `opencode serve` has no SIGINT handler: Ctrl-C ends it by the signal itself
        ends = (0, -signal.SIGINT) if s is served else (0,)
        assert s.code in ends, (f"opencode ({s.name}) exited {s.code}; stderr's end:\n"
                                f"{s.stderr[-3000:]}")
        assert not s.script_errors, f"the scripted model could not go on: {s.script_errors}"
        assert not s.unknown, f"opencode asked the fake model for unknown paths: {s.unknown}"


def test_every_scripted_turn_was_asked_for(work):
    # 9 scripted turns: the host came back after every tool call
    assert len(work.requests) >= 9, (
        f"only {len(work.requests)} model requests: the session stopped before its script "
        f"ended; stderr's end:\n{work.stderr[-2000:]}")


# -- 2, 3. the first request: the handoff, and gitckpt's tools --------------------------------


def test_handoff_reaches_the_first_request(work):
    first = work.requests[0]
    assert HANDOFF_MARK in first.system(), (
        "the model's first request has no gitckpt handoff in its system prompt; system "
        f"starts:\n{first.system()[:500]}")
    assert STEP_TITLE in first.system(), (
        f"the handoff in the first request does not name the saved step {STEP_TITLE!r}")


def test_handoff_given_once_per_session(work):
    # the plugin adds it to every request's system prompt (the same session): it must not
    # be doubled within one request
    for i, r in enumerate(work.requests):
        assert r.system().count(HANDOFF_MARK) <= 1, f"request {i} holds the handoff twice"


def test_first_request_offers_gitckpt_tools(work):
    tools = work.requests[0].tools()
    ours = [t for t in tools if "ckpt_" in t]
    assert ours, f"the first request offers no gitckpt tool (MCP not connected yet): {tools}"
    assert any(t.endswith("ckpt_save") for t in ours), ours


# -- 4. drifts attributed to their calls --------------------------------------------------


def _drift_of(s: Session, path: str) -> dict[str, Any] | None:
    for d in s.drifts():
        changes = d.get("changes") or {}
        if any(path in (changes.get(k) or []) for k in ("added", "modified", "deleted")):
            return d
    return None


@pytest.mark.parametrize(("path", "tool", "command"), [
    ("a.txt", "bash", "echo x > a.txt"),
    ("c.txt", "write", None),
    ("b.txt", "bash", "echo y > b.txt; exit 3"),
    ("d.txt", "bash", "echo z > d.txt"),
], ids=["shell", "write", "failing-shell", "shell-after-save"])
def test_file_change_is_a_drift_of_its_call(work, path, tool, command):
    d = _drift_of(work, path)
    assert d is not None, (
        f"{path} (made by {tool} {command or ''}) is in no drift; drifts: "
        f"{[(x.get('changes'), x.get('tool')) for x in work.drifts()]}")
    assert d.get("trigger") == "tool", f"{path}'s drift was not made by a tool hook: {d}"
    t = d.get("tool") or {}
    assert t.get("name") == tool, f"{path}'s drift names tool {t.get('name')!r}, not {tool!r}"
    assert t.get("host") == "opencode", f"{path}'s drift names host {t.get('host')!r}"
    if command is not None:
        assert t.get("command") == command, (
            f"{path}'s drift names the command {t.get('command')!r}, not {command!r}")
    assert t.get("session", "").startswith("ses_"), f"no OpenCode session id: {t}"


def test_ls_makes_no_drift(work):
    ls = [d for d in work.drifts() if (d.get("tool") or {}).get("command") == "ls"]
    assert not ls, f"`ls` changed nothing but made drifts: {ls}"
    changing = sum(1 for d in work.drifts() if d.get("trigger") == "tool")
    assert changing == 4, (
        f"{changing} tool drifts; 4 file-changing calls were made (echo, write, failing echo, "
        "echo after the save)")


# -- 5. the user's prompt, kept and redacted ---------------------------------------------


def test_prompt_is_recorded(work):
    texts = work.stored_prompts()
    assert any("Create the files a.txt" in t for t in texts), (
        f"the user's prompt is not kept; prompts: {texts}")
    d = _drift_of(work, "a.txt")
    assert d is not None, "a.txt is in no drift"
    assert (d.get("tool") or {}).get("prompt"), "the first drift names no prompt"


def test_prompt_is_redacted(work):
    texts = work.stored_prompts()
    leaked = [t for t in texts if SECRET in t]
    assert not leaked, f"the prompt's token is kept verbatim: {leaked}"
    notes = work.git("notes", "--ref=refs/notes/checkpoints", "list")
    for line in notes.splitlines():
        obj = line.split()[1]
        shown = work.git("notes", "--ref=refs/notes/checkpoints", "show", obj)
        assert SECRET not in shown, f"the token is in note {obj}"


# -- 6. ckpt_save through MCP makes the step -------------------------------------------------


def test_mcp_save_makes_the_step(work):
    titles = [n.get("title") for n in work.steps()]
    assert SAVE_TITLE in titles, f"the model's ckpt_save made no step; steps: {titles}"
    saved = next(n for n in work.steps() if n.get("title") == SAVE_TITLE)
    prompts = [p.get("text", "") if isinstance(p, dict) else str(p)
               for p in saved.get("prompts") or []]
    assert any("Create the files" in p for p in prompts), (
        f"the step saved through MCP does not take in the session's prompt: {prompts}")


# -- 7. what the model reads ---------------------------------------------------------------


def _measure(s: Session, bare: str) -> int:
    found = s.results(bare)
    assert found, f"no result of {bare} in the last request ({s.name})"
    return len(found[0])


@pytest.mark.parametrize("bare", ["ckpt_save", "ckpt_resume", "ckpt_log"])
def test_tool_result_budget_at_2_steps(work, bare, record_property):
    size = _measure(work, bare)
    record_property(f"{bare}_2_steps", size)
    print(f"[opencode] {bare} result at 2 steps: {size} chars")
    assert size <= BUDGET[bare], (
        f"the model reads {size} chars of {bare}'s result at 2 steps; budget {BUDGET[bare]}:\n"
        f"{work.results(bare)[0][:600]}")


@pytest.mark.parametrize("bare", ["ckpt_save", "ckpt_resume", "ckpt_log"])
def test_tool_result_budget_at_30_steps(long, bare, record_property):
    size = _measure(long, bare)
    record_property(f"{bare}_30_steps", size)
    print(f"[opencode] {bare} result at 30 steps: {size} chars")
    assert size <= BUDGET[bare], (
        f"the model reads {size} chars of {bare}'s result at 30 steps; budget "
        f"{BUDGET[bare]}:\n{long.results(bare)[0][:600]}")


def test_always_loaded_part_budget(work, record_property):
    first = work.requests[0]
    defs = ChatCompletions().tool_definitions(first.body)
    ours = [d for d in defs if "ckpt_" in (d.get("function") or {}).get("name", "")]
    size = sum(len(json.dumps(d, ensure_ascii=False, separators=(",", ":"))) for d in ours)
    forwarded = INSTRUCTIONS_MARK in first.system()
    # the server's instructions count where OpenCode forwards them to the model
    if forwarded:
        size += len(root_instructions())
    record_property("always_loaded", size)
    print(f"[opencode] always loaded: {len(ours)} tool definitions, {size} chars; server "
          f"instructions forwarded: {forwarded}")
    assert ours, "no gitckpt tool definitions in the first request"
    assert size <= BUDGET["always"], (
        f"gitckpt's tool definitions take {size} chars of every request; budget "
        f"{BUDGET['always']}")


def root_instructions() -> str:
    from gitckpt.mcp.handshake import INSTRUCTIONS

    return INSTRUCTIONS


# -- 8. every tool name gitckpt's texts give is one the host offers ----------------------------


_CALLED = re.compile(r"\b([A-Za-z0-9_]*ckpt_[a-z_]+)\(")


def test_texts_name_tools_the_host_offers(work, served):
    first = work.requests[0]
    offered = set(first.tools())
    # the handoff (the plugin pushes it last into the system prompt): from its head on; the
    # MCP server's own instructions, which OpenCode also puts there, are not the hooks' texts
    texts = [r.system()[r.system().find(HANDOFF_MARK):] for r in (first, served.requests[0])
             if HANDOFF_MARK in r.system()]
    texts += [t for r in served.requests for t in r.user_texts() if REMINDER_MARK in t]
    named = {m for t in texts for m in _CALLED.findall(t)}
    assert named, "gitckpt's texts name no tool call at all"
    wrong = sorted(n for n in named if n not in offered)
    assert not wrong, (
        f"the handoff/reminder tell the model to call {wrong}, which OpenCode does not "
        f"offer; it offers gitckpt's tools as "
        f"{sorted(t for t in offered if 'ckpt_' in t)}")


# -- 9. the idle reminder reaches the model once --------------------------------------------


def test_idle_reminder_is_given(work, served):
    for s in (work, served):
        said = [ln for ln in _gitckpt_lines(s.stderr) if "stop: reminded" in ln]
        assert len(said) == 1, (
            f"gitckpt's stop hook reminded {len(said)} times ({s.name}; 1 unsaved stretch); "
            f"its lines: {_gitckpt_lines(s.stderr)[-10:]}")


def test_under_opencode_run_the_reminder_is_none_and_the_handoff_says_it(work):
    """`opencode run` ends at the session's first idle: the plugin's stop hook answers while
    OpenCode disposes the instance, and the message it sends never becomes a turn (no event
    of OpenCode's keeps `run` open for it; docs/hosts.md says so). What was left unsaved
    reaches the next session all the same: its handoff names the files."""
    assert not work.with_text(REMINDER_MARK), (
        "a model request under `opencode run` holds the idle reminder: OpenCode now keeps "
        "the instance for it; docs/hosts.md says it does not")
    handoff = work.cli("resume")["text"]
    assert "d.txt" in handoff, f"the next handoff does not name the unsaved d.txt: {handoff}"


def test_idle_reminder_reaches_the_model_once_served(served):
    asked = served.with_text(REMINDER_MARK)
    assert asked, ("`opencode serve`: no model request holds the idle reminder; gitckpt lines: "
                   f"{_gitckpt_lines(served.stderr)[-10:]}")
    first = served.requests[asked[0]]
    last_user = first.user_texts()[-1]
    assert REMINDER_MARK in last_user, (
        f"the reminder is not the newest message of its request: {last_user[:300]}")
    count = served.requests[-1].everything().count(REMINDER_MARK)
    assert count == 1, f"the reminder is in the conversation {count} times (1 unsaved stretch)"
    titles = [n.get("title") for n in served.steps()]
    assert "Saved after the reminder" in titles, (
        f"the reminded model's ckpt_save made no step: {titles}")


# -- 10. nothing of gitckpt's stored as a prompt --------------------------------------------


@pytest.mark.parametrize("which", ["work", "served"])
def test_nothing_of_gitckpt_stored_as_a_prompt(request, which):
    s = request.getfixturevalue(which)
    texts = s.stored_prompts()
    ours = [t for t in texts
            if t.startswith("gitckpt:") or REMINDER_MARK in t or HANDOFF_MARK in t]
    assert not ours, (
        f"gitckpt's own reminder (sent by the plugin as the session's next message, a user "
        f"message to OpenCode's chat.message hook) is stored as a user prompt ({s.name}): "
        f"{ours}")
    assert any("Create the files a.txt" in t for t in texts), texts


# -- 11. no gitckpt error in the host's log -----------------------------------------------


_ERROR = re.compile(r"error|traceback|failed|exception", re.I)


def test_no_gitckpt_error_in_host_log(work, long, served):
    for s in (work, long, served):
        bad = [ln for ln in s.stderr.splitlines()
               if "gitckpt" in ln.lower() and _ERROR.search(ln)
               and "exit 3" not in ln]  # the scripted failing command is no error of ours
        assert not bad, f"gitckpt errors in opencode's log ({s.name}):\n" + "\n".join(bad[:10])
        # the hooks' own log lines: every hook ran (not an internal error)
        internal = [ln for ln in _gitckpt_lines(s.stderr) if "internal error" in ln]
        assert not internal, internal


def test_mcp_server_connected(work):
    assert work.mcp_during, "no `gitckpt mcp` process ran during the session"
    failed = [ln for ln in work.stderr.splitlines()
              if "mcp" in ln.lower() and "gitckpt" in ln and re.search(r"fail|error", ln, re.I)]
    assert not failed, failed


# -- 12. the MCP server ends with the host --------------------------------------------------


def test_mcp_server_ends_with_the_host(work, long, served):
    for s in (work, long, served):
        assert s.mcp_during, f"no `gitckpt mcp` process was seen ({s.name})"
        print(f"[opencode] {s.name}: gitckpt mcp pids {s.mcp_during}, alive as opencode "
              f"exited (code {s.code}): {s.mcp_at_exit}, 5 s later: {s.mcp_after}")
        assert not s.mcp_after, (
            f"`gitckpt mcp` (pids {s.mcp_after}) still runs 5 s after opencode ended "
            f"({s.name}; alive at its exit: {s.mcp_at_exit})")


# -- after every session ------------------------------------------------------------------


def test_users_repository_untouched(work, long, served):
    for s in (work, long, served):
        assert s.guard_error is None, (
            f"the user's repository changed during the session ({s.name}): {s.guard_error}")

