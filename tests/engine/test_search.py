"""Search across every task: recall on a generated corpus whose expected hits are known, the
index as a cache (caught up, rebuilt when damaged, of another version, or after compress; a
kill during its update leaves it usable), filters, query words, and the CLI face."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from conftest import run_cli, service
from hypothesis import given
from hypothesis import strategies as st

from gitckpt.core.errors import InvalidArgument
from gitckpt.engine import search as searching
from gitckpt.engine.notes import Note

WORDS = ["retry", "timeout", "cache", "parser", "config", "upload", "schema", "token",
         "index", "worker", "queue", "socket", "render", "export", "import", "locale"]
FIELDS = ("decisions", "gotchas", "open_questions", "title", "conclusion", "commands")
KIND = {"decisions": "decision", "gotchas": "gotcha", "open_questions": "question",
        "title": "title", "conclusion": "conclusion", "commands": "command"}


def _corpus(tl, tasks: int, steps: int, seed: int = 7) -> dict[str, set[tuple[str, int, str]]]:
    """`tasks` tasks of `steps` steps, made as a migration makes them, with ordinary words
    everywhere and one marker word planted per step in a known field: marker -> the (task,
    step, kind) that must be found for it."""
    rng = random.Random(seed)
    tree = tl.store.write_tree([])
    expected: dict[str, set[tuple[str, int, str]]] = {}
    for t in range(tasks):
        plan = []
        for s in range(1, steps + 1):
            marker = f"zq{t}x{s}"
            where = rng.choice(FIELDS)
            prose = " ".join(rng.choice(WORDS) for _ in range(6))
            fields: dict = {"title": f"step {s} {prose[:20]}", "conclusion": prose}
            if where == "commands":
                fields["commands"] = [{"command": f"pytest -k {marker}", "exit_code": 1,
                                       "tree": tree}]
            elif where in ("title", "conclusion"):
                fields[where] = f"{fields[where]} {marker}"
            else:
                fields[where] = [f"{prose} {marker}"]
            plan.append((tree, Note(kind="step", task="x", step=s,
                                    created_at=f"2026-11-{1 + s % 28:02d}T10:00:00Z", **fields)))
            expected.setdefault(marker, set()).add((s, KIND[where]))
        task = tl.create_task(Note(kind="init", task="x", step=0, name=f"corpus {t}",
                                   goal=f"goal {rng.choice(WORDS)}",
                                   created_at="2026-11-01T09:00:00Z"), plan, activate=False)
        for s in range(1, steps + 1):
            expected[f"zq{t}x{s}"] = {(str(task), st, k) for st, k in expected[f"zq{t}x{s}"]}
    return expected


@pytest.mark.parametrize("tasks", [20, pytest.param(200, marks=pytest.mark.slow)])
def test_recall_on_a_generated_corpus(ws, tasks):
    service.init(ws.root, "searching")
    tl = service.open_timeline(ws.root)
    expected = _corpus(tl, tasks, 3)
    first = service.search(ws.root, "zq0x1")
    assert first.rebuilt
    assert first.indexed == tasks * 4 + 1
    found = 0
    for marker, hits in expected.items():
        got = service.search(ws.root, marker)
        assert {(h.task, h.step, h.kind) for h in got.hits} == hits, marker
        found += len(got.hits)
        assert not got.rebuilt
    assert found == len(expected)  # every planted hit, and nothing else
    common = service.search(ws.root, "retry", limit=1000)
    assert all("retry" in h.matched[0].lower() for h in common.hits)
    assert len(common.hits) > tasks // 2


def test_the_index_catches_up_and_a_save_adds_its_step(ws):
    service.init(ws.root, "incremental", goal="tidy the exporter")
    assert service.search(ws.root, "exporter").hits[0].kind == "goal"
    (ws.root / "a.txt").write_text("a\n")
    service.save(ws.root, "First export step", decisions=["use streaming writes"],
                 commands=[{"command": "pytest tests/test_export.py", "exit_code": 0}])
    got = service.search(ws.root, "streaming")
    assert (got.added, got.rebuilt) == (0, False)  # the save put it there under its lock
    assert [(h.step, h.kind) for h in got.hits] == [(1, "decision")]
    cmd = service.search(ws.root, "test_export", kind=["command"])
    assert cmd.hits[0].text == "pytest tests/test_export.py (exit 0)"
    (ws.root / "b.txt").write_text("b\n")
    service.capture(ws.root, trigger="tool", tool={"name": "Bash", "command": "make frobnicate"})
    caught = service.search(ws.root, "frobnicate")
    assert caught.added == 1
    assert caught.hits[0].label == "drift after step 1"
    service.compress(ws.root, keep="0s", min_steps=0)
    gone = service.search(ws.root, "frobnicate")
    assert gone.rebuilt is False
    assert gone.hits == []  # the dropped drift's words went with it
    assert service.search(ws.root, "streaming").hits


def test_a_damaged_or_foreign_index_is_rebuilt_never_trusted(ws):
    service.init(ws.root, "damaged", goal="keep the ledger")
    store = service.open_timeline(ws.root).store
    service.search(ws.root, "ledger")
    db = searching.path(store)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(str(db) + suffix):
            os.unlink(str(db) + suffix)
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    found = service.doctor(ws.root)
    assert [f.check for f in found.findings] == ["search"]
    got = service.search(ws.root, "ledger")
    assert got.rebuilt
    assert [h.kind for h in got.hits] == ["goal"]
    import sqlite3

    con = sqlite3.connect(str(db))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'version'")
    con.commit()
    con.close()
    assert "version" in service.doctor(ws.root).findings[0].problem
    assert service.doctor(ws.root, fix=True).healthy
    assert not db.exists()
    assert service.search(ws.root, "ledger").rebuilt
    assert service.doctor(ws.root).healthy


@pytest.mark.slow
def test_a_kill_during_an_update_leaves_a_usable_index(ws):
    service.init(ws.root, "killed")
    tl = service.open_timeline(ws.root)
    expected = _corpus(tl, 200, 3)
    code = ("from gitckpt.core.operations import SearchRequest; "
            "from gitckpt.service.dispatch import call; "
            f"call({str(ws.root)!r}, SearchRequest('zq1x1'))")
    for delay in (0.15, 0.4, 0.8):
        searching.remove(tl.store)
        p = subprocess.Popen([sys.executable, "-c", code], env={**os.environ})
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        for marker in ("zq3x2", "zq150x3", "zq199x1"):
            got = service.search(ws.root, marker)
            assert {(h.task, h.step, h.kind) for h in got.hits} == expected[marker]
    assert service.doctor(ws.root).healthy


def test_filters_and_query_words(ws):
    task = service.init(ws.root, "filters").save.task
    (ws.root / "f.txt").write_text("f\n")
    service.save(ws.root, "parseConfig reads the locale", gotchas=["parse_config drops tabs"],
                 open_questions=["should parse_config accept YAML?"])
    other = service.init(ws.root, "other task").save.task
    (ws.root / "g.txt").write_text("g\n")
    service.save(ws.root, "the locale again", decisions=["locale from the env"])
    assert {h.task for h in service.search(ws.root, "locale").hits} == {task, other}
    assert {h.task for h in service.search(ws.root, "locale", task=task).hits} == {task}
    assert [h.kind for h in service.search(ws.root, "locale", kind=["decision"]).hits] == \
        ["decision"]
    assert service.search(ws.root, "locale", since="2999-01-01").hits == []
    assert len(service.search(ws.root, "locale", since="1d").hits) == 3
    # words: parse_config is two words; parseConfig one, unless split
    assert {h.kind for h in service.search(ws.root, "parse_config").hits} == \
        {"gotcha", "question"}
    assert service.search(ws.root, "config").hits[0].kind in ("gotcha", "question")
    assert "title" not in {h.kind for h in service.search(ws.root, "config").hits}
    assert "title" in {h.kind for h in service.search(ws.root, "config", split=True).hits}
    assert service.search(ws.root, "parseconfig").hits[0].kind == "title"
    assert service.search(ws.root, "loca*").hits
    assert service.search(ws.root, '"the locale"').hits
    for odd in ('locale"', "locale:", "NEAR(locale)", "locale OR", "-locale", "locale AND ("):
        service.search(ws.root, odd)  # FTS5's syntax is not the user's: never an error
    with pytest.raises(InvalidArgument, match="no words"):
        service.search(ws.root, '" :*')
    with pytest.raises(InvalidArgument, match="kind"):
        service.search(ws.root, "locale", kind=["nonsense"])
    with pytest.raises(InvalidArgument, match="neither"):
        service.search(ws.root, "locale", since="yesterday-ish")
    few = service.search(ws.root, "locale", limit=1)
    assert len(few.hits) == 1
    assert few.more


def test_the_cli_face(ws):
    service.init(ws.root, "cli search", goal="find the flaky socket test")
    p = run_cli("search", "flaky", "socket", cwd=ws.root)
    assert p.code == 0, p.err
    assert "goal" in p.out
    assert "flaky" in p.out
    data = json.loads(run_cli("--json", "search", "socket", cwd=ws.root).out)
    assert data["hits"][0]["matched"] == ["socket"]
    assert "\x02" not in json.dumps(data)
    none = run_cli("search", "unheardof", cwd=ws.root)
    assert none.code == 0
    assert "No checkpoint" in none.out
    bad = run_cli("search", "x", "--kind", "nope", cwd=ws.root)
    assert bad.code == 2
    assert "Traceback" not in bad.err


def test_a_folder_without_a_store_has_no_hits_and_gets_no_index(tmp_path, hermetic):
    from conftest import make_plain, make_repo

    for root in (make_plain(hermetic / "bare-plain"), make_repo(tmp_path / "bare-repo")):
        got = service.search(root, "anything")
        assert (got.hits, got.indexed) == ([], 0)
        assert not (root / ".gitckpt").exists()
        assert not (root / ".git" / "gitckpt" / searching.FILE).exists()


@given(st.text(alphabet="aZ9_ é-", max_size=40))
def test_camel_case_parts_are_as_before_in_linear_time(text):
    """The parts of camel-case words are what the earlier pattern found (which scanned a long
    lower-case run again from each letter of it: quadratic)."""
    import re

    from gitckpt.engine import search

    before = re.compile(r"[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*")
    part = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
    assert search.parts(text) == " ".join(" ".join(part.findall(w))
                                          for w in before.findall(text))


def test_camel_case_parts_of_a_megabyte_of_hostile_text():
    """A fetched note may hold a megabyte of anything: the inputs that made the earlier
    pattern backtrack (one lower-case run, letters and digits, capitals then a lower case)
    are read once (this test took minutes with it)."""
    from gitckpt.engine import search

    for text in ("a" * 1_000_000, "a1" * 500_000, "A" * 999_999 + "b", "aB" * 500_000):
        search.parts(text)
    assert search.parts("x parseConfig, HTTPServer2 y") == "parse Config HTTP Server 2"


def test_a_task_id_no_task_has_is_refused_not_found_empty(ws):
    """`search --task UNKNOWN` said "nothing found", where why, blame and report refuse the
    id: a typo looked like an answer."""
    from gitckpt.core.errors import TaskNotFound

    service.init(ws.root, "real")
    service.save(ws.root, "parse the config")
    with pytest.raises(TaskNotFound):
        service.search(ws.root, "config", task="no-such-task")
    r = run_cli("-C", str(ws.root), "search", "config", "--task", "no-such-task")
    assert r.code == 1, r.out
    assert "no-such-task" in r.err
