"""The MCP handshake answered before the SDK loads: the `mcp` package takes most of a second
to import, and a host waits for the handshake and the tool list before its first request.

Standard library only. `claim()` takes the wire the way the SDK's stdio transport does
(descriptors 0 and 1 privately duplicated, fd 0 pointed at the null device and fd 1 at stderr,
so nothing else reads the client's input or writes on the wire). `answer()` reads the first
messages and answers those it knows with the same result the SDK would write (tests compare
the two, for every protocol version the SDK knows): the handshake (`initialize`, or the
2026-07-28 era's `server/discover`; that era's `subscriptions/listen` is refused, as the SDK
refuses it: no list here changes) and `tools/list` from a static copy of the SDK's list
(`tools.json`, kept equal by a test). It stops at the tool list, at the first message it does
not know, or when the client is quiet.
Every message read goes on to the SDK as its own input; the SDK's second answers are dropped.
"""

from __future__ import annotations

import json
import os
import select
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from gitckpt import __version__
from gitckpt.core import json_input

# The SDK's HANDSHAKE_PROTOCOL_VERSIONS and MODERN_PROTOCOL_VERSIONS, and the capabilities
# MCPServer announces in each era (tests check them against the installed SDK); a revision
# the SDK learns later goes through the SDK unanswered until these lists learn it too.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
#: What the server offers, in either era: tools, in a list that does not change (the SDK's
#: low-level server announces what it has handlers for).
CAPABILITIES = {"tools": {"listChanged": False}}
MODERN_CAPABILITIES = CAPABILITIES
META = "io.modelcontextprotocol/"
TOOLS = Path(__file__).with_name("tools.json")
#: How long to wait for the client's next message before the SDK takes over (a host sends
#: it within milliseconds of the answer; a client that waits costs at most this, once).
QUIET = 0.25

INSTRUCTIONS = """gitckpt keeps this task's steps as git commits under refs/checkpoints/ \
(never the user's branches, index or stash). Your host may prefix the tool names \
(mcp__gitckpt__ckpt_save, gitckpt_ckpt_save).
Call ckpt_resume first in every session; ckpt_init(name, goal) once per job of several \
steps; ckpt_save(title, conclusion, next) after each finished step. Every tool takes root, \
the workspace's absolute path."""


@dataclass
class Wire:
    """The client's input and output, on descriptors of their own."""

    inp: BinaryIO
    out: BinaryIO


@dataclass
class Held:
    """The messages read here, in order, for the SDK; the ids of the requests answered here
    and the listen subscriptions acknowledged here (the SDK's own answers to them are
    dropped)."""

    lines: list[bytes] = field(default_factory=list)
    answered: set[object] = field(default_factory=set)


def claim() -> Wire:
    # Unbuffered: the handshake reads line by line, so a `select` on the descriptor tells
    # whether the client has said more; the SDK's reader buffers (mcp/wire.Replay).
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb")  # buffered: all of each write or an error, never part
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # a stray print goes to stderr, never on the wire
    return Wire(inp, out)


def _said_more(inp: BinaryIO) -> bool:
    try:
        return bool(select.select([inp], [], [], QUIET)[0])
    except (OSError, ValueError):  # not a descriptor select takes: the SDK reads on
        return False


def _server_info() -> dict[str, str]:
    return {"name": "gitckpt", "version": __version__}


def _modern(params: object) -> TypeGuard[dict[str, Any]]:
    """Whether a request's params carry the 2026-07-28 envelope of a version known here."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (isinstance(meta, dict) and meta.get(META + "protocolVersion") in MODERN_VERSIONS
            and isinstance(meta.get(META + "clientInfo"), dict)
            and isinstance(meta.get(META + "clientCapabilities"), dict))


def _stamped(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result as the SDK sends it: fresh for no time, this client's only."""
    return {"cacheScope": "private", **result, "resultType": "complete", "ttlMs": 0,
            "_meta": {META + "serverInfo": _server_info()}}


def _tools() -> list[Any] | None:
    """The default tool list, shipped; None when a setting changes it (output schemas, every
    tool: server.build_server) or it is not shipped: then the SDK lists them."""
    if os.environ.get("GITCKPT_MCP_RESULTS", "").strip().lower() == "full" \
            or os.environ.get("GITCKPT_MCP_TOOLS", "").strip().lower() == "all":
        return None
    try:
        tools: list[Any] = json_input.loads(TOOLS.read_text(encoding="utf-8"))  # a list
    except (OSError, ValueError):
        return None  # not shipped: the SDK lists them
    return tools


def _reply(msg: dict[str, Any], era: str | None, held: Held
           ) -> tuple[str | None, dict[str, Any] | None]:
    """(the era after `msg`, the message to write), or (None, None): the SDK takes over."""
    method, params = msg.get("method"), msg.get("params")
    ident = msg.get("id")
    request = (isinstance(ident, str | int) and not isinstance(ident, bool)
               and ident not in held.answered)  # JSON-RPC's own ids; anything odd: the SDK
    if era is None and request and method == "initialize" and isinstance(params, dict) \
            and params.get("protocolVersion") in HANDSHAKE_VERSIONS \
            and isinstance(params.get("capabilities"), dict) \
            and isinstance(params.get("clientInfo"), dict):
        return "handshake", {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS,
                             "protocolVersion": params["protocolVersion"],
                             "serverInfo": _server_info()}
    if era == "handshake" and method == "notifications/initialized" and "id" not in msg:
        return era, {}
    if era in (None, "modern") and request and method == "server/discover" \
            and _modern(params) and set(params) == {"_meta"}:
        return "modern", _stamped({"capabilities": MODERN_CAPABILITIES,
                                   "instructions": INSTRUCTIONS,
                                   "supportedVersions": list(MODERN_VERSIONS)})
    if era == "modern" and request and method == "subscriptions/listen":
        # no list here ever changes: the SDK's refusal of a method it has no handler for
        return era, {"error": {"code": -32601, "message": "Method not found",
                               "data": "subscriptions/listen"}}
    if era is not None and request and method == "tools/list" \
            and (params is None or (era == "handshake" and params == {})
                 or (era == "modern" and _modern(params) and set(params) == {"_meta"})):
        tools = _tools()
        if tools is not None:
            return era, {"tools": tools} if era == "handshake" else _stamped({"tools": tools})
    return None, None


def answer(wire: Wire) -> Held:
    """Read and answer the client's first messages (see the module's docstring)."""
    held = Held()
    fast = os.environ.get("GITCKPT_MCP_FAST", "1") != "0"
    era: str | None = None
    while True:
        line = wire.inp.readline()
        if not line:
            return held
        held.lines.append(line)
        if not fast:
            return held
        try:
            msg = json_input.loads(line)
        except ValueError:
            return held
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return held
        era, reply = _reply(msg, era, held)
        if era is None:
            return held  # the SDK answers (or refuses) it, and all that follows
        if reply:
            held.answered.add(msg["id"])
            reply = {"id": msg["id"], **(reply if "error" in reply else {"result": reply})}
            wire.out.write(json.dumps({"jsonrpc": "2.0", **reply},
                                      separators=(",", ":")).encode() + b"\n")
            wire.out.flush()
        if msg.get("method") == "tools/list" or not _said_more(wire.inp):
            return held


def is_reply_to(text: str, request_id: object) -> bool:
    """Whether a line the SDK writes is its answer to `request_id` (which was answered)."""
    if f'"id":{json.dumps(request_id)}' not in text:
        return False
    try:
        msg = json.loads(text)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("id") == request_id and "method" not in msg
