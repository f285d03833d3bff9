"""Codex CLI (@openai/codex, pinned in hostlib.PINNED) drives gitckpt for real: `codex exec`
against a fake OpenAI Responses endpoint on 127.0.0.1 (a custom model provider in
$CODEX_HOME/config.toml), gitckpt's hooks from `.codex/hooks.json` and its MCP server from
`[mcp_servers.gitckpt]`. One scripted session per module; the tests read its record.

What Codex needs here (each is reported by a test where it matters):
- hooks run only when trusted: a project's `.codex/` layer only in a trusted project
  (`[projects."<root>"] trust_level = "trusted"`, what `codex exec --trust` writes), and each
  hook only with its hash in `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
  trusted_hash` (what `/hooks` in the TUI writes); else it is skipped without a word. The
  session runs with `--dangerously-bypass-hook-trust` instead of computing those hashes.
- MCP servers start with a filtered environment: `env_vars` in the server's entry passes
  GITCKPT_RUNTIME_DIR and the XDG folders (else the server uses another service folder).
- the catalog's models support `tool_search`, and Codex then defers every MCP tool behind it;
  the session's model (a copy of the catalog's gpt-5.5 without `supports_search_tool`) has
  the tools listed in each request, as a model without tool search sees them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import IDENTITY, RepoGuard, make_repo, stop_services
from fake_model import Call, FakeModel, Seen, Turn
from hostlib import gitckpt_bin, host_binary
from proto_responses import Responses

SECRET = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
PROMPT = f"Add the files, then save the step. My token is {SECRET} (do not keep it)."
STEP_TITLE = "Wire the parser"
SERVER = "gitckpt"
NAMESPACE = f"mcp__{SERVER}"  # Codex groups a server's tools in the namespace mcp__<server>
REMINDER = "are not saved as a step"  # hooks/run.py _unsaved_line
HOST_TIMEOUT = 180

PATCH = "*** Begin Patch\n*** Add File: c.txt\n+patched\n*** End Patch\n"
SHELL_WRITE = "echo x > a.txt"
SHELL_FAIL = "echo y > b.txt; exit 3"
SHELL_LS = "ls"

#: Budgets (chars the model reads) from the issue.
SAVE_BUDGET, RESUME_BUDGET, LOG_BUDGET, ALWAYS_BUDGET = 300, 2_000, 3_000, 6_000


@dataclass
class Session:
    root: Path
    env: dict[str, str]
    codex_home: Path
    model: FakeModel
    proto: Responses
    install_mcp: subprocess.CompletedProcess[str]
    install: subprocess.CompletedProcess[str]
    result: subprocess.CompletedProcess[str] | None = None
    big_task: str = ""
    calls: dict[str, str] = field(default_factory=dict)  # label -> call_id of gitckpt's calls
    missed: dict[str, int] = field(default_factory=dict)  # label -> requests without the tool
    mcp_env: list[set[str]] = field(default_factory=list)  # env names of each `gitckpt mcp`
    mcp_pids: set[int] = field(default_factory=set)
    guard_error: str = ""

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=self.root,
                              env=self.env, capture_output=True, text=True, timeout=120)

    def cli_json(self, *args: str) -> Any:
        out = self.cli("--json", *args)
        assert out.returncode == 0, f"gitckpt {' '.join(args)} failed: {out.stderr}"
        return json.loads(out.stdout)

    @property
    def stderr(self) -> str:
        return self.result.stderr if self.result else ""

    def log_text(self) -> str:
        path = Path(self.env["XDG_STATE_HOME"]) / "gitckpt" / "gitckpt.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _mcp_processes(runtime: str, home: str = "") -> dict[int, set[str]]:
    """The running `gitckpt mcp` processes of this test (its service folder, or its HOME,
    which Codex always passes), with the names of their environment."""
    found: dict[int, set[str]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"mcp" not in argv or not any(a.endswith(b"gitckpt") for a in argv):
                continue
            env = dict(e.split("=", 1) for e in
                       (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                       if "=" in e)
        except OSError:
            continue
        if env.get("GITCKPT_RUNTIME_DIR") == runtime or (home and env.get("HOME") == home):
            found[int(proc.name)] = set(env)
    return found


def _catalog(codex: Path, env: dict[str, str], path: Path) -> str:
    """A model catalog with one model: the pinned Codex's own gpt-5.5 entry (freeform
    apply_patch, unified exec) without tool search, under a slug of its own."""
    out = subprocess.run([str(codex), "debug", "models"], env=env, capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    models = json.loads(out.stdout)["models"]
    base = next((m for m in models if m.get("slug") == "gpt-5.5"), models[0])
    model = {**base, "slug": "gitckpt-fake", "display_name": "gitckpt fake",
             "supports_search_tool": False}
    path.write_text(json.dumps({"models": [model]}), encoding="utf-8")
    return model["slug"]


def _config(url: str, slug: str, catalog: Path, mcp: bool) -> str:
    lines = [
        f'model = "{slug}"',
        'model_provider = "fake"',
        f'model_catalog_json = "{catalog}"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "{url}/v1"',
        'wire_api = "responses"',
        'env_key = "GITCKPT_FAKE_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
    ]
    if mcp:
        lines += [
            f"[mcp_servers.{SERVER}]",
            f'command = "{gitckpt_bin()}"',
            'args = ["mcp"]',
            # Codex gives an MCP server a filtered environment: what the test's service
            # folder, log and git identity need, passed by name
            "env_vars = " + json.dumps(["GITCKPT_RUNTIME_DIR", "GITCKPT_SERVICE_IDLE",
                                        "XDG_STATE_HOME", "XDG_CONFIG_HOME",
                                        "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
                                        *IDENTITY]),
        ]
    return "\n".join(lines) + "\n"


def _call(seen: Seen, session: Session, label: str, tool: str,
          args: dict[str, Any]) -> Turn:
    """The model calls gitckpt's `tool` if the host offers it; else a harmless shell command,
    and the call is tried again on the next request (at most 20 times: the tests that need
    its result then say the tool was not offered)."""
    running = _mcp_processes(session.env["GITCKPT_RUNTIME_DIR"], session.env["HOME"])
    session.mcp_env.extend(running.values())
    session.mcp_pids.update(running)
    found = [t for t in seen.tools() if t.endswith(f"__{tool}")]
    if len(found) != 1:
        session.missed[label] = session.missed.get(label, 0) + 1
        if session.missed[label] < 20:
            session.model.script.insert(0, lambda s: _call(s, session, label, tool, args))
        return Turn(calls=(Call("exec_command", {"cmd": "true"}),))
    # the protocol names the call call_<serial>_<index>; serial: this request's number
    session.calls[label] = f"call_{session.model.requests.index(seen) + 1}_0"
    return Turn(calls=(Call(found[0], args),))


def _script(session: Session) -> list[Any]:
    def mcp(label: str, tool: str, args: dict[str, Any] | None = None) -> Any:
        return lambda seen: _call(seen, session, label, tool, args or {})

    def shell(cmd: str) -> Turn:
        return Turn(calls=(Call("exec_command", {"cmd": cmd}),))

    def after_stop(seen: Seen) -> Turn:
        # the Stop hook's reminder came back as the turn's continuation: save the step
        return _call(seen, session, "save", "ckpt_save",
                     {"title": "Add the files", "conclusion": "a, b and c are there",
                      "next": "nothing"})

    return [
        mcp("resume@2", "ckpt_resume"),
        mcp("log@2", "ckpt_log"),
        shell(SHELL_WRITE),
        Turn(calls=(Call("apply_patch", {"input": PATCH}),)),
        shell(SHELL_FAIL),
        shell(SHELL_LS),
        lambda seen: _call(seen, session, "resume@30", "ckpt_resume",
                           {"task": session.big_task}),
        lambda seen: _call(seen, session, "log@30", "ckpt_log", {"task": session.big_task}),
        Turn(text="The files are there."),  # -> Stop: the reminder
        after_stop,
        Turn(text="Saved."),  # -> Stop: nothing unsaved
    ]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Any:
    codex = host_binary("codex")
    base = tmp_path_factory.mktemp("codex")
    home = base / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    runtime = tempfile.mkdtemp(prefix="cx", dir="/tmp")  # a socket path is short
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(IDENTITY)
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "GITCKPT_RUNTIME_DIR": runtime, "GITCKPT_SERVICE_IDLE": "60",
        "CODEX_HOME": str(codex_home), "GITCKPT_FAKE_KEY": "fake-key",
        "CODEX_DISABLE_TELEMETRY": "1", "NO_COLOR": "1",
    })
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
    root = make_repo(base / "repo")
    env["PATH"] = f"{Path(gitckpt_bin()).parent}{os.pathsep}{env.get('PATH', '')}"
    proto = Responses()
    try:
        with FakeModel([proto]) as model:
            run = lambda *a: subprocess.run(  # noqa: E731
                [sys.executable, "-m", "gitckpt", *a], cwd=root, env=env, capture_output=True,
                text=True, timeout=120)
            # a second task of 30 steps, for the sizes at 30 steps; then the session's own
            big = run("init", "big", "--goal", "A long task of thirty steps")
            assert big.returncode == 0, big.stderr
            for n in range(1, 31):
                (root / "big.txt").write_text(f"step {n}\n")
                saved = run("save", f"Big step {n}", "--conclusion", f"step {n} works",
                            "--next", f"step {n + 1}")
                assert saved.returncode == 0, saved.stderr
            tasks = json.loads(run("--json", "tasks").stdout)
            init = run("init", "demo", "--goal", "Parse the config files")
            assert init.returncode == 0, init.stderr
            # the recipe, before the steps (its file is saved with them, not a drift)
            install_mcp = run("hook", "install", "--host", "codex", "--mcp", "--yes")
            install = install_mcp
            if install_mcp.returncode != 0:  # gitckpt refuses: the hooks alone, server by hand
                install = run("hook", "install", "--host", "codex", "--yes")
            (root / "parser.py").write_text("def parse(text):\n    return text.split()\n")
            for title in ("Read the config format", STEP_TITLE):
                saved = run("save", title, "--conclusion", "done", "--next", "go on")
                assert saved.returncode == 0, saved.stderr
                (root / "parser.py").write_text("def parse(text):\n    return text\n")
            s = Session(root, env, codex_home, model, proto, install_mcp, install)
            s.big_task = next(t["task"] for t in _task_list(tasks) if t.get("name") == "big")
            guard = RepoGuard(root)
            slug = _catalog(codex, env, codex_home / "catalog.json")
            (codex_home / "config.toml").write_text(
                _config(model.url, slug, codex_home / "catalog.json",
                        mcp=install_mcp.returncode != 0), encoding="utf-8")
            model.script[:] = _script(s)
            s.result = subprocess.run(
                [str(codex), "exec", "--dangerously-bypass-approvals-and-sandbox",
                 "--dangerously-bypass-hook-trust", "--trust", "--skip-git-repo-check",
                 "--color", "never", PROMPT],
                cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=HOST_TIMEOUT)
            for _ in range(100):  # Codex has ended its MCP servers (or not: a test says so)
                if not _mcp_processes(runtime, env["HOME"]):
                    break
                time.sleep(0.1)
            try:
                guard.check(status_changes=True)
            except AssertionError as e:
                s.guard_error = str(e)
            yield s
    finally:
        for pid in _mcp_processes(runtime, env["HOME"]):  # only this test's servers
            os.kill(pid, signal.SIGKILL)
        stop_services(runtime)
        shutil.rmtree(runtime, ignore_errors=True)


def _task_list(data: Any) -> list[dict[str, Any]]:
    return data if isinstance(data, list) else data.get("tasks", [])


def _mcp_result(s: Session, label: str) -> str:
    """The text the model read back for gitckpt's call `label` (from the last request, which
    holds the whole conversation)."""
    call_id = s.calls.get(label)
    if call_id is None:
        pytest.fail(f"the model could not make the call {label}: Codex did not offer the tool "
                    f"in {s.missed.get(label, 0)} requests")
    last = s.model.requests[-1].body
    outs = [o for o in last.get("input", []) if isinstance(o, dict)
            and o.get("type") == "function_call_output" and o.get("call_id") == call_id]
    assert outs, f"no result of {label} came back to the model"
    return s.proto.tool_results({"input": outs})[0]


# -- 1. the recipe, the session ------------------------------------------------------------


def test_hook_install_with_mcp_succeeds(session: Session) -> None:
    assert session.install_mcp.returncode == 0, (
        "`gitckpt hook install --host codex --mcp --yes` refuses, so a Codex user gets no MCP "
        f"server from the recipe: {session.install_mcp.stderr.strip()}")


def test_session_runs_to_its_end(session: Session) -> None:
    assert session.result is not None
    assert session.result.returncode == 0, f"codex exec failed:\n{session.stderr[-3000:]}"
    assert session.model.unknown == [], f"Codex asked the fake for {session.model.unknown}"
    assert not session.model.script, "the session ended before the script did"
    assert not session.guard_error, f"the user's repository changed: {session.guard_error}"


def test_hooks_ran(session: Session) -> None:
    """Every hook the recipe wires fired (Codex prints `hook: <Event>` for each run)."""
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"):
        assert f"hook: {event}" in session.stderr, f"Codex never ran the {event} hook"


# -- 2, 3. the first request ---------------------------------------------------------------


def test_handoff_reaches_first_request(session: Session) -> None:
    first = session.model.requests[0]
    assert STEP_TITLE in first.system() + "\n".join(first.user_texts()), (
        "the handoff (with the step title) is not in the model's first request")


def test_gitckpt_tools_arrive_in_the_first_turn(session: Session) -> None:
    """`codex exec` does not wait for its MCP servers before its first request (a fake model
    that answers at once gets several requests before any server is listed): gitckpt's tools
    are there within the first turn, the bridge answering the handshake at once."""
    offered = [n for n, r in enumerate(session.model.requests, 1)
               if f"{NAMESPACE}__ckpt_save" in r.tools()]
    print(f"\n[codex] gitckpt's tools first offered in request {offered[:1]}")
    assert offered, "no request of the session offers gitckpt's tools"
    assert offered[0] <= 6, f"gitckpt's tools came only with request {offered[0]}"


# -- 4. drifts -----------------------------------------------------------------------------


def _why(s: Session, path: str) -> dict[str, Any]:
    data = s.cli_json("why", f"{path}:1", "--task", _demo(s))
    return data["lines"][0]


def _demo(s: Session) -> str:
    return next(t["task"] for t in _task_list(s.cli_json("tasks")) if t.get("name") == "demo")


@pytest.mark.parametrize(("path", "tool", "command"), [
    ("a.txt", "Bash", SHELL_WRITE),
    ("c.txt", "apply_patch", None),
    ("b.txt", "Bash", SHELL_FAIL),
], ids=["shell", "apply_patch", "failing-shell"])
def test_change_is_a_drift_of_its_call(session: Session, path: str, tool: str,
                                       command: str | None) -> None:
    line = _why(session, path)
    assert line["kind"] == "drift" or line.get("saved_in") or line["kind"] == "step", line
    assert line.get("trigger") == "tool", (
        f"{path} was not recorded as the drift of a tool call: {line}")
    assert line["tool"]["name"] == tool, f"{path} is attributed to {line['tool']}"
    assert line["tool"]["host"] == "codex"
    if command is not None:
        assert line["tool"]["command"] == command, f"{path}: {line['tool']}"


def test_ls_makes_no_drift(session: Session) -> None:
    log = session.cli_json("log", "--task", _demo(session))
    ls = [d for d in log["drifts"] if not d["changes"].get("added")
          and not d["changes"].get("modified") and not d["changes"].get("deleted")]
    assert not ls, f"an empty drift was recorded: {ls}"
    tool_drifts = [d for d in log["drifts"] if d.get("trigger") == "tool"]
    assert len(tool_drifts) == 3, (
        "expected exactly 3 tool drifts (echo, apply_patch, failing echo; none for ls): "
        f"{[d['changes'] for d in tool_drifts]}")


# -- 5, 10. prompts ------------------------------------------------------------------------


def test_prompt_is_recorded_and_redacted(session: Session) -> None:
    line = _why(session, "a.txt")
    assert line.get("prompt"), f"no prompt behind the drift of a.txt: {line}"
    assert "Add the files" in line["prompt"], line["prompt"]
    assert SECRET not in line["prompt"], "the prompt's token is shown verbatim by `why`"
    stored = subprocess.run(["grep", "-rlF", SECRET, str(session.root / ".git")],
                            capture_output=True, text=True)
    assert not stored.stdout.strip(), f"the token is kept verbatim in: {stored.stdout}"
    objects = subprocess.run(
        ["git", "-C", str(session.root), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True, timeout=60).stdout
    assert SECRET.encode() not in objects, "the token is stored verbatim in a git object"


def test_nothing_of_gitckpts_is_a_prompt(session: Session) -> None:
    """One prompt kept (the user's): the handoff and the Stop reminder (which Codex sends as a
    user message) are not prompts."""
    kept = re.findall(r"hook codex prompt: prompt \w+ kept", session.log_text())
    assert len(kept) == 1, f"{len(kept)} prompts kept for one user prompt: {kept}"
    for path in ("a.txt", "b.txt", "c.txt"):
        prompt = _why(session, path).get("prompt") or ""
        assert prompt.startswith("Add the files"), f"{path}: the prompt behind it is {prompt!r}"
        for marker in ("gitckpt:", REMINDER, "handoff", "<hook_prompt"):
            assert marker not in prompt, f"gitckpt's own text ({marker!r}) kept as a prompt"


# -- 6. ckpt_save by the model -------------------------------------------------------------


def test_mcp_save_makes_the_step(session: Session) -> None:
    _mcp_result(session, "save")
    log = session.cli_json("log", "--task", _demo(session))
    titles = [st["title"] for st in log["steps"]]
    assert "Add the files" in titles, f"the model's ckpt_save made no step: {titles}"


# -- 7. what the model reads ---------------------------------------------------------------


@pytest.mark.parametrize(("label", "what", "budget"), [
    ("resume@2", "ckpt_resume at 2 steps", RESUME_BUDGET),
    ("log@2", "ckpt_log at 2 steps", LOG_BUDGET),
    ("resume@30", "ckpt_resume at 30 steps", RESUME_BUDGET),
    ("log@30", "ckpt_log at 30 steps", LOG_BUDGET),
    ("save", "ckpt_save", SAVE_BUDGET)], ids=["resume@2", "log@2", "resume@30", "log@30", "save"])
def test_result_size(session: Session, label: str, what: str, budget: int) -> None:
    text = _mcp_result(session, label)
    print(f"{what}: {len(text)} chars the model reads")
    assert len(text) <= budget, (
        f"{what}: the model reads {len(text)} chars (budget {budget}): {text[:400]!r}")


def test_always_loaded_size(session: Session) -> None:
    body = session.model.requests[-1].body
    defs = session.proto.tool_definitions(body, NAMESPACE)
    assert defs, "no gitckpt tool definitions in the request"
    print(f"gitckpt's tool definitions + instructions: {len(defs)} chars")
    assert len(defs) <= ALWAYS_BUDGET, (
        f"gitckpt's tool definitions (with the server instructions Codex puts in the "
        f"namespace's description) are {len(defs)} chars in every request "
        f"(budget {ALWAYS_BUDGET})")


# -- 8. tool names in gitckpt's texts -------------------------------------------------------


def _gitckpt_texts(s: Session) -> list[str]:
    """The handoff and the reminders as the model got them."""
    last = s.model.requests[-1]
    texts = [t for t in [*last.system().split("\n\n"), *last.user_texts()]
             if "gitckpt" in t and ("handoff" in t or REMINDER in t)]
    first = s.model.requests[0]
    texts += [t for t in first.protocol._messages(first.body, "developer")  # type: ignore
              if "handoff" in t]
    return texts


def test_names_in_texts_are_offered(session: Session) -> None:
    texts = "\n".join(_gitckpt_texts(session))
    assert texts, "neither the handoff nor a reminder reached the model"
    offered = set(session.model.requests[-1].tools())
    bare = {t.split("__")[-1] for t in offered if t.startswith(f"{NAMESPACE}__")}
    named = set(re.findall(r"\b((?:mcp__\w+?__)?ckpt_[a-z]+)\b", texts))
    wrong = {n for n in named if n not in offered and n not in bare}
    assert not wrong, f"gitckpt's texts name tools Codex does not offer: {wrong}"


def test_texts_name_tools_when_the_server_is_there(session: Session) -> None:
    """With gitckpt's MCP server configured for Codex, the handoff and reminders should name
    tool calls (`ckpt_save(...)`), not CLI commands."""
    texts = "\n".join(_gitckpt_texts(session))
    assert "gitckpt save \"TITLE\"" not in texts, (
        "the handoff/reminder names the CLI (`gitckpt save ...`) although Codex has gitckpt's "
        "MCP server: the installed hooks carry --cli (hook install does not see "
        "[mcp_servers.gitckpt] in $CODEX_HOME/config.toml)")


# -- 9. the stop reminder -------------------------------------------------------------------


def test_stop_reminder_reaches_model_once(session: Session) -> None:
    reqs = session.model.requests
    with_it = [i for i, r in enumerate(reqs) if any(REMINDER in t for t in r.user_texts())]
    assert with_it, "the Stop hook's reminder never reached the model"
    last = reqs[-1].user_texts()
    count = sum(REMINDER in t for t in last)
    assert count == 1, f"the reminder reached the model {count} times in one unsaved stretch"
    assert "Stop Blocked" in session.stderr, "Codex did not take the reminder as a block"


# -- 11, 12. errors, the server's end --------------------------------------------------------


def test_no_gitckpt_errors(session: Session) -> None:
    bad = [ln for ln in session.stderr.splitlines()
           if re.search(r"hook: \w+ Failed|gitckpt.*(error|failed)|mcp.*gitckpt.*(error|fail)",
                        ln, re.I)]
    assert not bad, f"Codex shows errors of gitckpt: {bad}"
    log = [ln for ln in session.log_text().splitlines()
           if re.search(r"internal error|traceback|cannot use the store", ln, re.I)]
    assert not log, f"gitckpt's log has errors: {log}"


def test_mcp_server_saw_the_test_service(session: Session) -> None:
    """The MCP server got GITCKPT_RUNTIME_DIR (through `env_vars`): it used the test's service."""
    assert session.mcp_env, "no `gitckpt mcp` process of this session was seen"
    names = session.mcp_env[0]
    print(f"the environment Codex gives gitckpt mcp: {sorted(names)}")
    assert "HOME" in names, sorted(names)
    assert "GITCKPT_RUNTIME_DIR" in names, (
        f"gitckpt mcp did not get GITCKPT_RUNTIME_DIR: {sorted(names)}")


def test_mcp_server_ends_with_the_session(session: Session) -> None:
    assert session.mcp_pids, "no `gitckpt mcp` process of this session was seen"
    alive = [p for p in session.mcp_pids if Path(f"/proc/{p}").exists()
             and b"zombie" not in Path(f"/proc/{p}/status").read_bytes().lower()]
    assert not alive, f"`gitckpt mcp` outlived the Codex session: {alive}"


def test_mcp_server_ends_on_sigint(session: Session) -> None:
    """What a host that interrupts its servers sends: SIGINT ends `gitckpt mcp` at once."""
    proc = subprocess.Popen([gitckpt_bin(), "mcp"], cwd=session.root, env=session.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.flush()
        assert proc.stdout.readline(), "gitckpt mcp did not answer initialize"
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("gitckpt mcp is still running 10 s after SIGINT")
        assert code is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

