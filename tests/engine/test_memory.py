"""Task memory: decisions, gotchas and questions that accumulate, commands bound to the tree
they ran on, file notes, ordered next actions, and the full resume."""

from __future__ import annotations

import json

import pytest
from conftest import doubling, run_cli, service
from hypothesis import given, settings
from hypothesis import strategies as st

from gitckpt.core.errors import InvalidArgument
from gitckpt.engine.handoff import LIMIT
from gitckpt.engine.notes import SCHEMA

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")


def start(ws) -> str:
    return service.init(ws.root, "memory").save.task


def test_twenty_steps_keep_every_decision_and_exactly_the_open_questions(ws):
    start(ws)
    decisions = {2: "store dates as UTC", 7: "parse with the stdlib only", 15: "no ORM"}
    opened = {3: ["q3: page size?", "q3: auth?"], 9: ["q9: rate limits?"], 12: ["q12: i18n?"]}
    answers = {8: ["q3: auth?"], 16: ["q12: i18n?"]}
    for i in range(1, 21):
        (ws.root / f"f{i}.txt").write_text(str(i))
        service.save(ws.root, f"step {i}", decisions=[decisions[i]] if i in decisions else [],
                     open_questions=opened.get(i, []), answered=answers.get(i, []))
    r = service.resume(ws.root)
    m = r.to_dict()
    assert m["decisions"] == list(decisions.values())
    assert m["open_questions"] == ["q3: page size?", "q9: rate limits?"]
    assert [(e["text"], e["step"]) for e in m["memory"]["answered"]] == [
        ("q3: auth?", 8), ("q12: i18n?", 16)]
    for d in decisions.values():
        assert d in r.text
    assert "q3: page size?" in r.text
    assert "q9: rate limits?" in r.text
    assert "q3: auth?" not in r.text
    assert "q12: i18n?" not in r.text
    assert r.text.index("no ORM") < r.text.index("store dates as UTC")  # newest first


def test_drop_retires_and_a_typo_is_refused_with_the_probable_entry(ws):
    start(ws)
    service.save(ws.root, "one", decisions=["cache in memory"], gotchas=["the fs is slow"],
                 open_questions=["which cache size?"])
    with pytest.raises(InvalidArgument, match='did you mean "cache in memory"'):
        service.save(ws.root, "two", drop=["cache in memry"])
    with pytest.raises(InvalidArgument, match="No open question"):
        service.save(ws.root, "two", answered=["which cache?"])
    assert service.log(ws.root).info.head.n == 1  # the refused saves wrote nothing
    service.save(ws.root, "two", drop=["cache in memory"], decisions=["cache on disk"])
    m = service.resume(ws.root).to_dict()
    assert m["decisions"] == ["cache on disk"]
    assert m["gotchas"] == ["the fs is slow"]
    assert m["open_questions"] == ["which cache size?"]


def test_a_passing_command_is_bound_to_the_exact_tree_it_ran_on(ws):
    start(ws)
    (ws.root / "a.py").write_text("x = 1\n")
    service.save(ws.root, "step 1")
    service.save(ws.root, "tests pass", commands=[{"command": "pytest -q", "exit_code": 0,
                                                  "duration_s": 2.5}])
    for i in range(3, 6):
        service.save(ws.root, f"step {i}", conclusion=f"notes {i}")  # no file changes
    r = service.resume(ws.root)
    assert "`pytest -q` passed on this exact tree (step 2)" in r.text
    assert r.to_dict()["checks"][0]["exact"] is True
    (ws.root / "a.py").write_text("x = 2\n")
    (ws.root / "b.py").write_text("new\n")
    r = service.resume(ws.root)
    assert "`pytest -q` passed at step 2; 2 file(s) changed since: a.py, b.py" in r.text
    check = r.to_dict()["checks"][0]
    assert check["exact"] is False
    assert check["changed_since"] == ["a.py", "b.py"]


def test_gitckpt_run_records_the_exit_code_and_returns_it(ws):
    start(ws)
    r = run_cli("-C", str(ws.root), "run", "--", "false")
    assert r.code == 1
    assert "`false` exited 1" in r.err
    r = run_cli("-C", str(ws.root), "run", "--", "sh", "-c", "echo from the command")
    assert r.code == 0
    assert "from the command" in r.out
    res = service.resume(ws.root)
    checks = {c["command"]: c for c in res.to_dict()["checks"]}
    assert checks["false"]["exit_code"] == 1
    assert checks["false"]["saved"] is False
    assert "`false` failed (exit 1) on this exact tree (a run after step 0)" in res.text
    done = service.save(ws.root, "with the runs")
    note = json.loads(ws.git("notes", "--ref=checkpoints", "show", done.commit)) \
        if ws.kind == "git" else None
    saved = service.log(ws.root, step=1).steps[0].note.commands
    assert [c["command"] for c in saved] == ["false", "sh -c 'echo from the command'"]
    assert all(c["tree"] == saved[0]["tree"] for c in saved)
    if note is not None:
        assert note["schema"] == SCHEMA == 2
        assert note["commands"][0]["exit_code"] == 1
    assert service.resume(ws.root).to_dict()["memory"]["commands"][0]["saved"] is True
    missing = run_cli("-C", str(ws.root), "run", "--", "no-such-command-xyz")
    assert missing.code == 127
    assert "gitckpt run: no-such-command-xyz:" in missing.err


def test_file_notes_are_workspace_paths_and_shown_with_their_notes(ws):
    start(ws)
    (ws.root / "src").mkdir(exist_ok=True)
    (ws.root / "src" / "auth.py").write_text("def check(): ...\n")
    service.save(ws.root, "auth", files=[{"path": "./src/auth.py",
                                          "note": "the token check lives here"}])
    with pytest.raises(InvalidArgument, match="not inside the workspace"):
        service.save(ws.root, "bad", files=[{"path": "../outside.txt", "note": "x"}])
    with pytest.raises(InvalidArgument, match='has no field "why"'):
        service.save(ws.root, "bad", files=[{"path": "a", "why": "x"}])
    text = service.resume(ws.root).text
    assert "src/auth.py: the token check lives here" in text


def test_next_may_be_a_list_and_the_cli_takes_the_same(ws):
    start(ws)
    service.save(ws.root, "one", next=["write the parser", "test it", "document it"])
    text = service.resume(ws.root).text
    assert "Next: write the parser" in text
    assert "Then: test it; document it" in text
    r = run_cli("-C", str(ws.root), "--json", "save", "two", "--next", "a", "--next", "b",
                "--ran", "make", "--exit", "2", "--gotcha", "g", "--file", "x.txt=why")
    assert r.code == 0, r.err
    note = service.log(ws.root, step=2).steps[0].note
    assert (note.next, note.then, note.gotchas) == ("a", ["b"], ["g"])
    assert note.commands[0]["exit_code"] == 2
    assert note.files == [{"path": "x.txt",
                                                                 "note": "why"}]
    assert run_cli("-C", str(ws.root), "save", "t", "--ran", "make").code == 2


def test_commands_and_notes_are_redacted(ws):
    start(ws)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    done = service.save(ws.root, "deploy", commands=[
        {"command": f"curl -H 'Authorization: token {secret}' https://api.github.com",
         "exit_code": 0, "note": f"used {secret}"}],
        files=[{"path": "deploy.sh", "note": f"token {secret}"}])
    assert done.redacted >= 3
    note = service.log(ws.root, step=1).steps[0].note
    assert secret not in json.dumps(note.commands) + json.dumps(note.files)
    assert note.files[0]["path"] == "deploy.sh"


def test_the_full_resume_has_everything_and_the_brief_one_its_budget(ws):
    start(ws)
    long = "a detail worth keeping " * 20
    for i in range(1, 31):
        (ws.root / f"f{i}.txt").write_text(str(i))
        service.save(ws.root, f"step {i} " + "title " * 10, conclusion=f"conclusion {i} " + long,
                     next=[long, long], decisions=[f"decision {i} {long}"],
                     gotchas=[f"gotcha {i}"], open_questions=[f"question {i}?"],
                     commands=[{"command": f"pytest -k t{i}", "exit_code": i % 2}],
                     files=[{"path": f"f{i}.txt", "note": long}])
    brief = service.resume(ws.root)
    assert len(brief.text) <= LIMIT, len(brief.text)
    assert "decision 30" in brief.text
    assert "question 30?" in brief.text
    assert "more: `gitckpt resume --full`" in brief.text
    full = service.resume(ws.root, format="full").text
    for i in range(1, 31):
        assert f"conclusion {i} " in full
        assert f"decision {i} " in full
        assert f"question {i}?" in full
        assert f"`pytest -k t{i}` exit {i % 2}" in full
    mcp = service.resume(ws.root, voice="mcp").text
    assert 'ckpt_resume(format="full")' in mcp
    assert "gitckpt " not in mcp


def test_notes_of_schema_one_still_read_and_fold(ws):
    """A task saved by the previous version (schema 1: open questions repeated at every step
    to stay open) reads as before: one question, its decisions kept."""
    from gitckpt.store.discover import open_store

    start(ws)
    one = service.save(ws.root, "one", open_questions=["q?"], decisions=["d1"])
    two = service.save(ws.root, "two", open_questions=["q?"])
    store = open_store(ws.root)
    with store.lock():
        for commit in (one.commit, two.commit):
            data = json.loads(store.read_note(commit))
            assert data["schema"] == 2
            data["schema"] = 1
            store.write_note(commit, json.dumps(data))
    m = service.resume(ws.root).to_dict()
    assert m["open_questions"] == ["q?"]
    assert m["decisions"] == ["d1"]
    assert [e["step"] for e in m["memory"]["open_questions"]] == [1]


def test_memory_over_mcp_commands_files_drop_and_the_full_resume(ws):
    import anyio
    from mcp import Client

    from gitckpt.mcp.server import build_server

    async def body(c):
        await c.call_tool("ckpt_init", {"name": "mcp memory"})
        r = await c.call_tool("ckpt_save", {
            "title": "tests", "next": ["fix the cookie", "write docs"],
            "commands": [{"command": "pytest -q", "exit_code": 0, "duration_s": 1.5}],
            "files": [{"path": "src/app.py", "note": "entry point"}],
            "decisions": ["cookies, not tokens"], "gotchas": ["dev has no https"],
            "open_questions": ["SameSite?"]})
        assert not r.is_error, r.content
        bad = await c.call_tool("ckpt_save", {"title": "x", "drop": ["cookies not tokens"]})
        r2 = await c.call_tool("ckpt_save", {"title": "answered", "answered": ["SameSite?"],
                                             "drop": ["dev has no https"]})
        brief = await c.call_tool("ckpt_resume", {})
        full = await c.call_tool("ckpt_resume", {"format": "full"})
        return bad, r2, brief, full
    async def main():
        async with Client(build_server(str(ws.root)), mode="legacy") as client:
            return await body(client)
    bad, r2, brief, full = anyio.run(main)
    assert bad.is_error
    assert 'did you mean "cookies, not tokens"' in bad.content[0].text
    assert not r2.is_error
    b = brief.structured_content
    assert b["decisions"] == ["cookies, not tokens"]
    assert b["gotchas"] == []
    assert b["open_questions"] == []
    assert b["then"] == []
    assert b["checks"][0]["command"] == "pytest -q"
    assert b["checks"][0]["exact"] is True
    text = full.content[0].text
    assert "Answered:" in text
    assert "SameSite? (step 2)" in text
    assert "`pytest -q` exit 0 at step 1" in text
    assert "src/app.py: entry point" in text


def test_the_tightest_handoff_lists_no_older_step_titles(ws):
    """The tightest levels keep no older titles: `older[-0:]` once listed all of them, so a
    long task's handoff grew past its budget exactly when it had to shrink most."""
    from gitckpt.engine.handoff import VOICES, _steps

    start(ws)
    for i in range(1, 8):
        service.save(ws.root, f"step {i}")
    steps = service.resume(ws.root).steps
    lines = _steps(steps, 1, 0, False, 100, VOICES["cli"])
    assert [line for line in lines if line.startswith("  ") and ". step" in line] == \
        ["  7. step 7 (" + steps[-1].note.created_at + ")"]
    assert lines[-1] == "  ... 6 older steps: `gitckpt log --before 7`"


def test_answering_reads_the_steps_since_the_kept_memory_only(ws, monkeypatch):
    """An answered or dropped entry is checked against the open items kept with the step they
    are of: the next such save folds in only the steps saved since (and gets the same lists
    `recall` gives over every step); a damaged memory, or one of another line, is made again."""
    from gitckpt.engine import open_items
    from gitckpt.engine.memory import recall

    service.init(ws.root, "answers")
    service.save(ws.root, "one", open_questions=["q1", "q2"], decisions=["d1"])
    service.save(ws.root, "two", answered=["q1"])
    for n in range(3, 8):
        (ws.root / f"f{n}").write_text(str(n))
        service.save(ws.root, f"step {n}", open_questions=[f"q{n}"])
    tl = service.open_timeline(ws.root)
    tid = tl.resolve(None)
    read: list[int] = []
    real = type(tl).steps

    def counted(self, task, since=0):
        out = real(self, task, since)
        read.append(len(out))
        return out

    monkeypatch.setattr(type(tl), "steps", counted)
    service.save(ws.root, "eight", answered=["q3"], drop=["d1"])
    assert read == [7]  # kept at step 1 (the save that answered q1): steps 1 to 7
    read.clear()
    service.save(ws.root, "nine", answered=["q4"])
    assert read == [2]  # kept at step 7: step 7 and step 8, not the eight before
    monkeypatch.setattr(type(tl), "steps", real)
    m = recall(tl.steps(tid))
    kept = open_items.current(tl, tid, tl.head(tid))
    assert [e.text for e in kept.questions] == [e.text for e in m.questions] == \
        ["q2", "q5", "q6", "q7"]
    assert kept.decisions == m.decisions == []
    tl.store.state.write(f"open-items-{tid}.json", b"{damaged")
    with pytest.raises(InvalidArgument, match="q1"):
        service.save(ws.root, "ten", answered=["q1"])  # answered already: refused still
    assert [e.text for e in open_items.current(tl, tid, tl.head(tid)).questions] == \
        ["q2", "q5", "q6", "q7"]


# -- the fold: what the old one made, in linear work -------------------------------------------

def _fold_before(steps):
    """The fold as it was written first (each step rebuilt what came before it: quadratic),
    kept as the reference the linear one must agree with."""
    from gitckpt.engine.memory import CommandRun, Entry, FileNote, Memory

    m = Memory()

    def add(group, texts, step):
        have = {e.text for e in group}
        for text in texts:
            if text not in have:
                group.append(Entry(text, step))
                have.add(text)

    for s in steps:
        n = s.note
        add(m.decisions, n.decisions, s.n)
        add(m.gotchas, n.gotchas, s.n)
        for text in n.answered:
            for q in [q for q in m.questions if q.text == text]:
                m.questions.remove(q)
                m.answered.append(Entry(text, s.n))
        add(m.questions, n.open_questions, s.n)
        for text in n.dropped:
            for group in (m.decisions, m.gotchas, m.questions):
                group[:] = [e for e in group if e.text != text]
        for c in n.commands:
            m.commands.append(CommandRun(c["command"], c["exit_code"], c["tree"], s.n,
                                         c.get("note", ""), c.get("duration_s")))
        files = {f.path: f for f in m.files}
        for f in n.files:
            files.pop(f["path"], None)
            files[f["path"]] = FileNote(f["path"], f.get("note", ""), s.n)
        m.files = list(files.values())
    return m


def _steps(notes: list[dict]) -> list:
    from gitckpt.core.ids import ObjectId
    from gitckpt.engine.notes import Note
    from gitckpt.engine.records import StepRecord

    oid = ObjectId("0" * 40)
    return [StepRecord(oid, oid, Note(kind="step", task="t", step=i + 1,
                                      created_at="2026-01-01T00:00:00Z", **fields))
            for i, fields in enumerate(notes)]


_WORDS = st.sampled_from(["a", "b", "c", "d", "e"])
_NOTE = st.fixed_dictionaries({
    "decisions": st.lists(_WORDS, max_size=3), "gotchas": st.lists(_WORDS, max_size=2),
    "open_questions": st.lists(_WORDS, max_size=3), "answered": st.lists(_WORDS, max_size=2),
    "dropped": st.lists(_WORDS, max_size=2),
    "files": st.lists(_WORDS.map(lambda w: {"path": w, "note": "n"}), max_size=2),
    "commands": st.lists(_WORDS.map(lambda w: {"command": w, "exit_code": 0, "tree": ""}),
                         max_size=1)})


@given(st.lists(_NOTE, max_size=12))
@settings(max_examples=300, deadline=None)
def test_the_fold_is_the_one_it_replaced(notes):
    from gitckpt.engine.memory import recall

    steps = _steps(notes)
    assert recall(steps).to_dict() == _fold_before(steps).to_dict()


def test_the_fold_is_linear_in_the_steps():
    """A task whose every step adds decisions, gotchas, questions and files: folding twice the
    steps costs about twice the CPU (the fold it replaced rebuilt every group at every step:
    27 s at 30,000 steps)."""
    from gitckpt.engine.memory import recall

    def notes(n: int) -> list:
        return _steps([{"decisions": [f"d{i}"], "gotchas": [f"g{i}"],
                        "open_questions": [f"q{i}"], "answered": [f"q{i - 1}"],
                        "files": [{"path": f"f{i}", "note": ""}]} for i in range(n)])

    assert doubling(recall, notes, n=4000) < 3
