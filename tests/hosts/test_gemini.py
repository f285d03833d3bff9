"""Gemini CLI (pinned, from npm) driven through a scripted session against a fake Gemini API on
127.0.0.1, with gitckpt's recipe installed (`gitckpt hook install --host gemini --mcp`): the
handoff, the drifts of its tool calls, the prompts, the MCP tools and what the model reads of
them, the reminders, and the MCP server's end.

How the host is set up (read from @google/gemini-cli 0.61.0's bundle): GOOGLE_GEMINI_BASE_URL
points it at the fake (it then authenticates as a "gateway" with GEMINI_API_KEY), HOME and
GEMINI_CLI_HOME are the test's (user settings in `$GEMINI_CLI_HOME/.gemini/settings.json`:
telemetry, usage statistics and auto-update off), GEMINI_CLI_TRUST_WORKSPACE=true trusts the
folder (an untrusted folder runs no project hooks and no stdio MCP server),
GEMINI_CLI_NO_RELAUNCH=1 keeps one process, `-p PROMPT --yolo -m gemini-2.5-flash` runs one
headless turn with every tool allowed (an explicit model: no routing call).

One session per fixture, run once per pytest run (shared by xdist workers through a lock
file), recorded as JSON; every test reads the record.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fake_model import Call, FakeModel, Seen, Step, Turn
from proto_gemini import GeminiProtocol

HERE = Path(__file__).resolve().parent


import conftest as _root  # noqa: E402  (tests/conftest.py)
import hostlib as _hosts  # noqa: E402

pytestmark = pytest.mark.hosts

HOST = "gemini"
MODEL = "gemini-2.5-flash"
#: A fake GitHub token in the prompt: gitckpt must not keep it verbatim.
SECRET = "ghp_" + "Zq8Wd3Lk5Pm2Rt7Yx4Nb6Vc1Hs9Jg0Fa2Ke5Uo"
PROMPT = f"Make the demo files and save the step when done. The deploy token is {SECRET}."
FIRST_STEP = "Planned the demo files"
#: The Stop reminder's words (hooks/run.py _unsaved_line).
REMINDER = "are not saved as a step"
#: Budgets (check 7): chars the model reads of each result, and of gitckpt's tool definitions.
BUDGET = {"save": 300, "resume": 2_000, "log": 3_000, "always": 6_000}
TIMEOUT = 180  # a safety net for the host process; nothing asserts on time


# -- the environment ---------------------------------------------------------------------------


def _environment(base: Path, runtime: str) -> dict[str, str]:
    """A hermetic environment like tests/conftest.py's `hermetic` (the fixtures here are
    module-scoped, before it), plus Gemini CLI's settings."""
    home = base / "home"
    for d in (home, home / ".config", home / ".state", home / ".cache", home / ".local/share"):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GEMINI_", "GOOGLE_", "XDG_")) and k not in {
               "GITCKPT_MAX_FILE_SIZE", "GITCKPT_LOCK_TIMEOUT", "GITCKPT_LOG_DIR",
               "GITCKPT_REMOTE_CONNECT_TIMEOUT", "GITCKPT_REMOTE_IDLE_TIMEOUT",
               "GITCKPT_TOOL_PREFIX", "GITCKPT_MCP_RESULTS"}}
    env.update(_root.IDENTITY)
    gitckpt_dir = str(Path(_hosts.gitckpt_bin()).parent)
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "GITCKPT_RUNTIME_DIR": runtime, "GITCKPT_SERVICE_IDLE": "60",
        "PATH": gitckpt_dir + os.pathsep + env.get("PATH", ""),
        # Gemini CLI
        "GEMINI_API_KEY": "dummy", "GEMINI_CLI_HOME": str(home),
        "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "1",
        "GEMINI_DEBUG_LOG_FILE": str(base / "gemini-debug.log"),
        "NO_COLOR": "1", "TERM": "dumb",
    })
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }, indent=2))
    return env


@contextmanager
def _environ(env: dict[str, str]) -> Iterator[None]:
    """os.environ is `env` meanwhile (the conftest helpers run git with it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["gitckpt", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def _ok(p: subprocess.CompletedProcess[str]) -> str:
    assert p.returncode == 0, f"{p.args} exited {p.returncode}: {p.stdout}{p.stderr}"
    return p.stdout


def _mcp_servers(runtime: str) -> list[int]:
    """The `gitckpt mcp` processes of this session (their environment names its runtime)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in cmd if w]
        if "mcp" in words and any(w.endswith("gitckpt") or w == "gitckpt" for w in words) \
                and f"GITCKPT_RUNTIME_DIR={runtime}".encode() in environ:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _server_instructions(env: dict[str, str], cwd: Path) -> str:
    """What `gitckpt mcp` says in its initialize answer (`instructions`)."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}}
    p = subprocess.run(["gitckpt", "mcp"], input=json.dumps(hello) + "\n", cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("id") == 1:
            return str(msg.get("result", {}).get("instructions") or "")
    return ""


# -- one session -------------------------------------------------------------------------------


def _call(suffix: str, args: dict[str, Any]) -> Callable[[Seen], Turn]:
    """A call of the offered tool whose name ends with `suffix` (as the host names it); a
    text turn saying so when the host offers none (the tests then say what is missing)."""
    def step(seen: Seen) -> Turn:
        found = [t for t in seen.tools() if t.endswith(suffix)]
        if len(found) != 1:
            return Turn(text=f"(no single tool ending {suffix} in {seen.tools()})")
        return Turn(calls=(Call(found[0], args),))
    return step


def _session(base: Path, prepare: Callable[[dict[str, str], Path], None],
             script: Callable[[Path], list[Step]], prompt: str) -> dict[str, Any]:
    """Set up a repository with gitckpt's recipe, run Gemini CLI through `script`, and record
    everything the tests read."""
    runtime = tempfile.mkdtemp(prefix="gkgem", dir="/tmp")  # short: a socket path
    env = _environment(base, runtime)
    record: dict[str, Any] = {"base": str(base)}
    try:
        with _environ(env):
            repo = _root.make_repo(base / "repo")
            guard = _root.RepoGuard(repo)
        prepare(env, repo)
        install = _cli(env, repo, "hook", "install", "--host", HOST, "--mcp", "--yes")
        record["install"] = {"code": install.returncode, "out": install.stdout,
                             "err": install.stderr}
        settings = repo / ".gemini" / "settings.json"
        record["settings"] = settings.read_text() if settings.exists() else None
        record["instructions"] = _server_instructions(env, repo)
        seen_servers: list[int] = []

        def watching(step: Step) -> Step:
            """`step`, noting the session's MCP server processes as it is answered."""
            def at(seen: Seen) -> Turn:
                seen_servers.extend(p for p in _mcp_servers(runtime) if p not in seen_servers)
                return step(seen) if callable(step) else step
            return at

        with FakeModel([GeminiProtocol()], [watching(s) for s in script(repo)]) as fake:
            run_env = {**env, "GOOGLE_GEMINI_BASE_URL": fake.url}
            try:
                p = subprocess.run(
                    [str(_hosts.host_binary(HOST)), "-p", prompt, "--yolo", "-m", MODEL,
                     "-o", "text"], cwd=repo, env=run_env, capture_output=True, text=True,
                    timeout=TIMEOUT, stdin=subprocess.DEVNULL)
                record.update(code=p.returncode, stdout=p.stdout, stderr=p.stderr)
            except subprocess.TimeoutExpired as e:
                record.update(code=None, stdout=str(e.stdout), stderr=str(e.stderr))
            record["requests"] = [{"path": s.path, "headers": s.headers, "body": s.body}
                                  for s in fake.requests]
            record["unknown"] = list(fake.unknown)
        # the MCP servers after the host's exit: given up to 10 s to leave (a safety net)
        record["mcp_seen"] = list(seen_servers)
        left = [pid for pid in seen_servers if _alive(pid)]
        for _ in range(100):
            left = [pid for pid in left if _alive(pid)]
            if not left:
                break
            time.sleep(0.1)
        record["mcp_left"] = left
        record["store"] = _read_store(env, repo)
        # the prompts still waiting for a step go into one now
        record["flush"] = _cli(env, repo, "save", "After the session",
                               "--conclusion", "the session ended").returncode
        record["store_after"] = _read_store(env, repo)
        logs = []
        for log in sorted((base / "home" / ".state").rglob("*.log")):
            logs.append({"path": str(log), "text": log.read_text(errors="replace")[-20_000:]})
        record["logs"] = logs
        debug = base / "gemini-debug.log"  # its warnings and errors (the rest is the chat)
        record["debug_log"] = [ln[:1000] for ln in (debug.read_text(errors="replace")
                                                    if debug.exists() else "").splitlines()
                               if re.match(r"\[[^]]*\] \[(WARN|ERROR)\]", ln)]
        try:
            guard.check(status_changes=True)
            record["guard"] = None
        except AssertionError as e:
            record["guard"] = str(e)
    finally:
        _root.stop_services(runtime)
    return record


def _read_store(env: dict[str, str], repo: Path) -> dict[str, Any]:
    """The task's timeline and every checkpoint's note, as gitckpt and git show them."""
    log = json.loads(_ok(_cli(env, repo, "--json", "log")))
    notes = {}
    for item in [*log.get("steps", []), *log.get("drifts", [])]:
        p = subprocess.run(["git", "notes", "--ref=refs/notes/checkpoints", "show",
                            item["commit"]], cwd=repo, env=env, capture_output=True, text=True)
        notes[item["commit"]] = json.loads(p.stdout) if p.returncode == 0 else None
    why = {}
    for path in ("a.txt", "b.txt", "w.txt", "c.txt"):
        if (repo / path).exists():
            w = _cli(env, repo, "--json", "why", f"{path}:1")
            why[path] = json.loads(w.stdout) if w.returncode == 0 else {"error": w.stderr}
    return {"log": log, "notes": notes, "why": why}


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _once(factory: pytest.TempPathFactory, name: str,
          make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """`make`'s record, made once per pytest run: xdist's workers share it through a file
    beside their temp folders, under a lock."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / f"gemini-{name}"
    done = shared / f"gemini-{name}.json"
    with _locked(shared / f"gemini-{name}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            done.write_text(json.dumps(make(folder)))
    record: dict[str, Any] = json.loads(done.read_text())
    return record


class Session:
    """A recorded session: the requests as `Seen`, and the rest as recorded."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        proto = GeminiProtocol()
        self.proto = proto
        self.requests = [Seen(r["path"], r["headers"], r["body"], proto)
                         for r in record.get("requests", [])]
        self.turns = [s for s in self.requests if s.path.endswith(":streamGenerateContent")]

    def __getitem__(self, key: str) -> Any:
        return self.record[key]

    def results(self, suffix: str) -> list[str]:
        """The text of every result of the tool ending with `suffix`, as the last request
        sends it back to the model."""
        last = self.turns[-1].body if self.turns else {}
        return [text for name, text in self.proto.tool_result_pairs(last)
                if name.endswith(suffix)]

    def handoff(self) -> str:
        """The session-start handoff as the first request carries it (Gemini CLI wraps a
        SessionStart hook's additionalContext in <hook_context> before the prompt)."""
        first = "\n".join(self.turns[0].user_texts()) if self.turns else ""
        m = re.search(r"<hook_context>(.*?)</hook_context>", first, re.S)
        return m.group(1) if m else ""

    def gitckpt_declarations(self) -> list[dict[str, Any]]:
        first = self.turns[0].body if self.turns else {}
        return [d for d in self.proto.declarations(first)
                if str(d.get("name", "")).startswith("mcp_gitckpt_")]


def _skip_without_host() -> None:
    _hosts.host_binary(HOST)  # skips, saying why, where the pinned host is not installed


# -- the sessions ------------------------------------------------------------------------------


def _prepare_two(env: dict[str, str], repo: Path) -> None:
    _ok(_cli(env, repo, "init", "demo", "--goal", "make the demo files"))
    (repo / "plan.txt").write_text("a, b, w\n")
    _ok(_cli(env, repo, "save", FIRST_STEP, "--conclusion", "three files to make",
             "--next", "make them"))


def _script_two(repo: Path) -> list[Step]:
    return [
        Turn(calls=(Call("run_shell_command", {"command": "echo x > a.txt"}),)),
        Turn(calls=(Call("run_shell_command", {"command": "ls"}),)),
        Turn(calls=(Call("write_file", {"file_path": str(repo / "w.txt"),
                                        "content": "written\n"}),)),
        Turn(calls=(Call("replace", {"file_path": str(repo / "w.txt"), "old_string": "written",
                                     "new_string": "edited",
                                     "instruction": "say edited instead of written"}),)),
        Turn(calls=(Call("run_shell_command", {"command": "echo y > b.txt; exit 3"}),)),
        _call("ckpt_save", {"title": "Made the demo files", "conclusion": "a, b and w exist",
                            "next": "check them"}),
        _call("ckpt_resume", {}),
        _call("ckpt_log", {}),
        Turn(calls=(Call("run_shell_command", {"command": "echo z > c.txt"}),)),
        Turn(text="Finished the demo files."),
        Turn(text="Leaving c.txt unsaved for now."),  # the answer to a Stop reminder, if any
    ]


def _prepare_thirty(env: dict[str, str], repo: Path) -> None:
    _ok(_cli(env, repo, "init", "long", "--goal", "a long task of thirty steps"))
    for i in range(1, 31):
        (repo / f"s{i:02}.txt").write_text(f"step {i}\n")
        _ok(_cli(env, repo, "save", f"Step number {i} of the long task",
                 "--conclusion", f"file s{i:02}.txt holds step {i}",
                 "--next", f"write s{i + 1:02}.txt"))


def _script_thirty(repo: Path) -> list[Step]:
    return [
        _call("ckpt_resume", {}),
        _call("ckpt_log", {}),
        _call("ckpt_save", {"title": "Read the long task", "conclusion": "thirty steps",
                            "next": "go on"}),
        Turn(text="Read it."),
    ]


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """The main session: a task with one step; the model runs shell, write and edit calls
    (one failing), saves, resumes, reads the log, changes a file and stops."""
    _skip_without_host()
    return Session(_once(tmp_path_factory, "two", lambda base: _session(
        base, _prepare_two, _script_two, PROMPT)))


@pytest.fixture(scope="module")
def thirty(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """A task of thirty steps: the model resumes, reads the log and saves."""
    _skip_without_host()
    return Session(_once(tmp_path_factory, "thirty", lambda base: _session(
        base, _prepare_thirty, _script_thirty, "Resume the long task.")))


# -- 1. the recipe installs, the session ends ----------------------------------------------------


def test_recipe_installs(two: Session) -> None:
    assert two["install"]["code"] == 0, f"hook install failed: {two['install']}"
    settings = json.loads(two["settings"])
    assert set(settings["hooks"]) == {"SessionStart", "BeforeAgent", "AfterTool",
                                      "PreCompress", "AfterAgent"}, settings["hooks"]
    # told the names Gemini CLI gives its tools (mcp_<server>_<tool>)
    assert settings["mcpServers"]["gitckpt"] == {
        "command": "gitckpt", "args": ["mcp"], "env": {"GITCKPT_TOOL_PREFIX": "mcp_gitckpt_"}}


def test_session_runs_to_its_end(two: Session) -> None:
    assert two["code"] == 0, f"gemini exited {two['code']}: {two['stderr'][-3000:]}"
    assert not two["unknown"], f"requests the fake did not serve: {two['unknown']}"
    assert "Finished the demo files." in two["stdout"], two["stdout"]


def test_long_session_runs_to_its_end(thirty: Session) -> None:
    assert thirty["code"] == 0, f"gemini exited {thirty['code']}: {thirty['stderr'][-3000:]}"
    assert not thirty["unknown"], f"requests the fake did not serve: {thirty['unknown']}"
    assert len(thirty.turns) == 4, f"the script has 4 turns, the host asked {len(thirty.turns)}"


# -- 2, 3. the first request --------------------------------------------------------------------


def test_handoff_reaches_first_request(two: Session) -> None:
    assert two.turns, "the host sent no model request"
    first = two.turns[0]
    assert FIRST_STEP in first.system() + "\n".join(first.user_texts()), \
        "the model's first request does not hold the handoff (the saved step's title)"


def test_first_request_offers_gitckpt_tools(two: Session) -> None:
    tools = two.turns[0].tools()
    for name in ("ckpt_save", "ckpt_resume", "ckpt_log"):
        assert any(t.endswith(name) for t in tools), \
            f"the first request offers no {name}: the MCP server was not connected in time " \
            f"({tools})"


# -- 4. drifts attributed to the tool calls ------------------------------------------------------


def _drift(session: Session, path: str) -> dict[str, Any]:
    why = session["store"]["why"].get(path)
    assert why, f"gitckpt why {path}:1 was not read"
    assert why.get("lines"), f"gitckpt why {path}:1 found nothing: {why}"
    line: dict[str, Any] = why["lines"][0]
    return line


def test_shell_call_makes_attributed_drift(two: Session) -> None:
    line = _drift(two, "a.txt")
    assert line["kind"] == "drift", line
    assert line["trigger"] == "tool", line
    assert line["tool"]["name"] == "run_shell_command", line["tool"]
    assert line["tool"]["command"] == "echo x > a.txt", line["tool"]
    assert line["tool"]["host"] == HOST


def test_write_and_edit_calls_make_attributed_drifts(two: Session) -> None:
    notes = [n for n in two["store"]["notes"].values()
             if n and n.get("kind") == "drift" and n.get("trigger") == "tool"]
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for n in notes:
        paths = [p for kind in ("added", "modified") for p in n["changes"].get(kind, [])]
        if "w.txt" in paths:
            by_tool.setdefault(n["tool"]["name"], []).append(n)
    assert "write_file" in by_tool, \
        f"no drift attributed to write_file for w.txt: {[n.get('tool') for n in notes]}"
    assert "replace" in by_tool, \
        f"no drift attributed to replace (the edit) for w.txt: {[n.get('tool') for n in notes]}"
    assert _drift(two, "w.txt")["tool"]["name"] == "replace"


def test_failing_shell_call_makes_attributed_drift(two: Session) -> None:
    line = _drift(two, "b.txt")
    assert line["trigger"] == "tool", line
    assert line["tool"]["name"] == "run_shell_command", line
    assert line["tool"]["command"] == "echo y > b.txt; exit 3", line["tool"]


def test_ls_makes_no_drift(two: Session) -> None:
    commands = [n["tool"].get("command") for n in two["store"]["notes"].values()
                if n and n.get("kind") == "drift" and n.get("tool")]
    assert "ls" not in commands, f"a drift was recorded for `ls`: {commands}"
    assert commands, "no tool drift at all was recorded"


# -- 5, 10. the prompt, recorded and redacted; nothing of gitckpt's stored as a prompt ------------


def _prompts(session: Session) -> list[str]:
    return [p["text"] for n in session["store_after"]["notes"].values()
            if n and n.get("kind") == "step" for p in n.get("prompts", [])]


def test_prompt_is_recorded(two: Session) -> None:
    assert two["flush"] == 0, "the save after the session failed"
    kept = _prompts(two)
    assert any("Make the demo files and save the step" in t for t in kept), \
        f"the user's prompt is not among the stored prompts: {kept}"


def test_prompt_is_redacted(two: Session) -> None:
    kept = _prompts(two)
    assert kept, "no prompt was stored"
    assert not any(SECRET in t for t in kept), "the token in the prompt is stored verbatim"
    assert SECRET not in json.dumps(two["store_after"]), "the token is stored somewhere"


def test_handoff_not_stored_as_prompt(two: Session) -> None:
    kept = _prompts(two)
    bad = [t[:200] for t in kept if "<hook_context>" in t or "its handoff" in t]
    assert not bad, ("gitckpt stored its own handoff as the user's prompt (Gemini CLI "
                     "headless prepends SessionStart's additionalContext, wrapped in "
                     f"<hook_context>, to the prompt BeforeAgent receives): {bad}")


def test_reminder_not_stored_as_prompt(two: Session) -> None:
    kept = _prompts(two)
    bad = [t[:200] for t in kept if REMINDER in t]
    assert not bad, ("gitckpt stored its own Stop reminder as a user prompt (AfterAgent's "
                     f"deny reason comes back as the next BeforeAgent prompt): {bad}")


# -- 6, 7. MCP ckpt_save makes the step; what the model reads -----------------------------------


def test_mcp_save_makes_step(two: Session) -> None:
    titles = [s["title"] for s in two["store"]["log"]["steps"]]
    assert "Made the demo files" in titles, f"the model's ckpt_save made no step: {titles}"


def test_mcp_results_are_not_errors(two: Session) -> None:
    last = two.turns[-1].body if two.turns else {}
    errors = [(name, text[:400]) for name, text in two.proto.tool_result_pairs(last)
              if name.startswith("mcp_gitckpt_") and ("MCP error" in text or "error" in text[:80]
                                                       .lower())]
    assert not errors, f"the model read gitckpt's tool results as errors: {errors}"


def _measure(session: Session, suffix: str, budget: int) -> None:
    texts = session.results(suffix)
    assert texts, f"no {suffix} result reached the model"
    size = len(texts[0])
    print(f"[gemini] {suffix}: {size} chars")
    assert size <= budget, f"the model reads {size} chars of {suffix} (budget {budget}): " \
                           f"{texts[0][:300]!r}"


@pytest.mark.parametrize("tool", ["save", "resume", "log"])
def test_result_budget_two_steps(two: Session, tool: str) -> None:
    _measure(two, f"ckpt_{tool}", BUDGET[tool])


@pytest.mark.parametrize("tool", ["save", "resume", "log"])
def test_result_budget_thirty_steps(thirty: Session, tool: str) -> None:
    _measure(thirty, f"ckpt_{tool}", BUDGET[tool])


def _without_gemini_own(declaration: dict[str, Any]) -> dict[str, Any]:
    """A declaration without what Gemini CLI adds to every tool (`wait_for_previous`)."""
    schema = dict(declaration.get("parametersJsonSchema") or {})
    schema["properties"] = {k: v for k, v in (schema.get("properties") or {}).items()
                            if k != "wait_for_previous"}
    return {**declaration, "parametersJsonSchema": schema}


def _always_loaded(session: Session) -> tuple[int, int, int]:
    """(tool definitions, forwarded server instructions, total) chars of the first request."""
    # (less the `wait_for_previous` parameter Gemini CLI adds to every tool of its own)
    tools = sum(len(json.dumps(_without_gemini_own(d), ensure_ascii=False,
                               separators=(",", ":")))
                for d in session.gitckpt_declarations())
    instructions = session["instructions"]
    first = session.turns[0]
    seen = first.system() + "\n" + "\n".join(first.user_texts())
    forwarded = len(instructions) if instructions and instructions in seen else 0
    return tools, forwarded, tools + forwarded


def test_always_loaded_budget(two: Session) -> None:
    tools, forwarded, total = _always_loaded(two)
    print(f"[gemini] always loaded: {total} chars ({tools} of definitions, {forwarded} of "
          "instructions)")
    assert tools, "no gitckpt tool definitions in the first request"
    assert total <= BUDGET["always"], \
        f"gitckpt's always-loaded part is {total} chars (tool definitions {tools}, server " \
        f"instructions forwarded {forwarded}; budget {BUDGET['always']})"


# -- 8. the tool names gitckpt's texts use ------------------------------------------------------


_NAMED = re.compile(r"\b([A-Za-z0-9_]*ckpt_[a-z]+)\(")


def test_texts_name_exposed_tools(two: Session) -> None:
    texts = [two.handoff()] + [t for s in two.turns for t in s.user_texts() if REMINDER in t]
    named = {m for t in texts for m in _NAMED.findall(t)}
    assert named, "the handoff names no gitckpt tool"
    offered = set(two.turns[0].tools())
    missing = sorted(named - offered)
    assert not missing, (f"the handoff/reminders name {missing}, which Gemini CLI does not "
                         f"offer; it names gitckpt's tools mcp_gitckpt_<tool> "
                         f"({sorted(t for t in offered if 'ckpt_' in t)[:3]}...)")


def test_results_name_exposed_tools(two: Session) -> None:
    """The calls gitckpt's tool results suggest (`ckpt_log(before=...)`, `ckpt_save(...)`)."""
    texts = [t for suffix in ("ckpt_save", "ckpt_resume", "ckpt_log")
             for t in two.results(suffix)]
    named = {m for t in texts for m in _NAMED.findall(t)}
    offered = set(two.turns[0].tools())
    missing = sorted(named - offered)
    assert not missing, (f"gitckpt's tool results name {missing}, which Gemini CLI does not "
                         "offer (it names them mcp_gitckpt_<tool>)")


# -- 9. the Stop reminder --------------------------------------------------------------------


def _reminders(session: Session) -> list[str]:
    """The reminders in the conversation the last request sends (each user text once)."""
    last = session.turns[-1] if session.turns else None
    return [t for t in (last.user_texts() if last else []) if REMINDER in t]


def test_stop_reminder_reaches_model(two: Session) -> None:
    shown = [ln for ln in two["stderr"].splitlines() if "gitckpt:" in ln]
    assert _reminders(two), (
        "the Stop (AfterAgent) reminder never reached the model; the user saw instead: "
        f"{shown} (PreCompress, fired before every request, said it first as a "
        "systemMessage, which only the user sees, and the reminder is said once per state)")


def test_stop_reminder_at_most_once(two: Session) -> None:
    assert len(_reminders(two)) <= 1, f"the reminder reached the model {_reminders(two)} times"


def test_no_compaction_reminder_without_compaction(two: Session) -> None:
    """PreCompress fires before every model request with `trigger: "auto"`, whether or not the
    history is then compressed (ChatCompressionService.compress fires it before its threshold
    check); this session is far below the threshold, so nothing was compressed."""
    shown = [ln for ln in two["stderr"].splitlines()
             if ln.startswith("Hook system message: gitckpt")]
    assert not shown, (f"the user was shown {len(shown)} compaction reminders in a session "
                       f"of {len(two.turns)} requests and no compression: {shown}")


# -- 11. no error of gitckpt's ---------------------------------------------------------------


def test_no_gitckpt_error_in_host_output(two: Session) -> None:
    """Gemini CLI's stderr, and the warnings and errors of its debug log (a failed hook:
    "Hook execution for X: 0 succeeded, 1 failed (name)"; a failed MCP call: "Error
    executing tool mcp_gitckpt_...")."""
    lines = two["stderr"].splitlines() + two["debug_log"]
    bad = [ln for ln in lines if re.search(r"gitckpt|ckpt_|hook|mcp", ln, re.I)
           and re.search(r"error|fail|traceback|exception", ln, re.I)]
    assert not bad, f"errors of gitckpt in Gemini CLI's output: {bad[:10]}"


def test_no_error_in_gitckpt_logs(two: Session) -> None:
    bad = [f"{log['path']}: {ln}" for log in two["logs"] for ln in log["text"].splitlines()
           if re.search(r"internal error|traceback|exception", ln, re.I)]
    assert not bad, f"errors in gitckpt's logs: {bad[:10]}"


# -- 12. the MCP server ends with the host -------------------------------------------------------


def test_mcp_server_ends_with_host(two: Session) -> None:
    assert two["mcp_seen"], "no `gitckpt mcp` process was seen during the session"
    assert not two["mcp_left"], \
        f"`gitckpt mcp` processes {two['mcp_left']} outlived Gemini CLI by 10 s"


# -- after every session ---------------------------------------------------------------------


def test_user_repository_untouched(two: Session, thirty: Session) -> None:
    assert two["guard"] is None, f"the user's repository changed: {two['guard']}"
    assert thirty["guard"] is None, f"the user's repository changed: {thirty['guard']}"
