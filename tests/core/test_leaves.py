"""The pure leaves: sensitive paths, redaction, task ids, workspace paths, plans, objects."""

from __future__ import annotations

import subprocess
import unicodedata
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitckpt.core.decode import plan_entry
from gitckpt.core.errors import InvalidArgument
from gitckpt.core.ids import TaskId, new_task_id, slugify
from gitckpt.core.inputs import PlanEntry
from gitckpt.core.objects import EMPTY_TREE, Mode, TreeEntry, decode_tree, encode_tree, hash_object
from gitckpt.engine.notes import PlanItem, merge_plan
from gitckpt.engine.records import parse_time, rfc3339
from gitckpt.safety.redact import MARK, redact
from gitckpt.safety.scope import Scope, is_sensitive, parse_size


@pytest.mark.parametrize("path", [
    ".env", ".env.local", "prod.env", ".envrc", "certs/server.pem", "keys/api.key", "id_rsa",
    "home/.ssh/config", ".aws/credentials", "deploy/my_secrets/db.txt", "api-tokens/x.md",
    "config/secret.json", "db_password.yaml", "credentials.csv", ".netrc", ".npmrc",
    "kubeconfig", "infra/terraform.tfstate", "app/apikey.txt", "SECRETS.JSON", "id_ed25519",
    ".docker/config.json", "x/.kube/config", "store.kdbx", "auth.json",
])
def test_sensitive_paths(path):
    assert is_sensitive(path)


@pytest.mark.parametrize("path", [
    "src/tokenizer.py", "docs/secrets.md", "README.md", "src/auth/token_test.py",
    "tokenizer/vocab.txt", "src/password_reset.py", "environment.yml", "keys.py", "env/x.py",
])
def test_not_sensitive(path):
    assert not is_sensitive(path)


@pytest.mark.parametrize(("text", "kept"), [
    ("export OPENAI_API_KEY=sk-abc123def456ghi789", "export OPENAI_API_KEY="),
    ("DB_PASSWORD='hunter2 x' and more", "DB_PASSWORD="),
    ("curl -H 'Authorization: Bearer eyJhbGciOi.abc.def'", "Authorization: Bearer "),
    ("clone https://bob:s3cr3t@example.com/repo.git", "https://bob:"),
    ("mytool --token abcdef123 --verbose", "mytool --token "),
    ("used ghp_abcdefghijklmnopqrstuvwxyz0123 yesterday", "used "),
    ("key AKIAABCDEFGHIJKLMNOP in logs", "key "),
    ("slack xoxb-1234567890-abcdef", "slack "),
])
def test_redaction(text, kept):
    out, n = redact(text)
    assert n == 1
    assert kept + MARK in out
    for secret in ("sk-abc", "hunter2", "eyJhb", "s3cr3t", "abcdef123", "ghp_", "AKIAAB",
                   "xoxb-"):
        assert secret not in out


def test_redaction_leaves_plain_text():
    text = "Refactor the token signing; password reset flow unchanged; see sk-learn docs"
    assert redact(text) == (text, 0)


def test_slugs_and_ids():
    assert slugify("Refactor auth: JWT sessions!") == "refactor-auth-jwt-sessions"
    assert slugify("Café déjà vu") == "cafe-deja-vu"
    assert slugify("重构认证模块") == ""
    tid = new_task_id("重构认证模块")
    assert tid.startswith("task-")
    assert len(tid) == 9
    long = new_task_id("word " * 40)
    assert len(long) <= 45


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_slugs_are_the_decomposed_names_ascii_words(name):
    # ASCII names skip unicodedata (a start-up cost): every name still slugs as its NFKD form
    words = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    assert slugify(name) == slugify(words)
    assert slugify(name + " é") == slugify(name + " e")


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.floats(min_value=-1e10, max_value=2.5e11, allow_nan=False),
                 st.integers(min_value=0, max_value=4 * 10**15).map(lambda us: us / 1e6),
                 st.integers(min_value=0, max_value=4 * 10**9).map(lambda s: s + 0.9999995)))
def test_rfc3339_is_datetimes_isoformat(t):
    # written with time.gmtime (datetime costs a hook 2 ms): the same text, rounding included
    want = datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    assert rfc3339(t) == want
    assert parse_time(rfc3339(t)) == float(int(datetime.fromisoformat(want).timestamp()))


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_task_ids_are_valid_ref_names(name):
    tid = new_task_id(name)
    assert TaskId(tid) == tid
    ref = f"refs/checkpoints/{tid}/head"
    assert subprocess.run(["git", "check-ref-format", ref]).returncode == 0


@pytest.mark.parametrize("bad", ["", "Upper", "-x", "x-", "a--b", "a/b", "a..b", "a b", "é"])
def test_bad_task_ids(bad):
    with pytest.raises(InvalidArgument):
        TaskId(bad)


def test_plan_parse_and_merge():
    assert plan_entry("Logout endpoint=in_progress") == PlanEntry("Logout endpoint",
                                                                     "in_progress")
    assert plan_entry("Set x=1 in config") == PlanEntry("Set x=1 in config", "pending")
    with pytest.raises(InvalidArgument):
        plan_entry("Logout=doing")
    plan = merge_plan([PlanItem("a"), PlanItem("b")], [PlanItem("b", "done"), PlanItem("c")])
    assert plan == [PlanItem("a"), PlanItem("b", "done"), PlanItem("c")]


def test_sizes():
    assert parse_size("100M") == 100 * 1024 * 1024
    assert parse_size("512k") == 512 * 1024
    assert parse_size("2GiB") == 2 * 1024 ** 3
    assert parse_size("17") == 17
    with pytest.raises(InvalidArgument):
        parse_size("lots")


def test_scope_rules(tmp_path):
    (tmp_path / ".ckptignore").write_text("data/\n*.bin\n")
    scope = Scope.load(str(tmp_path), ["*.tmp"])
    assert scope.excluded("data/x.csv") == "excluded"
    assert scope.excluded("a/b.bin") == "excluded"
    assert scope.excluded("x.tmp") == "excluded"
    assert scope.excluded(".env") == "sensitive"
    assert scope.excluded("src/a.py") is None
    with pytest.raises(InvalidArgument):
        Scope(excludes=("[z-a]",))


def test_scope_patterns_have_git_semantics():
    """The same matcher as plain folders use: a folder's contents follow the folder, and a
    negation re-includes a file only when no folder above it is excluded."""
    scope = Scope(excludes=("build/", "foo/**", "!foo/keep", "*.log", "!keep.log"))
    assert scope.excluded("build/") == "excluded"
    assert scope.excluded("build/deep/x.py") == "excluded"
    assert scope.excluded("build") is None  # a file named like a folder pattern
    assert scope.excluded("foo/g") == "excluded"
    assert scope.excluded("foo/keep") is None
    assert scope.excluded("a/x.log") == "excluded"
    assert scope.excluded("a/keep.log") is None
    assert Scope(excludes=("logs/", "!logs/keep.log")).excluded("logs/keep.log") == "excluded"


def test_objects_match_git(tmp_path):
    assert hash_object("tree", b"") == EMPTY_TREE
    blob = hash_object("blob", b"hello\n")
    out = subprocess.run(["git", "hash-object", "--stdin"], input=b"hello\n",
                         capture_output=True).stdout.decode().strip()
    assert blob == out
    entries = [TreeEntry(b"b", Mode.FILE, blob), TreeEntry(b"a", Mode.TREE, EMPTY_TREE),
               TreeEntry(b"a.txt", Mode.EXECUTABLE, blob), TreeEntry(b"\xff", Mode.SYMLINK, blob)]
    body = encode_tree(entries)
    assert sorted(decode_tree(body)) == sorted(entries)
    # git orders "a.txt" before the directory "a" (compared as "a/").
    assert [e.name for e in decode_tree(body)] == [b"a.txt", b"a", b"b", b"\xff"]


def test_patches_cut_lines_as_git_does_and_apply(tmp_path):
    import subprocess

    from gitckpt.core.objects import Mode, TreeEntry
    from gitckpt.engine.patch import FileDiff, unified

    a = b"line one\nsection\x0cbreak\r\ncaf\xe9\nend"
    b = b"line one\nsection\x0cbreak\r\ncaf\xe9\nEND\n"
    old = TreeEntry(b"f.txt", Mode.FILE, "1" * 40)
    new = TreeEntry(b"f.txt", Mode.FILE, "2" * 40)
    text = unified(FileDiff("f.txt", "modified", old, new, 1, 1), a, b)
    (tmp_path / "f.txt").write_bytes(a)
    (tmp_path / "p.patch").write_bytes(text.encode("utf-8", "surrogateescape"))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "apply", "p.patch"], check=True)
    assert (tmp_path / "f.txt").read_bytes() == b


def test_a_workspace_path_cannot_leave_the_workspace_or_name_git():
    import pytest

    from gitckpt.core.errors import InvalidArgument
    from gitckpt.core.paths import WorkPath, normalize_paths

    assert WorkPath("./src//a.py/") == "src/a.py"
    assert WorkPath("a b/ c") == "a b/ c"
    for bad in ("", "/etc/passwd", "../x", "a/../../x", ".git", "sub/.GIT/config", "a\0b",
                ".", "./"):
        with pytest.raises(InvalidArgument, match="not inside the workspace"):
            WorkPath(bad)
    # literal, as git takes them: a backslash and spaces are parts of a name on POSIX
    assert normalize_paths(["src\\a.py", " b ", "src/a.py"]) == (" b ", "src/a.py", "src\\a.py")
    assert normalize_paths(["a", "."]) == ()  # the root: everything


def test_a_suggested_call_names_the_tool_as_the_host_shows_it(monkeypatch):
    """Claude Code's plugin shows the tools as mcp__plugin_gitckpt_gitckpt__<tool>: the
    launcher says so (GITCKPT_TOOL_PREFIX) and every suggested call uses that name; a prefix
    that is not a name is ignored."""
    from gitckpt.core.hints import CLI, MCP, call

    monkeypatch.setenv("GITCKPT_TOOL_PREFIX", "mcp__plugin_gitckpt_gitckpt__")
    assert call("save", title=...).spell(MCP) == "mcp__plugin_gitckpt_gitckpt__ckpt_save(title=...)"
    assert call("save", title=...).spell(CLI) == 'gitckpt save "TITLE"'
    monkeypatch.setenv("GITCKPT_TOOL_PREFIX", "x; rm -rf /")
    assert call("resume").spell(MCP) == "ckpt_resume()"
