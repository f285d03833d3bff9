"""Claude Code (the pinned npm release) with gitckpt installed the way users do, as the plugin
(this repository is its own marketplace), driven with `claude -p` against a scripted fake
Anthropic Messages endpoint on 127.0.0.1: no account, no internet.

One module-scoped record holds four sessions, which the tests below read:

* A1, in a repository whose task has step 1 ("Set up the parser skeleton"): a shell call that
  writes a.txt, a Write of c.txt, a FAILING shell call that writes b.txt, a shell `ls`, then
  the turn ends (the Stop hook reminds), and ends again without saving;
* A2, the same conversation resumed (`--resume`): the turn ends, nothing new changed;
* A3, resumed again: ToolSearch loads ckpt_save/resume/log, the model saves step 2, reads the
  resume and the log;
* B, in a repository whose task has 30 steps: ToolSearch loads every gitckpt tool, the model
  reads the resume and the log, changes a file and saves.

What Claude Code 2.1.332 does, as measured here (see the tests for each):
* MCP tools are deferred: the request's `tools` has only the built-in tools; the MCP tools are
  announced by name in a `role: system` message ("The following deferred tools are now
  available via ToolSearch ..."), named `mcp__plugin_gitckpt_gitckpt__ckpt_save` and so on;
  the model calls them directly, or loads their definitions with `ToolSearch`
  ("select:NAME,...") and then they are in `tools`.
* SessionStart's additionalContext arrives in the first request as that same `role: system`
  message, as "SessionStart hook additional context: ..." before Claude Code's "# Environment".
* The Stop hook's additionalContext arrives after the assistant's last text as a user message
  "<system-reminder>\\nStop hook additional context: ...</system-reminder>", and the turn goes
  on (the next Stop has `stop_hook_active`).
* At exit Claude Code sends SIGINT to a stdio MCP server, polls it every 50 ms, sends SIGTERM
  after 100 ms ("SIGINT failed, sending SIGTERM to MCP server process" in its debug log) and
  SIGKILL 400 ms later.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_model import Call, FakeModel, Seen, Turn
from hostlib import gitckpt_bin, host_binary
from proto_anthropic import Anthropic

ROOT = Path(__file__).resolve().parents[2]
SERVER = "plugin:gitckpt:gitckpt"  # the plugin's MCP server, as Claude Code names it
PREFIX = "mcp__plugin_gitckpt_gitckpt__"  # its tools' prefix, as the model sees them
SECRET = "ghp_" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4"  # a fake GitHub token: 36 alnum
STEP1 = "Set up the parser skeleton"
SAVED = "Write the three files"
PROMPTS = {"A1": f"Write the files; the token is {SECRET}, keep it out of the notes",
           "A2": "Anything else to do?", "A3": "Save the step now.", "B": "Read the task."}
STOP_CONTEXT = "Stop hook additional context:"
START_CONTEXT = "SessionStart hook additional context:"
BUDGETS = {"ckpt_save": 300, "ckpt_resume": 2_000, "ckpt_log": 3_000, "loaded": 6_000}

pytestmark = [pytest.mark.xdist_group("host-claude")]


def _root_conftest(config: pytest.Config) -> Any:
    """tests/conftest.py (make_repo, RepoGuard, stop_services, IDENTITY)."""
    import conftest

    return conftest


# -- the scripted model -------------------------------------------------------------------

Play = Callable[[Seen], Turn]


class Driver:
    """A conversation: each model request gets the next play's turn, made from the request;
    `results[label]` is what the model read back for the call made by the play `label` (the
    newest tool result of the request that follows it). A request without tools (none seen
    in 2.1.332, but Claude Code may ask a small model for a title) gets a plain answer and
    does not advance the script."""

    def __init__(self, plays: list[tuple[str, Play]]) -> None:
        self.plays = list(plays)
        self.results: dict[str, str] = {}
        self.asked: dict[str, int] = {}  # label -> the 0-based index of the request it answered
        self.requests: list[Seen] = []
        self._pending: str | None = None

    def __call__(self, seen: Seen) -> Turn:
        if not seen.protocol.tools(seen.body):
            return Turn(text="ok")
        self.requests.append(seen)
        if self._pending is not None:
            results = seen.tool_results()
            self.results[self._pending] = results[-1] if results else ""
            self._pending = None
        if not self.plays:
            return Turn(text="Done.")
        label, play = self.plays.pop(0)
        turn = play(seen)
        self.asked[label] = len(self.requests) - 1
        if turn.calls:
            self._pending = label
        return turn


def text(words: str) -> Play:
    return lambda seen: Turn(text=words)


def bash(command: str) -> Play:
    return lambda seen: Turn(calls=(Call("Bash", {"command": command,
                                                  "description": "run " + command}),))


def tool(name: str, **args: Any) -> Play:
    """A call of gitckpt's tool `name` (ckpt_save), named as this request offers it."""
    return lambda seen: Turn(calls=(Call(seen.tool(name), args),))


def load(*names: str) -> Play:
    """ToolSearch "select:" of gitckpt's tools `names` (none: every one offered)."""
    def play(seen: Seen) -> Turn:
        wanted = [seen.tool(n) for n in names] if names else \
            [t for t in seen.tools() if t.startswith(PREFIX)]
        return Turn(calls=(Call("ToolSearch", {"query": "select:" + ",".join(wanted),
                                               "max_results": len(wanted)}),))
    return play


# -- the sessions ---------------------------------------------------------------------------


@dataclass
class Session:
    name: str
    code: int
    stdout: str
    stderr: str
    debug: str  # Claude Code's --debug-file
    requests: list[Seen]
    unknown: list[str]
    driver: Driver
    leftover: list[str]  # `gitckpt mcp` processes of this test still running after the exit
    guard: str | None  # RepoGuard's complaint after the session, if any
    session_id: str | None = None


@dataclass
class World:
    env: dict[str, str]
    home: Path
    tmp: Path
    installed: list[tuple[list[str], int, str]] = field(default_factory=list)
    sessions: dict[str, Session] = field(default_factory=dict)
    repos: dict[str, Path] = field(default_factory=dict)
    setup: dict[str, str] = field(default_factory=dict)

    def gk(self, repo: Path, *args: str, check: bool = True) -> str:
        """The gitckpt CLI in `repo`, as the user runs it."""
        p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=repo, env=self.env,
                           capture_output=True, text=True, timeout=120)
        assert not check or p.returncode == 0, (args, p.stdout, p.stderr)
        return p.stdout

    def gk_json(self, repo: Path, *args: str) -> Any:
        return json.loads(self.gk(repo, "--json", *args))


def _leftover_servers(config_dir: str) -> list[str]:
    """`gitckpt mcp` processes started for this test's Claude Code (its CLAUDE_CONFIG_DIR
    in their environment) that still run."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        names = [a.decode(errors="replace") for a in argv]
        if "mcp" in names and any("gitckpt" in a for a in names) and state != "Z" \
                and f"CLAUDE_CONFIG_DIR={config_dir}".encode() in environ:
            found.append(f"{pid}: {' '.join(names)}")
    return found


def _run(world: World, name: str, repo: Path, plays: list[tuple[str, Play]],
         guard: Any, resume: str | None = None) -> Session:
    driver = Driver(plays)
    debug = world.tmp / f"debug-{name}.txt"
    args = [str(host_binary("claude")), "-p", PROMPTS[name], "--output-format", "stream-json",
            "--verbose", "--dangerously-skip-permissions", "--debug-file", str(debug)]
    if resume:
        args += ["--resume", resume]
    with FakeModel([Anthropic()], script=[driver] * 100) as model:
        env = {**world.env, "ANTHROPIC_BASE_URL": model.url}
        p = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True,
                           timeout=180, stdin=subprocess.DEVNULL)
        requests, unknown = list(model.requests), list(model.unknown)
    leftover = _leftover_servers(world.env["CLAUDE_CONFIG_DIR"])
    complaint = None
    try:
        guard.check(status_changes=True)
    except AssertionError as e:
        complaint = str(e)
    session_id = None
    for line in p.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("session_id"):
            session_id = event["session_id"]
            break
    return Session(name, p.returncode, p.stdout, p.stderr,
                   debug.read_text(errors="replace") if debug.exists() else "", requests,
                   unknown, driver, leftover, complaint, session_id)


def _environment(tmp: Path, runtime: str, identity: dict[str, str]) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
    ours = ("CLAUDE", "ANTHROPIC", "GITCKPT_", "XDG_", "GIT_")  # set below, or left out
    keep = {k: v for k, v in os.environ.items()
            if (not k.startswith(ours) or k.startswith("GITCKPT_TEST_")
                or k == "GITCKPT_SERVICE")
            and k not in ("HOME", "PATH", "IS_SANDBOX", "DISABLE_TELEMETRY",
                          "DISABLE_AUTOUPDATER", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT")}
    env = {
        **keep, **identity,
        "PATH": f"{Path(gitckpt_bin()).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1", "GITCKPT_RUNTIME_DIR": runtime,
        "GITCKPT_SERVICE_IDLE": "60",
        # Claude Code: its own config folder, a dummy key, nothing but the model requests
        "CLAUDE_CONFIG_DIR": str(home / ".claude"), "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
    }
    if os.geteuid() == 0:  # --dangerously-skip-permissions is refused as root without it
        env["IS_SANDBOX"] = "1"
    return env


@pytest.fixture(scope="module")
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[World]:
    claude = str(host_binary("claude"))
    helpers = _root_conftest(request.config)
    tmp = tmp_path_factory.mktemp("claude")
    runtime = tempfile.mkdtemp(prefix="gcc", dir="/tmp")  # short: a socket's path
    env = _environment(tmp, runtime, helpers.IDENTITY)
    w = World(env, Path(env["HOME"]), tmp)
    mp = pytest.MonkeyPatch()  # the fixtures' git calls (make_repo, RepoGuard) see it too
    for key in [k for k in os.environ if k not in env]:
        mp.delenv(key)
    for key, value in env.items():
        mp.setenv(key, value)
    try:
        _play(w, claude, helpers)
        yield w
    finally:
        mp.undo()
        helpers.stop_services(runtime)


def _install(w: World, claude: str) -> None:
    """The plugin, as a user installs it: this repository (as a marketplace clone holds it:
    its git files) added as a marketplace, then `gitckpt@gitckpt` installed."""
    from conftest import marketplace_copy

    source = marketplace_copy(w.tmp / "marketplace")
    for args in (["plugin", "marketplace", "add", str(source)],
                 ["plugin", "install", "gitckpt@gitckpt"]):
        p = subprocess.run([claude, *args], cwd=w.tmp, env=w.env, capture_output=True,
                           text=True, timeout=180, stdin=subprocess.DEVNULL)
        w.installed.append((args, p.returncode, p.stdout + p.stderr))


def _play(w: World, claude: str, helpers: Any) -> None:
    _install(w, claude)
    if any(code for _, code, _ in w.installed):
        return  # test_the_plugin_installs says why; nothing else can run

    # A: a task with step 1, then the three sessions of one conversation
    a = helpers.make_repo(w.tmp / "a")
    guard_a = helpers.RepoGuard(a)
    w.gk(a, "init", "parser", "--goal", "Build the parser")
    (a / "parser.py").write_text("def parse(s):\n    return s\n")
    w.gk(a, "save", STEP1, "--conclusion", "parse() returns its input",
         "--next", "write the files")
    w.repos["A"] = a
    w.setup["A"] = w.gk(a, "log")
    s = _run(w, "A1", a, [
        ("echo", bash("echo x > a.txt")),
        ("write", lambda seen: Turn(calls=(Call("Write", {"file_path": str(a / "c.txt"),
                                                          "content": "c\n"}),))),
        ("fail", bash("echo y > b.txt; exit 3")),
        ("ls", bash("ls")),
        ("end", text("The files are written.")),
        ("after-reminder", text("Noted; I will save later.")),
    ], guard_a)
    w.sessions["A1"] = s
    w.setup["drifts"] = json.dumps(w.gk_json(a, "log"))
    if s.session_id is None:
        return
    w.sessions["A2"] = _run(w, "A2", a, [("end", text("Nothing else."))], guard_a,
                            resume=s.session_id)
    w.sessions["A3"] = _run(w, "A3", a, [
        ("load", load("ckpt_save", "ckpt_resume", "ckpt_log")),
        ("save", tool("ckpt_save", title=SAVED, conclusion="a, b and c are written",
                      next="test the parser")),
        ("resume", tool("ckpt_resume")),
        ("log", tool("ckpt_log")),
        ("end", text("Saved.")),
    ], guard_a, resume=s.session_id)

    # B: a task of 30 steps
    b = helpers.make_repo(w.tmp / "b")
    guard_b = helpers.RepoGuard(b)
    w.gk(b, "init", "long", "--goal", "A long task of many steps")
    for n in range(1, 31):
        (b / "work.txt").write_text(f"step {n}\n")
        w.gk(b, "save", f"Step number {n} of the long task",
             "--conclusion", f"the work of step {n} is done and checked",
             "--next", f"go on with step {n + 1}")
    w.repos["B"] = b
    w.sessions["B"] = _run(w, "B", b, [
        ("load", load()),
        ("resume", tool("ckpt_resume")),
        ("log", tool("ckpt_log")),
        ("change", bash("echo more >> work.txt")),
        ("save", tool("ckpt_save", title="Step 31", conclusion="more work",
                      next="step 32")),
        ("end", text("Saved.")),
    ], guard_b)


# -- reading the record ---------------------------------------------------------------------


def session(world: World, name: str) -> Session:
    if any(code for _, code, _ in world.installed):
        pytest.fail(f"the plugin did not install: {world.installed}")
    found = world.sessions.get(name)
    assert found is not None, f"session {name} did not run (A1 gave no session id: " \
        f"{world.sessions['A1'].stdout[-2000:]})"
    return found


def names_in(text: str) -> list[str]:
    """Every gitckpt tool name in `text`, whole (`mcp__plugin_gitckpt_gitckpt__ckpt_save`,
    or bare `ckpt_save`)."""
    return re.findall(r"[A-Za-z0-9_]*ckpt_[a-z_]*[a-z]", text)


def handoff(seen: Seen) -> str:
    """The SessionStart context in a request (up to Claude Code's own # Environment)."""
    system = seen.system()
    assert START_CONTEXT in system, "no SessionStart context in the request"
    return system.split(START_CONTEXT, 1)[1].split("\n# Environment", 1)[0]


def reminders(seen: Seen) -> list[str]:
    """gitckpt's Stop reminders in a request's user texts."""
    found = []
    for t in seen.user_texts():
        for part in t.split(STOP_CONTEXT)[1:]:
            part = part.split("</system-reminder>", 1)[0].strip()
            if part.startswith("gitckpt:"):
                found.append(part)
    return found


def first_with_tools(s: Session) -> int | None:
    """The 1-based number of the first request that offers gitckpt's tools."""
    return next((i + 1 for i, r in enumerate(s.requests)
                 if any(t.startswith(PREFIX) for t in r.tools())), None)


def why(world: World, path: str) -> dict[str, Any]:
    lines = world.gk_json(world.repos["A"], "why", f"{path}:1")["lines"]
    assert lines, f"gitckpt why {path}:1 found nothing"
    return lines[0]


def stored_prompts(world: World) -> list[dict[str, Any]]:
    """The prompts in step 2's note (the step the model saved)."""
    a = world.repos["A"]
    steps = world.gk_json(a, "log")["steps"]
    step = next(s for s in steps if s["title"] == SAVED)
    note = subprocess.run(["git", "notes", "--ref=checkpoints", "show", step["commit"]],
                          cwd=a, env=world.env, capture_output=True, text=True, check=True)
    return list(json.loads(note.stdout).get("prompts") or [])


# -- 1. the plugin installs and every session runs to its end ------------------------------


def test_the_plugin_installs(world):
    for args, code, out in world.installed:
        assert code == 0, f"`claude {' '.join(args)}` failed: {out}"


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_the_session_runs_to_its_end(world, name):
    s = session(world, name)
    assert s.code == 0, f"claude -p exited {s.code}: {s.stderr[-3000:]}"
    assert s.requests, "the fake model got no request"
    assert not s.unknown, f"Claude Code asked for paths the fake does not serve: {s.unknown}"
    assert not s.driver.plays, \
        f"the session ended before the script did: {[p[0] for p in s.driver.plays]} left"


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_the_users_repository_is_untouched(world, name):
    s = session(world, name)
    assert s.guard is None, f"after session {name}, the user's repository changed: {s.guard}"


# -- 2. the handoff reaches the first request ----------------------------------------------


def test_the_handoff_reaches_the_first_request(world):
    first = session(world, "A1").requests[0]
    assert STEP1 in first.system(), \
        "the model's first request does not hold the task's handoff (step 1's title)"
    assert "gitckpt: the task below was in progress" in handoff(first)
    assert not any(STEP1 in t for t in first.user_texts()), \
        "the handoff came as the user's words, not as context"


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_every_session_start_gets_the_handoff(world, name):
    """A2 and A3 resume A1's conversation (`claude -p --resume ID`), each within seconds of
    the last: each is a new start of the same session id and source through the same recipe,
    and gets its handoff (gitckpt's guard against one start heard through two hosts' recipes,
    service/events.py TWICE_WINDOW, once took a quick second resume for the first). The
    conversation keeps earlier handoffs, but not all of them: the first request holds at
    least this start's, and gitckpt's log says each start got one."""
    first = session(world, name).requests[0]
    given = first.system().count(f"{START_CONTEXT} gitckpt: the task below")
    lines = _hook_lines(world, "session-start")
    assert given >= 1, f"session {name}'s first request holds no handoff ({lines})"
    assert not [ln for ln in lines if "not twice" in ln], \
        f"a start got no handoff, taken for another's (gitckpt's log: {lines})"
    assert len(lines) == 4  # A1, A2, A3 and B: one handoff each


def _hook_lines(world: World, kind: str) -> list[str]:
    log = world.home / ".state" / "gitckpt" / "gitckpt.log"
    text_ = log.read_text(errors="replace") if log.exists() else ""
    return [ln for ln in text_.splitlines() if f"hook claude {kind}" in ln]


# -- 3. the tools are there in time ---------------------------------------------------------


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_the_first_request_already_offers_gitckpts_tools(world, name):
    s = session(world, name)
    assert f'MCP server "{SERVER}": Successfully connected' in s.debug, \
        "the plugin's MCP server never connected"
    first = first_with_tools(s)
    assert first == 1, (f"gitckpt's tools first appear in request {first} of "
                        f"{len(s.requests)}: the model starts without ckpt_resume")


# -- 4. drifts, attributed ------------------------------------------------------------------


def test_a_shell_write_is_a_drift_of_that_command(world):
    session(world, "A1")
    line = why(world, "a.txt")
    assert line["kind"] == "drift", line
    assert line["tool"]["name"] == "Bash", line
    assert line["tool"]["command"] == "echo x > a.txt", line
    assert line["tool"]["host"] == "claude", line


def test_a_write_tool_call_is_a_drift_of_that_tool(world):
    session(world, "A1")
    line = why(world, "c.txt")
    assert line["kind"] == "drift", line
    assert line["tool"]["name"] == "Write", line


def test_a_failing_shell_write_is_a_drift_of_that_command(world):
    s = session(world, "A1")
    assert "Exit code 3" in s.driver.results.get("fail", ""), \
        f"the shell call did not fail as scripted: {s.driver.results.get('fail')!r}"
    line = why(world, "b.txt")
    assert line["kind"] == "drift", \
        f"the failing command's write is not its drift (PostToolUseFailure): {line}"
    assert line["tool"]["name"] == "Bash", line
    assert line["tool"]["command"] == "echo y > b.txt; exit 3", line


def test_ls_makes_no_drift(world):
    session(world, "A1")
    log = json.loads(world.setup["drifts"])
    drifts = [d for d in log["drifts"] if d["trigger"] == "tool"]
    paths = sorted(p for d in drifts for kind in d["changes"].values() for p in kind)
    assert len(drifts) == 3, f"3 file-changing calls made {len(drifts)} drifts: {drifts}"
    assert paths == ["a.txt", "b.txt", "c.txt"], paths


# -- 5. the prompt is kept, redacted ---------------------------------------------------------


def test_the_prompt_is_kept_redacted(world):
    session(world, "A3")
    texts = [p["text"] for p in stored_prompts(world)]
    first = [t for t in texts if t.startswith("Write the files")]
    assert len(first) == 1, f"the session's first prompt is not in step 2's note: {texts}"
    assert SECRET not in first[0], "the user's token is stored verbatim in the note"
    assert "keep it out of the notes" in first[0], first[0]


def test_the_secret_is_nowhere_in_the_store(world):
    session(world, "A3")
    a = world.repos["A"]
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=a,
                             env=world.env, capture_output=True, check=True).stdout
    assert SECRET.encode() not in objects, "a git object of the store holds the token"
    for path in (a / ".git" / "gitckpt").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"{path} holds the token"
    log = world.home / ".state" / "gitckpt" / "gitckpt.log"
    if log.exists():
        assert SECRET not in log.read_text(errors="replace"), "gitckpt's log holds the token"


# -- 6. ckpt_save through MCP makes the step -------------------------------------------------


def test_the_models_ckpt_save_makes_the_step(world):
    s = session(world, "A3")
    assert "save" in s.driver.results, "the model's ckpt_save got no result"
    assert "Saved step 2" in s.driver.results["save"], s.driver.results["save"]
    steps = world.gk_json(world.repos["A"], "log")["steps"]
    assert [st["title"] for st in steps] == ["parser", STEP1, SAVED], steps
    saved = steps[-1]
    assert sorted(saved["changes"]["added"]) == ["a.txt", "b.txt", "c.txt"], saved


# -- 7. what the model reads -----------------------------------------------------------------


def _result(world: World, name: str, label: str) -> str:
    s = session(world, name)
    assert label in s.driver.results, f"no result read for {label} in {name}"
    return s.driver.results[label]


@pytest.mark.parametrize(("name", "label", "budget"), [
    ("A3", "save", "ckpt_save"), ("A3", "resume", "ckpt_resume"), ("A3", "log", "ckpt_log"),
    ("B", "save", "ckpt_save"), ("B", "resume", "ckpt_resume"), ("B", "log", "ckpt_log")])
def test_a_tool_result_the_model_reads_is_within_budget(world, name, label, budget):
    result = _result(world, name, label)
    steps = "2 steps" if name == "A3" else "30 steps"
    print(f"[claude] {budget} at {steps}: {len(result)} chars")
    assert len(result) <= BUDGETS[budget], \
        f"{budget} at {steps}: the model reads {len(result)} chars (budget {BUDGETS[budget]})"


def gitckpt_definitions(seen: Seen) -> list[dict[str, Any]]:
    return [t for t in seen.body.get("tools") or [] if t.get("name", "").startswith(PREFIX)]


def instructions(seen: Seen) -> str:
    """The server's instructions as Claude Code forwards them: its section of the system,
    "## plugin:gitckpt:gitckpt" up to the next blank line (gitckpt's have none)."""
    system = seen.system()
    head = f"## {SERVER}\n"
    if head not in system:
        return ""
    return head + system.split(head, 1)[1].split("\n\n", 1)[0]


def always_loaded(seen: Seen) -> int:
    """What every request carries of gitckpt's tools: definitions in `tools`, the deferred
    names announced, and the server's instructions."""
    defs = sum(len(json.dumps(t, ensure_ascii=False, separators=(",", ":")))
               for t in gitckpt_definitions(seen))
    names = sum(len(n) + 1 for n in seen.protocol.deferred(seen.body)  # type: ignore[attr-defined]
                if n.startswith(PREFIX))
    return defs + names + len(instructions(seen))


def test_the_always_loaded_part_is_within_budget(world):
    first = session(world, "A1").requests[0]
    size = always_loaded(first)
    print(f"[claude] always loaded (deferred names and instructions): {size} chars")
    assert size, "no gitckpt tool in the first request"
    assert size <= BUDGETS["loaded"], \
        f"every request carries {size} chars of gitckpt (budget {BUDGETS['loaded']})"


def test_every_tool_definition_once_loaded_is_within_budget(world):
    """With ToolSearch every gitckpt tool loaded (or tool search off: ENABLE_TOOL_SEARCH,
    or a gateway without it), the definitions and the instructions all ride along."""
    s = session(world, "B")
    after = s.requests[s.driver.asked["load"] + 1]
    defs = gitckpt_definitions(after)
    offered = [t for t in s.requests[0].tools() if t.startswith(PREFIX)]
    assert sorted(t["name"] for t in defs) == sorted(offered), \
        "ToolSearch did not load every gitckpt tool"
    size = sum(len(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in defs) \
        + len(instructions(after))
    print(f"[claude] every definition loaded, with the instructions: {size} chars")
    assert size <= BUDGETS["loaded"], \
        f"gitckpt's {len(defs)} tool definitions and instructions: {size} chars " \
        f"(budget {BUDGETS['loaded']})"


# -- 8. the names the texts use are the names the model has ---------------------------------


def test_the_handoff_names_only_tools_the_model_has(world):
    first = session(world, "A1").requests[0]
    named = set(names_in(handoff(first)))
    assert named, "the handoff names no gitckpt tool"
    missing = named - set(first.tools())
    assert not missing, f"the handoff names {sorted(missing)}; the model has " \
        f"{sorted(t for t in first.tools() if 'ckpt' in t)}"


def test_the_reminder_names_only_tools_the_model_has(world):
    s = session(world, "A1")
    with_reminder = [r for r in s.requests if reminders(r)]
    assert with_reminder, "no request holds the Stop reminder"
    seen = with_reminder[0]
    named = {n for r in reminders(seen) for n in names_in(r)}
    assert named, f"the reminder names no tool: {reminders(seen)}"
    missing = named - set(seen.tools())
    assert not missing, f"the reminder names {sorted(missing)}, not offered"


# -- 9. the Stop reminder: once, as feedback ------------------------------------------------


def _continued(s: Session) -> list[Seen]:
    """The requests made because a Stop hook gave context: the last message is the user's
    system-reminder carrying gitckpt's reminder."""
    out = []
    for r in s.requests:
        messages = r.body.get("messages") or []
        if messages and messages[-1].get("role") == "user" and \
                reminders(Seen(r.path, r.headers, {"messages": [messages[-1]]}, r.protocol)):
            out.append(r)
    return out


def test_the_stop_reminder_reaches_the_model_as_feedback(world):
    s = session(world, "A1")
    continued = _continued(s)
    assert len(continued) == 1, \
        f"the turn ended with 3 unsaved files; the model was reminded {len(continued)} times"
    reminder = reminders(continued[0])[0]
    assert "not saved" in reminder, reminder
    assert f"{PREFIX}ckpt_save" in reminder, reminder
    last = continued[0].body["messages"][-1]
    assert "error" not in json.dumps(last).lower(), f"shown as an error: {last}"
    assert s.driver.asked.get("after-reminder") is not None, \
        "the model was not asked again after the reminder"


def test_the_stop_reminder_is_said_once_per_unsaved_stretch(world):
    a1, a2 = session(world, "A1"), session(world, "A2")
    assert len(_continued(a1)) == 1
    assert not _continued(a2), \
        "a new turn with the same unsaved files was reminded again"
    assert len(a2.requests) == 1, f"A2 made {len(a2.requests)} requests"


def test_no_reminder_once_saved(world):
    s = session(world, "A3")
    assert not _continued(s), "reminded after the step was saved"


# -- 10. nothing of gitckpt's is a user prompt ----------------------------------------------


def test_nothing_of_gitckpts_is_kept_as_a_prompt(world):
    session(world, "A3")
    texts = [p["text"] for p in stored_prompts(world)]
    assert len(texts) == 3, f"3 prompts were typed, {len(texts)} kept: {texts}"
    for t in texts:
        for theirs in ("gitckpt:", STEP1, "hook"):
            assert theirs not in t, f"gitckpt's own text kept as the user's prompt: {t!r}"
    assert sorted(t.split(";")[0] for t in texts) == sorted(
        p.split(";")[0] for k, p in PROMPTS.items() if k.startswith("A")), texts


# -- 11. no error of gitckpt's in the host's log --------------------------------------------


def gitckpt_errors(s: Session) -> list[str]:
    bad = []
    for line in s.debug.splitlines():
        if "gitckpt" not in line:
            continue
        status = re.search(r"finished with status (\d+)", line)
        if (status and status.group(1) != "0") \
                or re.search(r"\[ERROR\]|\[WARN\]|cannot start|internal error|Traceback"
                             r"|failed|timed out|error:", line, re.IGNORECASE):
            bad.append(line)
    bad += [ln for ln in s.stderr.splitlines() if "gitckpt" in ln]
    return bad


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_no_gitckpt_error_in_the_hosts_log(world, name):
    s = session(world, name)
    assert s.debug, "Claude Code wrote no debug log"
    assert not gitckpt_errors(s), "\n".join(gitckpt_errors(s))


def test_no_internal_error_in_gitckpts_log(world):
    session(world, "B")
    log = world.home / ".state" / "gitckpt" / "gitckpt.log"
    text_ = log.read_text(errors="replace") if log.exists() else ""
    bad = [ln for ln in text_.splitlines()
           if re.search(r"internal error|Traceback|cannot start", ln)]
    assert not bad, "\n".join(bad)


# -- 12. the MCP server ends on SIGINT -----------------------------------------------------


@pytest.mark.parametrize("name", ["A1", "A2", "A3", "B"])
def test_the_mcp_server_ends_on_sigint(world, name):
    s = session(world, name)
    mine = [ln for ln in s.debug.splitlines() if f'MCP server "{SERVER}"' in ln]
    assert any("Sending SIGINT to MCP server process" in ln for ln in mine), \
        "Claude Code did not stop gitckpt's server with SIGINT:\n" + "\n".join(mine[-5:])
    assert not any("SIGINT failed" in ln for ln in mine), \
        "gitckpt mcp outlived SIGINT by Claude Code's 100 ms; it needed SIGTERM:\n" + \
        "\n".join(mine[-5:])
    assert any("MCP server process exited cleanly" in ln for ln in mine)
    assert not s.leftover, f"gitckpt mcp still runs after Claude Code exited: {s.leftover}"
