"""`gitckpt mcp` as a host starts it: a stdio bridge to an MCP session that the user's
service runs (service/client.py), so the MCP SDK and the watchers are loaded once per user,
not once per session. Standard library only.

The bridge answers the handshake and the tool list itself, at once (mcp/handshake.py), then
hands every line to the service's session and every answer back. When the service goes away
(killed, restarted for a new version), each request in flight gets an error answer saying so,
and the bridge reconnects, starting a service if none runs, and replays the session's
`initialize` (whose second answer the service drops), so the host's session goes on. Where no
service can be had, `run_alone` serves the session in this process.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import sys
import threading

from gitckpt.mcp.handshake import Held, Wire
from gitckpt.service import client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The JSON-RPC error of a call whose service went away before it answered.
LOST = -32603
CLOSE_WAIT = 10.0  # seconds the last answers may take after the host closed stdin


class Bridge:
    """The pumps between the host's stdio (`wire`) and the service's socket."""

    def __init__(self, wire: Wire, held: Held, header: dict[str, Any]) -> None:
        self.wire, self.held, self.header = wire, held, header
        self.out_lock = threading.Lock()
        self.lock = threading.Lock()
        self.in_flight: dict[str, Any] = {}  # the JSON of each id -> the id
        self.initialize: bytes | None = None  # the session's, replayed after a reconnect
        self.initialized: bytes | None = None
        self.sock: socket.socket | None = None
        self.cond = threading.Condition(self.lock)  # the connection changes under it
        self.failed = False  # no service could be had after one went
        self.ended = False
        for line in held.lines:
            request = self._seen(line)
            if request is not None and request not in held.answered:
                self.in_flight[json.dumps(request)] = request  # sent with the first connect

    def connect(self, first: bool) -> socket.socket | None:
        """A session at the service: the first one with what the handshake read and
        answered, later ones with the replayed `initialize` (answered already)."""
        if first:
            lines = [x.decode("utf-8", "replace") for x in self.held.lines]
            answered = sorted(self.held.answered, key=str)
        else:
            lines = [x.decode("utf-8", "replace") for x in (self.initialize, self.initialized)
                     if x is not None]
            answered = [self._id(self.initialize)] if self.initialize else []
        return client.stream({"op": "mcp", "request": {**self.header, "lines": lines,
                                                        "answered": answered}})

    @staticmethod
    def _id(line: bytes | None) -> Any:
        try:
            return _load(line or b"null").get("id")
        except AttributeError:
            return None

    def _seen(self, line: bytes) -> Any:
        """Remember the session's handshake; the id of a request (else None)."""
        msg = _load(line)
        if not isinstance(msg, dict):
            return None
        method = msg.get("method")
        if method == "initialize":
            self.initialize = line if line.endswith(b"\n") else line + b"\n"
        elif method == "notifications/initialized":
            self.initialized = line if line.endswith(b"\n") else line + b"\n"
        return msg["id"] if "id" in msg and isinstance(method, str) else None

    def _answered(self, line: bytes) -> None:
        if b'"id"' not in line:
            return
        msg = _load(line)
        if isinstance(msg, dict) and "id" in msg and "method" not in msg:
            with self.lock:
                self.in_flight.pop(json.dumps(msg["id"]), None)

    def write(self, data: bytes) -> None:
        with self.out_lock:
            self.wire.out.write(data)
            self.wire.out.flush()

    def host_to_service(self) -> None:
        """The host's lines to the service, until the host closes stdin. Only the other pump
        reconnects: a line that cannot be sent waits for the next connection, or, if it
        may have reached the service that died, is answered by that pump's reconnect."""
        inp = self.wire.inp
        if isinstance(inp, io.RawIOBase):
            inp = io.BufferedReader(inp)  # the handshake read it line by line, unbuffered
        while True:
            line = inp.readline()
            if not line:
                break
            request = self._seen(line)
            with self.cond:
                while self.sock is None and not self.failed:
                    self.cond.wait()  # reconnecting: the line goes to the next service
                sock = self.sock
                if sock is None:
                    break  # no service can be had: the other pump has answered and leaves
                if request is not None:
                    self.in_flight[json.dumps(request)] = request
            try:
                sock.sendall(line)
            except OSError:
                with self.cond:  # answered (lost) by the reconnect, which this waits for
                    while self.sock is sock and not self.failed:
                        self.cond.wait()
        self.ended = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_WR)  # the session ends when its answers are out
            except OSError:
                pass

    def service_to_host(self) -> None:
        """The service's lines to the host. When the service goes, every answer it sent has
        been passed on (read to the end); what is still in flight is then answered with an
        error, once, and a new session is opened at a new service."""
        while True:
            sock = self.sock
            if sock is None:
                return
            reader = sock.makefile("rb")
            try:
                for line in reader:
                    self._answered(line)
                    try:
                        self.write(line)
                    except OSError:  # the host stopped reading: the session is over
                        os._exit(0)
            except OSError:
                pass  # the service's end: as its EOF
            finally:
                reader.close()
            if self.ended:
                return
            with self.cond:
                lost = list(self.in_flight.values())
                self.in_flight.clear()
                self.sock = None
            sock.close()
            self._lose(lost, "the gitckpt service stopped during this call, so whether it "
                             "was done is unknown; check with ckpt_resume or ckpt_log, then "
                             "call again if need be")
            new = self.connect(first=False)
            with self.cond:
                self.sock = new
                self.failed = new is None
                self.cond.notify_all()
            if new is None:
                self._lose_all("the gitckpt service stopped and cannot be restarted")
                os._exit(1)

    def _lose_all(self, why: str) -> None:
        with self.lock:
            lost = list(self.in_flight.values())
            self.in_flight.clear()
        self._lose(lost, why)

    def _lose(self, ids: list[Any], why: str) -> None:
        for i in ids:
            error = {"jsonrpc": "2.0", "id": i, "error": {"code": LOST, "message": why}}
            try:
                self.write((json.dumps(error) + "\n").encode())
            except OSError:
                return


def _load(line: bytes) -> Any:
    """A JSON-RPC line of the host or of the service, or None where it is not JSON (the
    bridge only passes lines on; it reads them for their ids)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def header(root: str | None) -> dict[str, Any]:
    """What the service's session needs of this process: its folder (after `-C`), `--root`,
    and the session's own settings (the tool names' prefix among them)."""
    return {"cwd": os.getcwd(), "root": root, "fixed": os.environ.get("GITCKPT_ROOT"),
            "export_dir": os.environ.get("GITCKPT_EXPORT_DIR"),
            "prefix": os.environ.get("GITCKPT_TOOL_PREFIX", "")}


def serve(root: str | None, wire: Wire, held: Held) -> bool:
    """Bridge the host's session to the service until the host goes; False (nothing sent)
    when no service can be had."""
    bridge = Bridge(wire, held, header(root))
    bridge.sock = bridge.connect(first=True)
    if bridge.sock is None:
        return False
    pump = threading.Thread(target=bridge.service_to_host, daemon=True)
    pump.start()
    bridge.host_to_service()
    pump.join(CLOSE_WAIT)
    return True


def main(root: str | None) -> None:
    """`gitckpt mcp [--root DIR]`: the handshake answered here, then the session at the
    service, or in this process where there is none."""
    from gitckpt.mcp import handshake

    # a host ending its session (SIGINT, then SIGTERM after 100 ms in Claude Code) may do so
    # at any moment, the handshake or the service's start included: leave at once, quietly
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: os._exit(0))
    if root is not None and not os.path.isabs(root) and "$" not in root:
        root = os.path.abspath(root)  # (an unexpanded $VAR is refused at the first call)
    wire = handshake.claim()
    held = handshake.answer(wire)  # before anything else: hosts wait for this answer
    if client.enabled() and serve(root, wire, held):
        sys.exit(0)
    from gitckpt.mcp.server import run

    run(root, wire, held)
