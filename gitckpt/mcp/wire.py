"""The stdio wire between the client and the SDK: every client line gets an answer, even one
the SDK's parser would drop unanswered, and the SDK's second answers to what the fast handshake
answered (mcp/handshake.py) are dropped.

The SDK parses each line with pydantic, whose JSON parser refuses a string holding half of a
UTF-16 surrogate pair (`"\\ud83d"`, half an emoji): the SDK then logs the line and never
answers it, and the client waits for ever. Such a line is settled here first: a tool call is
answered with an error result (its arguments are not text, so nothing is done with them), any
other message has each half character replaced by U+FFFD and goes on to the SDK.
"""

from __future__ import annotations

import io
import json
import re
from typing import TYPE_CHECKING, BinaryIO

import anyio

from gitckpt.core import json_input
from gitckpt.core.errors import InvalidArgument
from gitckpt.mcp.handshake import Held, is_reply_to
from gitckpt.mcp.text import error_result

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

# A JSON escape of a surrogate code point (D800-DFFF): only a line holding one is parsed here.
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
REPLACEMENT = "\ufffd"


def _half(text: str) -> int | None:
    """The first lone surrogate in `text` (json.loads joins the halves of a pair)."""
    for c in text:
        if 0xD800 <= ord(c) <= 0xDFFF:
            return ord(c)
    return None


def find_half(value: object, where: str = "") -> tuple[str, int] | None:
    """(where, code point) of the first string or key in `value` holding a lone surrogate."""
    if isinstance(value, str):
        half = _half(value)
        return None if half is None else (where, half)
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = find_half(v, f"{where}[{i}]")
            if found:
                return found
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{where}.{k}" if where else str(k)
            found = find_half(k, name) or find_half(v, name)
            if found:
                return found
    return None


def _mended(value: object) -> object:
    if isinstance(value, str):
        return "".join(REPLACEMENT if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_mended(v) for v in value]
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    return value


def settle(line: str) -> tuple[str | None, str | None]:
    """(the line for the SDK, None), or (None, the answer to write) for a tool call whose
    arguments hold half a character. Lines without a surrogate escape pass untouched."""
    if not _ESCAPE.search(line):
        return line, None
    try:
        msg = json_input.loads(line)
    except (ValueError, RecursionError):
        return line, None  # not JSON, or nested too deep: the SDK says what it says of it
    found = find_half(msg)
    if found is None:
        return line, None  # only whole pairs
    params = msg.get("params") if isinstance(msg, dict) else None
    if isinstance(params, dict) and msg.get("method") == "tools/call" and "id" in msg:
        tool = params.get("name") if isinstance(params.get("name"), str) else "the tool"
        inside = find_half(params.get("arguments"))
        where, half = inside or found
        what = f"The argument {_mended(where)}" if inside else "The call"
        e = InvalidArgument(
            f"{what} holds half of a character (the lone UTF-16 surrogate \\u{half:04x}), "
            "which is not valid text; nothing was done.",
            f"Call {_mended(tool)} again with the whole character (both halves of its "
            "surrogate pair, or the character itself) or without it.")
        result = error_result(e).model_dump(by_alias=True, exclude_unset=True, mode="json")
        return None, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result},
                                separators=(",", ":"))
    # Anything else (a client name, a notification): half a character is not worth a
    # refusal, and a message that cannot be parsed would go unanswered.
    return json.dumps(_mended(msg), separators=(",", ":")) + "\n", None


class Out:
    """The wire for the SDK, without its second answer to each request answered already;
    `send` writes an answer of the wire's own. One writer at a time: each line whole."""

    def __init__(self, out: BinaryIO, held: Held) -> None:
        self.out = anyio.wrap_file(io.TextIOWrapper(out, encoding="utf-8", write_through=True))
        self.answered = set(held.answered)
        self.lock = anyio.Lock()

    def _second(self, text: str) -> bool:
        for request in self.answered:
            if is_reply_to(text, request):
                self.answered.discard(request)
                return True
        return False

    async def write(self, text: str) -> None:
        if self.answered and self._second(text):
            return
        async with self.lock:
            await self.out.write(text)

    async def send(self, line: str) -> None:
        async with self.lock:
            await self.out.write(line + "\n")
            await self.out.flush()

    async def flush(self) -> None:
        await self.out.flush()


class Replay:
    """The client's lines for the SDK: those read during the handshake, then the rest, each
    settled first (see `settle`); answers of the wire's own go out through `out`."""

    def __init__(self, first: list[bytes], inp: BinaryIO, out: Out) -> None:
        self.first = first
        if isinstance(inp, io.RawIOBase):
            inp = io.BufferedReader(inp)  # the handshake read it unbuffered, line by line
        self.rest = anyio.wrap_file(io.TextIOWrapper(inp, encoding="utf-8", errors="replace"))
        self.out = out

    async def _lines(self) -> AsyncIterator[str]:
        for raw in self.first:
            yield raw.decode("utf-8", "replace")
        async for line in self.rest:
            yield line

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines():
            passed, answer = settle(line)
            if answer is not None:
                await self.out.send(answer)
            else:
                assert passed is not None  # settle: no answer, so the line goes on
                yield passed
