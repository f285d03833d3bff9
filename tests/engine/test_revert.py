"""Revert one step or drift, keeping everything since: libgit2's three-way merge
per file, checked against `git revert` on a scratch repository built from the same trees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import RepoGuard, git, service
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.core.errors import InvalidArgument, NeedsConfirmation, TaskClosed
from gitckpt.engine.revert import Conflicts, RevertChanged, span

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")


def files_of(root: Path) -> dict[str, bytes]:
    """Every file of the workspace but the store's and git's, by relative path."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".gitckpt")]
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def lines(n: int, tag: str) -> str:
    return "".join(f"{tag} line {i}\n" for i in range(n))


def test_a_step_is_undone_and_later_steps_kept(ws):
    (ws.root / "doc.txt").write_text(lines(10, "base"))
    service.init(ws.root, "undo one")
    text = (ws.root / "doc.txt").read_text().replace("base line 2", "step one's line")
    (ws.root / "doc.txt").write_text(text)
    (ws.root / "added-by-1.txt").write_text("one\n")
    service.save(ws.root, "step one")
    text = (ws.root / "doc.txt").read_text().replace("base line 8", "step two's line")
    (ws.root / "doc.txt").write_text(text)
    (ws.root / "added-by-2.txt").write_text("two\n")
    service.save(ws.root, "step two")
    before = files_of(ws.root)
    preview = service.revert(ws.root, "1")
    d = preview.to_dict()
    assert d["modify"] == ["doc.txt"]
    assert d["delete"] == ["added-by-1.txt"]
    assert not d["conflicts"]
    assert files_of(ws.root) == before
    done = service.revert(ws.root, "1", apply=True, expect=d["plan_id"])
    assert done.safety
    assert done.commit
    doc = (ws.root / "doc.txt").read_text()
    assert "base line 2" in doc
    assert "step two's line" in doc
    assert "step one's line" not in doc
    assert not (ws.root / "added-by-1.txt").exists()
    assert (ws.root / "added-by-2.txt").exists()
    tl = service.open_timeline(ws.root)
    tip = tl.tip(tl.active_id())
    assert tip.note.trigger == "revert"
    assert tip.note.safety == done.safety
    assert tip.note.reverted["last"] == d["target"]["commit"]
    assert tl.head(tl.active_id()).n == 2
    service.restore(ws.root, done.safety[:12], apply=True)  # the safety copy undoes it
    assert files_of(ws.root) == before


def test_conflicts_are_shown_refused_and_settled_by_choice(ws):
    (ws.root / "doc.txt").write_text(lines(6, "base"))
    service.init(ws.root, "conflicts")
    (ws.root / "doc.txt").write_text(lines(6, "base").replace("base line 3", "one"))
    service.save(ws.root, "step one")
    (ws.root / "doc.txt").write_text(lines(6, "base").replace("base line 3", "two"))
    service.save(ws.root, "step two")
    preview = service.revert(ws.root, "1", patch=True)
    assert [c["path"] for c in preview.to_dict()["conflicts"]] == ["doc.txt"]
    assert "<<<<<<< workspace" in preview.patch
    assert ">>>>>>> before step 1" in preview.patch
    with pytest.raises(Conflicts) as refused:
        service.revert(ws.root, "1", apply=True)
    assert "--conflicts markers" in refused.value.hint
    assert "two" in (ws.root / "doc.txt").read_text()
    ours = service.revert(ws.root, "1", apply=True, conflicts="ours")
    assert ours.safety is None  # nothing else to undo: nothing written
    done = service.revert(ws.root, "1", apply=True, conflicts="markers")
    text = (ws.root / "doc.txt").read_text()
    assert "<<<<<<< workspace\ntwo\n=======\nbase line 3\n>>>>>>> before step 1\n" in text
    tl = service.open_timeline(ws.root)
    note = tl.tip(tl.active_id()).note
    assert note.reverted["conflicts"] == "markers"
    assert note.reverted["files"] == ["doc.txt"]
    service.restore(ws.root, done.safety[:12], apply=True)
    theirs = service.revert(ws.root, "1", apply=True, conflicts="theirs")
    assert (ws.root / "doc.txt").read_text() == lines(6, "base")
    assert theirs.safety
    with pytest.raises(InvalidArgument):
        service.revert(ws.root, "1", conflicts="mine")


def test_a_binary_file_changed_since_is_a_conflict(ws):
    (ws.root / "blob.bin").write_bytes(b"\0\1\2" * 100)
    service.init(ws.root, "binary")
    (ws.root / "blob.bin").write_bytes(b"\0\1\3" * 100)
    service.save(ws.root, "one")
    (ws.root / "blob.bin").write_bytes(b"\0\1\4" * 100)
    service.save(ws.root, "two")
    d = service.revert(ws.root, "1").to_dict()
    assert d["conflicts"] == [{"path": "blob.bin", "binary": True, "why": "binary"}]
    service.revert(ws.root, "1", apply=True, conflicts="markers")  # no markers in a binary:
    assert (ws.root / "blob.bin").read_bytes() == b"\0\1\4" * 100  # the workspace's stays
    service.revert(ws.root, "1", apply=True, conflicts="theirs")
    assert (ws.root / "blob.bin").read_bytes() == b"\0\1\2" * 100  # the version before


def test_a_file_moved_since_still_gets_its_revert(ws):
    (ws.root / "old.txt").write_text(lines(12, "base"))
    service.init(ws.root, "renames")
    (ws.root / "old.txt").write_text(lines(12, "base").replace("base line 5", "changed"))
    service.save(ws.root, "change a line")
    os.rename(ws.root / "old.txt", ws.root / "new.txt")
    service.save(ws.root, "move the file")
    d = service.revert(ws.root, "1").to_dict()
    assert d["modify"] == ["new.txt"], d
    assert not d["conflicts"], d
    service.revert(ws.root, "1", apply=True)
    assert (ws.root / "new.txt").read_text() == lines(12, "base")
    assert not (ws.root / "old.txt").exists()


def test_a_drift_that_deleted_a_folder_is_undone(ws):
    (ws.root / "lib").mkdir()
    for i in range(3):
        (ws.root / "lib" / f"m{i}.py").write_text(f"x = {i}\n")
    service.init(ws.root, "shell damage")
    subprocess.run(["rm", "-rf", str(ws.root / "lib")], check=True)  # a shell command
    drift = service.capture(ws.root).commit
    (ws.root / "later.txt").write_text("work since\n")
    service.save(ws.root, "work since")
    d = service.revert(ws.root, drift[:10]).to_dict()
    assert sorted(d["create"]) == ["lib/m0.py", "lib/m1.py", "lib/m2.py"]
    service.revert(ws.root, drift[:10], apply=True)
    assert (ws.root / "lib" / "m1.py").read_text() == "x = 1\n"
    assert (ws.root / "later.txt").exists()


def test_a_range_and_paths(ws):
    service.init(ws.root, "ranges")
    for n in (1, 2, 3):
        (ws.root / f"s{n}.txt").write_text(f"{n}\n")
        (ws.root / "sub").mkdir(exist_ok=True)
        (ws.root / "sub" / f"s{n}.txt").write_text(f"{n}\n")
        service.save(ws.root, f"step {n}")
    d = service.revert(ws.root, "2..3").to_dict()
    assert sorted(d["delete"]) == ["s2.txt", "s3.txt", "sub/s2.txt", "sub/s3.txt"]
    assert d["label"] == "step 2..step 3"
    service.revert(ws.root, "2..3", paths=["sub"], apply=True)
    assert (ws.root / "s3.txt").exists()
    assert not (ws.root / "sub" / "s3.txt").exists()
    assert (ws.root / "sub" / "s1.txt").exists()
    with pytest.raises(InvalidArgument):
        service.revert(ws.root, "3..2")
    with pytest.raises(InvalidArgument) as zero:
        service.revert(ws.root, "0")
    assert "starting point" in zero.value.message


def test_an_apply_whose_plan_changed_is_refused(ws):
    (ws.root / "a.txt").write_text("a\n")
    service.init(ws.root, "expect")
    (ws.root / "a.txt").write_text("b\n")
    service.save(ws.root, "one")
    plan = service.revert(ws.root, "1").to_dict()["plan_id"]
    (ws.root / "new.txt").write_text("x\n")
    (ws.root / "a.txt").unlink()
    with pytest.raises(RevertChanged):
        service.revert(ws.root, "1", apply=True, expect=plan)
    assert not (ws.root / "a.txt").exists()


def test_a_large_revert_asks_for_confirmation(ws, monkeypatch):
    monkeypatch.setenv("GITCKPT_CONFIRM_OVER", "3")
    service.init(ws.root, "large")
    for i in range(5):
        (ws.root / f"f{i}.txt").write_text("x\n")
    service.save(ws.root, "many files")
    with pytest.raises(NeedsConfirmation):
        service.revert(ws.root, "1", apply=True)
    assert service.revert(ws.root, "1", apply=True, confirm=True).safety


def test_the_cli_and_mcp_faces(ws, monkeypatch):
    import anyio
    from conftest import run_cli
    from mcp import Client

    from gitckpt.mcp.server import build_server

    (ws.root / "doc.txt").write_text(lines(4, "base"))
    service.init(ws.root, "faces")
    (ws.root / "doc.txt").write_text(lines(4, "base").replace("base line 1", "one"))
    service.save(ws.root, "one")
    r = run_cli("-C", str(ws.root), "revert", "1", "--patch")
    assert r.code == 0, r.err
    assert "clean" in r.out, r.err
    assert "-one" in r.out, r.err
    assert "--expect" in r.out, r.err
    plan = json.loads(run_cli("-C", str(ws.root), "--json", "revert", "1").out)["plan_id"]
    r = run_cli("-C", str(ws.root), "revert", "1", "--apply", "--expect", plan)
    assert r.code == 0, r.err
    assert "Undo with" in r.out, r.err
    safety = r.out.split("Safety copy: ")[1].split()[0]
    assert run_cli("-C", str(ws.root), "restore", safety, "--apply").code == 0
    r = run_cli("-C", str(ws.root), "revert", "nonsense..1")
    assert r.code == 1
    assert "hint:" in r.err
    assert "Traceback" not in r.err
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    server = build_server(str(ws.root))

    async def main():
        async with Client(server, mode="legacy") as c:
            first = await c.call_tool("ckpt_revert", {"target": "1"})
            plan = first.structured_content["plan_id"]
            second = await c.call_tool("ckpt_revert", {"target": "1", "apply": True,
                                                       "expect": plan})
            return first, second
    try:
        first, second = anyio.run(main)
    finally:
        server.workspaces.close()
    assert not first.is_error
    assert "ckpt_revert(" in first.content[0].text
    assert "gitckpt " not in first.content[0].text
    assert not second.is_error
    assert second.structured_content["safety"]
    assert (ws.root / "doc.txt").read_text() == lines(4, "base")


def test_the_edge_conflicts_lose_nothing(ws):
    """modify/delete keeps the workspace's file with markers; a file ignored now is left
    out, not a conflict; CRLF files get the labels; the mode merges on its own; a file name
    that is not UTF-8 works."""
    service.init(ws.root, "edges")
    (ws.root / "new.txt").write_text(lines(5, "new"))
    (ws.root / "crlf.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    (ws.root / "s.sh").write_text("echo 1\n")
    odd = os.fsdecode(b"n\xe9.txt")
    (ws.root / odd).write_text("x\n")
    (ws.root / "m.txt").write_text("m\n")
    service.save(ws.root, "base")
    (ws.root / "crlf.txt").write_bytes(b"a\r\nSTEP\r\nc\r\n")
    (ws.root / "s.sh").write_text("echo STEP\n")
    (ws.root / "s.sh").chmod(0o755)
    (ws.root / odd).write_text("step\n")
    (ws.root / "m.txt").write_text("step\n")
    (ws.root / "created.txt").write_text(lines(5, "created"))
    service.save(ws.root, "the step")
    (ws.root / "crlf.txt").write_bytes(b"a\r\nLATER\r\nc\r\n")
    (ws.root / "s.sh").write_text("echo LATER\n")
    (ws.root / odd).write_text("later\n")
    with open(ws.root / "created.txt", "a") as f:
        f.write("edited since\n")
    with open(ws.root / ".gitignore", "a") as f:
        f.write("m.txt\n")
    service.save(ws.root, "later")
    d = service.revert(ws.root, "2", patch=True).to_dict()
    why = {c["path"]: c["why"] for c in d["conflicts"]}
    # a file whose name is not UTF-8 is merged by nobody: pygit2 reads merged text as UTF-8
    assert why == {"crlf.txt": "content", "s.sh": "content", odd: "binary",
                   "created.txt": "modify/delete"}, why
    assert any(u["path"] == "m.txt" for u in d["unrestorable"])
    assert "<<<<<<< workspace\r\n" in d["patch"]
    assert ">>>>>>> before step 2\r\n" in d["patch"]
    service.revert(ws.root, "2", apply=True, conflicts="markers")
    assert (ws.root / "created.txt").read_text().endswith("edited since\n")  # kept
    assert not os.access(ws.root / "s.sh", os.X_OK)  # the step's chmod undone
    assert (ws.root / odd).read_text() == "later\n"  # no markers possible: kept
    assert (ws.root / "m.txt").read_text() == "step\n"  # left out now: never written


def test_a_paths_filter_never_splits_a_rename_into_a_loss(ws):
    (ws.root / "a.txt").write_text(lines(10, "a"))
    service.init(ws.root, "split")
    os.rename(ws.root / "a.txt", ws.root / "b.txt")
    service.save(ws.root, "move")
    with open(ws.root / "b.txt", "a") as f:
        f.write("edited\n")
    service.save(ws.root, "edit")
    d = service.revert(ws.root, "1", paths=["b.txt"]).to_dict()
    assert not d["delete"]
    assert [c["why"] for c in d["conflicts"]] == ["modify/delete"]
    service.revert(ws.root, "1", paths=["b.txt"], apply=True, conflicts="markers")
    assert (ws.root / "b.txt").read_text().endswith("edited\n")


def test_an_interrupted_revert_says_how_to_undo_and_finish(ws):
    from gitckpt.engine.restore import interrupted, mark

    (ws.root / "a.txt").write_text("a\n")
    service.init(ws.root, "killed")
    (ws.root / "a.txt").write_text("b\n")
    service.save(ws.root, "one")
    tl = service.open_timeline(ws.root)
    first, _ = span(tl, "1", None)
    mark(tl, first, tl.head(tl.active_id()).commit, first.commit[:12])
    assert interrupted(tl).revert == first.commit[:12]
    found = [f for f in service.doctor(ws.root).findings if f.check == "restore"]
    assert f"gitckpt revert {first.commit[:12]} --apply" in found[0].fix
    assert "revert of" in service.resume(ws.root).text


# -- against git revert -----------------------------------------------------------------------

def scratch_commits(store_objects: Path, trees: list[str], where: Path) -> list[str]:
    """A scratch repository borrowing the store's objects, with one commit per tree."""
    git(where.parent, "init", "-q", str(where))
    (where / ".git" / "objects" / "info" / "alternates").write_text(f"{store_objects}\n")
    commits, parent = [], []
    for i, tree in enumerate(trees):
        c = git(where, "commit-tree", "-m", f"c{i}", *parent, tree).strip()
        commits.append(c)
        parent = ["-p", c]
    return commits


edit = st.tuples(st.integers(0, 3), st.integers(0, 7), st.sampled_from(["set", "drop", "add"]))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("REVERT_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["git", "dir"]), steps=st.lists(st.lists(edit, min_size=1,
                                                                       max_size=4),
                                                              min_size=2, max_size=4),
       which=st.integers(0, 3), seed=st.integers(0, 10_000))
def test_revert_equals_git_revert(tmp_path_factory, hermetic, kind, steps, which, seed):
    base = tmp_path_factory.mktemp("prop")
    if kind == "git":
        root = base / "ws"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "commit", "-q", "--allow-empty", "-m", "first")
        guard = RepoGuard(root)
    else:
        root = hermetic / f"plain-{seed}-{len(list(hermetic.iterdir()))}"
        root.mkdir()
        guard = None
    files = {f"f{i}.txt": [f"{i}:{j}\n" for j in range(8)] for i in range(4)}
    for name, body in files.items():
        (root / name).write_text("".join(body))
    service.init(root, "property")
    # the reverted step's files are its own: no later step touches them
    k = which % len(steps)
    mine = {f"f{f}.txt" for f, _, _ in steps[k]}
    for n, batch in enumerate(steps):
        for f, line, op in batch:
            name = f"f{f}.txt"
            if n > k and name in mine:
                name = "later.txt"
            body = files.setdefault(name, [f"later {j}\n" for j in range(8)])
            at = line % (len(body) + 1)
            if op == "set" and at < len(body):
                body[at] = f"step {n} set {line}\n"
            elif op == "drop" and at < len(body):
                del body[at]
            else:
                body.insert(at, f"step {n} add {line}\n")
            (root / name).write_text("".join(body))
        (root / f"stamp{n}.txt").write_text("this step's own\n")  # never an empty step
        service.save(root, f"step {n + 1}")
    tl = service.open_timeline(root)
    tid = tl.active_id()
    trees = [r.tree for r in tl.steps(tid)]
    objects = (root / ".git" / "objects") if kind == "git" else (root / ".gitckpt" / "objects")
    before = files_of(root)
    result = service.revert(root, str(k + 1), apply=True)
    scratch = base / "scratch"
    commits = scratch_commits(objects, trees, scratch)
    git(scratch, "reset", "-q", "--hard", commits[-1])
    p = subprocess.run(["git", "-C", str(scratch), "revert", "--no-edit", commits[k + 1]],
                       capture_output=True, text=True)
    expected = git(scratch, "rev-parse", "HEAD^{tree}").strip() if p.returncode == 0 else \
        trees[-1]  # an empty revert: git refuses, nothing changes
    tl = service.open_timeline(root)
    assert tl.tip(tid).tree == expected, (steps, k)
    if result.safety:
        service.restore(root, result.safety[:12], apply=True)
        assert files_of(root) == before  # the undo is byte-exact
    if guard is not None:
        guard.check(status_changes=True)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("REVERT_EXAMPLES", "12")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["git", "dir"]), line=st.integers(0, 7),
       later=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_overlapping_edits_conflict_and_lose_nothing(tmp_path_factory, hermetic, kind, line,
                                                     later, seed):
    base = tmp_path_factory.mktemp("overlap")
    root = base / "ws" if kind == "git" else hermetic / f"overlap-{seed}-{line}-{later}"
    root.mkdir()
    if kind == "git":
        git(root, "init", "-q", "-b", "main")
    body = [f"line {j}\n" for j in range(8)]
    (root / "f.txt").write_text("".join(body))
    service.init(root, "overlap")
    body[line] = "the step's version\n"
    (root / "f.txt").write_text("".join(body))
    service.save(root, "the step")
    for n in range(later):
        if n == later - 1:
            body[line] = "a later version\n"  # the same line, changed again
        (root / f"other{n}.txt").write_text(f"{n}\n")
        (root / "f.txt").write_text("".join(body))
        service.save(root, f"later {n}")
    d = service.revert(root, "1").to_dict()
    assert [c["path"] for c in d["conflicts"]] == ["f.txt"]
    with pytest.raises(Conflicts):
        service.revert(root, "1", apply=True)
    service.revert(root, "1", apply=True, conflicts="markers")
    text = (root / "f.txt").read_text()
    assert "a later version\n" in text
    assert f"line {line}\n" in text
    assert "<<<<<<<" in text
    assert all((root / f"other{n}.txt").exists() for n in range(later))
    shutil.rmtree(base, ignore_errors=True)


# -- a refused apply writes nothing -------------------------------------------------------------

def _written(ws) -> dict:
    """What a write would touch: every file of the objects folder and of the state folders
    (stat caches, markers), with its size, mtime and content; the refs and the notes."""
    store = service.open_timeline(ws.root).store
    out = {}
    for top in (store.location / "objects", store.state_dir, store.shared.path):
        for folder, _, names in os.walk(top):
            for name in names:
                p = Path(folder, name)
                st = p.lstat()
                out[str(p)] = (st.st_size, st.st_mtime_ns, p.read_bytes())
    out["refs"] = ws.git("for-each-ref", "refs/checkpoints", "refs/notes")
    return out


@pytest.mark.parametrize("refusal", ["conflicts", "plan changed", "needs confirmation",
                                     "closed task"])
def test_a_refused_revert_writes_nothing(ws, refusal, monkeypatch):
    for i in range(5):
        (ws.root / f"f{i}.txt").write_text(lines(6, f"base {i}"))
    service.init(ws.root, "refused")
    for i in range(5):
        (ws.root / f"f{i}.txt").write_text(lines(6, f"step {i}"))
    service.save(ws.root, "one", close=refusal == "closed task")
    # Changes no snapshot has seen: a scan would write their blobs and its stat cache.
    (ws.root / "unseen.txt").write_text("written since the last save\n")
    if refusal == "conflicts":
        (ws.root / "f4.txt").write_text("the user's own edit\n")
    expect = service.revert(ws.root, "1").plan.id if refusal != "closed task" else None
    if refusal == "plan changed":
        expect = "0" * 16
    if refusal == "needs confirmation":
        monkeypatch.setenv("GITCKPT_CONFIRM_OVER", "3")
    before = _written(ws)
    raised = {"conflicts": Conflicts, "plan changed": RevertChanged,
              "needs confirmation": NeedsConfirmation, "closed task": TaskClosed}[refusal]
    with pytest.raises(raised):
        service.revert(ws.root, "1", apply=True, expect=expect)
    after = _written(ws)
    assert sorted(after) == sorted(before), set(after) ^ set(before)  # no new file
    assert [k for k in before if after[k] != before[k]] == []  # none touched
    ws.fsck()
