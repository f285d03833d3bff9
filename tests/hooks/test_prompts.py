"""The user's prompts, heard by each host's prompt hook: kept redacted and capped, named by
the drift of the tool call that follows, taken into the next step's note with its sessions,
and read back by `why`; nothing of a secret in a prompt is stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import service
from test_hooks import claude, drifts, hook, quiet

from gitckpt.core.operations import PromptRequest
from gitckpt.engine import prompts
from gitckpt.safety.redact import redact
from gitckpt.service import events
from gitckpt.service.workspace import open_workspace


def _corpus() -> list[tuple[str, str]]:
    """(text, its marked secret) of tests/corpus/secret_strings.txt (every value fake)."""
    path = Path(__file__).resolve().parents[1] / "corpus" / "secret_strings.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            line = line.replace("\\n", "\n")
            [secret] = re.findall("⟦(.*?)⟧", line, re.S)
            out.append((line.replace("⟦", "").replace("⟧", ""), secret))
    return out


def _stored(root) -> str:
    """Everything the store holds as text: the state's files, and every note of every ref."""
    tl = service.open_timeline(root)
    out = [p.read_text(errors="replace") for p in tl.store.state.path.rglob("*") if p.is_file()]
    tid = tl.resolve(None)
    for s in tl.steps(tid):
        out.append(tl.store.read_note(s.commit) or "")
        out += [tl.store.read_note(d.commit) or "" for d in tl.drifts(tid, s.n)]
    return "\n".join(out)


def test_a_prompt_names_the_drift_that_follows_and_goes_into_the_step(ws):
    service.init(ws.root, "prompt task")
    p = hook("prompt", claude("UserPromptSubmit", ws.root, prompt="make the retry configurable"))
    quiet(p)  # Claude Code adds a prompt hook's stdout to the prompt: nothing is said
    (ws.root / "retry.py").write_text("RETRIES = 3\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Write",
                                   tool_input={"file_path": "retry.py"})))
    [d] = drifts(ws.root)
    [kept] = prompts.pending(service.open_timeline(ws.root).store, d.note.task)
    assert d.note.tool["prompt"] == kept["id"]
    assert (kept["text"], kept["session"], kept["host"]) == \
        ("make the retry configurable", "sess-1", "claude")
    [line] = service.why(ws.root, "retry.py").lines
    assert line.prompt == "make the retry configurable"  # from the state, before a save
    saved = service.save(ws.root, "retry", conclusion="configurable")
    note = service.open_timeline(ws.root).record(saved.commit).note
    assert [p["text"] for p in note.prompts] == ["make the retry configurable"]
    assert note.sessions == ["sess-1"]
    assert prompts.pending(service.open_timeline(ws.root).store, d.note.task) == []
    [line] = service.why(ws.root, "retry.py").lines
    assert (line.prompt, line.saved_in) == ("make the retry configurable", 1)


def test_each_host_with_the_moment_keeps_its_prompt(ws):
    service.init(ws.root, "prompt task")
    base = {"conversation_id": "c1", "workspace_roots": [str(ws.root)]}
    out = hook("prompt", {**base, "hook_event_name": "beforeSubmitPrompt", "prompt": "cursor",
                          "attachments": []}, host="cursor")
    assert json.loads(out.stdout) == {"continue": True}  # Cursor: the prompt goes on
    gem = hook("prompt", {"session_id": "g1", "cwd": str(ws.root), "hook_event_name":
                          "BeforeAgent", "prompt": "gemini", "timestamp": "t"}, host="gemini")
    assert json.loads(gem.stdout) == {}  # Gemini: JSON, or it shows our log line
    for host, event in (("codex", "UserPromptSubmit"), ("copilot", "UserPromptSubmit"),
                        ("devin", "UserPromptSubmit")):
        quiet(hook("prompt", {"session_id": host, "cwd": str(ws.root), "hook_event_name": event,
                              "prompt": host}, host=host, env={"DEVIN_PROJECT_DIR": str(ws.root)}))
    kept = prompts.pending(service.open_timeline(ws.root).store,
                           service.open_timeline(ws.root).resolve(None))
    assert [(p["host"], p["text"]) for p in kept] == [
        ("cursor", "cursor"), ("gemini", "gemini"), ("codex", "codex"), ("copilot", "copilot"),
        ("devin", "devin")]


def test_a_long_prompt_is_capped_and_a_folder_without_a_task_keeps_nothing(ws, tmp_path):
    service.init(ws.root, "prompt task")
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt="x" * 10_000)))
    [kept] = prompts.pending(service.open_timeline(ws.root).store,
                             service.open_timeline(ws.root).resolve(None))
    assert len(kept["text"]) == prompts.CHARS
    elsewhere = tmp_path / "no-task"
    elsewhere.mkdir()
    p = hook("prompt", claude("UserPromptSubmit", elsewhere, prompt="hello"))
    quiet(p)
    assert not (elsewhere / ".gitckpt").exists()


def test_nothing_of_a_secret_in_a_prompt_is_stored(ws):
    service.init(ws.root, "prompt task")
    caught = [(text, secret) for text, secret in _corpus() if secret not in redact(text)[0]]
    assert len(caught) >= 20
    for i, (text, _) in enumerate(caught[:prompts.KEEP - 5]):
        if i < 5:  # through the real hook, as a host runs it; the rest the same way in-process
            quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt=text,
                                        session_id=f"s{i}")))
        else:
            events.prompted(open_workspace(ws.root),
                            PromptRequest(text, session=f"s{i}", host="claude"))
    (ws.root / "after.txt").write_text("x\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Write",
                                   tool_input={"file_path": "after.txt"})))
    before = _stored(ws.root)
    service.save(ws.root, "with prompts")
    after = _stored(ws.root)
    for _, secret in caught[:prompts.KEEP - 5]:
        assert secret not in before
        assert secret not in after


def test_a_prompt_the_store_cannot_keep_is_logged_not_raised(ws):
    service.init(ws.root, "prompt task")
    state = service.open_timeline(ws.root).store.state
    (state.ensure() / prompts.MEMORY_LOCK).mkdir()
    p = hook("prompt", claude("UserPromptSubmit", ws.root, prompt="hi"))
    assert p.returncode == 0
    assert p.stdout == ""
    assert "prompt" in p.stderr or "store" in p.stderr


def test_the_handoff_names_the_prompt_the_last_step_answered(ws):
    service.init(ws.root, "prompt task")
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt="add a CSV export")))
    (ws.root / "csv.py").write_text("x = 1\n")
    service.save(ws.root, "CSV export", conclusion="exports rows")
    text = service.resume(ws.root).text
    assert "Prompt: 'add a CSV export'" in text
    assert text.index("CSV export") < text.index("Prompt:") < text.index("Conclusion:")


def test_a_tool_call_after_a_save_in_the_same_turn_still_follows_the_prompt(ws):
    service.init(ws.root, "prompt task")
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt="two edits")))
    (ws.root / "one.txt").write_text("1\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Write",
                                   tool_input={"file_path": "one.txt"})))
    service.save(ws.root, "first half")
    (ws.root / "two.txt").write_text("2\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Write",
                                   tool_input={"file_path": "two.txt"})))
    [first] = service.why(ws.root, "one.txt").lines
    [second] = service.why(ws.root, "two.txt").lines
    assert first.prompt == second.prompt == "two edits"


def test_control_characters_do_not_split_a_secret_past_the_rules(ws):
    service.init(ws.root, "prompt task")
    token = "ghp_A1b2C3d4E5f6G7h8" + "\x00" + "I9j0K1l2M3n4O5p6Q7r8"
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt=f"use {token} please")))
    assert "A1b2C3d4E5f6G7h8" not in _stored(ws.root)


def test_the_hooks_name_the_transcript_whose_usage_the_step_sums(ws):
    service.init(ws.root, "usage task")
    transcript = Path(claude("", ws.root)["transcript_path"])  # where the host keeps it
    transcript.write_text('{"type": "user", "message": {"content": "earlier"}}\n')
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt="add a flag")))
    with transcript.open("a") as f:
        f.write(json.dumps({"type": "assistant", "message": {
            "id": "m1", "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 12, "output_tokens": 34}}}) + "\n")
    (ws.root / "flag.py").write_text("FLAG = 1\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Write",
                                   tool_input={"file_path": "flag.py"})))
    [d] = drifts(ws.root)
    assert "transcript" not in d.note.tool  # the path is remembered, not kept in a note
    saved = service.save(ws.root, "flag")
    note = service.open_timeline(ws.root).record(saved.commit).note
    assert note.usage == {"input": 12, "output": 34}
    assert note.models == ["claude-sonnet-4-5"]
    assert note.sessions == ["sess-1"]
    assert str(transcript) not in note.dump()


def test_nothing_of_a_secret_in_a_transcript_is_kept(ws):
    service.init(ws.root, "transcript secrets")
    service.config_transcripts(ws.root, "on")
    transcript = Path(claude("", ws.root)["transcript_path"])
    transcript.write_text("")
    quiet(hook("prompt", claude("UserPromptSubmit", ws.root, prompt="go")))
    caught = [(text, secret) for text, secret in _corpus() if secret not in redact(text)[0]]
    with transcript.open("a") as f:
        for i, (text, _) in enumerate(caught):
            f.write(json.dumps({"type": "assistant", "message": {
                "id": f"m{i}", "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}}) + "\n")
    saved = service.save(ws.root, "with a transcript")
    tl = service.open_timeline(ws.root)
    commit = tl.store.get_ref(f"refs/checkpoints/{saved.task}/transcripts/{saved.step}")
    [entry] = tl.store.read_tree(tl.store.read_commit(commit).tree)
    kept = tl.store.read_blob(entry.id).decode()
    assert kept.count("\n") == len(caught)
    for _, secret in caught:
        assert json.dumps(secret)[1:-1] not in kept
        assert secret not in kept


def test_only_the_users_words_are_kept_as_a_prompt(ws):
    """Hosts hand gitckpt's own texts back as user messages: Gemini CLI's first prompt is
    the handoff in a `<hook_context>` block before the user's text, and a stop reminder that
    continues the turn comes back as the next prompt (Copilot CLI after its timestamp block,
    Gemini CLI bare). Only the user's words are kept; a message of gitckpt's alone is none."""
    service.init(ws.root, "words")
    service.save(ws.root, "first", conclusion="c")
    handoff = json.loads(hook("session-start", {
        "session_id": "g1", "cwd": str(ws.root), "hook_event_name": "SessionStart",
        "source": "startup"}, host="gemini").stdout)["hookSpecificOutput"]["additionalContext"]
    (ws.root / "w.txt").write_text("unsaved\n")
    reminder = json.loads(hook("stop", {
        "session_id": "cp", "cwd": str(ws.root), "hook_event_name": "Stop",
        "stop_hook_active": False}, host="copilot").stdout)["reason"]
    said = {
        "gemini": f"<hook_context>{handoff}</hook_context>\n\nMake the parser <strict>.",
        "copilot": f"<current_datetime>2026-12-07T10:00:00Z</current_datetime>\n\n{reminder}",
        "codex": f'<hook_prompt hook_run_id="stop:1">{reminder}</hook_prompt>',
    }
    for host, text in said.items():
        p = hook("prompt", {"session_id": host, "cwd": str(ws.root),
                            "hook_event_name": "BeforeAgent" if host == "gemini"
                            else "UserPromptSubmit", "prompt": text}, host=host)
        assert p.returncode == 0
    p = hook("prompt", {"session_id": "g1", "cwd": str(ws.root), "hook_event_name":
                        "BeforeAgent", "prompt": reminder}, host="gemini")
    assert "gitckpt's own handoff or reminder" in p.stderr
    tl = service.open_timeline(ws.root)
    kept = prompts.pending(tl.store, tl.resolve(None))
    # the user's own tags are theirs: only blocks that hold a text of gitckpt's go
    assert [(p["host"], p["text"]) for p in kept] == [("gemini", "Make the parser <strict>.")]


def test_the_users_words_are_found_in_one_pass_over_a_megabyte():
    """A host hands its prompt hook the prompt before any cap: a megabyte of openings that
    never close, or of blocks, is read once (a pattern that searched each opening for its
    close read the rest of the prompt again from each)."""
    from gitckpt.hooks.run import users_words

    assert users_words("<a>" * 300_000 + "fix it").endswith("fix it")
    assert users_words("<a>x</a>" * 120_000 + "fix it").endswith("fix it")
    assert users_words("<b>bold</b> and then the rest") == "<b>bold</b> and then the rest"
