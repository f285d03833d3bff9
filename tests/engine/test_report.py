"""The report of a task: what a pull request's body needs in Markdown (verification bound to
trees, decisions, open questions, files with a diffstat, prompts and tokens), and one HTML
page that fetches nothing, holds every step, stays small at 500 steps, cuts long diffs with
a note, and shows no content of a file the snapshots left out."""

from __future__ import annotations

import re

import pytest
from conftest import service

from gitckpt.engine import report as reporting
from gitckpt.engine import sessions
from gitckpt.engine.notes import PlanItem


def _task(ws, tmp_path) -> str:
    task = service.init(ws.root, "Faster export", goal="stream the CSV export",
                        plan=[PlanItem("Stream rows"),
                              PlanItem("Drop the cache")]).save.task
    (ws.root / "export.py").write_text("def export(rows):\n    return list(rows)\n")
    service.save(ws.root, "Stream the rows", conclusion="rows are written as they come",
                 decisions=["a generator, not a list"], plan=[PlanItem("Stream rows",
                                                                             "done")],
                 commands=[{"command": "pytest -q", "exit_code": 0}])
    (ws.root / "export.py").write_text("def export(rows):\n    yield from rows\n")
    (ws.root / ".env").write_text("API_TOKEN=ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    tl = service.open_timeline(ws.root)
    sessions.heard(tl.store, tl.resolve(None), "s1", str(transcript), "claude")
    transcript.write_text('{"type": "assistant", "message": {"id": "m", "model": "claude-x", '
                          '"usage": {"input_tokens": 5, "output_tokens": 7}}}\n')
    service.save(ws.root, "Yield from the rows", conclusion="no list at all",
                 open_questions=["keep the old list() path for Python 2?"])
    return task


def test_the_markdown_a_pull_request_needs(ws, tmp_path):
    task = _task(ws, tmp_path)
    text = service.report(ws.root).text
    assert text.startswith("## Faster export")
    assert "**Goal:** stream the CSV export" in text
    assert "- [x] Stream rows" in text
    assert "- [ ] Drop the cache" in text
    assert "1. **Stream the rows**: rows are written as they come" in text
    assert "2. **Yield from the rows**: no list at all" in text
    assert "`pytest -q` passed on step 1's tree; not run since step 1 (of 2)" in text
    assert "- a generator, not a list (step 1)" in text
    assert "- keep the old list() path for Python 2? (step 2)" in text
    assert re.search(r"export\.py\s+added \+2 -0", text), text
    assert ".env" not in text  # a left-out file is not among the files changed
    assert "ghp_" not in text
    assert "tokens: 5 input, 7 output" in text
    assert "models: claude-x" in text
    assert f"refs/checkpoints/{task}/head" in text
    (ws.root / "more.txt").write_text("x\n")
    service.save(ws.root, "checked", commands=[{"command": "pytest -q", "exit_code": 0}],
                 verified=["the export streams 1 GB in constant memory"])
    text = service.report(ws.root).text
    assert "`pytest -q` passed on the final tree" in text
    # what a step says it verified is there too (the Markdown report dropped every one)
    assert "- the export streams 1 GB in constant memory (step 3)" in text


def test_the_page_fetches_nothing_and_holds_every_step(ws, tmp_path):
    _task(ws, tmp_path)
    page = service.report(ws.root, format="html").text
    assert page.startswith("<!doctype html>")
    assert "default-src 'none'" in page  # nothing from elsewhere, even if a note says so
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    assert "<script" not in page
    for title in ("Stream the rows", "Yield from the rows"):
        assert title in page
    assert page.count("<details>") == 2
    assert '<span class="a">+' in page
    assert "ghp_" not in page
    assert ".env" not in page


@pytest.mark.slow  # thousands of files or steps: not the fast loop's
def test_five_hundred_steps_stay_small_and_long_diffs_are_cut(ws):
    service.init(ws.root, "a long one <b>bold</b>")
    tl = service.open_timeline(ws.root)
    tid = tl.resolve(None)
    from gitckpt.core.objects import Mode, TreeEntry
    from gitckpt.engine.notes import Note

    store = tl.store
    steps, head = [], tl.head(tid)
    base = store.read_tree(head.tree)
    for n in range(1, 501):  # each step changes one 400-line file (a diff of 800 lines)
        blob = store.write_blob("".join(f"line {i} of step {n}: {'x' * 24}\n"
                                        for i in range(400)).encode())
        tree = store.write_tree([*base, TreeEntry(b"big.txt", Mode.FILE, blob)])
        steps.append((tree, Note(kind="step", task=tid, step=n, title=f"step <{n}>",
                                 created_at="2026-12-01T10:00:00Z")))
    long = tl.create_task(Note(kind="init", task=tid, step=0, name="five hundred",
                               created_at="2026-12-01T09:00:00Z"), steps, activate=False)
    page = service.report(ws.root, task=str(long), format="html").text
    assert len(page.encode()) < 4 << 20, len(page)
    assert page.count('<li class="step"') == 500
    assert "step &lt;500&gt;" in page  # escaped, every one
    assert "<b>bold" not in service.report(ws.root, format="html").text
    assert "more bytes of this diff not shown" in page
    shown = page.count("<details>")
    assert 0 < shown < 500
    assert shown == reporting.DIFF_TOTAL // reporting.DIFF_BYTES + 1  # the newest steps'
    assert "files: 1 file, +400 -400" in page  # the oldest steps, past the diff budget


def test_a_task_without_steps_and_the_cli(ws, tmp_path):
    from conftest import run_cli

    service.init(ws.root, "just started")
    assert "**Verification:** no command was recorded as run." in service.report(ws.root).text
    assert "No step saved yet." in service.report(ws.root, format="html").text
    out = tmp_path / "r.html"
    p = run_cli("report", "--html", "-o", str(out), cwd=ws.root)
    assert p.code == 0, p.err
    assert out.read_text().startswith("<!doctype html>")
    md = run_cli("report", cwd=ws.root)
    assert md.out.startswith("## just started")
    bad = run_cli("report", "no-such-task", cwd=ws.root)
    assert bad.code != 0
    assert "Traceback" not in bad.err


def test_report_never_writes_into_git_or_the_store_and_dash_is_stdout(repo, guard):
    """`-o .git/config` replaced the user's git config (every later git and gitckpt command
    in the repository failed); `-o -` wrote a file named `-`."""
    from conftest import run_cli

    assert run_cli("-C", str(repo), "init", "t").code == 0
    guard.reset()
    config = (repo / ".git" / "config").read_bytes()
    for target in (".git/config", ".git/new.md", ".git"):
        r = run_cli("-C", str(repo), "report", "-o", target)
        assert r.code == 2, (target, r.out, r.err)
        assert "git's or gitckpt's own" in r.err
        assert "Traceback" not in r.err
    assert (repo / ".git" / "config").read_bytes() == config
    assert not (repo / ".git" / "new.md").exists()
    r = run_cli("-C", str(repo), "report", "-o", "-")
    assert r.code == 0, r.err
    assert "t" in r.out
    assert not (repo / "-").exists()
    guard.check()


def test_the_reports_git_log_line_runs_where_the_report_was_made(ws):
    """The report ends with the git command that reads the task; in a plain folder it said
    `git log refs/checkpoints/...`, which fails there ("not a git repository")."""
    import shlex
    import subprocess

    service.init(ws.root, "line")
    text = service.report(ws.root).text
    command = re.search(r"`(git [^`]*)`</sub>\s*$", text)
    assert command, text[-300:]
    r = subprocess.run(shlex.split(command[1]), cwd=ws.root, capture_output=True, text=True)
    assert r.returncode == 0, (command[1], r.stderr)
    assert "commit " in r.stdout
