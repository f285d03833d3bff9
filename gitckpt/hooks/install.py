"""`gitckpt hook install --host NAME`: gitckpt's hooks merged into a host's project config,
shown as a diff before anything is written; every other key and hook in the file is kept."""

from __future__ import annotations

import difflib
import json
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core import atomic, json_input
from gitckpt.core.errors import InvalidArgument, WorkspaceError
from gitckpt.core.shape import HIDDEN, Shaped
from gitckpt.hooks import jsonc
from gitckpt.hooks.hosts import HOSTS, gitckpts_handler

if TYPE_CHECKING:
    from collections.abc import Callable

    from gitckpt.hooks.hosts import Host


@dataclass(frozen=True)
class InstallPlan(Shaped):
    host: str
    path: Path
    old: str = field(metadata=HIDDEN)  # "" for a new file
    new: str = field(metadata=HIDDEN)
    written: bool = False
    scope: str = "project"
    name: str = field(default="", metadata=HIDDEN)  # the file as the diff names it
    mode: int = field(default=0o644, metadata=HIDDEN)  # a new file's (a git hook: 0o755)
    derived = ("changed", "diff")

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def diff(self) -> str:
        """The change as a unified diff of the host's config file."""
        name = self.name or HOSTS[self.host].config  # relative, as git names files
        return "".join(difflib.unified_diff(
            self.old.splitlines(keepends=True), self.new.splitlines(keepends=True),
            "/dev/null" if not self.old else f"a/{name}", f"b/{name}"))


def project_root(folder: str | Path) -> Path:
    """The project a host's config belongs to: the git work tree `folder` is in, else the
    folder itself."""
    start = Path(folder).resolve()
    if not start.is_dir():
        raise WorkspaceError(f"{folder} is not a folder.", "Pass an existing folder with -C.")
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


SCOPES = ("project", "local", "user")


def plan(folder: str | Path, host: str, scope: str = "project", *,
         remove: bool = False) -> InstallPlan:
    """What `install` (or with `remove`, `uninstall`) would write into the hooks file; nothing
    is changed. A file gitckpt cannot merge without losing something of the user's is
    refused, untouched. `scope`: the project's shared config, its untracked local one, or the
    user's own. The hooks name tool calls where the host has gitckpt's MCP server, else CLI
    commands (`--cli`)."""
    return plans(folder, host, scope, remove=remove)[0]


def plans(folder: str | Path, host: str, scope: str = "project", *, remove: bool = False,
          mcp: bool = False) -> list[InstallPlan]:
    """`plan`, and with `mcp` gitckpt's MCP server declared in (or, removing, taken out of)
    the host's MCP file too: one plan per file, the hooks file first (one plan where the
    host keeps both in one file)."""
    spec = HOSTS.get(host)
    if spec is None:
        raise InvalidArgument(f"No host {host!r}.", f"Use one of: {', '.join(HOSTS)}.")
    rel = spec.scopes().get(scope) if scope in SCOPES else None
    if rel is None:
        have = [s for s, where in spec.scopes().items() if where]
        raise InvalidArgument(f"{spec.title} has no {scope} hooks file.",
                              f"Its scopes are {', '.join(have)}.")
    root = Path.home() if scope == "user" else project_root(folder)
    servers = spec.mcp.get(scope) if mcp else None
    if mcp and servers is None:
        raise InvalidArgument(f"gitckpt cannot declare its MCP server for {spec.title} "
                              f"({scope} scope).", _BY_HAND_MCP.get(host, _SERVER_HINT))
    spec = replace(spec, cli=not (mcp and not remove) and not serves(spec, folder))
    # the server is told the names its host gives its tools, where the file is the host's
    # alone (Copilot CLI also reads Claude Code's .mcp.json: there the names stay bare)
    prefix = spec.tools if servers != ".mcp.json" or spec.name == "claude" else ""
    if spec.plugin is not None:  # a plugin file of gitckpt's own, not hooks merged into JSON
        out = [_plan_plugin(spec, root, rel, scope, remove)]
        if servers is not None:  # OpenCode's opencode.json: "mcp", each a command list
            out.append(_plan_file(spec, root, servers, scope,
                                  lambda c: _server(c, remove, "mcp", prefix), ("mcp",)))
        return out
    if servers is not None and servers.endswith(".toml"):  # Codex's config.toml
        return [_plan_file(spec, root, rel, scope, spec.without if remove else spec.merged,
                           ("hooks",)), _plan_toml(spec, root, servers, scope, remove)]

    def hooks(config: dict[str, Any]) -> dict[str, Any]:
        config = spec.without(config) if remove else spec.merged(config)
        return _server(config, remove, prefix=prefix) if servers == rel else config

    out = [_plan_file(spec, root, rel, scope, hooks,
                      ("hooks", "mcpServers") if servers == rel else ("hooks",))]
    if servers is not None and servers != rel:
        out.append(_plan_file(spec, root, servers, scope,
                              lambda c: _server(c, remove, prefix=prefix), ("mcpServers",)))
    return out


#: gitckpt's MCP server as the hosts' `mcpServers` files declare one (OpenCode's `mcp`: a
#: local server and its command line).
SERVER = {"command": "gitckpt", "args": ["mcp"]}
OPENCODE_SERVER = {"type": "local", "command": ["gitckpt", "mcp"]}
_SERVER_HINT = "Declare it in the host's MCP settings by hand: command `gitckpt`, args `mcp`."
_BY_HAND_MCP = {
    "codex": "Use --scope project (.codex/config.toml) or user (~/.codex/config.toml), or "
             "run `codex mcp add gitckpt -- gitckpt mcp`.",
    "copilot": "Use --scope project (.mcp.json) or user (~/.copilot/mcp-config.json).",
    "claude": "Use --scope project (.mcp.json), or `claude mcp add gitckpt -- gitckpt mcp`.",
    "opencode": "Use --scope project (opencode.json) or user "
                "(~/.config/opencode/opencode.json).",
}


def _server(config: dict[str, Any], remove: bool, member: str = "mcpServers",
            prefix: str = "") -> dict[str, Any]:
    """`config` with gitckpt's server in `member` (or without it, where it is gitckpt's;
    a server of the user's under the same name is kept), told `prefix`, the names its host
    gives its tools (GITCKPT_TOOL_PREFIX), where there is one."""
    servers = config.get(member)
    if servers is not None and not isinstance(servers, dict):
        raise InvalidArgument(f'"{member}" is not an object of servers.', _BY_HAND)
    servers = dict(servers or {})
    ours = _is_ours if member == "mcpServers" else \
        (lambda v: _is_ours(_opencode_server(v)))
    if remove:
        if ours(servers.get("gitckpt")):
            del servers["gitckpt"]
    elif "gitckpt" in servers and not ours(servers["gitckpt"]):
        raise InvalidArgument('A server named "gitckpt" that is not `gitckpt mcp` is declared '
                              "already.", "Rename or remove it, or leave out --mcp.")
    elif not any(ours(v) for v in servers.values()):
        server: dict[str, Any] = dict(SERVER if member == "mcpServers" else OPENCODE_SERVER)
        if prefix:  # (OpenCode names a local server's variables `environment`)
            server["env" if member == "mcpServers" else "environment"] = {
                "GITCKPT_TOOL_PREFIX": prefix}
        servers["gitckpt"] = server
    out = dict(config)
    if servers:
        out[member] = servers
    else:
        out.pop(member, None)
    return out


#: The variables Codex passes on to gitckpt's server (it starts servers with a few of its
#: own only): where the user's gitckpt service and state are, so that the server and the
#: hooks, which get the whole environment, find the same ones.
CODEX_ENV = ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "GITCKPT_RUNTIME_DIR")
_TOML_TABLE = "[mcp_servers.gitckpt]"


def _toml_block() -> str:
    names = ", ".join(json.dumps(n) for n in CODEX_ENV)
    return f'{_TOML_TABLE}\ncommand = "gitckpt"\nargs = ["mcp"]\nenv_vars = [{names}]\n'


def _plan_toml(spec: Host, root: Path, rel: str, scope: str, remove: bool) -> InstallPlan:
    """Codex's config.toml with gitckpt's server as `[mcp_servers.gitckpt]` (or without it,
    where it is gitckpt's): the table is added at the end, or taken out, and every other
    line kept as written; the result must read as the same TOML plus (or minus) that table."""
    import tomllib

    path, old = _existing(root, rel)
    name = f"~/{rel}" if scope == "user" else rel

    def read(text: str) -> dict[str, Any]:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InvalidArgument(f"{path} is not valid TOML ({e}).", _BY_HAND) from e

    config = read(old)
    servers = config.get("mcp_servers")
    servers = servers if isinstance(servers, dict) else {}
    mine = servers.get("gitckpt")
    if remove:
        if not _is_ours(mine) or _TOML_TABLE not in old.splitlines():
            return InstallPlan(spec.name, path, old, old, scope=scope, name=name)
        lines = old.splitlines(keepends=True)
        start = next(i for i, ln in enumerate(lines) if ln.strip() == _TOML_TABLE)
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].lstrip().startswith("[")), len(lines))
        new = "".join(lines[:start] + lines[end:]).rstrip("\n")
        new = new + "\n" if new else ""
    elif mine is not None and not _is_ours(mine):
        raise InvalidArgument('A server named "gitckpt" that is not `gitckpt mcp` is declared '
                              "already.", "Rename or remove it, or leave out --mcp.")
    elif mine is not None or any(_is_ours(v) for v in servers.values()):
        return InstallPlan(spec.name, path, old, old, scope=scope, name=name)
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + _toml_block()
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:  # (servers declared inline: no table can be added)
        after = None
    expected = dict(config)
    if remove:
        rest = {k: v for k, v in servers.items() if k != "gitckpt"}
        expected["mcp_servers"] = rest
        if not rest:
            expected.pop("mcp_servers")
    else:
        expected["mcp_servers"] = {**servers, "gitckpt": read(_toml_block())["mcp_servers"][
            "gitckpt"]}
    if after != expected:
        raise InvalidArgument(f"{path} declares its servers in a way gitckpt cannot add a "
                              "table to.", _BY_HAND)
    return InstallPlan(spec.name, path, old, new, scope=scope, name=name)


def _is_ours(server: object) -> bool:
    """Whether an `mcpServers` entry runs `gitckpt mcp` (directly, or through uvx/pipx)."""
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return False
    args = server.get("args")
    words = [os.path.basename(server["command"]),
             *(a for a in (args if isinstance(args, list) else []) if isinstance(a, str))]
    return "mcp" in words and any(w == "gitckpt" or w.startswith("gitckpt==")
                                  or w.endswith("/gitckpt") for w in words)


def serves(spec: Host, folder: str | Path) -> bool:
    """Whether the host already has gitckpt's MCP server, in any scope's MCP file (and, for
    Claude Code, in ~/.claude.json, where `claude mcp add` keeps it); read only."""
    try:
        root = project_root(folder)
    except WorkspaceError:
        return False
    files = [(Path.home() if scope == "user" else root) / rel for scope, rel in spec.mcp.items()]
    if spec.name == "claude":
        files.append(Path.home() / ".claude.json")
    if spec.name == "opencode":  # its servers: "mcp", each with a command list
        files += [root / "opencode.json", Path.home() / ".config" / "opencode" / "opencode.json"]
    if spec.name == "codex" and os.environ.get("CODEX_HOME"):  # Codex's own home, if moved
        files.append(Path(os.environ["CODEX_HOME"]) / "config.toml")
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".toml":  # Codex: [mcp_servers.NAME] tables
                import tomllib

                toml = tomllib.loads(text)
                config = {"mcpServers": toml.get("mcp_servers")}
            else:
                config = json_input.loads(jsonc.blank_comments(text))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        if not isinstance(config, dict):
            continue
        found = [config.get("mcpServers")]
        if spec.name == "opencode" and isinstance(config.get("mcp"), dict):
            found.append({k: _opencode_server(v) for k, v in config["mcp"].items()})
        projects = config.get("projects") if path.name == ".claude.json" else None
        if isinstance(projects, dict) and isinstance(projects.get(str(root)), dict):
            found.append(projects[str(root)].get("mcpServers"))
        if any(isinstance(f, dict) and any(map(_is_ours, f.values())) for f in found):
            return True
    return False


def _existing(root: Path, rel: str) -> tuple[Path, str]:
    """The config file `rel` under `root` and its text ("" where there is none yet); a link
    on the way, or a file that cannot be read, is refused."""
    path = root / rel
    _no_links(root, rel)
    try:
        return path, path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return path, ""
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgument(f"Cannot read {path}: {e}.",
                              "Fix the file's permissions or encoding, then run again.") from e


def _opencode_server(server: object) -> object:
    """An OpenCode `mcp` entry (`"command": ["gitckpt", "mcp"]`) in `mcpServers` form."""
    command = server.get("command") if isinstance(server, dict) else None
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return {"command": command[0], "args": command[1:]}
    return None


#: The first line of gitckpt's plugin files: a file without it is the user's, never replaced.
PLUGIN_MARK = "// gitckpt's "


def _plan_plugin(spec: Host, root: Path, rel: str, scope: str, remove: bool) -> InstallPlan:
    """The plan for a host whose hooks are a plugin file (OpenCode): gitckpt's own file,
    written whole from the package's copy (with `--cli` where the host has no gitckpt
    server), or taken out again; a file of that name that is not gitckpt's is refused."""
    from importlib.resources import files

    path, old = _existing(root, rel)
    if old and not old.startswith(PLUGIN_MARK):
        raise InvalidArgument(f"{path} is not gitckpt's plugin; it is left as it is.",
                              "Rename it, or remove it if it is an old copy, then run again.")
    assert spec.plugin is not None  # plans() comes here only for a host with a plugin
    new = "" if remove else files("gitckpt.hooks").joinpath(spec.plugin).read_text("utf-8")
    if spec.cli and new:
        new = new.replace("const ARGS = []", 'const ARGS = ["--cli"]', 1)
    name = f"~/{rel}" if scope == "user" else rel
    return InstallPlan(spec.name, path, old, new, scope=scope, name=name)


def _plan_file(spec: Host, root: Path, rel: str, scope: str,
               change: Callable[[dict[str, Any]], dict[str, Any]], members: tuple[str, ...]
               ) -> InstallPlan:
    """The plan for one file: `change` applied to its JSON; where the file holds comments,
    only `members` are rewritten, the rest kept as written."""
    path, old = _existing(root, rel)
    # a host that reads comments (Gemini CLI strips them) may have them in its file
    text = jsonc.blank_comments(old) if spec.reads_comments else old
    config = _parse(text, path) if text.strip() else {}
    _check_hooks(config, path)
    name = f"~/{rel}" if scope == "user" else rel
    merged = change(config)
    if not old and not merged:
        return InstallPlan(spec.name, path, old, old, scope=scope, name=name)
    if text != old:  # comments: only our members are rewritten, the rest kept as written
        new = old
        for member in members:
            if member in merged or member in config:
                # (a member cannot be taken out of commented text here: it is left empty)
                new = jsonc.replace_member(new, member, merged.get(member, {}))
        if _parse(jsonc.blank_comments(new), path) != {
                **merged, **{m: {} for m in members if m in config and m not in merged}}:
            raise InvalidArgument(f"{path} holds comments gitckpt cannot merge around.",
                                  _BY_HAND)
    else:
        new = json.dumps(merged, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if old and config == _parse(jsonc.blank_comments(new), path):
        new = old  # the same hooks already (or none of ours): keep the user's formatting
    return InstallPlan(spec.name, path, old, new, scope=scope, name=name)


_BY_HAND = "Fix the file by hand, or merge the --dry-run snippet yourself."


def _parse(text: str, path: Path) -> dict[str, Any]:
    """The config as JSON that round-trips: no duplicate keys (one would be lost), no
    number JSON cannot write back (1e400, NaN)."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup is not None:
            raise InvalidArgument(f"{path} has the key {dup!r} twice; merging would lose one.",
                                  _BY_HAND)
        return dict(items)

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise InvalidArgument(f"{path} holds the number {text}, which JSON cannot write "
                                  "back.", _BY_HAND)
        return value

    def constant(text: str) -> float:
        raise InvalidArgument(f"{path} holds {text}, which is not JSON.", _BY_HAND)

    try:
        config = json_input.loads(text, object_pairs_hook=pairs, parse_float=number,
                                  parse_int=lambda t: number(t) if len(t) > 300 else int(t),
                                  parse_constant=constant)
    except (ValueError, RecursionError) as e:
        raise InvalidArgument(f"{path} is not valid JSON ({e}).", _BY_HAND) from e
    if not isinstance(config, dict):
        raise InvalidArgument(f"{path} does not hold a JSON object.", _BY_HAND)
    return config


def _check_hooks(config: dict[str, Any], path: Path) -> None:
    """`hooks` is an object of lists, as every host documents it; anything else is refused
    rather than replaced."""
    hooks = config.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise InvalidArgument(f"{path}: \"hooks\" is not an object of events.", _BY_HAND)
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InvalidArgument(f"{path}: the hooks of {event} are not a list.", _BY_HAND)


def _no_links(root: Path, rel: str) -> None:
    """The config file and the folders down to it are the project's own: a symbolic link
    would have the merge read or write somewhere else."""
    at = root
    for part in Path(rel).parts:
        at = at / part
        if at.is_symlink():
            raise InvalidArgument(f"{at} is a symbolic link; gitckpt writes only the "
                                  "project's own file.",
                                  "Merge the --dry-run snippet into the file it points to "
                                  "yourself.")


def write(p: InstallPlan) -> InstallPlan:
    """Write the plan's file (atomically: a temporary file renamed over it)."""
    if not p.changed:
        return p
    if not p.new:  # a plugin file of gitckpt's, uninstalled
        p.path.unlink(missing_ok=True)
        return replace(p, written=True)
    p.path.parent.mkdir(parents=True, exist_ok=True)
    mode = p.path.stat().st_mode & 0o777 if p.path.exists() else p.mode
    atomic.replace_path(p.path, p.new.encode("utf-8"), mode=mode,
                        before_rename=lambda fd: os.fchmod(fd, mode))  # exactly, not umasked
    return replace(p, written=True)


def untrusted_codex(folder: str | Path) -> list[str]:
    """What keeps Codex from running gitckpt's hooks here, as Codex records it in the user's
    config.toml (CODEX_HOME's, else ~/.codex's): a project that is not trusted (Codex reads no
    `.codex/` of it), and a hooks file of gitckpt's with no hook trusted in it (Codex skips
    untrusted hooks without a word). Read only; [] when nothing is found missing."""
    import tomllib

    try:
        root = project_root(folder)
    except WorkspaceError:
        return []
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        config = {}
    hooks = config.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    trusted = [k for k in state if isinstance(k, str)] if isinstance(state, dict) else []
    projects = config.get("projects")
    project = projects.get(str(root)) if isinstance(projects, dict) else None
    out = []
    for where, path in (("project", root / ".codex" / "hooks.json"),
                        ("user", home / "hooks.json")):
        try:
            data = json_input.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        groups = data.get("hooks") if isinstance(data, dict) else None
        if not isinstance(groups, dict) or not any(
                gitckpts_handler(h) for g in groups.values() if isinstance(g, list) for grp in g
                for h in (grp.get("hooks", []) if isinstance(grp, dict) else [])):
            continue
        if where == "project" and not (isinstance(project, dict)
                                       and project.get("trust_level") == "trusted"):
            out.append(f"Codex does not trust the project {root}: it reads none of its "
                       ".codex/ (gitckpt's hooks there never run).")
        if not any(k.startswith(f"{path}:") for k in trusted):
            out.append(f"Codex has trusted none of gitckpt's hooks in {path}: it skips them "
                       "without a word.")
    return out
