"""GitHub Copilot CLI (the real `copilot`, pinned) driven offline through its bring-your-own-
model settings against a scripted OpenAI Chat Completions endpoint on 127.0.0.1, with
gitckpt's hooks and MCP server installed: one scripted session at 2 steps and one at 30 steps
(each a module-scoped fixture), read by the tests below.

Setup (no account, no network): COPILOT_OFFLINE=true, COPILOT_PROVIDER_BASE_URL (the fake
model, `/v1`), COPILOT_PROVIDER_TYPE=openai (Chat Completions is its default wire API),
COPILOT_MODEL, COPILOT_PROVIDER_API_KEY (any value; a one-letter key would be masked out of
every line of Copilot's log), COPILOT_AUTO_UPDATE=false, and every home and cache folder in
the test's temp folder (COPILOT_PKG_CACHE_HOME: the binary unpacks its JavaScript package
there on its first run). In prompt mode (`-p`) Copilot loads a repository's hooks only for a
trusted folder: `--trust-folder` (or COPILOT_ALLOW_ALL=true). Its user MCP servers live in
~/.copilot/mcp-config.json (`copilot mcp add`), its workspace ones in `.mcp.json` or
`.github/mcp.json`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_model import Call, FakeModel, Seen, Turn
from hostlib import PINNED, gitckpt_bin, host_binary
from proto_chat import ChatCompletions

#: A fake GitHub token of the real shape (mixed case and digits: one of a single repeated
#: letter is, rightly, not taken for a secret by the redactor).
SECRET = "ghp_" + "Ab3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
PROMPT = f"Refactor the parser; the CI token is {SECRET}, keep it out of files."
STEP_TITLE = "Wrote the parser skeleton"  # step 2 of the 2-step session: the handoff names it
REMINDER = "not saved as a step"  # gitckpt's stop reminder (hooks/run.py _unsaved_line)
HANDOFF = "the task below was in progress"  # gitckpt's session-start head (hooks/run.py)
HOST_TIMEOUT = 180  # a safety net for one host run; nothing is asserted on time

#: One module's two sessions are fixtures of one worker under `--dist loadgroup` (otherwise
#: each pytest-xdist worker that runs a test of this module runs its own sessions).
pytestmark = pytest.mark.xdist_group("copilot")

# Budgets of what the model reads (chars), the numbers.
SAVE_BUDGET = 300
RESUME_BUDGET_30 = 2_000
LOG_BUDGET = 3_000
ALWAYS_LOADED_BUDGET = 6_000


# -- the harness -----------------------------------------------------------------------------

def _root_conftest(config: pytest.Config) -> Any:
    """tests/conftest.py (make_repo, RepoGuard, stop_services, IDENTITY)."""
    import conftest

    return conftest


@dataclass
class Session:
    """One scripted Copilot session and everything it left to read."""

    repo: Path
    env: dict[str, str]
    requests: list[Seen]
    unknown: list[str]
    code: int
    stdout: str
    stderr: str
    log: str  # Copilot's own log (--log-level all)
    gitckpt_log: str  # $XDG_STATE_HOME/gitckpt/gitckpt.log
    install: subprocess.CompletedProcess[str]  # hook install --host copilot --mcp --yes
    mcp_pids: list[int] = field(default_factory=list)  # `gitckpt mcp` seen during the run
    mcp_left: list[int] = field(default_factory=list)  # of those, alive after the host left
    guard_error: str | None = None

    def gitckpt(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([gitckpt_bin(), *args], cwd=self.repo, env=self.env,
                              capture_output=True, text=True, timeout=120)

    def json(self, *args: str) -> Any:
        p = self.gitckpt("--json", *args)
        assert p.returncode == 0, f"gitckpt {' '.join(args)} failed: {p.stderr}"
        return json.loads(p.stdout)

    def result_of(self, suffix: str) -> str:
        """The text the host sent back to the model for the (first) call of the gitckpt
        tool ending `suffix`, as the next request carries it."""
        proto = self.requests[0].protocol
        assert isinstance(proto, ChatCompletions)
        for seen in self.requests:  # a request carries the calls so far and their results
            for cid, name in _calls(seen.body):
                text = proto.tool_result_of(seen.body, cid) if name.endswith(suffix) else None
                if text is not None:
                    return text
        raise AssertionError(f"no result of a {suffix} call reached the model")

    def hook_stdouts(self) -> list[str]:
        """What gitckpt's hooks printed for Copilot, as Copilot's log shows it."""
        return re.findall(r"\[hook stdout\] (.*)", self.log)


def _calls(body: Any) -> list[tuple[str, str]]:
    """(id, name) of every assistant tool call in a Chat Completions request."""
    out = []
    for m in body.get("messages") or []:
        for c in m.get("tool_calls") or []:
            out.append((c.get("id"), (c.get("function") or {}).get("name", "")))
    return out


def _mcp_processes(runtime: str) -> list[int]:
    """`gitckpt mcp` processes of this session (their environment names its service folder)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if not any(a.endswith(b"gitckpt") for a in cmd) or b"mcp" not in cmd:
                continue
            if f"GITCKPT_RUNTIME_DIR={runtime}".encode() in (proc / "environ").read_bytes():
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _environment(base: Path, runtime: str, pkg_cache: Path) -> dict[str, str]:
    home = base / "home"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n"
                                     "[user]\n\tname = Test User\n\temail = test@example.com\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("COPILOT_", "GITHUB_", "GH_", "OTEL_", "GITCKPT_"))}
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "GITCKPT_RUNTIME_DIR": runtime, "GITCKPT_SERVICE_IDLE": "60",
        "PATH": f"{Path(gitckpt_bin()).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        # Copilot offline with a custom provider: no account, no network
        "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_MODEL": "fake-model",
        "COPILOT_PROVIDER_API_KEY": "fake-key-for-the-scripted-model",
        "COPILOT_PKG_CACHE_HOME": str(pkg_cache), "NO_COLOR": "1", "CI": "1",
    })
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def _run_session(tmp: Path, request: pytest.FixtureRequest, script: list[Any], steps: int,
                 pkg_cache: Path) -> Session:
    """Install gitckpt for Copilot in a fresh repository, make a task of `steps` steps with
    the CLI, then run one `copilot -p` session against `script`."""
    copilot = host_binary("copilot")
    root = _root_conftest(request.config)
    runtime = tempfile.mkdtemp(prefix="cp", dir="/tmp")  # a socket path has <= 100 bytes
    env = _environment(tmp, runtime, pkg_cache)
    repo = root.make_repo(tmp / "repo")
    guard = root.RepoGuard(repo)

    def run(*args: str, cwd: Path = repo) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=HOST_TIMEOUT)

    try:
        # 1. the recipe as the docs give it; where it cannot declare the server, the way
        # its hint says: the user's MCP file (`copilot mcp add`), then the hooks alone
        install = run(gitckpt_bin(), "hook", "install", "--host", "copilot", "--mcp", "--yes")
        if install.returncode != 0:
            added = run(str(copilot), "mcp", "add", "gitckpt", "--", "gitckpt", "mcp")
            assert added.returncode == 0, f"copilot mcp add failed: {added.stderr}"
            hooks = run(gitckpt_bin(), "hook", "install", "--host", "copilot", "--yes")
            assert hooks.returncode == 0, f"hook install failed: {hooks.stderr}"
        # 2. a task with steps, made with the CLI
        p = run(gitckpt_bin(), "init", "parser", "--goal", "Rewrite the config parser")
        assert p.returncode == 0, p.stderr
        for n in range(1, steps + 1):
            (repo / "work.txt").write_text(f"step {n}\n")
            title = STEP_TITLE if n == steps else f"Step {n} of the groundwork"
            p = run(gitckpt_bin(), "save", title, "--conclusion", f"part {n} done",
                    "--next", "write the tokenizer")
            assert p.returncode == 0, p.stderr
        # 3. the session
        seen_pids: list[int] = []

        def spy(step: Any) -> Any:  # notes the MCP server's pid while the session runs
            def turn(seen: Seen) -> Turn:
                seen_pids.extend(p for p in _mcp_processes(runtime) if p not in seen_pids)
                return step(seen) if callable(step) else step
            return turn

        logs = tmp / "copilot-logs"
        with FakeModel([ChatCompletions()], script=[spy(s) for s in script]) as model:
            env["COPILOT_PROVIDER_BASE_URL"] = f"{model.url}/v1"
            host = run(str(copilot), "-p", PROMPT, "--allow-all-tools", "--trust-folder",
                       "--no-auto-update", "--disable-client-telemetry", "--no-ask-user",
                       "--log-level", "all", "--log-dir", str(logs))
        left = []
        for pid in seen_pids:  # the host's wait for its servers, and a little more
            for _ in range(100):
                if not _alive(pid):
                    break
                time.sleep(0.1)
            else:
                left.append(pid)
        state = Path(env["XDG_STATE_HOME"]) / "gitckpt" / "gitckpt.log"
        session = Session(
            repo, env, model.requests, model.unknown, host.returncode, host.stdout,
            host.stderr, "\n".join(f.read_text(errors="replace") for f in logs.glob("*.log")),
            state.read_text(errors="replace") if state.exists() else "", install,
            seen_pids, left)
        try:
            guard.check(status_changes=True)
        except AssertionError as e:
            session.guard_error = str(e)
        return session
    finally:
        for pid in _mcp_processes(runtime):
            os.kill(pid, signal.SIGKILL)
        subprocess.run([gitckpt_bin(), "service", "stop"], env=env, capture_output=True,
                       timeout=60, check=False)
        root.stop_services(runtime)


def _bash(command: str, what: str) -> Turn:
    return Turn(calls=(Call("bash", {"command": command, "description": what}),))


def _gitckpt(tool: str, args: dict[str, Any] | None = None) -> Any:
    """A call of gitckpt's tool `tool`, named as this request offers it."""
    return lambda seen: Turn(calls=(Call(seen.tool(tool), args or {}),))


@pytest.fixture(scope="module")
def pkg_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("copilot-pkg")


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest,
        pkg_cache: Path) -> Session:
    """The main session, at 2 steps: a shell write, a created file, an edit, a failing shell
    write, an `ls`, ckpt_resume and ckpt_log; then the end of the turn (the Stop reminder
    comes), ckpt_save, and the end."""
    tmp = tmp_path_factory.mktemp("copilot-2")
    repo = tmp / "repo"
    script = [
        _bash("echo x > a.txt", "Write a.txt"),
        Turn(calls=(Call("create", {"path": str(repo / "c.txt"), "file_text": "created\n"}),)),
        Turn(calls=(Call("edit", {"path": str(repo / "README.md"), "old_str": "# project",
                                  "new_str": "# the project"}),)),
        _bash("echo y > b.txt; exit 3", "Write b.txt and fail"),
        _bash("ls", "List files"),
        _gitckpt("ckpt_resume"),
        _gitckpt("ckpt_log"),
        Turn(text="The parser is refactored."),  # Stop: gitckpt's reminder comes back
        _gitckpt("ckpt_save", {"title": "Refactored the parser",
                               "conclusion": "the parser reads the new format",
                               "next": "write the tokenizer"}),
        Turn(text="Saved."),
    ]
    return _run_session(tmp, request, script, 2, pkg_cache)


@pytest.fixture(scope="module")
def thirty(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest,
           pkg_cache: Path) -> Session:
    """The same task at 30 steps: ckpt_resume, ckpt_log, a shell write and ckpt_save."""
    script = [
        _gitckpt("ckpt_resume"),
        _gitckpt("ckpt_log"),
        _bash("echo z > z.txt", "Write z.txt"),
        _gitckpt("ckpt_save", {"title": "Step 31", "conclusion": "z written",
                               "next": "write the tokenizer"}),
        Turn(text="Saved."),
    ]
    return _run_session(tmp_path_factory.mktemp("copilot-30"), request, script, 30, pkg_cache)


def _why(s: Session, path: str) -> dict[str, Any]:
    out = s.json("why", f"{path}:1")
    [line] = out["lines"]
    return line


def _stored(repo: Path) -> tuple[str, list[str]]:
    """Everything the store keeps as text (its state files and every note of the active
    task), and every prompt it kept (pending, and in the steps' notes)."""
    from gitckpt.engine import prompts
    from gitckpt.service.workspace import open_workspace

    tl = open_workspace(repo).timeline
    out = [p.read_text(errors="replace") for p in tl.store.state.path.rglob("*") if p.is_file()]
    tid = tl.resolve(None)
    kept = [p["text"] for p in prompts.pending(tl.store, tid)]
    for s in tl.steps(tid):
        out.append(tl.store.read_note(s.commit) or "")
        kept += [p.get("text", "") for p in (s.note.prompts or [])]
        out += [tl.store.read_note(d.commit) or "" for d in tl.drifts(tid, s.n)]
    return "\n".join(out), kept


_TOOL_WORD = re.compile(r"(?<![\w-])([\w-]*ckpt_[a-z]+)(?=\()")


# -- 1. install and run ----------------------------------------------------------------------

def test_the_recipe_installs_with_its_mcp_server(two: Session) -> None:
    assert two.install.returncode == 0, (
        "`gitckpt hook install --host copilot --mcp --yes` fails, so a Copilot user cannot "
        "install gitckpt's recipe with its server in one step as docs/hosts.md says (Copilot "
        "reads workspace servers from .mcp.json or .github/mcp.json): "
        f"{two.install.stderr.strip()}")


def test_the_session_runs_to_its_end(two: Session, thirty: Session) -> None:
    for s in (two, thirty):
        assert s.code == 0, f"copilot exited {s.code}: {s.stderr[-2000:]}"
        assert not s.unknown, f"Copilot asked the fake model for unknown paths: {s.unknown}"
    assert len(two.requests) == 10, (
        f"the 2-step session's script has 10 turns, the host asked {len(two.requests)} times")
    assert two.guard_error is None, f"the user's repository changed: {two.guard_error}"
    assert thirty.guard_error is None, f"the user's repository changed: {thirty.guard_error}"


def test_the_hooks_name_tool_calls_not_cli_commands(two: Session) -> None:
    hooks = json.loads((two.repo / ".github" / "hooks" / "gitckpt.json").read_text())
    commands = [h["bash"] for handlers in hooks["hooks"].values() for h in handlers]
    assert commands, "no gitckpt hook is installed"
    assert not [c for c in commands if c.endswith("--cli")], \
        f"with gitckpt's MCP server declared, the hooks still say CLI commands: {commands}"


# -- 2, 3. the first request -----------------------------------------------------------------

def test_the_handoff_reaches_the_first_request(two: Session) -> None:
    first = two.requests[0]
    said = first.system() + "\n".join(first.user_texts())
    shown = [o for o in two.hook_stdouts() if HANDOFF in o]
    assert STEP_TITLE in said, (
        "the model's first request does not hold the handoff (step title "
        f"{STEP_TITLE!r}): Copilot reads only a top-level `additionalContext` from a "
        "SessionStart hook and ignores Claude's `hookSpecificOutput`; gitckpt printed: "
        f"{shown[:1]}")


def test_the_first_request_offers_gitckpts_tools(two: Session) -> None:
    tools = two.requests[0].tools()
    assert any(t.endswith("ckpt_save") for t in tools), \
        f"the first request offers no gitckpt tool (the MCP server was late): {tools}"


# -- 4. drifts -------------------------------------------------------------------------------

def test_a_shell_write_is_a_drift_of_its_command(two: Session) -> None:
    line = _why(two, "a.txt")
    assert line["kind"] == "drift", f"a.txt is not a drift: {line}"
    assert line["tool"], f"a.txt's drift names no tool call: {line}"
    assert line["tool"]["host"] == "copilot"
    assert line["tool"]["command"] == "echo x > a.txt", line["tool"]


def test_a_created_file_is_a_drift_of_the_create_tool(two: Session) -> None:
    line = _why(two, "c.txt")
    assert line["kind"] == "drift", f"c.txt is not a drift: {line}"
    assert line["tool"], f"c.txt's drift names no tool call: {line}"
    assert line["tool"].get("command") is None
    assert line["tool"]["name"] in ("create", "Write"), line["tool"]  # Write: 1.0.102


def test_an_edit_is_a_drift_of_the_edit_tool(two: Session) -> None:
    line = _why(two, "README.md")
    assert line["kind"] == "drift", f"README.md is not a drift: {line}"
    assert line["tool"], f"README.md's drift names no tool call: {line}"
    assert line["tool"]["name"] in ("edit", "Edit"), line["tool"]  # Edit: 1.0.102


def test_a_failing_shell_write_is_a_drift_of_its_command(two: Session) -> None:
    line = _why(two, "b.txt")
    assert line["kind"] == "drift", f"b.txt is not a drift: {line}"
    assert line["tool"], ("b.txt, written by a shell command that exited 3, is not "
                          f"attributed to that call: {line}")
    assert line["tool"]["command"] == "echo y > b.txt; exit 3", line["tool"]


def test_ls_makes_no_drift(two: Session) -> None:
    shells = [line for line in two.gitckpt_log.splitlines() if "post-tool: Bash:" in line]
    assert len(shells) == 3, f"three shell calls ran, gitckpt heard {len(shells)}: {shells}"
    assert "no files changed" in shells[2], f"`ls` made a drift: {shells[2]}"
    log = two.json("log")
    before_save = [d for d in log["drifts"] if d["step"] == 2 and d["trigger"] == "tool"]
    paths = sorted(p for d in before_save for p in d["changes"]["added"] +
                   d["changes"]["modified"])
    assert paths == ["README.md", "a.txt", "b.txt", "c.txt"], \
        f"the four file-changing calls are not one drift each: {paths}"


# -- 5, 10. prompts --------------------------------------------------------------------------

def test_the_prompt_is_kept_and_redacted(two: Session) -> None:
    stored, kept = _stored(two.repo)
    assert any("Refactor the parser" in p for p in kept), f"the prompt is not kept: {kept}"
    assert SECRET not in stored, "the GitHub token of the prompt is stored verbatim"
    assert _why(two, "a.txt")["prompt"].startswith("Refactor the parser")


def test_nothing_of_gitckpts_is_kept_as_a_prompt(two: Session) -> None:
    _, kept = _stored(two.repo)
    ours = [p for p in kept if p.lstrip().startswith("gitckpt:") or REMINDER in p
            or HANDOFF in p]
    assert not ours, (
        "gitckpt's own text is kept as a user prompt: Copilot sends the Stop hook's `reason` "
        "back as a user message and fires userPromptSubmitted for it, so the reminder is "
        f"stored beside the user's prompts: {ours}")


# -- 6. ckpt_save ----------------------------------------------------------------------------

def test_ckpt_save_by_the_model_makes_the_step(two: Session) -> None:
    steps = two.json("log")["steps"]
    assert steps[-1]["title"] == "Refactored the parser", [s["title"] for s in steps]
    assert steps[-1]["step"] == 3


# -- 7. what the model reads -----------------------------------------------------------------

def test_results_the_model_reads_within_budget(two: Session, thirty: Session) -> None:
    sizes = {(n, tool): len(s.result_of(tool)) for n, s in ((2, two), (30, thirty))
             for tool in ("ckpt_save", "ckpt_resume", "ckpt_log")}
    print(f"copilot tool results (chars): {sizes}")
    over = {k: v for k, v in sizes.items()
            if v > {"ckpt_save": SAVE_BUDGET, "ckpt_log": LOG_BUDGET,
                    "ckpt_resume": RESUME_BUDGET_30 if k[0] == 30 else 10**9}[k[1]]}
    assert not over, f"tool results over budget (steps, tool): chars: {over}"


def test_a_result_is_read_as_text_alone(two: Session) -> None:
    text = two.result_of("ckpt_resume")
    json_seen = text.lstrip().startswith("{") or '"steps":' in text
    assert not json_seen, ("Copilot shows the model the result's structured content (JSON) "
                           f"beside its text: {text[:300]!r}")


def test_the_always_loaded_part_within_budget(two: Session) -> None:
    first = two.requests[0]
    proto = first.protocol
    assert isinstance(proto, ChatCompletions)
    defs = [t for t in proto.tool_definitions(first.body)
            if (t.get("function") or {}).get("name", "").startswith("gitckpt-")]
    size = sum(len(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in defs)
    # Copilot puts a server's `instructions` in the system prompt, in a <NAME-*> element,
    # only for allowlisted servers or with --allow-all-mcp-server-instructions
    found = re.search(r"<gitckpt-\*>(.*?)</gitckpt-\*>", first.system(), re.S)
    instructions = len(found.group(1)) if found else 0
    print(f"copilot always-loaded: {len(defs)} tools, {size} chars of definitions, "
          f"{instructions} chars of server instructions")
    assert size + instructions <= ALWAYS_LOADED_BUDGET, (
        f"gitckpt's tool definitions cost {size} chars of every request (+{instructions} of "
        f"instructions; budget {ALWAYS_LOADED_BUDGET:,})")


# -- 8. tool names ---------------------------------------------------------------------------

def test_copilot_names_mcp_tools_server_dash_tool(two: Session) -> None:
    ours = sorted(t for t in two.requests[0].tools() if "ckpt_" in t)
    assert ours, "Copilot offers no gitckpt tool"
    assert all(t.startswith("gitckpt-ckpt_") for t in ours), ours


def test_every_tool_named_to_the_model_is_offered(two: Session) -> None:
    offered = set(two.requests[-1].tools())
    texts = [t for s in two.requests for t in [*s.user_texts(), s.system()]
             if "gitckpt:" in t]
    texts += two.hook_stdouts()  # the handoff, where it did not reach the model
    named = {m for t in texts for m in _TOOL_WORD.findall(t)}
    assert named, "no gitckpt text naming a tool was seen"
    missing = sorted(named - offered)
    assert not missing, (
        f"gitckpt's texts name tools Copilot does not offer: {missing} (it offers "
        f"{sorted(t for t in offered if 'ckpt_' in t)[:3]}...; the hooks need "
        "GITCKPT_TOOL_PREFIX=gitckpt- or the names Copilot shows)")


# -- 9. the Stop reminder --------------------------------------------------------------------

def test_the_stop_reminder_reaches_the_model_once(two: Session) -> None:
    last = two.requests[-1].user_texts()
    reminders = [t for t in last if REMINDER in t]
    assert len(reminders) == 1, \
        f"the reminder reached the model {len(reminders)} times: {reminders}"
    asked = next(i for i, s in enumerate(two.requests) if any(REMINDER in t
                                                               for t in s.user_texts()))
    assert asked == 8, f"the reminder came with request {asked + 1}, not after the turn ended"


def test_the_stop_reminder_is_said_once_per_unsaved_stretch(two: Session) -> None:
    said = [line for line in two.gitckpt_log.splitlines() if "stop: reminded" in line]
    assert len(said) == 1, f"gitckpt reminded {len(said)} times: {said}"


# -- 11, 12. errors and the server's end -----------------------------------------------------

def test_no_gitckpt_error_in_the_hosts_log(two: Session, thirty: Session) -> None:
    for s in (two, thirty):
        # a failing hook is a "[rust:hooks] Hook warning" and a "! <its stderr>" line on
        # Copilot's stderr; a failing server "MCP server connection failed {server_name}"
        bad = [line for line in s.log.splitlines()
               if re.search(r"\[(ERROR|WARNING)\]", line)
               and ("gitckpt" in line.lower() or "[rust:hooks]" in line)]
        bad += [line for line in s.stderr.splitlines() if line.startswith("! ")]
        bad += [line for line in s.gitckpt_log.splitlines()
                if re.search(r"internal error|Traceback|cannot use the store", line)]
        assert not bad, f"errors attributable to gitckpt: {bad[:5]}"


def test_the_mcp_server_ends_with_the_session(two: Session, thirty: Session) -> None:
    for s in (two, thirty):
        assert s.mcp_pids, "no `gitckpt mcp` process was seen during the session"
        assert not s.mcp_left, f"`gitckpt mcp` still runs after Copilot left: {s.mcp_left}"


def test_the_pinned_version_runs(two: Session) -> None:
    p = subprocess.run([str(host_binary("copilot")), "--version"], capture_output=True,
                       text=True, timeout=HOST_TIMEOUT, env=two.env)
    assert PINNED["copilot"][1] in p.stdout, p.stdout + p.stderr

