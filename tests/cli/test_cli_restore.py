"""The restore and diff commands through the real CLI: the user's session from the issue."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import run_cli


def test_restore_session_from_the_issue(ws):
    root = str(ws.root)
    assert run_cli("-C", root, "init", "cli restore").code == 0
    (ws.root / "src" / "auth.py").write_text("def sign():\n    return 1\n")
    (ws.root / "docs").mkdir()
    (ws.root / "docs" / "guide.md").write_text("# guide\n")
    assert run_cli("-C", root, "save", "two files").code == 0
    (ws.root / "src" / "auth.py").write_text("def sign():\n    return 2\n")
    (ws.root / "docs" / "guide.md").unlink()
    (ws.root / "extra.txt").write_text("new\n")

    r = run_cli("-C", root, "diff", "1")
    assert r.code == 0, r.err
    assert "step 1" in r.out
    assert "live workspace" in r.out
    assert re.search(r"M +src/auth.py +\+1 -1", r.out)
    assert re.search(r"D +docs/guide.md", r.out)

    r = run_cli("-C", root, "diff", "0", "1", "--patch")
    assert r.code == 0, r.err
    assert "diff --git a/src/auth.py b/src/auth.py" in r.out
    assert "+    return 1" in r.out

    r = run_cli("-C", root, "diff", "0", "1", "--", "docs")
    assert "docs/guide.md" in r.out
    assert "auth.py" not in r.out

    r = run_cli("-C", root, "restore", "1")
    assert r.code == 0, r.err
    assert "1 to create, 1 to modify, 1 to delete" in r.out
    assert f"Nothing was changed. Apply with: gitckpt -C {root} restore 1 --apply --expect " \
        in r.out
    assert (ws.root / "extra.txt").exists()

    r = run_cli("-C", root, "restore", "1", "--patch")
    assert "-    return 2" in r.out
    assert "+    return 1" in r.out

    r = run_cli("-C", root, "--json", "restore", "1")
    plan = json.loads(r.out)
    assert plan["create"] == ["docs/guide.md"]
    assert plan["delete"] == ["extra.txt"]
    assert plan["applied"] is False
    assert plan["counts"]["modify"] == 1

    r = run_cli("-C", root, "restore", "1", "--apply", "--", "src/auth.py")
    assert r.code == 0, r.err
    assert (ws.root / "src" / "auth.py").read_text().endswith("return 1\n")
    assert (ws.root / "extra.txt").exists()  # outside the path filter

    r = run_cli("-C", root, "--json", "restore", "1", "--apply")
    done = json.loads(r.out)
    assert done["applied"]
    assert done["safety"]
    assert not (ws.root / "extra.txt").exists()
    assert (ws.root / "docs" / "guide.md").read_text() == "# guide\n"

    r = run_cli("-C", root, "restore", done["safety"][:8], "--apply")
    assert r.code == 0, r.err
    assert f"Undo with: gitckpt -C {root} restore " in r.out  # as the apply was run
    assert r.out.rstrip().endswith(" --apply --yes")
    assert (ws.root / "extra.txt").read_text() == "new\n"


def test_restore_errors_are_one_line_with_a_hint(ws):
    root = str(ws.root)
    r = run_cli("-C", root, "restore", "1")
    assert r.code == 1
    assert "No active task" in r.err
    assert "hint:" in r.err
    assert run_cli("-C", root, "init", "errors").code == 0
    r = run_cli("-C", root, "restore", "5")
    assert r.code == 1
    assert "no step 5" in r.err
    assert "Traceback" not in r.err
    r = run_cli("-C", root, "restore", "not-a-target")
    assert r.code == 1
    assert "names no step or commit" in r.err
    r = run_cli("-C", root, "restore", "0", "--", "../x")
    assert r.code == 1
    assert "not inside the workspace" in r.err
    r = run_cli("-C", root, "--json", "restore", "zzzz")
    assert r.code == 1
    assert json.loads(r.out)["error"] == "invalid_argument"
    r = run_cli("-C", root, "diff")
    assert r.code == 2


def test_paths_are_relative_to_the_folder_the_command_runs_in(ws):
    root = str(ws.root)
    assert run_cli("-C", root, "init", "subdir paths").code == 0
    (ws.root / "src" / "app.py").write_text("changed\n")
    (ws.root / "README.md").write_text("changed\n")
    r = run_cli("restore", "0", "--apply", "--", "app.py", cwd=ws.root / "src")
    assert r.code == 0, r.err
    assert (ws.root / "src" / "app.py").read_text() == "print('v2')\n"
    assert (ws.root / "README.md").read_text() == "changed\n"


def test_the_suggested_apply_command_is_exact(ws):
    root = str(ws.root)
    assert run_cli("-C", root, "init", "quoting").code == 0
    (ws.root / "my file.txt").write_text("x\n")
    assert run_cli("-C", root, "save", "with a spaced name").code == 0
    (ws.root / "my file.txt").write_text("changed\n")
    r = run_cli("-C", root, "restore", "1", "--", "my file.txt")
    line = next(ln for ln in r.out.splitlines() if ln.startswith("Nothing was changed"))
    cmd = line.split("Apply with: ")[1]
    import shlex
    args = shlex.split(cmd)
    assert args[:3] == ["gitckpt", "-C", root]
    assert args[-2:] == ["--", "my file.txt"]
    assert "--expect" in args
    r = run_cli(*args[1:])
    assert r.code == 0, r.err
    assert (ws.root / "my file.txt").read_text() == "x\n"


@pytest.mark.user_git
def test_commands_find_the_task_from_a_subfolder_of_a_repository(repo):
    assert run_cli("-C", str(repo), "init", "from the top").code == 0
    (repo / "src" / "deep").mkdir()
    r = run_cli("resume", cwd=repo / "src" / "deep")
    assert r.code == 0
    assert "from the top" in r.out
    (repo / "src" / "app.py").write_text("changed\n")
    r = run_cli("save", "from below", cwd=repo / "src" / "deep")
    assert r.code == 0
    assert "Saved step 1" in r.out


def test_diff_of_a_task_from_another_folder_is_refused(repo):
    (repo / "a").mkdir()
    (repo / "b").mkdir()
    assert run_cli("-C", str(repo / "a"), "init", "in a").code == 0
    task = json.loads(run_cli("-C", str(repo / "a"), "--json", "tasks").out)["active"]
    r = run_cli("-C", str(repo / "b"), "diff", "0", "--task", task)
    assert r.code == 1
    assert f"belongs to the workspace {repo / 'a'}" in r.err


def test_a_patch_pairs_lines_as_git_diff_does(ws, tmp_path):
    """`diff --patch` is git's own diff of the two versions: a blank line left alone in a long
    file stays context (a matcher that junks frequent lines made it -/+), hunks carry git's
    function line, the end-of-file marker sits where git puts it, and the counts are
    `git diff --numstat`'s."""
    root = str(ws.root)
    assert run_cli("-C", root, "init", "patch like git").code == 0
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(120))
    (ws.root / "long.py").write_text(body + "# end")
    assert run_cli("-C", root, "save", "long").code == 0
    changed = body.replace("return 40\n", "return 41\n").replace("def f80():\n", "")
    (ws.root / "long.py").write_text(changed + "# end\n")
    assert run_cli("-C", root, "save", "edited").code == 0
    r = run_cli("-C", root, "diff", "1", "2", "--patch", "--", "long.py")
    assert r.code == 0, r.err
    got = r.out[r.out.index("diff --git"):]
    assert "\n \n" in got  # the unchanged blank lines are context

    # git's diff of the same two texts, outside the user's repository
    other = tmp_path / "git-diff"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "long.py").write_text(body + "# end")
    subprocess.run(["git", "-C", str(other), "add", "long.py"], check=True)
    (other / "long.py").write_text(changed + "# end\n")
    want = subprocess.run(["git", "-C", str(other), "-c", "core.autocrlf=false", "diff",
                           "--no-color", "--no-ext-diff"],
                          capture_output=True, text=True, check=True).stdout
    want = re.sub(r"(?m)^index .*\n", "", want)
    assert got == want
    numstat = subprocess.run(["git", "-C", str(other), "diff", "--numstat"],
                             capture_output=True, text=True, check=True).stdout.split()
    r = run_cli("-C", root, "--json", "diff", "1", "2")
    files = {f["path"]: f for f in json.loads(r.out)["files"]}
    assert [str(files["long.py"]["additions"]), str(files["long.py"]["deletions"])] \
        == numstat[:2]
