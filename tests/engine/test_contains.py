"""`explain COMMIT`: which task checkpoints a commit of the user's holds, found by content,
with the step, the prompt and the verification of each file; and what it does not know."""

from __future__ import annotations

import pytest
from conftest import git, make_plain, run_cli, service

from gitckpt.core.errors import InvalidArgument, Unsupported


@pytest.mark.user_git
def test_a_commit_names_the_checkpoints_its_files_come_from(repo):
    service.init(repo, "explain task")
    (repo / "feature.py").write_text("def feature():\n    return 1\n")
    service.capture(repo, trigger="tool", tool={"name": "Write", "host": "claude"})
    service.save(repo, "feature", conclusion="feature returns 1",
                 commands=[{"command": "pytest -q", "exit_code": 0}])
    (repo / "by_hand.txt").write_text("the user's own\n")
    git(repo, "add", "feature.py", "by_hand.txt")
    git(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "add the feature")
    got = service.explain(repo, "HEAD")
    assert got.subject == "add the feature"
    assert got.tasks == [service.open_timeline(repo).resolve(None)]
    stories = {f.path: f for f in got.files}
    feature = stories["feature.py"]
    assert (feature.label, feature.saved_in, feature.conclusion) == \
        ("drift after step 0", 1, "feature returns 1")
    assert feature.tool["name"] == "Write"
    assert feature.verified == "`pytest -q` passed on a tree with this file (step 1)"
    assert stories["by_hand.txt"].task is None
    out = run_cli("explain", cwd=repo)
    assert out.code == 0, out.err
    assert "feature.py: " in out.out
    assert "in no checkpoint" in out.out


def test_bad_commits_and_plain_folders_get_a_clear_error(repo, hermetic):
    service.init(repo, "explain task")
    with pytest.raises(InvalidArgument) as e:
        service.explain(repo, "no-such-commit")
    assert e.value.hint
    plain = make_plain(hermetic / "plain")
    service.init(plain, "plain task")
    with pytest.raises(Unsupported):
        service.explain(plain, "HEAD")


@pytest.mark.user_git
def test_a_root_commit_and_a_link_where_a_file_was(tmp_path):
    import os

    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "gone").write_text("a file at the start\n")
    service.init(root, "root task")
    (root / "a.txt").write_text("written by the agent\n")
    (root / "gone").unlink()
    service.save(root, "a", conclusion="a is there")
    os.symlink("a.txt", root / "gone")  # the user's link where the agent deleted a file
    git(root, "add", "-A")
    git(root, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "root")
    got = service.explain(root, "HEAD")
    assert [(f.path, f.label) for f in got.files] == [("a.txt", "step 1")]
