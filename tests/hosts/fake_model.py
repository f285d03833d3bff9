"""A scripted model endpoint on 127.0.0.1 for the real hosts: each request is recorded and
answered with the script's next turn, in the wire form of the protocol its path names (one
`Protocol` per API: Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Gemini)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """A tool call the model makes: `name` as the host exposes it (see `Seen.tool`)."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One answer of the model: text, or tool calls (then the host runs them and asks again)."""

    text: str = ""
    calls: tuple[Call, ...] = ()


#: A script's step: a fixed turn, or one made from the request it answers (to name a tool as
#: the host listed it, or to react to what the host sent).
Step = Turn | Callable[["Seen"], Turn]


@dataclass
class Seen:
    """A request the host sent, and what the protocol reads in it."""

    path: str
    headers: dict[str, str]
    body: Any
    protocol: Protocol

    def tools(self) -> list[str]:
        """The tool names the host offers the model in this request."""
        return self.protocol.tools(self.body)

    def tool(self, suffix: str) -> str:
        """The one offered tool whose name ends with `suffix` (`ckpt_save` ->
        `mcp__gitckpt__ckpt_save`); AssertionError when there is none or several."""
        found = [t for t in self.tools() if t.endswith(suffix)]
        assert len(found) == 1, f"no single tool ending {suffix!r} in {self.tools()}"
        return found[0]

    def system(self) -> str:
        """The system text (instructions) of this request."""
        return self.protocol.system(self.body)

    def user_texts(self) -> list[str]:
        """Every user message's text, oldest first."""
        return self.protocol.user_texts(self.body)

    def tool_results(self) -> list[str]:
        """Every tool result's text as the model reads it, oldest first."""
        return self.protocol.tool_results(self.body)

    def everything(self) -> str:
        """The whole request body as text: for "does X reach the model at all"."""
        return json.dumps(self.body, ensure_ascii=False)


class Protocol:
    """One API's wire form: which paths it serves, what it reads in a request, how it writes
    a turn. Subclasses implement each; `answer` writes the whole HTTP response."""

    def serves(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def tools(self, body: Any) -> list[str]:
        raise NotImplementedError

    def system(self, body: Any) -> str:
        raise NotImplementedError

    def user_texts(self, body: Any) -> list[str]:
        raise NotImplementedError

    def tool_results(self, body: Any) -> list[str]:
        raise NotImplementedError

    def answer(self, handler: BaseHTTPRequestHandler, seen: Seen, turn: Turn,
               serial: int) -> None:
        """Write `turn` as the response to `seen` (`serial` makes ids unique)."""
        raise NotImplementedError

    def other(self, handler: BaseHTTPRequestHandler, method: str, path: str) -> bool:
        """Answer a request that is not a model turn (a model list, a token count); False
        when the path is unknown (the server answers 404 and records it)."""
        return False


@dataclass
class FakeModel:
    """The endpoint: `url` once started; `requests` every model request in order; `unknown`
    every request no protocol served (a test asserts it stays empty, or knows why not)."""

    protocols: list[Protocol]
    script: list[Step] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    done_text: str = "Done."

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the fake model is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                for proto in model.protocols:
                    if proto.serves(method, path):
                        try:
                            body = json.loads(raw or b"null")
                        except ValueError:
                            body = raw.decode("utf-8", "replace")
                        seen = Seen(path, {k.lower(): v for k, v in self.headers.items()},
                                    body, proto)
                        with model._lock:
                            model.requests.append(seen)
                            serial = len(model.requests)
                            step = model.script.pop(0) if model.script else \
                                Turn(text=model.done_text)
                        turn = step(seen) if callable(step) else step
                        proto.answer(self, seen, turn, serial)
                        return
                for proto in model.protocols:
                    if proto.other(self, method, path):
                        return
                with model._lock:
                    model.unknown.append(f"{method} {self.path}")
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def send_json(handler: BaseHTTPRequestHandler, obj: Any, status: int = 200) -> None:
    """A whole JSON response."""
    data = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, Any]]) -> None:
    """A whole server-sent-event stream: (event name or None, JSON data) each, then the
    connection closes (no keep-alive: a host reads to the end)."""
    parts = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        parts.append(f"{head}data: {payload}\n\n")
    body = "".join(parts).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(body)
    handler.close_connection = True
