"""The OpenAI Responses API as Codex CLI speaks it (`wire_api = "responses"`): POST
`/v1/responses` (or `/responses`) with `stream: true`, answered by a server-sent-event stream
(`response.created`, `response.output_item.added`/`.done` per item, `response.output_text.delta`
for text, `response.completed` with usage), the form codex-rs's Responses client reads.

What a request holds: the system prompt and context as `developer` messages in `input` (Codex
sends no `instructions`), the user's messages as `user` messages, the tools in `tools`:
`function` tools, `custom` tools (freeform `apply_patch`, a grammar instead of JSON parameters)
and `namespace` tools that group others (Codex puts each MCP server's tools in a namespace
`mcp__<server>` whose description is the server's instructions). A namespaced tool is named
here `<namespace>__<tool>` (`mcp__gitckpt__ckpt_save`); the model calls it as a
`function_call` with `namespace` and the tool's own `name`, which `answer` writes. Tool results
come back as `function_call_output` / `custom_tool_call_output` items whose `output` is a
string or a list of content parts."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_model import Protocol, Seen, Turn, send_json, send_sse


def _text_of(content: Any) -> str:
    """A message's or a tool output's text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


class Responses(Protocol):
    """OpenAI Responses, streamed."""

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/") in ("/v1/responses", "/responses")

    # -- reading a request -------------------------------------------------------------------

    @staticmethod
    def _tool_specs(body: Any) -> dict[str, dict[str, Any]]:
        """Every tool the request offers, by its name here, with its spec (`namespace` added to
        a namespaced one)."""
        out: dict[str, dict[str, Any]] = {}
        for tool in (body or {}).get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "namespace":
                for inner in tool.get("tools") or []:
                    if isinstance(inner, dict) and inner.get("name"):
                        out[f"{tool['name']}__{inner['name']}"] = {
                            **inner, "namespace": tool["name"]}
            elif tool.get("name"):
                out[tool["name"]] = tool
            elif tool.get("type"):  # a hosted tool (web_search): its type is its name
                out[tool["type"]] = tool
        return out

    def tools(self, body: Any) -> list[str]:
        return list(self._tool_specs(body))

    def tool_definitions(self, body: Any, namespace: str) -> str:
        """The JSON of one namespace tool (an MCP server's tools and instructions) as sent:
        what is loaded into every request."""
        for tool in (body or {}).get("tools") or []:
            if isinstance(tool, dict) and tool.get("type") == "namespace" and \
                    tool.get("name") == namespace:
                return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))
        return ""

    def _messages(self, body: Any, *roles: str) -> list[str]:
        out = []
        for item in (body or {}).get("input") or []:
            if isinstance(item, dict) and item.get("type", "message") == "message" and \
                    item.get("role") in roles:
                out.append(_text_of(item.get("content")))
        return out

    def system(self, body: Any) -> str:
        parts = [body.get("instructions") or ""] if isinstance(body, dict) else []
        return "\n\n".join(p for p in [*parts, *self._messages(body, "system", "developer")] if p)

    def user_texts(self, body: Any) -> list[str]:
        return self._messages(body, "user")

    def tool_results(self, body: Any) -> list[str]:
        return [_text_of(item.get("output"))
                for item in (body or {}).get("input") or []
                if isinstance(item, dict) and item.get("type") in (
                    "function_call_output", "custom_tool_call_output", "mcp_tool_call_output")]

    def tool_calls(self, body: Any) -> list[dict[str, Any]]:
        """The model's earlier calls as the host sends them back (to pair with results)."""
        return [item for item in (body or {}).get("input") or []
                if isinstance(item, dict) and item.get("type") in (
                    "function_call", "custom_tool_call")]

    # -- answering ---------------------------------------------------------------------------

    def _items(self, seen: Seen, turn: Turn, serial: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.text:
            items.append({"type": "message", "role": "assistant", "id": f"msg_{serial}",
                          "status": "completed",
                          "content": [{"type": "output_text", "text": turn.text,
                                       "annotations": []}]})
        specs = self._tool_specs(seen.body)
        for i, call in enumerate(turn.calls):
            spec = specs.get(call.name, {})
            call_id = f"call_{serial}_{i}"
            if spec.get("type") == "custom":  # freeform (apply_patch): the raw input
                items.append({"type": "custom_tool_call", "id": f"ctc_{serial}_{i}",
                              "status": "completed", "call_id": call_id, "name": call.name,
                              "input": str(call.args.get("input", ""))})
                continue
            item = {"type": "function_call", "id": f"fc_{serial}_{i}", "status": "completed",
                    "call_id": call_id, "name": spec.get("name", call.name),
                    "arguments": json.dumps(call.args)}
            if spec.get("namespace"):
                item["namespace"] = spec["namespace"]
            items.append(item)
        return items

    def answer(self, handler: BaseHTTPRequestHandler, seen: Seen, turn: Turn,
               serial: int) -> None:
        rid = f"resp_{serial}"
        items = self._items(seen, turn, serial)
        model = (seen.body or {}).get("model", "fake") if isinstance(seen.body, dict) else "fake"
        base = {"id": rid, "object": "response", "model": model, "output": []}
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created",
                                  "response": {**base, "status": "in_progress"}})]
        for index, item in enumerate(items):
            events.append(("response.output_item.added", {
                "type": "response.output_item.added", "output_index": index, "item": item}))
            if item["type"] == "message":
                events.append(("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": index, "content_index": 0, "delta": turn.text}))
            events.append(("response.output_item.done", {
                "type": "response.output_item.done", "output_index": index, "item": item}))
        events.append(("response.completed", {"type": "response.completed", "response": {
            **base, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}}}))
        send_sse(handler, events)

    def other(self, handler: BaseHTTPRequestHandler, method: str, path: str) -> bool:
        if method == "GET" and path.rstrip("/") in ("/v1/models", "/models"):
            send_json(handler, {"object": "list", "data": [], "models": []})
            return True
        return False
