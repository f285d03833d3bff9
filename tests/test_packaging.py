"""Where agents live: the Claude Code plugin and marketplace files, `hook install` for the
other hosts, the MCP registry's server.json, and a built wheel in a fresh venv."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli

from gitckpt import __version__
from gitckpt.hooks.hosts import HOSTS, PLUGIN_PROGRAM

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")

ROOT = Path(__file__).resolve().parent.parent

# The field lists of code.claude.com/docs/en/plugins/manifest-reference and
# .../plugins/marketplace-reference (copied 2026-12-01): what each key may hold.
PLUGIN_FIELDS = {
    "$schema": str, "name": str, "displayName": str, "version": str, "description": str,
    "author": dict, "homepage": str, "repository": str, "license": str, "keywords": list,
    "metadata": dict, "icon": str, "defaultEnabled": bool, "dependencies": list,
    "settings": dict, "userConfig": dict, "skills": (str, list), "commands": (str, list, dict),
    "agents": (str, list), "hooks": (str, dict, list), "mcpServers": (str, dict, list),
    "lspServers": (str, dict, list), "outputStyles": (str, list), "workflows": (str, list),
    "experimental": dict, "channels": list,
}
MARKETPLACE_FIELDS = {"$schema": str, "name": str, "owner": dict, "plugins": list,
                      "description": str, "version": str, "metadata": dict,
                      "forceRemoveDeletedPlugins": bool, "renames": dict,
                      "allowCrossMarketplaceDependenciesOn": list}
ENTRY_FIELDS = {**PLUGIN_FIELDS, "source": (str, dict), "category": str, "tags": list,
                "strict": bool, "relevance": (str, int, float)}
HOOK_EVENTS = {"SessionStart", "PostToolUse", "PostToolUseFailure", "PreCompact", "Stop",
               "PreToolUse",
               "UserPromptSubmit", "SessionEnd", "Notification", "SubagentStop"}
RESERVED = ("claude-", "anthropic-", "anthropics-", "cc-plugin-")


def load(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def check_fields(obj: dict, fields: dict, where: str) -> None:
    for key, value in obj.items():
        assert key in fields, f"{where}: {key} is not a documented field"
        assert isinstance(value, fields[key]), f"{where}: {key} has the wrong type"


def check_path(path: str) -> None:
    """A component path: starts with ./ (a bare "." makes Claude Code before 2.1.221 refuse
    the whole plugin), has no .., and exists."""
    assert path.startswith("./"), path
    assert ".." not in Path(path).parts, path
    assert (ROOT / path).exists(), path


def test_the_plugin_manifest():
    m = load(".claude-plugin/plugin.json")
    check_fields(m, PLUGIN_FIELDS, "plugin.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", m["name"])
    assert not m["name"].startswith(
        RESERVED)
    assert m["version"] == __version__
    assert isinstance(m["author"]["name"], str)
    for key in ("skills", "hooks", "mcpServers", "commands", "agents"):
        if isinstance(m.get(key), str):
            check_path(m[key])
    # The skill: SKILL.md at the plugin root, with the frontmatter a skill needs.
    skill = (ROOT / "SKILL.md").read_text()
    front = skill.split("---\n")[1]
    assert "name: gitckpt" in front
    assert "description: " in front


def test_the_marketplace():
    m = load(".claude-plugin/marketplace.json")
    check_fields(m, MARKETPLACE_FIELDS, "marketplace.json")
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", m["name"])
    assert ".." not in m["name"]
    assert isinstance(m["owner"]["name"], str)
    [entry] = m["plugins"]
    check_fields(entry, ENTRY_FIELDS, "marketplace plugin entry")
    assert entry["name"] == load(".claude-plugin/plugin.json")["name"]
    check_path(entry["source"])
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").exists()


def test_the_plugin_hooks_and_server():
    h = load("hooks/hooks.json")
    assert set(h) <= {"description", "hooks"}
    assert set(h["hooks"]) <= HOOK_EVENTS
    # one source: hooks/hosts.py, started through the plugin's launcher
    assert h["hooks"] == HOSTS["claude"].hooks(PLUGIN_PROGRAM)
    for groups in h["hooks"].values():
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            for handler in group["hooks"]:
                assert handler["type"] == "command"
                assert handler["command"].startswith(
                    'GITCKPT_TOOL_PREFIX=mcp__plugin_gitckpt_gitckpt__ '
                    '"${CLAUDE_PLUGIN_ROOT}/bin/gitckpt" hook ')
    tools = set(h["hooks"]["PostToolUse"][0]["matcher"].split("|"))
    assert {"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"} <= tools
    servers = load(".mcp.json")["mcpServers"]
    assert servers["gitckpt"]["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/gitckpt"
    # the names the model sees the tools by, in every call the texts suggest
    assert servers["gitckpt"]["env"]["GITCKPT_TOOL_PREFIX"] == "mcp__plugin_gitckpt_gitckpt__"
    assert servers["gitckpt"]["args"] == ["mcp"]


def test_server_json_for_the_mcp_registry():
    s = load("server.json")
    assert s["version"] == __version__
    assert re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/[A-Za-z0-9._-]+", s["name"])
    assert 1 <= len(s["description"]) <= 100
    [pkg] = s["packages"]
    assert pkg["registryType"] == "pypi"
    assert pkg["identifier"] == "gitckpt"
    assert pkg["version"] == __version__
    assert pkg["transport"] == {"type": "stdio"}
    assert pkg["packageArguments"] == [{"type": "positional", "value": "mcp"}]
    # PyPI ownership: the README (the package's long description) names the server.
    assert f"mcp-name: {s['name']}" in (ROOT / "README.md").read_text()


def test_pyproject_metadata():
    p = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert p["scripts"]["gitckpt"] == p["scripts"]["git-ckpt"] == "gitckpt.entry:main"
    assert p["keywords"]
    assert p["urls"]["Repository"]
    assert "Programming Language :: Python :: 3.11" in p["classifiers"]
    assert p["requires-python"] == ">=3.11"


# -- hook install ------------------------------------------------------------------------

@pytest.mark.parametrize("host", list(HOSTS))
def test_hook_install_shows_the_diff_then_writes(repo, host):
    config = repo / HOSTS[host].config
    r = run_cli("-C", str(repo), "hook", "install", "--host", host, "--dry-run")
    assert r.code == 0, r.err
    assert "+++ b/" in r.out
    assert "gitckpt hook " in r.out
    assert not config.exists()
    r = run_cli("-C", str(repo / "src"), "hook", "install", "--host", host)  # from a subfolder
    assert r.code == 0, r.err
    assert r.out.startswith("--- /dev/null")
    assert f"Wrote {config}" in r.out
    if HOSTS[host].plugin is not None:  # a plugin file of gitckpt's, not hooks in JSON
        written = config.read_text()
        assert written.startswith("// gitckpt's ")
        assert 'const ARGS = ["--cli"]' in written  # no gitckpt server: --cli
    else:
        written = json.loads(config.read_text())
        assert written == replace(HOSTS[host], cli=True).merged({})  # no gitckpt server: --cli
    again = run_cli("-C", str(repo), "hook", "install", "--host", host)
    assert again.code == 0
    assert "already" in again.out
    assert (config.read_text() if HOSTS[host].plugin else json.loads(config.read_text())) \
        == written


def test_hook_install_keeps_the_users_own_hooks(repo):
    config = repo / ".claude" / "settings.json"
    config.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": "prettier --write"}]}],
                "Stop": [{"hooks": [{"type": "command",
                                   "command": "gitckpt hook stop --host claude"}]}]}}
    config.write_text(json.dumps(mine))
    r = run_cli("-C", str(repo), "--json", "hook", "install", "--host", "claude")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["written"]
    assert out["changed"]
    assert out["path"] == str(config)
    now = json.loads(config.read_text())
    assert now["permissions"] == mine["permissions"]
    commands = [h["command"] for g in now["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert commands == ["prettier --write", "gitckpt hook post-tool --cli"]
    assert [h["command"] for g in now["hooks"]["Stop"] for h in g["hooks"]] == [
        "gitckpt hook stop --cli"]  # an older gitckpt handler is replaced, not doubled


@pytest.mark.parametrize("host", ["claude", "cursor", "gemini"])
def test_hook_install_mcp_wires_the_server_and_the_hooks_name_its_tools(repo, host):
    """--mcp: the host's MCP file declares `gitckpt mcp` in the same step (Gemini keeps both
    in settings.json: one file), and the hooks name tool calls; uninstall --mcp takes both
    out. Without --mcp, a server the host already has is found and the hooks name tools."""
    spec = HOSTS[host]
    servers = repo / spec.mcp["project"]
    r = run_cli("-C", str(repo), "--json", "hook", "install", "--host", host, "--mcp")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["written"]
    if servers != repo / spec.config:
        assert out["mcp"]["written"]
        assert out["mcp"]["path"] == str(servers)
    else:
        assert "mcp" not in out
    # told the names its host gives its tools, where the host has a prefix of its own
    told = {"env": {"GITCKPT_TOOL_PREFIX": spec.tools}} if spec.tools else {}
    assert json.loads(servers.read_text())["mcpServers"] == {
        "gitckpt": {"command": "gitckpt", "args": ["mcp"], **told}}
    hooks = json.loads((repo / spec.config).read_text())
    assert hooks == spec.merged(hooks)  # the tool-call voice: no --cli
    again = run_cli("-C", str(repo), "hook", "install", "--host", host)  # no --mcp: found
    assert again.code == 0, again.err
    assert json.loads((repo / spec.config).read_text()) == hooks
    r = run_cli("-C", str(repo), "hook", "uninstall", "--host", host, "--mcp")
    assert r.code == 0, r.err
    for path in {servers, repo / spec.config}:
        left = json.loads(path.read_text())
        assert "mcpServers" not in left
        assert "hooks" not in left


def test_hook_install_mcp_keeps_the_users_servers_and_refuses_where_it_cannot(repo):
    mcp = repo / ".mcp.json"
    mine = {"mcpServers": {"gitckpt": {"command": "my-own-tool"}, "db": {"command": "pg"}}}
    mcp.write_text(json.dumps(mine))
    r = run_cli("-C", str(repo), "hook", "install", "--host", "claude", "--mcp")
    assert r.code == 1
    assert "not `gitckpt mcp`" in r.err
    assert json.loads(mcp.read_text()) == mine
    assert not (repo / ".claude").exists()
    mine["mcpServers"].pop("gitckpt")
    mcp.write_text(json.dumps(mine))
    assert run_cli("-C", str(repo), "hook", "install", "--host", "claude", "--mcp").code == 0
    assert set(json.loads(mcp.read_text())["mcpServers"]) == {"db", "gitckpt"}
    r = run_cli("-C", str(repo), "hook", "install", "--host", "windsurf", "--mcp")
    assert r.code == 1  # Windsurf keeps its servers only in the user's file
    assert "cannot declare its MCP server" in r.err
    assert "hint:" in r.err
    assert not (repo / ".windsurf").exists()


def test_hook_install_refuses_a_broken_config(repo):
    config = repo / ".cursor" / "hooks.json"
    config.parent.mkdir()
    config.write_text("{ not json")
    r = run_cli("-C", str(repo), "hook", "install", "--host", "cursor")
    assert r.code == 1
    assert "not valid JSON" in r.err
    assert "hint:" in r.err
    assert config.read_text() == "{ not json"
    r = run_cli("-C", str(repo), "hook", "install", "--host", "vim")
    assert r.code == 2
    assert "vim" in r.err


# -- a wheel in a fresh venv -------------------------------------------------------------

def test_a_built_wheel_in_a_fresh_venv(tmp_path, repo):
    """The wheel as PyPI would serve it: built from the source tree, installed into a new
    venv (its dependencies come from this environment's site-packages, offline), then
    `gitckpt mcp` answers a real client and `git ckpt` works as a git subcommand."""
    import sysconfig

    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheels), str(ROOT)], check=True, capture_output=True)
    [wheel] = wheels.glob("gitckpt-*.whl")
    assert wheel.name.startswith(f"gitckpt-{__version__}-")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True,
                   capture_output=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import gitckpt, os; print(os.path.dirname(gitckpt.__file__))"],
                           capture_output=True, text=True, env=env, check=True,
                           cwd=tmp_path).stdout.strip()
    assert Path(where).parent == site  # the wheel's copy, not the source tree
    assert (Path(where) / "SKILL.md").exists()
    licenses = list(site.glob(f"gitckpt-{__version__}.dist-info/licenses/LICENSE"))
    assert licenses, "the wheel carries its LICENSE"
    assert "MIT License" in licenses[0].read_text()
    assert (venv / "share" / "man" / "man1" / "git-ckpt.1").exists()
    # the long description (PyPI's page): README.md, with no link that breaks off GitHub
    import email

    meta = email.message_from_bytes(zipfile.ZipFile(wheel).read(
        f"gitckpt-{__version__}.dist-info/METADATA"))
    assert meta["Description-Content-Type"] == "text/markdown"
    described = meta.get_payload()
    assert "mcp-name: " in described
    assert "## " in described
    targets = re.findall(r"\]\(([^)\s]+)\)", described)
    assert targets
    assert all(t.startswith(("https://", "http://", "#", "mailto:")) for t in targets), targets
    assert "https://github.com/gitckpt/gitckpt/blob/main/docs/concepts.md" in targets
    if shutil.which("man"):  # git runs `man git-ckpt`, found beside the venv's bin/
        page = subprocess.run(["git", "ckpt", "--help"], capture_output=True, text=True,
                              env={**env, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"},
                              cwd=tmp_path)
        assert page.returncode == 0, page.stderr
        assert "GIT-CKPT(1)" in page.stdout, page.stdout[:300]
    v = subprocess.run(["git", "ckpt", "--version"], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert v.returncode == 0, v.stderr
    assert v.stdout == f"gitckpt, version {__version__}\n", v.stderr
    r = subprocess.run(["git", "-C", str(repo), "ckpt", "--json", "tasks"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tasks"] == [], r.stderr

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=str(venv / "bin" / "gitckpt"), args=["mcp"],
                                   env={**env, "GITCKPT_ROOT": str(repo)}, cwd=str(tmp_path))

    async def body():
        async with Client(params) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            r = await c.call_tool("ckpt_init", {"name": "from the wheel"})
            return tools, r

    tools, r = anyio.run(body)
    assert {"ckpt_init", "ckpt_save", "ckpt_resume"} <= tools
    assert not r.is_error
    assert r.structured_content["name"] == "from the wheel"


@pytest.mark.parametrize(("text", "why"), [
    ('{"hooks": [{"matcher": "Write"}], "model": "x"}', "not an object"),
    ('{"hooks": {"Stop": []}, "hooks": {"Stop": []}}', "twice"),
    ('{"n": 1e400}', "cannot write"),
    ('{"hooks": {"PostToolUse": {"matcher": "Write"}}}', "not a list"),
    ('{"hooks": {"PostToolUse": "oops"}}', "not a list"),
    ('{"n": NaN}', "not JSON"),
])
def test_hook_install_refuses_what_it_cannot_merge_losslessly(repo, text, why):
    config = repo / ".claude" / "settings.json"
    config.parent.mkdir()
    config.write_text(text)
    r = run_cli("-C", str(repo), "hook", "install", "--host", "claude", "--yes")
    assert r.code == 1, r.err
    assert why in r.err, r.err
    assert "hint:" in r.err, r.err
    assert config.read_text() == text


def test_hook_install_keeps_a_users_command_that_starts_like_ours(repo):
    config = repo / ".claude" / "settings.json"
    config.parent.mkdir()
    mine = "gitckpt hook stop && notify-send 'agent stopped'"
    config.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": mine}]}]}}))
    assert run_cli("-C", str(repo), "hook", "install", "--host", "claude").code == 0
    stop = [h["command"] for g in json.loads(config.read_text())["hooks"]["Stop"]
            for h in g["hooks"]]
    assert stop == [mine, "gitckpt hook stop --cli"]


def test_hook_install_does_not_follow_links(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".claude").symlink_to(outside, target_is_directory=True)
    r = run_cli("-C", str(repo), "hook", "install", "--host", "claude", "--yes")
    assert r.code == 1
    assert "symbolic link" in r.err
    assert list(outside.iterdir()) == []
    (repo / ".claude").unlink()
    (repo / ".claude").mkdir()
    (outside / "real.json").write_text("{}")
    (repo / ".claude" / "settings.json").symlink_to(outside / "real.json")
    r = run_cli("-C", str(repo), "hook", "install", "--host", "claude", "--yes")
    assert r.code == 1
    assert "symbolic link" in r.err
    assert (outside / "real.json").read_text() == "{}"
    assert (repo / ".claude" / "settings.json").is_symlink()


def test_ci_runs_the_readmes_test_command_and_nothing_after_it():
    """`.ci/run` ends with the README's test command: a stray line after it would fail CI
    after every test passed (it once did)."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^python3 -m venv \.venv && \. \.venv/bin/activate && pip install -e "
                        r"'\.\[test\]' && python -m pytest$", readme, re.M)
    assert command, "README's quickstart test command"
    lines = [x for x in (ROOT / ".ci" / "run").read_text().splitlines() if x.strip()]
    last = lines[-1]
    assert last.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e "
                           "'.[test]' && ")
    assert last.endswith(" && python -m pytest")
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_the_pre_commit_hooks_run_what_ci_runs_before_the_tests(tmp_path):
    """`.pre-commit-config.yaml` runs the same ruff and mypy commands as `.ci/run`, and its
    subject check refuses a subject of 73 characters and takes one of 72."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    ci = (ROOT / ".ci" / "run").read_text()
    assert hooks["ruff"]["entry"].removeprefix("python -m ") in ci
    assert f"&& {hooks['mypy']['entry']} &&" in ci
    assert "commit-msg" in config["default_install_hook_types"]
    code = hooks["subject"]["entry"].removeprefix("python -c ").strip('"')
    for length, refused in ((72, False), (73, True)):
        path = tmp_path / f"MSG{length}"
        path.write_text("x" * length + "\n\nbody\n")
        p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                           text=True)
        assert (p.returncode != 0) is refused, (length, p.stderr)


def test_the_release_workflow_builds_tests_the_wheel_then_publishes_without_a_token():
    """`.github/workflows/release.yml`, read back: a tag that is not the version fails the
    build; the suite runs on the installed wheel; PyPI by trusted publishing (no password or
    token anywhere), then the MCP registry; a manual run (the dry run) publishes nothing."""
    import yaml

    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    w = yaml.safe_load(text)
    on = w.get("on", w.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["tags"] == ["v*"]
    assert "workflow_dispatch" in on
    jobs = w["jobs"]
    assert jobs["test"]["needs"] == "build"
    assert jobs["pypi"]["needs"] == "test"
    assert jobs["mcp-registry"]["needs"] == "pypi"
    for name in ("pypi", "mcp-registry"):
        assert jobs[name]["if"] == "startsWith(github.ref, 'refs/tags/')", name
        assert jobs[name]["permissions"] == {"id-token": "write"}, name
    assert w["permissions"] == {"contents": "read"}
    assert jobs["pypi"]["environment"] == "pypi"
    publish = "\n".join(step.get("run", "") for step in jobs["pypi"]["steps"])
    assert "uv publish --trusted-publishing always" in publish
    for stored in ("password", "secrets.", "TOKEN"):
        assert stored not in text, stored
    # every action pinned by commit; every tool by version and checksum
    used = [step["uses"] for job in jobs.values() for step in job["steps"] if "uses" in step]
    assert used
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in used), used
    runs = "\n".join(step.get("run", "") for job in jobs.values() for step in job["steps"])
    for install in re.findall(r"pip install [^\n]*", runs):
        if "--require-hashes" not in install:
            assert "dist/" in install, install  # only the package under test, built here
    pinned = (ROOT / ".github" / "release-requirements.txt").read_text()
    names = re.findall(r"(?m)^([a-z0-9][a-z0-9._-]*)==\S+", pinned)
    assert {"build", "hatchling", "hatch-fancy-pypi-readme", "twine", "uv"} <= set(names)
    blocks = re.split(r"(?m)^(?=[a-z0-9])", pinned)[1:]
    assert all("--hash=sha256:" in b for b in blocks), "every requirement has its hashes"
    registry = next(step for step in jobs["mcp-registry"]["steps"] if "mcp-publisher" in
                    step.get("run", ""))
    assert "releases/latest" not in registry["run"]
    assert "sha256sum --check" in registry["run"]
    assert registry["run"].index("sha256sum") < registry["run"].index("./mcp-publisher")
    build = "\n".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert "v${version}" in build
    assert "twine check --strict" in build
    assert "python -m build --no-isolation" in build
    sdist = "\n".join(step.get("run", "") for step in jobs["test"]["steps"])
    assert "gitckpt save" in sdist  # real commands, not --version alone
    assert "restore 1 --apply" in sdist
    test = "\n".join(step.get("run", "") for step in jobs["test"]["steps"])
    assert 'dist/*.whl)[test]' in test
    assert "site-packages" in test
    assert "python -m pytest" in test
    tested = next(step for step in jobs["test"]["steps"] if "python -m pytest" in
                  step.get("run", ""))
    assert tested["env"]["PYTHONSAFEPATH"] == "1"  # the wheel is tested, not the checkout


def test_a_license_a_changelog_and_one_version_everywhere():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{__version__}]" in changelog
    for path in (".claude-plugin/plugin.json", "server.json"):
        assert load(path)["version"] == __version__, path
    assert load("server.json")["packages"][0]["version"] == __version__
    assert "Operating System :: MacOS" not in (ROOT / "pyproject.toml").read_text()


LAUNCHER = ROOT / "bin" / "gitckpt"


def _launch(tmp_path: Path, path: str, *args: str, data: Path | None = None):
    """The plugin's launcher as a host starts it, with PATH `path` and a fresh data folder."""
    env = {"PATH": path, "HOME": str(tmp_path / "home"),
           "CLAUDE_PLUGIN_DATA": str(data or tmp_path / "data")}
    return subprocess.run(["/bin/sh", str(LAUNCHER), *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_the_launcher_is_the_plugins_version_and_uses_a_gitckpt_of_it_on_path(tmp_path):
    assert os.access(LAUNCHER, os.X_OK)
    assert f'VERSION="{__version__}"' in LAUNCHER.read_text()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    right = bin_dir / "gitckpt"
    right.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "gitckpt, version {__version__}"'
                     ' && exit 0\necho "the right one: $*"\n')
    right.chmod(0o755)
    r = _launch(tmp_path, f"{bin_dir}:/usr/bin:/bin", "hook", "stop")
    assert r.stdout == "the right one: hook stop\n", r.stderr
    right.write_text('#!/bin/sh\necho "gitckpt, version 0.0.1"\n')  # another version: not it
    r = _launch(tmp_path, f"{bin_dir}", "hook", "stop")  # and no Python to build one
    assert r.returncode == 0
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert "no Python 3.11+" in r.stderr


FAKE_UV = """#!/bin/sh
# a uv that builds a stand-in gitckpt, once the test lets it (the file `go`), counting builds
echo "$*" >> "{tools}/builds"
case "$1" in
venv) mkdir -p "$5/bin"; : > "$5/bin/python";
      while [ ! -f "{tools}/go" ]; do sleep 0.05; done ;;
pip) venv=$(dirname "$(dirname "$5")")
     printf '#!/bin/sh\\n[ "$1" = --version ] && echo "gitckpt, version {version}" && exit 0\\n'\\
'echo "built: $*"\\n' > "$venv/bin/gitckpt"; chmod +x "$venv/bin/gitckpt" ;;
esac
"""


def _fake_uv(tmp_path: Path) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir()
    uv = tools / "uv"
    uv.write_text(FAKE_UV.format(tools=tools, version=__version__))
    uv.chmod(0o755)
    return tools


def _builds(tools: Path) -> int:
    path = tools / "builds"
    return path.read_text().count("venv ") if path.exists() else 0


def _wait_for(what, why: str) -> None:
    import time

    for _ in range(600):  # (a bound on polls, not a time limit on gitckpt)
        if what():
            return
        time.sleep(0.05)
    raise AssertionError(why)


def test_a_hook_never_waits_for_the_build_and_a_killed_build_starts_again(tmp_path):
    """No gitckpt of the plugin's version: the first hook starts the build in the background
    and returns while it runs (a host kills a hook at its time limit: a build in the
    foreground was killed, and its lock stayed for ever); the session-start hook tells the
    user in one line. A build killed at any moment (kill -9) is found dead by the next call,
    which starts it again; once built, every call runs the built gitckpt."""
    import signal

    tools = _fake_uv(tmp_path)
    path = f"{tools}:/usr/bin:/bin:{Path(sys.executable).resolve().parent}"
    data = tmp_path / "data"
    lock = data / f"building-{__version__}"
    r = _launch(tmp_path, path, "hook", "session-start", data=data)
    assert r.returncode == 0, r.stderr
    said = json.loads(r.stdout)["systemMessage"]  # what Claude Code shows the user
    assert "being installed in the background" in said
    assert "pipx install gitckpt" in said
    _wait_for(lambda: _builds(tools) == 1, "the build started")
    assert not (tools / "go").exists()  # ... and still waits: the hook did not
    r = _launch(tmp_path, path, "hook", "post-tool", data=data)  # a build runs: nothing
    assert (r.returncode, r.stdout, _builds(tools)) == (0, "", 1)
    pid = int((lock / "pid").read_text())
    os.killpg(pid, signal.SIGKILL)  # the build, killed (its own session: its group)
    _wait_for(lambda: not _alive(pid), "the build is gone")
    assert lock.exists()  # what a killed build leaves
    r = _launch(tmp_path, path, "hook", "stop", data=data)
    assert r.returncode == 0
    _wait_for(lambda: _builds(tools) == 2, "the next call started the build again")
    (tools / "go").write_text("")
    _wait_for(lambda: (data / f"venv-{__version__}" / ".gitckpt-complete").exists(), "built")
    _wait_for(lambda: not lock.exists(), "the build let go of its lock")
    r = _launch(tmp_path, path, "hook", "stop", data=data)
    assert r.stdout == "built: hook stop\n", r.stderr
    assert _builds(tools) == 2


def test_the_server_waits_for_the_build_a_hook_does_not(tmp_path):
    tools = _fake_uv(tmp_path)
    path = f"{tools}:/usr/bin:/bin:{Path(sys.executable).resolve().parent}"
    (tools / "go").write_text("")
    r = _launch(tmp_path, path, "mcp", "--root", "x")
    assert r.stdout == "built: mcp --root x\n", r.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a zombie is gone for the launcher too
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_the_launcher_builds_gitckpt_with_uv_where_uv_is_installed(tmp_path):
    """No gitckpt on PATH and none built: with uv there, the launcher builds gitckpt from the
    plugin's own source with uv (from PyPI, a test dependency) and runs it; a hook then runs
    that build directly, never through `uvx` (which cost a second per hook)."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        pytest.skip("needs uv (pip install uv; it is in the test extras)")
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "uv").symlink_to(uv)
    python_dir = str(Path(sys.executable).resolve().parent)  # a 3.11+, without gitckpt
    path = f"{tools}:/usr/bin:/bin:{python_dir}"
    assert shutil.which("gitckpt", path=path) is None
    uv_env = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never",
              "UV_PYTHON_INSTALL_DIR": str(tmp_path / "uv-py")}
    data = tmp_path / "data"
    network = {k: v for k, v in os.environ.items()  # this machine's certificates and proxies
               if re.search(r"SSL_CERT|CA_BUNDLE|PROXY|^UV_.*INDEX", k, re.IGNORECASE)}
    env = {"PATH": path, "HOME": str(tmp_path / "home"), "CLAUDE_PLUGIN_DATA": str(data),
           **network, **uv_env}
    r = subprocess.run(["/bin/sh", str(LAUNCHER), "--version"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"gitckpt, version {__version__}\n", r.stderr
    assert any((tmp_path / "uv-cache").iterdir())  # uv built it
    assert (data / f"venv-{__version__}" / ".gitckpt-complete").exists()
    assert "uvx" not in LAUNCHER.read_text().split("set -u", 1)[1]


def _claude() -> str | None:
    return os.environ.get("GITCKPT_TEST_CLAUDE") or shutil.which("claude")


@pytest.mark.skipif(_claude() is None, reason="needs the Claude Code CLI: .ci/run installs "
                    "the pinned one from npm and names it in GITCKPT_TEST_CLAUDE")
def test_the_plugin_brings_its_own_gitckpt_in_the_real_claude_code(tmp_path, repo):
    """A user with no gitckpt anywhere adds the marketplace and installs the plugin: its MCP
    server connects (the launcher builds gitckpt once, from the plugin's own source, into the
    plugin's data folder) and a session start gets the handoff."""
    import sys as _sys

    claude = _claude()
    from conftest import marketplace_copy

    source = marketplace_copy(tmp_path / "plugin-source")
    home = tmp_path / "home"
    home.mkdir()
    python_dir = str(Path(_sys.executable).resolve().parent)  # a 3.11+, without gitckpt
    env = {"HOME": str(home), "PATH": f"/usr/bin:/bin:{python_dir}",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           # the test's own service folder, whose services are stopped when it ends (the
           # plugin's gitckpt started one in the user's, left running after the test)
           **{k: os.environ[k] for k in ("GITCKPT_RUNTIME_DIR", "GITCKPT_SERVICE_IDLE")}}
    assert shutil.which("gitckpt", path=env["PATH"]) is None

    def run(*args: str, cwd: Path = tmp_path) -> str:
        p = subprocess.run([claude, *args], capture_output=True, text=True, env=env, cwd=cwd,
                           timeout=600)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
        return p.stdout

    run("plugin", "marketplace", "add", str(source))
    run("plugin", "install", "gitckpt@gitckpt")
    listed = run("mcp", "list", cwd=repo)
    assert "plugin:gitckpt:gitckpt" in listed
    assert "✔ Connected" in listed, listed
    data = home / ".claude" / "plugins" / "data" / "gitckpt-gitckpt"
    assert (data / f"venv-{__version__}" / ".gitckpt-complete").exists()

    from conftest import service

    service.init(repo, "plugin task", goal="resume from the plugin")
    hook = json.loads((source / "hooks" / "hooks.json").read_text())
    command = hook["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    started = subprocess.run(
        ["/bin/sh", "-c", command], input=json.dumps({
            "session_id": "s", "transcript_path": str(repo.parent / "t.jsonl"), "cwd": str(repo),
            "hook_event_name": "SessionStart", "source": "startup"}),
        capture_output=True, text=True, cwd=repo, timeout=120,
        env={**env, "CLAUDE_PLUGIN_ROOT": str(source), "CLAUDE_PLUGIN_DATA": str(data)})
    assert started.returncode == 0, started.stderr
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "plugin task" in context
    assert "mcp__plugin_gitckpt_gitckpt__ckpt_save(" in context  # the name the model has


def test_ci_installs_the_hosts_the_host_suite_pins():
    """The real hosts `.ci/run` installs from npm are the versions tests/hosts pins (and
    docs/hosts.md's matrix names)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hosts_hostlib",
                                                  ROOT / "tests" / "hosts" / "hostlib.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ci = (ROOT / ".ci" / "run").read_text()
    matrix = (ROOT / "docs" / "hosts.md").read_text()
    for package, version in module.PINNED.values():
        assert f"{package}@{version}" in ci, package
        assert version in matrix, package


def test_the_launchers_line_to_the_user_is_json_whatever_its_data_folder(tmp_path):
    tools = _fake_uv(tmp_path)
    (tools / "go").write_text("")
    path = f"{tools}:/usr/bin:/bin:{Path(sys.executable).resolve().parent}"
    data = tmp_path / 'a "quoted" \\ folder'
    r = _launch(tmp_path, path, "hook", "session-start", data=data)
    assert str(data / "install.log") in json.loads(r.stdout)["systemMessage"]
