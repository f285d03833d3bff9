"""Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it: the request's `system`,
`messages` and `tools`; a turn answered as the SSE stream of a streaming request
(message_start, content_block_start/delta/stop per block, message_delta, message_stop), or as
one JSON message for a request without `stream`. `count_tokens` and the other paths Claude
Code may call are answered with something harmless."""

from __future__ import annotations

import json
import re
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_model import Protocol, Seen, Turn, send_json, send_sse


def _texts(content: Any) -> list[str]:
    """The text blocks of a message's content (a string is one text)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b.get("text", "") for b in content
            if isinstance(b, dict) and b.get("type") == "text"]


#: Claude Code (2.1.x) defers MCP tools: their names are announced in a message under this
#: line, one a line, and a `ToolSearch` call loads their definitions into `tools`.
DEFERRED = "The following deferred tools are now available via ToolSearch"


def _all_texts(body: Any) -> list[str]:
    """The top-level system text and every message's text blocks."""
    out = _texts((body or {}).get("system"))
    for m in (body or {}).get("messages") or []:
        if isinstance(m, dict):
            out += _texts(m.get("content"))
    return out


class Anthropic(Protocol):
    """The Messages API: `model` names the model the fake claims to be."""

    def __init__(self, model: str = "claude-sonnet-4-5") -> None:
        self.model = model
        # ids unique across fake models too: a resumed conversation (`claude --resume`)
        # holds the earlier sessions' tool_use ids, and Claude Code pairs results by id
        self.nonce = uuid.uuid4().hex[:8]

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/") == "/v1/messages"

    def tools(self, body: Any) -> list[str]:
        """The tools defined in `tools`, then the deferred ones only announced by name (the
        model may call those: Claude Code runs them, or loads them with ToolSearch)."""
        loaded = self.loaded(body)
        return loaded + [n for n in self.deferred(body) if n not in loaded]

    def loaded(self, body: Any) -> list[str]:
        """The tools whose definitions the request carries (`tools`), placeholders left out."""
        return [t.get("name", "") for t in (body or {}).get("tools") or []
                if isinstance(t, dict) and not t.get("defer_loading")]

    def deferred(self, body: Any) -> list[str]:
        """The tool names announced as deferred (see DEFERRED), in order."""
        names: list[str] = []
        for text in _all_texts(body):
            for part in text.split(DEFERRED)[1:]:
                for line in part.split("\n")[1:]:
                    if not re.fullmatch(r"[A-Za-z0-9_.-]+", line.strip()):
                        break
                    if line.strip() not in names:
                        names.append(line.strip())
        return names

    def system(self, body: Any) -> str:
        """The top-level `system` and the messages of role `system` (Claude Code 2.1.x sends
        its environment block and the SessionStart hooks' context as such a message)."""
        parts = _texts((body or {}).get("system"))
        for m in (body or {}).get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "system":
                parts += _texts(m.get("content"))
        return "\n".join(parts)

    def user_texts(self, body: Any) -> list[str]:
        """Each user message's text blocks (tool results left out), one string per message."""
        out = []
        for m in (body or {}).get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "user":
                texts = _texts(m.get("content"))
                if texts:
                    out.append("\n".join(texts))
        return out

    def tool_results(self, body: Any) -> list[str]:
        out = []
        for m in (body or {}).get("messages") or []:
            if not (isinstance(m, dict) and m.get("role") == "user"
                    and isinstance(m.get("content"), list)):
                continue
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append("\n".join(_texts(b.get("content"))))
        return out

    def _blocks(self, turn: Turn, serial: int) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.text or not turn.calls:
            blocks.append({"type": "text", "text": turn.text})
        for i, call in enumerate(turn.calls):
            blocks.append({"type": "tool_use", "id": f"toolu_{self.nonce}_{serial:04d}_{i}",
                           "name": call.name, "input": call.args})
        return blocks

    def answer(self, handler: BaseHTTPRequestHandler, seen: Seen, turn: Turn,
               serial: int) -> None:
        blocks = self._blocks(turn, serial)
        stop = "tool_use" if turn.calls else "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 10,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": f"msg_{self.nonce}_{serial:04d}", "type": "message", "role": "assistant",
                   "model": (seen.body or {}).get("model") or self.model}
        if not (seen.body or {}).get("stream"):
            send_json(handler, {**message, "content": blocks, "stop_reason": stop,
                                "stop_sequence": None, "usage": usage})
            return
        events: list[tuple[str | None, Any]] = [("message_start", {
            "type": "message_start",
            "message": {**message, "content": [], "stop_reason": None, "stop_sequence": None,
                        "usage": {**usage, "output_tokens": 1}}})]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start",
                 {"type": "content_block_start", "index": i, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": i,
                                         "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": i})]
        events += [
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"})]
        send_sse(handler, events)

    def other(self, handler: BaseHTTPRequestHandler, method: str, path: str) -> bool:
        path = path.rstrip("/")
        if method == "POST" and path == "/v1/messages/count_tokens":
            send_json(handler, {"input_tokens": 100})
            return True
        if method == "GET" and path == "/v1/models":
            send_json(handler, {"data": [{"type": "model", "id": self.model,
                                          "display_name": self.model,
                                          "created_at": "2025-01-01T00:00:00Z"}],
                                "has_more": False, "first_id": self.model,
                                "last_id": self.model})
            return True
        return False
