"""`why` and `blame`: each line's origin over a task's checkpoints, checked against `git blame`
over a scratch repository built from the same versions (random edit sequences, both stores),
and the stories around it: renames, restores, tool calls, verification, the user's commits."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from conftest import git, make_plain, make_repo, run_cli, service
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gitckpt.core.errors import GitckptError, InvalidArgument
from gitckpt.engine.why import _brought_back, chronological, parse_target

# repeats: ambiguous pairings on purpose (git's indent heuristic decides some of them)
WORDS = ["alpha", "beta", "gamma", "delta", "}", "", "if y:", "    pass"]
EDIT = st.tuples(st.sampled_from(["insert", "delete", "change"]), st.integers(0, 30),
                 st.sampled_from(WORDS))
OPS = st.lists(st.tuples(st.lists(EDIT, min_size=1, max_size=4),
                         st.sampled_from(["capture", "save"])), min_size=1, max_size=8)
# then restores and reverts of a step (its number, taken modulo the steps there are), with
# the edits and the checkpoint of each op around them
BACK = st.lists(st.tuples(st.sampled_from(["restore", "revert"]), st.integers(0, 9),
                          st.lists(EDIT, max_size=2)), max_size=3)
_N = itertools.count()


def _apply(lines: list[str], edits) -> list[str]:
    out = list(lines)
    for what, at, word in edits:
        at = at % (len(out) + 1)
        if what == "insert":
            out.insert(at, word)
        elif out and what == "delete":
            del out[at % len(out)]
        elif out:
            out[at % len(out)] = word
    return out


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{x}\n" for x in lines))


def _oracle(tmp: Path, versions: list[bytes | None], back: dict[int, int] | None = None
            ) -> list[int]:
    """`git blame` of the last version over a line of commits, one per version: for each
    line, the index of the version that wrote it. A version that brings another's lines back
    (`back`: a restore, a revert) is a merge whose second parent is that version: git passes
    it the lines the first parent does not explain."""
    scratch = tmp / f"scratch{next(_N)}"
    git(tmp, "init", "-q", str(scratch))
    commits: list[str] = []
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for i, data in enumerate(versions):
        f = scratch / "f.txt"
        if data is None:
            f.unlink(missing_ok=True)
        else:
            f.write_bytes(data)
        git(scratch, "add", "-A")
        tree = git(scratch, "write-tree").strip()
        parents = [*commits[-1:], *([commits[back[i]]] if back and i in back else [])]
        commit = git(scratch, "commit-tree", tree, *(a for p in parents for a in ("-p", p)),
                     "-m", f"v{i}", env={**os.environ, **env}).strip()
        git(scratch, "update-ref", "HEAD", commit)
        commits.append(commit)
    out = git(scratch, "blame", "--porcelain", "f.txt")  # git's defaults, indent heuristic on
    index = {c: i for i, c in enumerate(commits)}
    return [index[ln.split()[0]] for ln in out.splitlines()
            if len(ln) > 40 and ln[:40] in index and ln[40] == " "]


@pytest.mark.parametrize("kind", ["git", "dir"])
@settings(max_examples=int(os.environ.get("GITCKPT_WHY_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(ops=OPS, back=BACK)
@example(ops=[([("insert", 0, "}"), ("insert", 0, "}")], "capture"),
              ([("insert", 1, "alpha"), ("insert", 1, "}")], "save")], back=[])
@example(ops=[([("insert", 0, "alpha")], "save"), ([("insert", 0, "alpha")], "capture"),
              ([("insert", 0, "alpha"), ("delete", 0, "alpha"), ("delete", 0, "alpha")],
               "save")], back=[])
@example(ops=[([("insert", 0, "alpha")], "save"), ([("change", 0, "beta")], "save")],
         back=[("restore", 1, []), ("revert", 2, [("insert", 0, "gamma")])])
def test_each_line_is_where_git_blame_puts_it(kind, ops, back, tmp_path, hermetic):
    base = tmp_path / f"ex{next(_N)}"
    base.mkdir()
    root = make_repo(base / "repo") if kind == "git" else make_plain(hermetic / f"p{next(_N)}")
    lines = ["alpha", "beta", "gamma"]
    _write(root / "f.txt", lines)
    service.init(root, "why")
    for edits, how in ops:
        lines = _apply(lines, edits)
        _write(root / "f.txt", lines)
        if how == "save":
            service.save(root, "s", conclusion="c")
        else:
            service.capture(root)
    for how, k, edits in back:
        steps = service.open_timeline(root).head(service.open_timeline(root).resolve(None)).n
        try:
            if how == "restore":
                service.restore(root, str(k % (steps + 1)), apply=True, confirm=True)
            else:
                service.revert(root, str(1 + k % steps) if steps else "0", apply=True,
                               conflicts="theirs", confirm=True)
        except GitckptError:
            continue  # nothing to revert, a conflict refused: the next op
        lines = (root / "f.txt").read_text().splitlines() if (root / "f.txt").exists() else []
        if edits:
            lines = _apply(lines, edits)
            _write(root / "f.txt", lines)
            service.save(root, "after", conclusion="c")
    tl = service.open_timeline(root)
    records = chronological(tl, tl.resolve(None))
    if not (root / "f.txt").exists():
        return  # a restore of the file's absence: no lines to ask about
    lines = (root / "f.txt").read_text().splitlines()
    got = service.why(root, "f.txt")
    assert [o.text for o in got.lines] == lines
    index = {r.commit: i for i, r in enumerate(records)}
    versions = [_file(tl, r.tree) for r in records]
    brought = {i: t for i, r in enumerate(records)
               if (t := _brought_back(r, index, records)) is not None}
    disk = (root / "f.txt").read_bytes()
    if versions[-1] != disk:  # (a save that found the files as its step left them is none)
        index[None] = len(versions)
        versions.append(disk)
    assert [index[o.commit] for o in got.lines] == _oracle(base, versions, brought)
    # when each line was there (what a check on a version vouches for): as a blame of the
    # versions up to that one finds it
    from gitckpt.engine.why import TreeReader, _blame, _versions

    vs = _versions(TreeReader(tl.store), records, "f.txt", disk, True)
    final, lives = _blame(vs, records)
    for w in range(len(vs)):
        held = set(_blame(vs[:w + 1], records)[0])
        assert [lives.holds(o, w) for o in final] == [o in held for o in final], w


def _file(tl, tree) -> bytes | None:
    from gitckpt.engine.why import TreeReader

    return TreeReader(tl.store).blob(tree, "f.txt")


def test_a_restored_line_keeps_its_first_origin_and_renames_are_followed(ws):
    _write(ws.root / "f.txt", ["one", "two"])
    service.init(ws.root, "why")
    _write(ws.root / "f.txt", ["one", "two", "three"])
    s1 = service.save(ws.root, "add three", conclusion="three is there")
    _write(ws.root / "f.txt", ["one"])
    service.save(ws.root, "drop the rest")
    service.restore(ws.root, "1", apply=True, confirm=True)
    (ws.root / "f.txt").rename(ws.root / "g.txt")
    with (ws.root / "g.txt").open("a") as f:
        f.write("four\n")
    service.save(ws.root, "rename", conclusion="renamed")
    got = {o.text: o for o in service.why(ws.root, "g.txt").lines}
    assert got["three"].commit == s1.commit  # not the restore: where it came from
    assert got["three"].saved_in == 1
    assert got["three"].conclusion == "three is there"
    assert got["three"].path == "f.txt"  # its name there
    assert got["one"].kind == "before_task"
    assert got["four"].path == "g.txt"
    assert got["four"].saved_in == 3


def test_a_tool_call_and_the_command_that_verified_it(repo):
    _write(repo / "f.txt", ["a"])
    service.init(repo, "why")
    _write(repo / "f.txt", ["a", "b"])
    service.capture(repo, trigger="tool", tool={"name": "Bash", "host": "claude",
                                                 "command": "echo b >> f.txt"})
    service.save(repo, "b", conclusion="b added",
                 commands=[{"command": "pytest -q", "exit_code": 0}])
    [b] = service.why(repo, "f.txt:2").lines
    assert b.trigger == "tool"
    assert b.tool["command"] == "echo b >> f.txt"
    assert b.verified == "`pytest -q` passed on a tree with this line (step 1)"
    [a] = service.why(repo, "f.txt:1").lines
    assert a.kind == "before_task"
    # the fixture's repository committed no f.txt: the line is in no commit of the user's
    assert a.user_commit is None
    _write(repo / "f.txt", ["a", "b", "c"])  # on disk, not checkpointed
    [c] = service.why(repo, "f.txt:3").lines
    assert (c.kind, c.commit) == ("unsaved", None)


def test_of_two_runs_on_one_tree_the_newest_is_named(repo):
    """A check failed, was fixed outside the files (an environment), and passed on the same
    tree: `why` named the first run ("failed") where the newest passed."""
    _write(repo / "f.txt", ["a"])
    service.init(repo, "why")
    _write(repo / "f.txt", ["a", "b"])
    service.save(repo, "b", commands=[{"command": "pytest -q", "exit_code": 1},
                                      {"command": "pytest -q", "exit_code": 0}])
    [b] = service.why(repo, "f.txt:2").lines
    assert b.verified == "`pytest -q` passed on a tree with this line (step 1)"


def test_lines_before_the_task_name_the_users_commit(repo):
    head = git(repo, "rev-parse", "HEAD").strip()
    service.init(repo, "why")
    tracked = git(repo, "ls-files").split()[0]
    got = service.why(repo, tracked).lines
    assert got
    committed = git(repo, "show", f"HEAD:{tracked}").splitlines()
    blamed = git(repo, "blame", "--porcelain", "HEAD", "--", tracked)
    first = [ln[:40] for ln in blamed.splitlines() if len(ln) > 40 and ln[40] == " "
             and all(c in "0123456789abcdef" for c in ln[:40])]
    for o in got:
        if o.line <= len(committed) and o.text == committed[o.line - 1]:
            assert o.user_commit == first[o.line - 1]
    assert head


@pytest.mark.parametrize("bad", ["f.txt:0", "f.txt:3-2", "nope.txt", "f.txt:99", "../x:1"])
def test_bad_targets_get_a_clear_error(ws, bad):
    _write(ws.root / "f.txt", ["a", "b"])
    service.init(ws.root, "why")
    with pytest.raises(InvalidArgument) as e:
        service.why(ws.root, bad)
    assert e.value.hint


def test_parse_target_keeps_colons_in_a_path():
    assert parse_target("a:b.txt") == ("a:b.txt", None, None)
    assert parse_target("a:b.txt:3") == ("a:b.txt", 3, 3)
    assert parse_target("x.py:3-9") == ("x.py", 3, 9)


def test_the_cli(ws):
    _write(ws.root / "f.txt", ["a"])
    service.init(ws.root, "why")
    _write(ws.root / "f.txt", ["a", "b"])
    service.save(ws.root, "b", conclusion="b added")
    out = run_cli("why", "f.txt:2", cwd=ws.root)
    assert out.code == 0, out.err
    assert "f.txt:2" in out.out
    assert "saved in step 1: b added" in out.out
    blame = run_cli("blame", "f.txt", cwd=ws.root)
    assert blame.out.splitlines()[1].endswith("2) b")
    js = json.loads(run_cli("--json", "why", "f.txt", cwd=ws.root).out)
    assert [line["text"] for line in js["lines"]] == ["a", "b"]
    bad = run_cli("why", "f.txt:7", cwd=ws.root)
    assert bad.code == 1
    assert "hint:" in bad.err
    assert "Traceback" not in bad.err


# -- what an adversarial review found -------------------------------------------------------

def _lines_of(root, path="f.txt"):
    return {o.text: o for o in service.why(root, path).lines}


def test_reverting_a_step_with_drifts_before_it_keeps_the_lines_first_origin(ws):
    _write(ws.root / "f.txt", ["a", "b", "c"])
    service.init(ws.root, "why")
    _write(ws.root / "f.txt", ["a", "S1", "c"])
    s1 = service.save(ws.root, "s1")
    _write(ws.root / "f.txt", ["a", "D", "c"])
    service.capture(ws.root)
    _write(ws.root / "f.txt", ["a", "D", "c", "E"])
    service.save(ws.root, "s2")
    service.revert(ws.root, "2", apply=True, confirm=True)
    assert _lines_of(ws.root)["S1"].commit == s1.commit


def test_a_restore_of_a_file_deleted_in_between_keeps_its_origins(ws):
    _write(ws.root / "f.txt", ["a", "b"])
    service.init(ws.root, "why")
    _write(ws.root / "f.txt", ["a", "S1"])
    s1 = service.save(ws.root, "s1")
    (ws.root / "f.txt").unlink()
    service.save(ws.root, "gone")
    service.restore(ws.root, "1", apply=True, confirm=True, paths=["f.txt"])
    got = _lines_of(ws.root)
    assert got["a"].kind == "before_task"
    assert got["S1"].commit == s1.commit


def test_a_check_counts_only_where_the_line_was(ws):
    _write(ws.root / "f.txt", ["a", "X"])
    service.init(ws.root, "why")
    _write(ws.root / "f.txt", ["a", "Y"])
    service.save(ws.root, "y", commands=[{"command": "grep -q Y f.txt", "exit_code": 0}])
    service.restore(ws.root, "0", apply=True, confirm=True)
    assert _lines_of(ws.root)["X"].verified == "nothing was run after it changed"


@pytest.mark.user_git
def test_binary_versions_have_no_lines(repo):
    (repo / "b.txt").write_bytes(b"a\0\n")
    git(repo, "add", "b.txt")
    git(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "binary")
    (repo / "b.txt").write_text("x\ny\n")
    service.init(repo, "why")
    assert [o.kind for o in service.why(repo, "b.txt").lines] == ["before_task"] * 2
    (repo / "b.txt").write_bytes(b"x\0y\n")
    service.capture(repo)
    (repo / "b.txt").write_text("x\ny\nz\n")
    last = service.capture(repo)
    assert {o.commit for o in service.why(repo, "b.txt").lines} == {last.commit}


def test_another_tasks_view_is_its_newest_checkpoint_and_names_may_hold_colons(ws):
    _write(ws.root / "f.txt", ["A1"])
    a = service.init(ws.root, "task a").save.task
    service.save(ws.root, "a")
    service.init(ws.root, "task b")
    _write(ws.root / "f.txt", ["B1"])
    service.save(ws.root, "b")
    assert [o.kind for o in service.why(ws.root, "f.txt", task=a).lines] == ["before_task"]
    _write(ws.root / "b:1-2", ["x", "y", "z"])
    service.capture(ws.root)
    assert len(service.why(ws.root, "b:1-2").lines) == 3  # the file, not b's lines 1-2


def test_a_file_snapshots_leave_out_is_not_shown(ws):
    (ws.root / ".env").write_text("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYz"
                                  "zzzzzzzzz\n")
    service.init(ws.root, "why")
    with pytest.raises(InvalidArgument, match="does not checkpoint"):
        service.why(ws.root, ".env")


def test_the_mcp_answer_is_bounded(ws):
    _write(ws.root / "f.txt", [f"line {i}" for i in range(1000)])
    service.init(ws.root, "why")
    got = service.why(ws.root, "f.txt", limit=200)
    assert (len(got.lines), got.more) == (200, 800)


def test_blame_across_the_tasks_that_held_the_file(ws):
    first = service.init(ws.root, "first task").save.task
    (ws.root / "shared.py").write_text("a = 1\n")
    service.save(ws.root, "a by the first")
    second = service.init(ws.root, "second task").save.task  # its baseline holds line 1
    with (ws.root / "shared.py").open("a") as f:
        f.write("b = 2\n")
    service.save(ws.root, "b by the second")
    alone = service.blame(ws.root, "shared.py")
    assert [o.kind for o in alone.lines] == ["before_task", "step"]
    both = service.blame(ws.root, "shared.py", all_tasks=True)
    assert [(o.task, o.kind, o.step) for o in both.lines] == [(first, "step", 1),
                                                             (second, "step", 1)]
    assert set(both.task.split(", ")) == {first, second}
    p = run_cli("blame", "shared.py", "--all", cwd=ws.root)
    assert p.code == 0, p.err
    rows = p.out.splitlines()
    assert first in rows[0]
    assert second in rows[1]
    shown = json.loads(run_cli("--json", "blame", "shared.py", "--all", cwd=ws.root).out)
    assert [o["task"] for o in shown["lines"]] == [first, second]
    assert run_cli("blame", "shared.py", "--all", "--task", first, cwd=ws.root).code == 2
