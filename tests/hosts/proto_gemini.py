"""The Gemini API (generativelanguage v1beta) as Gemini CLI calls it through @google/genai:
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` for each model turn (server-sent
events, one `data:` line per chunk, a GenerateContentResponse each), `:generateContent` for
its side questions (a JSON answer), `:countTokens` for an estimate.

A request's body: `contents` (`role` user|model, `parts` of `text`, `functionCall`,
`functionResponse`), `systemInstruction` (`parts` of `text`), `tools`
(`[{functionDeclarations: [{name, description, parametersJsonSchema|parameters}]}]`).
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_model import Protocol, Seen, Turn, send_json, send_sse

_TURN = re.compile(r"^/v1(beta|alpha)?/models/[^/:]+:(streamGenerateContent|generateContent)$")
_COUNT = re.compile(r"^/v1(beta|alpha)?/models/[^/:]+:countTokens$")


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, dict):
        parts = content.get("parts")
        return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    if isinstance(content, str):
        return [{"text": content}]
    return []


def _contents(body: Any) -> list[dict[str, Any]]:
    contents = body.get("contents") if isinstance(body, dict) else None
    if isinstance(contents, dict):
        return [contents]
    return [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []


def function_response_text(response: Any) -> str:
    """A functionResponse's `response` as the model reads it: Gemini CLI wraps a tool's text
    in `{"output": ...}` (or `{"error": ...}`); anything else is read as its JSON."""
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return json.dumps(response, ensure_ascii=False)


class GeminiProtocol(Protocol):
    """The Gemini API. A turn with calls answers one `functionCall` part per call."""

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and _TURN.match(path) is not None

    def tools(self, body: Any) -> list[str]:
        return [d["name"] for d in self.declarations(body) if isinstance(d.get("name"), str)]

    def declarations(self, body: Any) -> list[dict[str, Any]]:
        """Every function declaration offered in the request."""
        out: list[dict[str, Any]] = []
        tools = body.get("tools") if isinstance(body, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            decls = tool.get("functionDeclarations") if isinstance(tool, dict) else None
            out += [d for d in decls if isinstance(d, dict)] if isinstance(decls, list) else []
        return out

    def system(self, body: Any) -> str:
        si = body.get("systemInstruction") if isinstance(body, dict) else None
        return "\n".join(p["text"] for p in _parts(si) if isinstance(p.get("text"), str))

    def user_texts(self, body: Any) -> list[str]:
        out = []
        for content in _contents(body):
            if content.get("role", "user") != "user":
                continue
            texts = [p["text"] for p in _parts(content) if isinstance(p.get("text"), str)]
            if texts:
                out.append("\n".join(texts))
        return out

    def tool_results(self, body: Any) -> list[str]:
        out = []
        for content in _contents(body):
            for part in _parts(content):
                fr = part.get("functionResponse")
                if isinstance(fr, dict):
                    out.append(function_response_text(fr.get("response")))
        return out

    def tool_result_pairs(self, body: Any) -> list[tuple[str, str]]:
        """(function name, result text) of every functionResponse, oldest first."""
        out = []
        for content in _contents(body):
            for part in _parts(content):
                fr = part.get("functionResponse")
                if isinstance(fr, dict):
                    out.append((str(fr.get("name")), function_response_text(fr.get("response"))))
        return out

    @staticmethod
    def _response(turn: Turn, serial: int) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if turn.text:
            parts.append({"text": turn.text})
        for i, call in enumerate(turn.calls):
            parts.append({"functionCall": {"name": call.name, "args": call.args,
                                           "id": f"call_{serial}_{i}"}})
        if not parts:
            parts.append({"text": ""})
        return {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                              "totalTokenCount": 110},
            "modelVersion": "gemini-2.5-flash",
            "responseId": f"resp_{serial}",
        }

    def answer(self, handler: BaseHTTPRequestHandler, seen: Seen, turn: Turn,
               serial: int) -> None:
        response = self._response(turn, serial)
        if seen.path.endswith(":streamGenerateContent"):
            send_sse(handler, [(None, response)])
        else:
            send_json(handler, response)

    def other(self, handler: BaseHTTPRequestHandler, method: str, path: str) -> bool:
        if method == "POST" and _COUNT.match(path):  # (the body was read already)
            send_json(handler, {"totalTokens": 1000})
            return True
        return False
