"""gitnames: a table of names and paths, then the same table checked against real git
(`git update-index --cacheinfo`) and real libgit2 (a pygit2 checkout of a tree holding it)."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import CheckoutStrategy, ObjectType

from gitckpt.core.gitnames import refused_name, refused_path

FILE, LINK = 0o100644, 0o120000
IGNORED = "\u200c \u200d \u200e \u200f \u202a \u202b \u202c \u202d \u202e \u206a \u206f \ufeff"


def b(name: str | bytes) -> bytes:
    return name.encode() if isinstance(name, str) else name


REFUSED_NAMES = [(b(n), m) for n, m in [
    ("", FILE), (".", FILE), ("..", FILE), ("a/b", FILE), (b"a\0b", FILE),
    # .git in any case, and as NTFS reads it: trailing dots and spaces, streams, 8.3 name
    (".git", FILE), (".GIT", FILE), (".Git", LINK), (".git.", FILE), (".git ", FILE),
    (".git. .", FILE), (".git...", FILE), (".git::$INDEX_ALLOCATION", FILE), (".git:foo", FILE),
    (".git .:x", FILE), ("GIT~1", FILE), ("git~1", FILE), ("Git~1 .", FILE), ("GIT~1:x", FILE),
    (".git\\foo", FILE), ("GIT~1\\x", FILE),
    # .git as HFS+ reads it: ignored code points anywhere, and (git) a non-UTF-8 tail
    *((f".g{c}it", FILE) for c in IGNORED.split()), ("\ufeff.git", FILE),
    (".G\u200dI\u200eT", FILE), (".git\u200c", FILE), (b".git\xff", FILE),
    (b".git\xef\xbf\xbf", FILE), (".\u0167it", FILE),
    # backslashes
    ("foo\\.git", FILE),
    # symlinked .gitmodules, and its NTFS and HFS+ forms
    (".gitmodules", LINK), (".GITMODULES", LINK), (".gitmodules .", LINK),
    (".gitmodules...", LINK), (".gitmodules:x", LINK), ("GITMOD~1", LINK), ("gitmod~4", LINK),
    ("gitmod~1.", LINK), ("GITMOD~1 ", LINK), ("gi7eba~1", LINK), ("GI7EBA~9", LINK),
    ("gi7eb~12", LINK), ("~1234567", LINK), (".git\u200cmodules", LINK),
    (".\u0167itmodules", LINK), (b".gitmodules\xff", LINK),
]]

ACCEPTED_NAMES = [(b(n), m) for n, m in [
    (".github", FILE), (".gitkeep", FILE), ("git", FILE), (".git2", FILE), ("GIT~2", FILE),
    ("GIT~10", FILE), (".git~1", FILE), ("git~1x", FILE), (".gitx", FILE), (".git.x", FILE),
    (".git\t", FILE), (".git\u200b", FILE), (b"\xff.git", FILE), ("src", FILE),
    ("a.txt", FILE), ("a\\b", FILE), ("...", FILE), (" ", FILE), ("-rf", FILE),
    ("line\nbreak", FILE),
    ("a:b", FILE), ("CON", FILE), ("foo.", FILE), ("café.txt", FILE), ("cafe\u0301.txt", FILE),
    (b"caf\xe9.txt", FILE), ("日本語.md", FILE),
    (".gitignore", FILE), (".gitmodules", FILE), ("GITMOD~1", FILE), ("~1234567", FILE),
    # git refuses none of these as symlinks (verify_path() in read-cache.c checks .gitmodules
    # only); nor does libgit2
    (".gitignore", LINK), (".gitattributes", LINK), (".mailmap", LINK), (".Mailmap ", LINK),
    ("GI250A~1", LINK), ("GI7D29~1", LINK), ("MABA30~1", LINK), ("MAILMA~1", LINK),
    (".mail\u200cmap", LINK), ("gitmod~5", LINK), ("~123456", LINK), ("~12345678", LINK),
    ("gi7eba~10", LINK), (".gitmodulesx", LINK), (".gitm", LINK), ("link", LINK),
]]

REFUSED_PATHS = [(b(p), m) for p, m in [
    ("", FILE), ("/a", FILE), ("a//b", FILE), ("a/", FILE), ("./a", FILE), ("a/./b", FILE),
    ("a/../b", FILE), ("../a", FILE), ("a/.git/b", FILE), ("a/.GIT", FILE), ("a/GIT~1/b", FILE),
    ("a/.git. /b", FILE), ("a/.g\u200cit/b", FILE), (b"a/\0", FILE),
    ("x/.gitmodules", LINK), (".gitmodules/x", LINK), ("GITMOD~1/x", LINK),
]]

ACCEPTED_PATHS = [(b(p), m) for p, m in [
    ("a", FILE), ("src/a.txt", FILE), ("a/b/c", FILE), (".github/workflows/ci.yml", FILE),
    ("docs/.gitignore", FILE), ("docs/.gitignore", LINK), ("café/naïve.txt", FILE),
    ("a/.gitmodules", FILE), (".gitmodules/x", FILE), ("a\\b/c", FILE),
]]

# Where git or libgit2 (both on Linux) take a name or path that refused_name/refused_path refuse:
# the union of what they refuse is refused. Every other verdict must be the same as ours.
GIT_TAKES = {
    (b".\xc5\xa7it", FILE): "only libgit2 refuses: it keeps the low byte of U+0167, `g`",
    (b".\xc5\xa7itmodules", LINK): "only libgit2 refuses: it reads U+0167 as `g`",
    (b"GITMOD~1/x", LINK): "stricter than both: git's is_ntfs_dotgitmodules() and libgit2 judge "
                           "the NTFS forms of a symlink's name at the end of the path only",
}
LIBGIT2_TAKES = {
    (b".git .:x", FILE): "only git refuses: is_ntfs_dotgit() ends the name at `:` after dots "
                         "and spaces, libgit2's validate_dotgit_ntfs() only right after .git",
    (b"foo\\.git", FILE): "only git refuses: verify_path() checks for .git after a backslash",
    (b".git\xff", FILE): "only git refuses: is_hfs_dotgit() ends the name at bad UTF-8",
    (b".git\xef\xbf\xbf", FILE): "only git refuses: its UTF-8 reader refuses U+FFFF",
    (b".gitmodules\xff", LINK): "only git refuses: is_hfs_dotgitmodules() ends at bad UTF-8",
    (b"GITMOD~1/x", LINK): GIT_TAKES[(b"GITMOD~1/x", LINK)],
}


@pytest.mark.parametrize(("name", "mode"), REFUSED_NAMES)
def test_refused_names(name, mode):
    assert refused_name(name, mode=mode), name
    if b"/" not in name:
        assert refused_path(name, mode=mode), name


@pytest.mark.parametrize(("name", "mode"), ACCEPTED_NAMES)
def test_accepted_names(name, mode):
    assert refused_name(name, mode=mode) is None, (name, refused_name(name, mode=mode))
    assert refused_path(name, mode=mode) is None, name


@pytest.mark.parametrize(("path", "mode"), REFUSED_PATHS)
def test_refused_paths(path, mode):
    assert refused_path(path, mode=mode), path


@pytest.mark.parametrize(("path", "mode"), ACCEPTED_PATHS)
def test_accepted_paths(path, mode):
    assert refused_path(path, mode=mode) is None, (path, refused_path(path, mode=mode))


def test_reasons_are_short_and_name_the_rule():
    assert refused_name(b".git") == "a name git refuses (.git)"
    assert refused_name(b"GIT~1") == "a name NTFS reads as .git"
    assert refused_name(".g\u200cit".encode()) == "a name HFS+ reads as .git"
    assert refused_name(b"GITMOD~1", mode=LINK) == "a symlink NTFS reads as .gitmodules"
    assert refused_name(b"GITMOD~1") is None
    assert refused_name(b"GITMOD~1", mode=0o40000) is None
    assert refused_path(b"a/.git/b") == "a name git refuses (.git): 'a/.git/b'"
    assert refused_path(b"/etc/passwd") == "an absolute path"


def _cases() -> list[tuple[bytes, int]]:
    """Every name and path of the tables that git can be given: no NUL (argv cannot hold it),
    and no name with a slash (git reads it as a path; the path tables have those)."""
    names = [c for c in REFUSED_NAMES + ACCEPTED_NAMES if b"/" not in c[0]]
    return [c for c in names + REFUSED_PATHS + ACCEPTED_PATHS if b"\0" not in c[0]]


def _verdicts_differ(cases, refuses, takes: dict) -> list[str]:
    """Each case where the tool refuses what refused_path() takes or takes what it refuses,
    except the listed cases, which the tool must take and refused_path() must refuse."""
    wrong = []
    for path, mode in cases:
        ours, theirs = refused_path(path, mode=mode) is not None, refuses(path, mode)
        listed = (path, mode) in takes
        if theirs != (ours and not listed) or (listed and not ours):
            wrong.append(f"{path!r} {mode:o}: tool refuses={theirs}, refused_path refuses={ours}"
                         + (f", listed: {takes[path, mode]}" if listed else ""))
    return wrong


def test_git_refuses_exactly_these(tmp_path: Path):
    env = {**os.environ, "HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig")}
    (tmp_path / "gitconfig").write_text("")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    # protectNTFS is on by default everywhere since git 2.24.1, protectHFS only on macOS.
    git = ["git", "-C", str(repo), "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true"]
    blob = subprocess.run([*git, "hash-object", "-w", "--stdin"], input=b"target\n", env=env,
                          capture_output=True, check=True).stdout.strip()

    counter = itertools.count()

    def refuses(path: bytes, mode: int) -> bool:
        # a fresh index for each path, so no earlier entry conflicts with it
        index = tmp_path / f"index-{next(counter)}"
        p = subprocess.run([*git, "update-index", "--add", "--cacheinfo",
                            b"%o,%s,%s" % (mode, blob, path)],
                           env={**env, "GIT_INDEX_FILE": str(index)}, capture_output=True)
        assert p.returncode == 0 or b"Invalid path" in p.stderr, p.stderr
        return p.returncode != 0

    wrong = _verdicts_differ(_cases(), refuses, GIT_TAKES)
    assert not wrong, "\n".join(wrong)


def test_libgit2_refuses_exactly_these(tmp_path: Path):
    cases = [c for c in _cases() if all(c[0].split(b"/"))]  # trees cannot hold empty names
    counter = itertools.count()

    def refuses(path: bytes, mode: int) -> bool:
        repo = pygit2.init_repository(str(tmp_path / f"r{next(counter)}"))
        repo.config["core.protectNTFS"] = True
        repo.config["core.protectHFS"] = True
        oid = repo.create_blob(b"target\n")
        for part in reversed(path.split(b"/")):  # trees written raw: no name is checked
            oid = repo.odb.write(ObjectType.TREE, b"%o %s\0" % (mode, part) + oid.raw)
            mode = 0o40000
        try:
            repo.checkout_tree(repo[oid], strategy=CheckoutStrategy.FORCE)
        except pygit2.GitError as e:
            if "invalid path" not in str(e):
                raise  # another failure is not a verdict
            return True
        return False

    wrong = _verdicts_differ(cases, refuses, LIBGIT2_TAKES)
    assert not wrong, "\n".join(wrong)


def test_an_untested_pygit2_is_refused_with_the_versions_to_install():
    import pytest

    from gitckpt.core.errors import Unsupported
    from gitckpt.store.git import libgit2

    libgit2._check_version("1.21.0")
    libgit2._check_version("1.18.2")
    for bad in ("1.17.9", "2.0.0", "1.22.0", "garbage"):
        with pytest.raises(Unsupported, match=r"tested with pygit2 1\.18 to 1\.21") as e:
            libgit2._check_version(bad)
        assert "pip install 'pygit2>=1.18,<1.22'" in e.value.hint
