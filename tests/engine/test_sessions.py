"""A session's transcript, as a host writes it: the token usage and models of a step come from
what it gained since the step before (Claude Code's and Codex's formats), and with
`config transcripts on` its redacted segment is kept under transcripts/<n>, outside the
workspace's tree, readable with plain git, removed by compress; off by default."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import git, service

from gitckpt.engine import sessions
from gitckpt.safety.redact import redact


def _claude(mid: str, inp: int, out: int, *, read: int = 0, write: int = 0,
            model: str = "claude-opus-4-5", text: str = "") -> str:
    return json.dumps({"type": "assistant", "sessionId": "s1", "message": {
        "id": mid, "model": model, "role": "assistant", "content": [{"type": "text",
                                                                     "text": text}],
        "usage": {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": write}}}) + "\n"


def _codex(inp: int, cached: int, out: int, reasoning: int) -> str:
    return json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 10**6}, "last_token_usage": {
            "input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
            "reasoning_output_tokens": reasoning, "total_tokens": inp + out}}}}) + "\n"


def _task(ws, tmp_path, session="s1", host="claude"):
    service.init(ws.root, "usage task")
    transcript = tmp_path / f"{session}.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "before"}}) + "\n"
                          + _claude("m0", 999, 999))  # before it was heard: not counted
    tl = service.open_timeline(ws.root)
    assert sessions.heard(tl.store, tl.resolve(None), session, str(transcript), host)
    assert not sessions.heard(tl.store, tl.resolve(None), session, str(transcript), host)
    return transcript


def _note(ws, title: str):
    (ws.root / f"{title}.txt").write_text(title + "\n")
    saved = service.save(ws.root, title)
    return service.open_timeline(ws.root).record(saved.commit).note


def test_a_step_sums_what_its_sessions_used_since_the_step_before(ws, tmp_path):
    transcript = _task(ws, tmp_path)
    with transcript.open("a") as f:
        f.write(_claude("m1", 1, 1))  # a streaming line; the same message's last one counts
        f.write(_claude("m1", 10, 20, read=300, write=40))
        f.write("not json at all\n")
        f.write(_claude("m2", 5, 6, model="<synthetic>"))
        f.write('{"type": "assistant", "message": {"id": "m3", "usage": {"input_tokens": true}}}\n')
    note = _note(ws, "one")
    assert note.usage == {"input": 15, "output": 26, "cache_read": 300, "cache_write": 40}
    assert note.models == ["claude-opus-4-5"]
    assert note.sessions == ["s1"]
    with transcript.open("a") as f:
        f.write(_claude("m4", 7, 8))
        f.write(_claude("m5", 100, 100)[:40])  # a line being written waits for the next step
    assert _note(ws, "two").usage == {"input": 7, "output": 8}
    with transcript.open("a") as f:
        f.write(_claude("m5", 100, 100)[40:])
    assert _note(ws, "three").usage == {"input": 100, "output": 100}
    assert _note(ws, "four").usage == {}  # nothing new: nothing counted twice


def test_codex_rollouts_and_rewritten_or_vanished_transcripts(ws, tmp_path):
    transcript = _task(ws, tmp_path, session="c1", host="codex")
    with transcript.open("a") as f:
        f.write(json.dumps({"type": "turn_context", "payload": {"model": "gpt-5-codex"}}) + "\n")
        f.write(_codex(1000, 800, 50, 25))
        f.write(_codex(10, 0, 1, 0))
    note = _note(ws, "codex")
    assert note.usage == {"input": 210, "output": 76, "cache_read": 800}
    assert note.models == ["gpt-5-codex"]
    transcript.write_text(_codex(3, 0, 4, 0))  # rewritten, shorter: read from its start
    assert _note(ws, "rewritten").usage == {"input": 3, "output": 4}
    transcript.unlink()
    note = _note(ws, "gone")  # a vanished transcript costs the step its usage, nothing else
    assert (note.usage, note.title) == ({}, "gone")


def test_transcripts_are_kept_only_when_asked_redacted_and_outside_the_tree(ws, tmp_path):
    transcript = _task(ws, tmp_path)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert secret not in redact(f"token {secret}")[0]
    with transcript.open("a") as f:
        f.write(_claude("m1", 1, 2, text=f"the token is {secret}"))
    _note(ws, "off")
    tl = service.open_timeline(ws.root)
    tid = tl.resolve(None)
    assert not tl.store.list_refs(f"refs/checkpoints/{tid}/transcripts/")  # off by default
    setting = service.config_transcripts(ws.root)
    assert (setting.on, setting.steps) == (False, 0)
    assert service.config_transcripts(ws.root, "on").on
    with transcript.open("a") as f:
        f.write(_claude("m2", 3, 4, text=f"again {secret} and a plain line"))
    note = _note(ws, "on")
    ref = f"refs/checkpoints/{tid}/transcripts/{note.step}"
    commit = tl.store.get_ref(ref)
    assert commit is not None
    [entry] = tl.store.read_tree(tl.store.read_commit(commit).tree)
    assert entry.name == b"s1.jsonl"
    kept = tl.store.read_blob(entry.id).decode()
    assert "and a plain line" in kept
    assert "m1" not in kept  # the segment since the step before, not the whole file
    assert secret not in kept
    assert secret[4:20] not in kept
    assert json.loads(kept.splitlines()[0])["message"]["id"] == "m2"
    head = tl.head(tid)
    assert "s1.jsonl" not in json.dumps(tl.store.diff_trees(tl.steps(tid)[0].tree,
                                                            head.tree).to_dict())
    if ws.kind == "git":  # plain git reads it
        assert "and a plain line" in git(ws.root, "show", f"{ref}:s1.jsonl")
    else:
        assert "and a plain line" in git(ws.root, "--git-dir", str(ws.git_dir), "show",
                                         f"{ref}:s1.jsonl")
    setting = service.config_transcripts(ws.root)
    assert (setting.on, setting.steps) == (True, 1)
    assert setting.bytes == len(kept.encode())
    dry = service.compress(ws.root, keep="0s", min_steps=0, dry_run=True)
    assert dry.transcripts == 1
    assert tl.store.get_ref(ref) == commit
    done = service.compress(ws.root, keep="0s", min_steps=0)
    assert done.transcripts == 1
    assert tl.store.get_ref(ref) is None
    assert service.doctor(ws.root).healthy
    assert not service.config_transcripts(ws.root, "off").on


def test_a_long_segment_keeps_its_newest_lines(ws, tmp_path, monkeypatch):
    monkeypatch.setattr(sessions, "KEEP_BYTES", 2000)
    transcript = _task(ws, tmp_path)
    service.config_transcripts(ws.root, "on")
    with transcript.open("a") as f:
        for i in range(100):
            f.write(_claude(f"m{i}", 1, 1, text=f"line {i}"))
    note = _note(ws, "long")
    tl = service.open_timeline(ws.root)
    commit = tl.store.get_ref(sessions.ref(tl.resolve(None), note.step))
    [entry] = tl.store.read_tree(tl.store.read_commit(commit).tree)
    lines = tl.store.read_blob(entry.id).decode().splitlines()
    assert json.loads(lines[0])["gitckpt"] == "truncated"
    assert json.loads(lines[0])["dropped_bytes"] > 0
    assert json.loads(lines[-1])["message"]["id"] == "m99"
    assert len("\n".join(lines[1:])) <= 2000
    assert note.usage == {"input": 100, "output": 100}  # counted whole all the same


def test_the_cli_setting(ws, tmp_path):
    service.init(ws.root, "cli setting")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=ws.root,
                              capture_output=True, text=True, timeout=60)

    assert "keep no transcripts" in cli("config", "transcripts").stdout
    on = cli("--json", "config", "transcripts", "on")
    assert json.loads(on.stdout) == {"on": True, "steps": 0, "bytes": 0}
    assert "gitckpt config transcripts off" in cli("config", "transcripts").stdout
    bad = cli("config", "transcripts", "maybe")
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "maybe" in bad.stderr


def test_readme_says_what_each_mode_keeps():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for words in ("config transcripts on", "token usage", "transcripts/<n>", "Off (the default)"):
        assert words in readme
