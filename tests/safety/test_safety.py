"""Safety at the edges: each test plants a hostile input (a store above the folder, a symlink
in the store, a pointer to another project, a crafted tree or package, a wide MCP root) and
asserts that nothing outside the workspace and its store changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import anyio
import pytest
from conftest import make_plain, make_repo, run_cli, service
from mcp import Client

from gitckpt.core.errors import (
    InvalidArgument,
    NeedsConfirmation,
    NoActiveTask,
    StoreCorrupt,
    StoreElsewhere,
    StoreUnsafe,
)
from gitckpt.mcp.server import build_server
from gitckpt.store.discover import open_store


def everything(*tops: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple]:
    """Every entry below `tops` (files by content, links by target, folders by mode), except
    below `skip`: read with the standard library only."""
    out: dict[str, tuple] = {}
    # The log folder (the fake home's .state/gitckpt) is not in it: a command that asks the
    # user's service starts one when none runs, and its log goes there.
    logs = {t / ".state" / "gitckpt" for t in tops}
    for top in tops:
        for dirpath, dirs, files in os.walk(top):
            here = Path(dirpath)
            dirs[:] = [d for d in dirs if here / d not in skip and here / d not in logs]
            for name in (*dirs, *files):
                p = here / name
                if p in skip or p in logs or p / "gitckpt" in logs:
                    continue  # (its parent, the state home, is made with it)
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    out[str(p)] = ("link", os.readlink(p))
                elif stat.S_ISDIR(st.st_mode):
                    out[str(p)] = ("dir", stat.S_IMODE(st.st_mode))
                else:
                    out[str(p)] = ("file", stat.S_IMODE(st.st_mode),
                                   hashlib.sha1(p.read_bytes()).hexdigest())
    return out


@pytest.fixture
def world(tmp_path, hermetic):
    """The test's whole temp root (its folder and its fake home)."""
    return (tmp_path, hermetic)


# -- discovery -------------------------------------------------------------------------------

def _store_for(folder: Path, name: str = "theirs") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "theirs.txt").write_text("belongs to the parent's task\n")
    return service.init(folder, name).save.task


@pytest.mark.parametrize("where", ["outside_home", "world_writable", "sticky"])
def test_a_parent_store_does_not_take_over_a_folder(tmp_path, hermetic, world, where):
    base = tmp_path if where == "outside_home" else hermetic
    parent = base / "shared"
    _store_for(parent)
    if where != "outside_home":
        os.chmod(parent, 0o1777 if where == "sticky" else 0o777)
    proj = make_plain(parent / "proj")
    (parent / "theirs.txt").write_text("changed by its owner\n")
    before = everything(*world, skip=(proj,))
    with pytest.raises(NoActiveTask):
        service.resume(proj)
    with pytest.raises(NoActiveTask):
        service.restore(proj, "0", apply=True)
    r = run_cli("-C", str(proj), "restore", "0", "--apply", "--yes")
    assert r.code == 1
    assert "No active task" in r.err
    task = service.init(proj, "mine").save.task  # its own store, not the parent's
    assert (proj / ".gitckpt").is_dir()
    assert service.save(proj, "s").task == task
    assert everything(*world, skip=(proj,)) == before


def test_a_parent_store_made_for_the_parent_serves_its_subfolders(hermetic):
    parent = hermetic / "project"
    task = _store_for(parent)
    (parent / "src").mkdir()
    assert service.resume(parent / "src").info.id == task


def test_a_parent_store_not_made_for_the_parent_is_passed_over(hermetic, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    _store_for(elsewhere)
    parent = hermetic / "copy"
    shutil.copytree(elsewhere, parent, symlinks=True)  # the store records `elsewhere`
    (parent / "sub").mkdir()
    with pytest.raises(NoActiveTask):
        service.resume(parent / "sub")
    with pytest.raises(StoreElsewhere, match=f"made for {elsewhere}, not for {parent}"):
        service.resume(parent)


def test_a_restore_in_a_sibling_never_touches_a_colleagues_files(tmp_path, world):
    team = tmp_path / "team"
    (team / "colleague").mkdir(parents=True)
    (team / "colleague" / "notes.txt").write_text("v1\n")
    service.init(team, "the team's task")
    (team / "colleague" / "notes.txt").write_text("the colleague's work\n")
    proj = make_plain(team / "proj")
    before = everything(*world, skip=(proj,))
    r = run_cli("restore", "0", "--apply", "--yes", cwd=proj)
    assert r.code == 1
    assert (team / "colleague" / "notes.txt").read_text() == "the colleague's work\n"
    assert everything(*world, skip=(proj,)) == before


def test_a_moved_folder_is_adopted_and_its_tasks_continue(hermetic):
    old = make_plain(hermetic / "old")
    task = service.init(old, "moving").save.task
    new = hermetic / "new"
    old.rename(new)
    with pytest.raises(StoreElsewhere, match=f"made for {old}, not for {new}") as e:
        service.save(new, "after the move")
    assert "gitckpt adopt" in e.value.hint
    r = run_cli("-C", str(new), "adopt")
    assert r.code == 0, r.err
    assert str(old) in r.out
    assert service.save(new, "after the move").task == task
    assert service.resume(new).info.id == task


# -- pointers --------------------------------------------------------------------------------

def test_a_pointer_file_cannot_open_another_projects_store(tmp_path, world):
    victim = make_plain(tmp_path / "victim")
    (victim / "secret-plan.txt").write_text("the victim's own words\n")
    task = service.init(victim, "victim task").save.task
    for target in (f"{victim / '.gitckpt'}", "../victim/.gitckpt"):
        dl = tmp_path / "downloaded"
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir()
        (dl / ".gitckpt").write_text(f"gitckpt-store: {target}\n")
        before = everything(*world, skip=(dl,))
        for args in (["tasks"], ["resume", "--task", task],
                     ["diff", "0", "--patch", "--task", task],
                     ["export", "--to", str(tmp_path / "stolen"), "--task", task],
                     ["init", "x"],
                     ["log", "--task", task]):
            r = run_cli("-C", str(dl), *args)
            assert r.code == 1, (args, r.out)
            assert "victim's own words" not in r.out
            assert "Traceback" not in r.err
            assert "hint:" in r.err, r.err
        assert everything(*world, skip=(dl,)) == before
        assert not (tmp_path / "stolen").exists()


def test_a_pointer_to_a_store_of_this_folder_works(tmp_path, monkeypatch):
    root = make_plain(tmp_path / "w")
    monkeypatch.setenv("GITCKPT_STORE", str(tmp_path / "stores" / "w"))
    task = service.init(root, "pointed").save.task
    monkeypatch.delenv("GITCKPT_STORE")
    assert (root / ".gitckpt").is_file()
    assert service.resume(root).info.id == task


# -- symlinks inside the store ---------------------------------------------------------------

def _last_pid() -> int:
    try:
        return int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    except OSError:
        return os.getpid()


@pytest.mark.slow
def test_symlinks_at_every_state_file_name_are_never_written_through(ws, tmp_path, world):
    victim = tmp_path / "victim.txt"
    victim.write_text("must stay\n")
    task = service.init(ws.root, "planted").save.task
    store = open_store(ws.root)
    state = store.state_dir
    first = _last_pid()
    names = ("cache", "active", "restore.json", "scan.json", "index")
    for pid in range(first - 5, first + 120):
        for name in names:
            os.symlink(victim, state / f"{name}.{pid}.tmp")
            os.symlink(victim, state / f".{name}.{pid}.tmp")
    before = everything(*world, skip=(ws.root,))
    (ws.root / "src" / "app.py").write_text("print('edited')\n")
    for args in (["save", "s1"], ["capture"], ["switch", task],
                 ["restore", "0", "--apply"], ["restore", "1", "--apply"], ["resume"]):
        r = run_cli("-C", str(ws.root), *args)
        assert r.code == 0, (args, r.err)
    assert victim.read_text() == "must stay\n"
    assert everything(*world, skip=(ws.root,)) == before


@pytest.mark.parametrize("name", ["active", "cache", "restore.json"])
def test_a_symlink_at_a_state_file_is_replaced_or_refused_never_followed(ws, tmp_path, name):
    victim = tmp_path / "victim.txt"
    victim.write_text("must stay\n")
    service.init(ws.root, "planted")
    state = open_store(ws.root).state_dir
    (state / name).unlink(missing_ok=True)
    os.symlink(victim, state / name)
    for args in (["save", "s1", "--task", service.tasks(ws.root).tasks[0].id],
                 ["restore", "0", "--apply", "--task", service.tasks(ws.root).tasks[0].id]):
        r = run_cli("-C", str(ws.root), *args)
        assert "Traceback" not in r.err
    assert victim.read_text() == "must stay\n"


def test_a_symlinked_state_folder_or_refs_folder_is_refused_with_a_repair(ws, tmp_path, world):
    service.init(ws.root, "planted")
    store = open_store(ws.root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = store.state_dir
    shutil.rmtree(state)
    os.symlink(elsewhere, state)
    before = everything(*world, skip=(ws.root,))
    r = run_cli("-C", str(ws.root), "switch", service.tasks(ws.root).tasks[0].id)
    assert r.code == 1, r.err
    assert "symbolic link" in r.err, r.err
    assert "doctor --fix" in r.err, r.err
    assert everything(*world, skip=(ws.root,)) == before
    assert not any(elsewhere.iterdir())
    d = json.loads(run_cli("-C", str(ws.root), "--json", "doctor").out)
    assert any(f["check"] == "links" and str(state) in f["problem"] for f in d["findings"])
    assert run_cli("-C", str(ws.root), "doctor", "--fix").code == 0
    assert not state.is_symlink()
    assert elsewhere.is_dir()
    assert run_cli("-C", str(ws.root), "save", "after repair", "--task",
                   service.tasks(ws.root).tasks[0].id).code == 0


def test_a_symlinked_refs_folder_of_a_plain_store_is_never_written_into(tmp_path, hermetic,
                                                                        world):
    root = make_plain(hermetic / "p")
    service.init(root, "planted")
    other = tmp_path / "other-refs"
    shutil.copytree(root / ".gitckpt" / "refs", other)
    shutil.rmtree(root / ".gitckpt" / "refs")
    os.symlink(other, root / ".gitckpt" / "refs")
    before = everything(*world, skip=(root,))
    with pytest.raises(StoreUnsafe, match="refs"):
        service.save(root, "through the link", task=service.tasks(root).active)
    assert everything(*world, skip=(root,)) == before


def test_the_mcp_log_is_never_appended_through_a_symlink(ws, tmp_path):
    victim = tmp_path / "victim.log"
    victim.write_text("must stay\n")
    service.init(ws.root, "logged")
    state = open_store(ws.root).state_dir
    os.symlink(victim, state / "mcp.log")
    server = build_server(str(ws.root))
    try:
        server.workspaces.watch(str(ws.root))
    finally:
        server.workspaces.close()
    assert victim.read_text() == "must stay\n"


def test_logs_and_state_files_are_private(ws, hermetic):
    service.init(ws.root, "modes")
    state = open_store(ws.root).state_dir
    for p in state.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p
    from gitckpt.store.logs import log_file, write_crash
    assert write_crash("boom\n") == log_file()
    assert stat.S_IMODE(log_file().stat().st_mode) == 0o600


# -- names git refuses -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["GIT~1", ".GIT", ".git.", ".git::$INDEX_ALLOCATION"])
def test_a_name_git_refuses_on_disk_is_skipped_and_saves_go_on(ws, name):
    (ws.root / name).mkdir()
    (ws.root / name / "config").write_text("[core]\n\thooksPath = /tmp/evil\n")
    r = service.init(ws.root, "odd names")
    reasons = {s.reason for s in r.save.skipped if s.path.startswith(name)}
    assert reasons == {"invalid_name"} or (ws.kind == "git" and name == ".GIT" and not reasons)
    names = {e.name for e in open_store(ws.root).read_tree(r.save.tree)}
    assert name.encode() not in names  # libgit2 passes over `.GIT` by itself
    (ws.root / "src" / "app.py").write_text("print('still saved')\n")
    assert service.save(ws.root, "s1").changes.modified == ("src/app.py",)
    out = service.restore(ws.root, "0", apply=True)
    assert (ws.root / name / "config").exists()  # left as it is, never deleted
    service.restore(ws.root, out.safety, apply=True)
    assert (ws.root / "src" / "app.py").read_text() == "print('still saved')\n"


def _loose(repo: Path, kind: str, body: bytes) -> str:
    raw = b"%s %d\0" % (kind.encode(), len(body)) + body
    oid = hashlib.sha1(raw).hexdigest()
    (repo / "objects" / oid[:2]).mkdir(exist_ok=True)
    (repo / "objects" / oid[:2] / oid[2:]).write_bytes(zlib.compress(raw))
    return oid


@pytest.mark.parametrize("bad", [b"GIT~1", b".GIT", b".git.", b".git::$INDEX_ALLOCATION"])
def test_a_package_with_a_name_git_refuses_is_refused_before_anything_is_written(
        ws, tmp_path, bad):
    task = service.init(ws.root, "to package").save.task
    pkg = tmp_path / "pkg"
    service.export(ws.root, pkg)
    repo = pkg / "checkpoints.git"
    blob = _loose(repo, "blob", b"[core]\n\tfsmonitor = touch PWNED\n")
    inner = _loose(repo, "tree", b"100644 config\0" + bytes.fromhex(blob))
    tree = _loose(repo, "tree", b"40000 " + bad + b"\0" + bytes.fromhex(inner))
    commit = _loose(repo, "commit", f"tree {tree}\nauthor a <a> 1 +0000\ncommitter a <a> 1 "
                    "+0000\n\ncrafted\n".encode())
    (repo / "refs" / "checkpoints" / task / "head").write_text(commit + "\n")
    m = json.loads((pkg / "manifest.json").read_text())
    m["refs"][f"refs/checkpoints/{task}/head"] = commit
    ids = sorted(p.parent.name + p.name for p in (repo / "objects").glob("??/*"))
    m["objects"] = len(ids)
    m["checksums"]["objects"] = hashlib.sha256("\n".join(ids).encode()).hexdigest()
    (pkg / "manifest.json").write_text(json.dumps(m))
    other = make_plain(tmp_path / "other")
    before = everything(other)
    with pytest.raises(StoreCorrupt, match="unsafe name"):
        service.import_(other, pkg)
    assert everything(other) == before


# -- packages and suggested commands ---------------------------------------------------------

@pytest.mark.crafted_store
def test_a_package_config_that_is_not_ours_is_refused(ws, tmp_path):
    service.init(ws.root, "packaged")
    pkg = tmp_path / "pkg"
    service.export(ws.root, pkg)
    handoff = (pkg / "HANDOFF.md").read_text()
    assert f"gitckpt import --dry-run {pkg}" in handoff
    assert "git --git-dir" not in handoff
    with open(pkg / "checkpoints.git" / "config", "a") as f:
        f.write("[core]\n\tpager = touch PWNED\n[log]\n\tshowSignature = true\n"
                "[gpg]\n\tprogram = touch PWNED\n")
    other = make_plain(tmp_path / "other")
    before = everything(other)
    with pytest.raises(StoreCorrupt, match="config is not the one gitckpt writes"):
        service.import_(other, pkg)
    assert everything(other) == before
    # the suggested way to look at it refuses it too, and runs nothing
    r = run_cli("-C", str(other), "import", "--dry-run", str(pkg))
    assert r.code == 1
    assert "config" in r.err
    assert not (tmp_path / "PWNED").exists()
    assert not (other / "PWNED").exists()


def test_a_dry_run_import_says_what_a_package_holds_and_writes_nothing(ws, tmp_path):
    service.init(ws.root, "look first")
    service.save(ws.root, "one")
    pkg = tmp_path / "pkg"
    service.export(ws.root, pkg)
    other = make_plain(tmp_path / "other")
    before = everything(other)
    r = run_cli("-C", str(other), "import", "--dry-run", str(pkg))
    assert r.code == 0, r.err
    assert "1 steps" in r.out, r.err
    assert "Nothing was written" in r.out, r.err
    assert everything(other) == before


@pytest.mark.parametrize("umask", [0o077, 0o022])
def test_a_package_is_never_more_readable_than_the_store(ws, tmp_path, umask):
    service.init(ws.root, "private")
    old = os.umask(umask)
    try:
        service.export(ws.root, tmp_path / "pkg")
    finally:
        os.umask(old)
    for dirpath, _dirs, files in os.walk(tmp_path / "pkg"):
        assert stat.S_IMODE(os.stat(dirpath).st_mode) == 0o700, dirpath
        for f in files:
            assert stat.S_IMODE(os.stat(os.path.join(dirpath, f)).st_mode) == 0o600, f


def test_a_package_is_never_written_into_the_store(ws):
    service.init(ws.root, "t")
    inside = ws.git_dir / "pkg"
    with pytest.raises(InvalidArgument, match="inside the store"):
        service.export(ws.root, inside)
    assert not inside.exists()


# -- blast radius ----------------------------------------------------------------------------

def test_a_large_restore_is_refused_then_confirmed_then_undone_byte_for_byte(ws):
    for i in range(40):
        (ws.root / "src" / f"m{i}.py").write_text(f"x = {i}\n")
    service.init(ws.root, "wide")
    for i in range(40):
        (ws.root / "src" / f"m{i}.py").write_text(f"x = {i} * 2\n")
    service.save(ws.root, "all changed")
    before = {p: p.read_bytes() for p in (ws.root / "src").iterdir()}
    preview = service.restore(ws.root, "0")
    assert preview.needs_confirm
    assert preview.to_dict()["workspace"] == str(ws.root)
    r = run_cli("-C", str(ws.root), "restore", "0")
    first = r.out.splitlines()[0]
    assert str(ws.root) in first
    assert "40 to modify" in first
    assert "--yes" in r.out
    with pytest.raises(NeedsConfirmation, match=f"40 files of the .* in-scope files in {ws.root}"):
        service.restore(ws.root, "0", apply=True)
    assert {p: p.read_bytes() for p in (ws.root / "src").iterdir()} == before
    done = service.restore(ws.root, "0", apply=True, confirm=True)
    assert (ws.root / "src" / "m3.py").read_text() == "x = 3\n"
    service.restore(ws.root, done.safety, apply=True, confirm=True)
    assert {p: p.read_bytes() for p in (ws.root / "src").iterdir()} == before


def test_a_small_restore_needs_no_confirmation(ws):
    service.init(ws.root, "narrow")
    (ws.root / "src" / "app.py").write_text("changed\n")
    assert not service.restore(ws.root, "0").needs_confirm
    assert service.restore(ws.root, "0", apply=True).safety


# -- MCP confinement -------------------------------------------------------------------------

def _call(server, tool: str, args: dict):
    async def main():
        async with Client(server, mode="legacy") as c:
            return await c.call_tool(tool, args)
    return anyio.run(main)


def test_mcp_refuses_a_root_outside_its_own(ws, tmp_path, hermetic):
    server = build_server(str(ws.root))
    try:
        for root in (str(hermetic), "/", "/etc", str(tmp_path)):
            r = _call(server, "ckpt_init", {"name": "escape", "root": root})
            assert r.is_error, root
            assert "outside this server's root" in r.content[0].text, root
        assert not (hermetic / ".gitckpt").exists()
        r = _call(server, "ckpt_init", {"name": "inside", "root": str(ws.root)})
        assert not r.is_error, r.content
        r = _call(server, "ckpt_export", {"to": str(ws.git_dir / "pkg")})
        assert r.is_error
        assert not (ws.git_dir / "pkg").exists()
        r = _call(server, "ckpt_export", {"to": "/etc/gitckpt-pkg"})
        assert r.is_error
        assert "only a folder inside" in r.content[0].text
        r = _call(server, "ckpt_export", {"to": "../pkg"})
        assert not r.is_error, r.content
    finally:
        server.workspaces.close()


def test_mcp_without_a_root_refuses_home_and_system_folders(hermetic, monkeypatch):
    monkeypatch.delenv("GITCKPT_ROOT", raising=False)
    monkeypatch.chdir(hermetic)
    server = build_server(None)
    try:
        for root in (None, str(hermetic), "/", "/usr"):
            args = {"name": "wide"} | ({"root": root} if root else {})
            r = _call(server, "ckpt_init", args)
            assert r.is_error, root
            assert "will not checkpoint" in r.content[0].text, root
    finally:
        server.workspaces.close()
    assert not (hermetic / ".gitckpt").exists()


def test_mcp_names_the_closest_tool(ws):
    server = build_server(str(ws.root))
    try:
        r = _call(server, "ckpt_resmue", {})
    finally:
        server.workspaces.close()
    assert r.is_error
    assert 'Did you mean "ckpt_resume"' in r.content[0].text


def test_mcp_refuses_an_oversized_title_quickly(ws):
    server = build_server(str(ws.root))
    try:
        _call(server, "ckpt_init", {"name": "big"})
        r = _call(server, "ckpt_save", {"title": "x" * 10_000_000})
        assert r.is_error
        assert "limit is 300" in r.content[0].text
        r = _call(server, "ckpt_save", {"title": "t", "verified": ["ok"] * 200_000})
        assert r.is_error
        assert "limit is 50" in r.content[0].text
    finally:
        server.workspaces.close()


# -- damage and odd input --------------------------------------------------------------------

def _truncate_loose(git_dir: Path, oid: str) -> None:
    path = git_dir / "objects" / oid[:2] / oid[2:]
    data = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.slow
@pytest.mark.crafted_store
def test_a_truncated_commit_is_a_clear_error_never_a_hang(repo):
    service.init(repo, "t")
    head = service.save(repo, "s1", conclusion="c").commit
    _truncate_loose(repo / ".git", head)
    for args in (["resume"], ["log"], ["restore", "0", "--apply"], ["save", "s2"]):
        r = run_cli("-C", str(repo), *args, timeout=30)
        assert r.code == 1, (args, r.err)
        assert "corrupt" in r.err, (args, r.err)
        assert "hint:" in r.err, (args, r.err)
    r = run_cli("-C", str(repo), "--json", "doctor", timeout=30)
    assert r.code != 0
    assert not json.loads(r.out)["healthy"]


@pytest.mark.slow
@pytest.mark.crafted_store
def test_a_truncated_blob_is_found_by_doctor(repo):
    (repo / "unique.txt").write_text("a blob only this save holds " * 50)
    service.init(repo, "t")
    store = open_store(repo)
    oid = next(e.id for e in store.read_tree(service.log(repo).steps[0].tree)
               if e.name == b"unique.txt")
    _truncate_loose(repo / ".git", oid)
    d = json.loads(run_cli("-C", str(repo), "--json", "doctor", timeout=30).out)
    assert not d["healthy"]
    assert any(f["check"] == "objects" for f in d["findings"])
    r = run_cli("-C", str(repo), "restore", "0", "--apply", timeout=30)
    assert r.code in (0, 1)
    assert "Traceback" not in r.err
    assert "internal error" not in r.err


@pytest.mark.parametrize("kind", ["git", "dir"])
def test_a_folder_nested_too_deep_is_skipped_and_the_rest_saved(tmp_path, kind):
    root = make_repo(tmp_path / "r") if kind == "git" else make_plain(tmp_path / "p")
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(300):
            os.mkdir("dddddddddddddddd", dir_fd=fd)
            sub = os.open("dddddddddddddddd", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = sub
        leaf = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.close(leaf)
    finally:
        os.close(fd)
    r = service.init(root, "deep")
    assert [s.reason for s in r.save.skipped if s.path.startswith("dddd")] == ["too_deep"]
    (root / "README.md").write_text("saved anyway\n")
    assert service.save(root, "s1").changes.modified == ("README.md",)


def test_a_garbage_private_index_is_quietly_rebuilt(repo):
    service.init(repo, "t")
    index = open_store(repo).state_dir / "index"
    index.write_bytes(b"DIRC\0\0\0\2" + b"\xff" * 40)
    r = run_cli("-C", str(repo), "save", "s1")
    assert r.code == 0, r.err
    assert "Exception ignored" not in r.err, r.err


def test_odd_task_and_target_spellings_are_refused(ws):
    service.init(ws.root, "t")
    r = run_cli("-C", str(ws.root), "save", "x", "--task", "")
    assert r.code == 1
    assert "Not a valid task id" in r.err
    with pytest.raises(InvalidArgument, match="No commit 0000000000"):
        service.restore(ws.root, "0" * 40)


def test_a_newer_store_format_is_refused(repo):
    service.init(repo, "t")
    (repo / ".git" / "gitckpt" / "format").write_text("99\n")
    r = run_cli("-C", str(repo), "resume")
    assert r.code == 1
    assert "format version 99" in r.err


def test_a_file_that_vanishes_mid_scan_is_not_fatal(ws, monkeypatch):
    service.init(ws.root, "t")
    gone = ws.root / "gone.txt"
    gone.write_text("here for a moment\n")
    import gitckpt.store.plain.scan as snapshot

    real = snapshot.read_regular

    def vanish(path, *a, **k):
        if os.fspath(path).endswith("gone.txt"):
            os.unlink(path)
        return real(path, *a, **k)

    monkeypatch.setattr(snapshot, "read_regular", vanish)
    r = service.save(ws.root, "s1")
    assert r.step == 1


def test_cli_errors_never_show_a_traceback_for_bad_input(ws):
    service.init(ws.root, "t")
    for args in (["restore", "../x"], ["diff", "zz"], ["save", "t", "--plan", "a=wat"],
                 ["switch", "NOT VALID"], ["export", "--to", "/nonexistent/dir/pkg"]):
        r = run_cli("-C", str(ws.root), *args)
        assert r.code in (1, 2), args
        assert "Traceback" not in r.err, args
        assert "internal" not in r.err, args


def test_python_m_gitckpt_runs_from_anywhere(tmp_path):
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--version"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert "gitckpt" in p.stdout
    assert zlib  # used above for truncation helpers


def test_wildcard_heavy_patterns_match_in_linear_time_and_as_the_regex_does():
    import random
    import re

    from gitckpt.safety.ignore import IgnoreFile, _Automaton, translate
    rnd = random.Random(7)
    tokens = ["*", "**/", "?", "a", "b", "/", "[ab]", "**", "[!a]"]
    for _ in range(3000):
        pat = "".join(rnd.choice(tokens) for _ in range(rnd.randint(1, 7))).strip("/") or "a"
        rx, au = re.compile(translate(pat), re.DOTALL), _Automaton(pat)
        for _ in range(8):
            text = "".join(rnd.choice("ab/") for _ in range(rnd.randint(0, 9)))
            assert bool(rx.fullmatch(text)) == au.fullmatch(text), (pat, text)
    for pattern in ("*a" * 60 + "b", "**/" * 25 + "zz"):  # (a backtracking match: hours)
        assert IgnoreFile.from_text(pattern).match("a" * 250, False) is None


def test_a_hostile_gitignore_does_not_hang_a_save(tmp_path, hermetic):
    root = make_plain(hermetic / "p")
    (root / ".gitignore").write_text("**/" * 16 + "zz\n" + "*a" * 60 + "b\n")
    (root / ("a" * 200)).write_text("x\n")
    r = run_cli("-C", str(root), "init", "hostile", timeout=60)
    assert r.code == 0, r.err


def test_a_text_named_for_passwords_is_decided_by_what_it_holds(repo):
    """Django's docs/topics/auth/passwords.txt (31 KB of prose about passwords) was left out
    by its name: a text called password(s).txt is a document as often as a list, so its
    content decides; in a folder named for secrets, or holding a credential, it stays out."""
    from conftest import service

    docs = repo / "docs" / "topics" / "auth"
    docs.mkdir(parents=True)
    (docs / "passwords.txt").write_text(
        "Password management in Django\n=============================\n\nDjango provides a "
        "flexible password storage system and uses PBKDF2 by default. The password attribute"
        " of a User object is a string in this format::\n\n    <algorithm>$<iterations>$<salt>"
        "$<hash>\n\nSet PASSWORD_HASHERS in your settings to change it.\n")
    (repo / "passwords.txt").write_text("password=S3cr3tP4ss!\n")
    (repo / "secrets").mkdir()
    (repo / "secrets" / "passwords.txt").write_text("just words\n")
    service.init(repo, "docs")
    tl = service.open_timeline(repo)
    head = tl.head(tl.resolve(None))
    skipped = {s["path"] for s in head.note.skipped}
    assert "docs/topics/auth/passwords.txt" not in skipped
    assert {"passwords.txt", "secrets/passwords.txt"} <= skipped
