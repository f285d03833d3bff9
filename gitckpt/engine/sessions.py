"""The host sessions a task's hooks heard, each with the transcript file its host names: at a
save, each transcript is read from where the step before left it, for the step's token usage
and models and (with `gitckpt config transcripts on`) a redacted copy of the segment under
refs/checkpoints/<task>/transcripts/<n>.

A transcript is the host's file, read-only, and input like any other: a line that is not
JSON, a file gone or rewritten (shorter than where we were) is skipped or read from its
start, never an error for the save. Formats read: Claude Code's JSONL (an assistant message's
`usage` and `model`, the last of the lines that repeat one message id) and Codex's rollout
JSONL (`token_count` events' `last_token_usage`, `turn_context`'s model)."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any

from gitckpt.core import json_input, limits
from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.objects import Mode, TreeEntry
from gitckpt.engine.prompts import MEMORY_LOCK, MEMORY_WAIT
from gitckpt.safety.redact import MARK, clean, redact
from gitckpt.store.base import Store

#: The sessions remembered per task (the newest heard).
SESSIONS = 20
#: The most of one transcript read at a save (its newest part: the older is skipped).
READ_MAX = 32 << 20
#: The most of one session's segment a step keeps as its transcript (the newest lines).
KEEP_BYTES = limits.TRANSCRIPT
#: The state file that holds the setting ("on"); absent: off.
SETTING = "transcripts"
#: The token counts a step's `usage` holds, summed over its sessions.
COUNTS = ("input", "output", "cache_read", "cache_write")

_log = logging.getLogger("gitckpt")


def _file(tid: TaskId) -> str:
    return f"sessions-{tid}.json"


def _tidy(value: str) -> str:
    return redact(clean(value, one_line=True))[0][:200]


def _memory(store: Store, tid: TaskId) -> dict[str, dict[str, Any]]:
    try:
        data = json_input.loads(store.state.read(_file(tid)) or b"{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)
            and isinstance(v.get("path"), str) and isinstance(v.get("offset"), int)}


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def heard(store: Store, tid: TaskId, session: str, path: str, host: str) -> bool:
    """Remember `session`'s transcript at `path` (absolute): what it holds from now on counts
    for the next step. A session already known at that path costs one small read, no write.
    True if it was new."""
    if not os.path.isabs(path):
        return False
    who = _tidy(session)
    known = _memory(store, tid).get(who)
    if known is not None and known["path"] == path:
        return False
    with store.state.locked(MEMORY_LOCK, MEMORY_WAIT):
        memory = _memory(store, tid)
        if memory.get(who, {}).get("path") == path:
            return False
        memory.pop(who, None)
        memory[who] = {"path": path, "host": host[:40], "offset": _size(path)}
        kept = dict(list(memory.items())[-SESSIONS:])
        store.state.write(_file(tid), json.dumps(kept).encode())
    return True


@dataclass
class Segment:
    """What one session's transcript gained since the step before: bytes [start, end)."""

    session: str
    host: str
    path: str
    start: int
    end: int
    data: bytes = b""


@dataclass
class Since:
    """What the sessions' transcripts say since the step before, for the next step's note."""

    segments: list[Segment] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)


def since(store: Store, tid: TaskId) -> Since:
    """Each remembered session's transcript from where the step before left it to its last
    whole line, with the token usage and models it names. Never raises for a transcript."""
    out = Since()
    totals = dict.fromkeys(COUNTS, 0)
    models: dict[str, None] = {}
    for who, m in _memory(store, tid).items():
        seg = _read(who, m)
        if seg is None:
            continue
        out.segments.append(seg)
        for counts, model in _usage(seg.data):
            for k in COUNTS:
                totals[k] += counts.get(k, 0)
            if model:
                models[_tidy(model)] = None
    out.usage = {k: v for k, v in totals.items() if v} if any(totals.values()) else {}
    out.models = list(models)[:10]
    return out


def _read(who: str, m: dict[str, Any]) -> Segment | None:
    try:
        fd = os.open(m["path"], os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        start = m["offset"] if 0 <= m["offset"] <= size else 0  # rewritten: from its start
        if size - start > READ_MAX:
            start = size - READ_MAX
        os.lseek(fd, start, os.SEEK_SET)
        data = b""
        while len(data) < size - start:
            chunk = os.read(fd, min(size - start - len(data), 1 << 20))
            if not chunk:
                break
            data += chunk
    except OSError as e:
        _log.info("the transcript of session %s cannot be read: %s", who, e)
        return None
    finally:
        os.close(fd)
    if start != m["offset"] and start:  # skipped into a line: from the next whole one
        cut = data.find(b"\n")
        data, start = (data[cut + 1:], start + cut + 1) if cut >= 0 else (b"", start)
    whole = data.rfind(b"\n") + 1  # a line being written now waits for the next step
    data = data[:whole]
    return Segment(who, str(m.get("host", "")), m["path"], start, start + whole, data)


def _usage(data: bytes) -> list[tuple[dict[str, int], str | None]]:
    """(counts, model) for each model call the lines record, in either format."""
    claude: dict[str, tuple[dict[str, int], str | None]] = {}
    calls: list[tuple[dict[str, int], str | None]] = []
    model: str | None = None
    for n, line in enumerate(data.splitlines()):
        if b'"usage"' not in line and b"token_count" not in line and b"turn_context" not in line:
            continue
        try:
            obj = json_input.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        msg, payload = obj.get("message"), obj.get("payload")
        if obj.get("type") == "assistant" and isinstance(msg, dict) \
                and isinstance(msg.get("usage"), dict):
            u = msg["usage"]
            counts = {"input": _int(u, "input_tokens"), "output": _int(u, "output_tokens"),
                      "cache_read": _int(u, "cache_read_input_tokens"),
                      "cache_write": _int(u, "cache_creation_input_tokens")}
            name = msg.get("model") if isinstance(msg.get("model"), str) else None
            mid = msg.get("id")
            key = mid if isinstance(mid, str) else f"line {n}"
            claude[key] = (counts, None if name == "<synthetic>" else name)  # the last line
        elif isinstance(payload, dict):
            if obj.get("type") == "turn_context" and isinstance(payload.get("model"), str):
                model = payload["model"]
            info = payload.get("info")
            if payload.get("type") == "token_count" and isinstance(info, dict) \
                    and isinstance(info.get("last_token_usage"), dict):
                u = info["last_token_usage"]
                cached = _int(u, "cached_input_tokens")
                calls.append(({"input": max(_int(u, "input_tokens") - cached, 0),
                               "output": _int(u, "output_tokens")
                               + _int(u, "reasoning_output_tokens"),
                               "cache_read": cached}, model))
    return [*claude.values(), *calls]


def _int(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 40 else 0


def advanced(store: Store, tid: TaskId, got: Since) -> None:
    """After a save's commit: each session's transcript counts from where this step read it
    to. A busy or unwritable memory leaves it for the next step to count again (logged),
    never a failed save that was made."""
    if not got.segments:
        return
    try:
        with store.state.locked(MEMORY_LOCK, MEMORY_WAIT):
            memory = _memory(store, tid)
            for seg in got.segments:
                if memory.get(seg.session, {}).get("path") == seg.path:
                    memory[seg.session]["offset"] = seg.end
            store.state.write(_file(tid), json.dumps(memory).encode())
    except (OSError, GitckptError) as e:
        _log.warning("the step holds its usage, but the transcripts' places stay: %s", e)


# -- kept transcripts (opt-in) ----------------------------------------------------------------


def enabled(store: Store) -> bool:
    return (store.state.read(SETTING) or b"").strip() == b"on"


def set_enabled(store: Store, on: bool) -> bool:
    """Keep (or stop keeping) the sessions' transcript segments with each step."""
    if on:
        store.prepare()  # a plain folder's store is made by its first setting
        store.state.write(SETTING, b"on\n")
    else:
        store.state.remove(SETTING)
    return on


def _redacted_line(line: bytes) -> bytes:
    """A transcript line with every string in it redacted, as every field is: a JSON line
    value by value (the rules see the text, not its JSON escapes; a value they know only by
    its key, `"apiKey": "..."`, is read with its key), any other line whole."""
    text = line.decode("utf-8", "replace")
    try:
        obj = json_input.loads(text)
    except (ValueError, RecursionError):
        if text.lstrip()[:1] in ("{", "["):  # JSON the rules cannot read value by value
            return json.dumps({"gitckpt": "line left out", "bytes": len(line)}).encode() \
                + b"\n"
        return redact(text)[0].encode() + b"\n"
    return json.dumps(_redact_all(obj), ensure_ascii=False).encode() + b"\n"


def _redact_all(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, list):
        return [_redact_all(v) for v in value]
    if isinstance(value, dict):
        return {redact(k)[0]: _keyed(k, v) if isinstance(v, str) else _redact_all(v)
                for k, v in value.items()}
    return value


def _keyed(key: str, value: str) -> str:
    red = redact(value)[0]
    if red != value or len(value) > 400:
        return red
    return red if redact(f"{key}: {value}")[0] == f"{key}: {value}" else MARK


def ref(tid: TaskId, n: int) -> str:
    return f"refs/checkpoints/{tid}/transcripts/{n}"


_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def keep(store: Store, tid: TaskId, n: int, got: Since, when: int) -> ObjectId | None:
    """Step `n`'s transcript segments as a parentless commit (one `<session>.jsonl` each,
    redacted line by line, the newest KEEP_BYTES kept) at transcripts/<n>: not in the
    workspace's tree, readable with `git show <ref>:<session>.jsonl`. None if there is none."""
    entries: list[TreeEntry] = []
    names: set[str] = set()
    for seg in got.segments:
        if not seg.data:
            continue
        data = seg.data  # the newest lines first cut (redacting what is dropped costs time)
        dropped = 0
        if len(data) > KEEP_BYTES:
            dropped = data.find(b"\n", len(data) - KEEP_BYTES) + 1 or len(data)
            data = data[dropped:]
        body = b"".join(_redacted_line(line) for line in data.splitlines())
        if len(body) > KEEP_BYTES:  # a redaction made it longer
            cut = body.find(b"\n", len(body) - KEEP_BYTES) + 1 or len(body)
            body, dropped = body[cut:], dropped + cut
        if dropped:
            body = json.dumps({"gitckpt": "truncated", "dropped_bytes": dropped}).encode() \
                + b"\n" + body
        name = (_NAME.sub("_", seg.session).strip("._") or "session")[:100]
        while f"{name}.jsonl" in names:
            name += "-2"
        names.add(f"{name}.jsonl")
        entries.append(TreeEntry(f"{name}.jsonl".encode(), Mode.FILE, store.write_blob(body)))
    if not entries:
        return None
    tree = store.write_tree(sorted(entries, key=lambda e: e.name))
    commit = store.write_commit(tree, [], f"transcripts of step {n}\n\nTask: {tid}\n", when)
    store.create_ref(ref(tid, n), commit)
    return commit


def kept(store: Store) -> dict[str, int]:
    """Every transcripts/<n> ref of the store's tasks, with the bytes its files hold."""
    out: dict[str, int] = {}
    for name, oid in store.list_refs("refs/checkpoints/").items():
        if "/transcripts/" in name:
            out[name] = sum(store.object_size(e.id) for e in
                            store.read_tree(store.read_commit(oid).tree))
    return out

