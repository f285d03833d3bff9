"""OpenAI Chat Completions as a fake model speaks it: `POST /v1/chat/completions` (or
`/chat/completions` under any prefix), answered as a stream of `chat.completion.chunk` events
(`choices[0].delta` with `content` or `tool_calls`, then `finish_reason`, a usage chunk where
`stream_options.include_usage` asks for one, and `data: [DONE]`), or as one JSON completion
where the request does not ask to stream; `GET .../models` lists the one model. Nothing here
knows a particular host."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_model import Protocol, Seen, Turn, send_json, send_sse

#: The model id the endpoint answers as (a host may name any: it is echoed back).
MODEL = "fake-model"


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
        return "\n".join(out)
    return ""


def _messages(body: Any) -> list[dict[str, Any]]:
    messages = body.get("messages") if isinstance(body, dict) else None
    return [m for m in messages or [] if isinstance(m, dict)]


class ChatCompletions(Protocol):
    """The Chat Completions wire form."""

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith("/chat/completions")

    def tools(self, body: Any) -> list[str]:
        tools = body.get("tools") if isinstance(body, dict) else None
        out = []
        for tool in tools or []:
            fn = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out.append(fn["name"])
        return out

    def tool_definitions(self, body: Any) -> list[dict[str, Any]]:
        """Each offered tool's whole definition (`{"type": "function", "function": ...}`)."""
        tools = body.get("tools") if isinstance(body, dict) else None
        return [t for t in tools or [] if isinstance(t, dict)]

    def system(self, body: Any) -> str:
        return "\n".join(_text(m.get("content")) for m in _messages(body)
                         if m.get("role") in ("system", "developer"))

    def user_texts(self, body: Any) -> list[str]:
        return [_text(m.get("content")) for m in _messages(body) if m.get("role") == "user"]

    def tool_results(self, body: Any) -> list[str]:
        return [_text(m.get("content")) for m in _messages(body) if m.get("role") == "tool"]

    def tool_result_of(self, body: Any, call_id: str) -> str | None:
        """The result the host sent for the call `call_id`, or None."""
        for m in _messages(body):
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
                return _text(m.get("content"))
        return None

    def answer(self, handler: BaseHTTPRequestHandler, seen: Seen, turn: Turn,
               serial: int) -> None:
        body = seen.body if isinstance(seen.body, dict) else {}
        model = body.get("model") or MODEL
        ident = f"chatcmpl-{serial}"
        calls = [{"index": i, "id": call_id(serial, i), "type": "function",
                  "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                 for i, c in enumerate(turn.calls)]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                         for c in calls]
            send_json(handler, {"id": ident, "object": "chat.completion", "created": 0,
                                "model": model, "usage": usage,
                                "choices": [{"index": 0, "message": message,
                                             "finish_reason": finish}]})
            return

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {"id": ident, "object": "chat.completion.chunk", "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

        events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant",
                                                              "content": ""}))]
        if turn.text:
            events.append((None, chunk({"content": turn.text})))
        for c in calls:  # each call whole in one delta (name and arguments together)
            events.append((None, chunk({"tool_calls": [c]})))
        events.append((None, chunk({}, finish)))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            events.append((None, {"id": ident, "object": "chat.completion.chunk",
                                  "created": 0, "model": model, "choices": [],
                                  "usage": usage}))
        events.append((None, "[DONE]"))
        send_sse(handler, events)

    def other(self, handler: BaseHTTPRequestHandler, method: str, path: str) -> bool:
        if method == "GET" and path.rstrip("/").endswith("/models"):
            send_json(handler, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
            return True
        return False


def call_id(serial: int, index: int) -> str:
    """The id of the `index`th tool call in the answer to request `serial` (1-based)."""
    return f"call_{serial}_{index}"
