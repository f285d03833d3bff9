"""The MCP handshake answered before the SDK loads: the `mcp` package takes most of a second
to import, and a host waits for `initialize` before it lists any tool.

Standard library only. `claim()` takes the wire the way the SDK's stdio transport does
(descriptors 0 and 1 privately duplicated, fd 0 pointed at the null device and fd 1 at stderr,
so nothing else reads the client's input or writes on the wire). `answer()` reads the first
message; if it is an `initialize` request of a handshake version, it writes the same result
the SDK would (tests compare the two) and returns the message, which the SDK then reads as
its own first message (and whose second answer is dropped). Anything else is left to the SDK.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import BinaryIO

from gitckpt import __version__
from gitckpt.core import json_input

# The SDK's HANDSHAKE_PROTOCOL_VERSIONS and the capabilities MCPServer announces (tests check
# both against the installed SDK); later protocol revisions go through the SDK unanswered.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES = {"prompts": {"listChanged": False},
                "resources": {"listChanged": False, "subscribe": False},
                "tools": {"listChanged": False}}

INSTRUCTIONS = """gitckpt saves long tasks in this workspace as git commits under \
refs/checkpoints/ (never the user's branches, index or stash).
1. Call ckpt_resume first in every session.
2. For a job of several steps, call ckpt_init(name, goal) once.
3. After each finished step, call ckpt_save(title, conclusion, next).
4. To go back: ckpt_restore(target) previews; apply=true with its expect applies it and \
returns a safety id that undoes it. To undo one step but keep later work: ckpt_revert.
Edits between calls (shell, user) become drifts automatically.
Shared: root (absolute; default the server's workspace), task (default the active one), \
paths (relative, to limit), expect (a preview's plan_id), confirm (for needs_confirm plans)."""


@dataclass
class Wire:
    """The client's input and output, on descriptors of their own."""

    inp: BinaryIO
    out: BinaryIO


@dataclass
class Held:
    """The first message, kept for the SDK; `answered` is the id of the request answered
    here (None: the SDK answers it)."""

    line: bytes
    answered: object = None


def claim() -> Wire:
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # a stray print goes to stderr, never on the wire
    return Wire(inp, out)


def answer(wire: Wire) -> Held:
    line = wire.inp.readline()
    if os.environ.get("GITCKPT_MCP_FAST", "1") == "0":
        return Held(line)
    try:
        msg = json_input.loads(line)
    except ValueError:
        return Held(line)
    params = msg.get("params") if isinstance(msg, dict) else None
    if not (msg.get("method") == "initialize" and "id" in msg and isinstance(params, dict)
            and params.get("protocolVersion") in HANDSHAKE_VERSIONS
            and isinstance(params.get("capabilities"), dict)
            and isinstance(params.get("clientInfo"), dict)):
        return Held(line)  # the SDK answers (or refuses) it
    result = {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS,
              "protocolVersion": params["protocolVersion"],
              "serverInfo": {"name": "gitckpt", "version": __version__}}
    reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    wire.out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
    return Held(line, msg["id"])


def is_reply_to(text: str, request_id: object) -> bool:
    """Whether a line the SDK writes is its answer to `request_id` (which was answered)."""
    if f'"id":{json.dumps(request_id)}' not in text:
        return False
    try:
        msg = json.loads(text)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("id") == request_id and "method" not in msg
