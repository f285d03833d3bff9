"""Listing refs reads only the prefix asked for (loose and packed), agrees with git's own
listing, and never calls a ref damaged because another process makes, moves, deletes or
packs refs meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_plain, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.store import reflist
from gitckpt.store.discover import open_store


def _git_listing(root: Path, prefix: str) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return {name: oid for name, oid in (line.split(" ") for line in out.splitlines() if line)}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.sampled_from(
           ["refs/checkpoints/a/head", "refs/checkpoints/a/steps/1",
            "refs/checkpoints/a/steps/12", "refs/checkpoints/ab/head",
            "refs/checkpoints/b/drifts/3", "refs/heads/x", "refs/tags/v1",
            "refs/checkpointsx/a", "refs/notes/checkpoints"]),
           unique=True, min_size=1),
       packed=st.lists(st.booleans(), min_size=9, max_size=9),
       prefix=st.sampled_from(["refs/checkpoints/", "refs/checkpoints/a/",
                               "refs/checkpoints/a/steps/", "refs/checkpoints/a"]))
def test_listing_agrees_with_git(tmp_path_factory, names, packed, prefix):
    """Every mix of loose and packed refs, under the prefix and beside it, lists as
    `git for-each-ref` lists it."""
    root = make_repo(tmp_path_factory.mktemp("refs") / "repo")
    head = git(root, "rev-parse", "HEAD").strip()
    for i, name in enumerate(names):
        git(root, "update-ref", name, head)
        if packed[i]:
            git(root, "pack-refs", "--all")
    store = open_store(root)
    want = {n: o for n, o in _git_listing(root, "refs/").items() if n.startswith(prefix)}
    assert store.list_refs(prefix) == want


def test_only_the_prefix_is_read(tmp_path, monkeypatch):
    """Thousands of the user's refs, loose and packed, are not walked or opened to list a
    task's steps."""
    root = make_repo(tmp_path / "repo")
    head = git(root, "rev-parse", "HEAD").strip()
    lines = "".join(f"update {kind}/r{i} {head}\n" for kind in ("refs/tags", "refs/heads/t")
                    for i in range(1500))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=root, input=lines, text=True,
                   check=True)
    git(root, "pack-refs", "--all")
    subprocess.run(["git", "update-ref", "--stdin"], cwd=root, check=True, text=True,
                   input="".join(f"update refs/heads/loose{i} {head}\n" for i in range(500)))
    for n in range(3):
        git(root, "update-ref", f"refs/checkpoints/t/steps/{n}", head)
    walked: list[str] = []
    opened: list[str] = []
    real_walk, real_open = os.walk, open

    def walk(top, *a, **kw):
        for here, dirs, files in real_walk(top, *a, **kw):
            walked.append(str(here))
            yield here, dirs, files

    def spy_open(path, *a, **kw):
        opened.append(str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(reflist.os, "walk", walk)
    monkeypatch.setattr("builtins.open", spy_open)
    store = open_store(root)
    got = store.list_refs("refs/checkpoints/t/steps/")
    monkeypatch.undo()
    assert sorted(got) == [f"refs/checkpoints/t/steps/{n}" for n in range(3)]
    steps = str(store.common_dir / "refs" / "checkpoints" / "t" / "steps")
    assert walked == [steps]
    assert all(p.startswith(steps) for p in opened), opened


WRITER = r"""
import os, subprocess, sys
import pygit2
root, stop, count = sys.argv[1:4]
repo = pygit2.Repository(root)
head = repo.references["refs/checkpoints/t/steps/0"].target
me = pygit2.Signature("a", "a@b")
other = repo.create_commit(None, me, me, "x", repo[head].tree_id, [])
print("ready", flush=True)
i = 0
while not os.path.exists(stop):
    n = i % 40
    repo.references.create(f"refs/checkpoints/t/steps/{1000 + n}", head, force=True)
    repo.references.create("refs/checkpoints/t/head", other if i % 2 else head, force=True)
    gone = repo.references.get(f"refs/checkpoints/t/steps/{1000 + (n + 20) % 40}")
    if gone is not None:
        gone.delete()
    if i % 25 == 0:
        subprocess.run(["git", "pack-refs", "--all"], cwd=root, capture_output=True)
    i += 1
    with open(count, "w") as f:
        f.write(str(i))
"""


def _written(count: Path) -> int:
    try:
        return int(count.read_text() or 0)
    except (OSError, ValueError):
        return 0


@pytest.mark.parametrize("kind", ["git", "plain"])
def test_a_busy_writer_is_never_damage(tmp_path, kind):
    """1,000 listings while another process makes, moves, deletes and packs refs: none
    reports a damaged ref, and the refs nobody touches are always there."""
    root = (make_repo if kind == "git" else make_plain)(tmp_path / "ws")
    store = open_store(root)
    store.prepare()
    env = dict(os.environ)
    if kind == "plain":  # the plain store's folder is a bare git directory to git's plumbing
        env["GIT_DIR"] = str(store.refs_folder)
        tree = subprocess.run(["git", "mktree"], input="", text=True, env=env,
                              capture_output=True, check=True).stdout.strip()
        head = subprocess.run(["git", "commit-tree", tree, "-m", "x"], text=True, env=env,
                              capture_output=True, check=True).stdout.strip()
        subprocess.run(["git", "update-ref", "HEAD", head], env=env, check=True)
    else:
        head = git(root, "rev-parse", "HEAD").strip()
    for n in range(5):
        subprocess.run(["git", "update-ref", f"refs/checkpoints/t/steps/{n}", head], cwd=root,
                       env=env, check=True)
    stop = tmp_path / "stop"
    count = tmp_path / "count"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store.refs_folder), str(stop),
                               str(count)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert writer.stdout.readline().strip() == "ready"
        listings = 0
        while listings < 1000 or _written(count) < 300:  # both sides busy the whole time
            got = store.list_refs("refs/checkpoints/t/")  # raises on a damaged ref
            assert all(f"refs/checkpoints/t/steps/{n}" in got for n in range(5))
            listings += 1
    finally:
        stop.touch()
        writer.wait(60)


def test_packing_the_checkpoint_refs_keeps_every_other_ref_and_its_peeled_line(tmp_path):
    """The checkpoint refs move into packed-refs beside the user's packed refs, an annotated
    tag's peeled line kept: every ref, peeled or not, reads as before; fsck is clean."""
    from conftest import fsck

    root = make_repo(tmp_path / "repo")
    head = git(root, "rev-parse", "HEAD").strip()
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "v9", "-m", "v9")
    git(root, "branch", "later")
    git(root, "pack-refs", "--all")
    git(root, "branch", "loose-one")
    for n in range(4):
        git(root, "update-ref", f"refs/checkpoints/t/steps/{n}", head)
    before = git(root, "show-ref", "-d")
    moved = reflist.pack_refs(root / ".git", "refs/checkpoints/")
    assert moved == 4
    assert git(root, "show-ref", "-d") == before
    assert not (root / ".git" / "refs" / "checkpoints" / "t" / "steps" / "0").exists()
    assert (root / ".git" / "refs" / "heads" / "loose-one").is_file()  # the user's, loose
    assert "^" in (root / ".git" / "packed-refs").read_text()  # the tag's peeled line
    fsck(root)
