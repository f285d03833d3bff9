"""Data from elsewhere, read safely: JSON with a depth and size limit, credentials taken out of
what git prints about a URL, and the quarantine that holds fetched objects until they are
checked."""

from __future__ import annotations

import json
import os
import re
import zlib
from pathlib import Path

import pytest
from conftest import REPO, doubling, git, make_plain, make_repo
from hypothesis import given, settings
from hypothesis import strategies as st

from gitckpt.core import json_input
from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.objects import Mode, TreeEntry, hash_object
from gitckpt.engine.notes import Note
from gitckpt.safety.url_secrets import has_credentials, scrub, secrets_of, without_credentials
from gitckpt.store.discover import open_store
from gitckpt.store.packs.write import PackWriter
from gitckpt.store.quarantine import PREFIX, Quarantine, stale, sweep

DEEP = "[" * 100_000 + "]" * 100_000


# -- JSON --------------------------------------------------------------------------------------

def test_json_nested_too_deep_or_too_large_is_refused_as_a_value_error():
    with pytest.raises(json_input.JsonRefused, match="nested more than 64 levels"):
        json_input.loads(DEEP)  # json itself would raise RecursionError
    with pytest.raises(json_input.JsonRefused, match="nested more than 64"):
        json_input.loads("[" * 65 + "]" * 65)  # below Python's recursion limit, above ours
    assert json_input.depth(json_input.loads("[" * 64 + "]" * 64)) == 64
    with pytest.raises(json_input.JsonRefused, match="more than the 10"):
        json_input.loads('{"a": "' + "x" * 10 + '"}', max_bytes=10)
    with pytest.raises(ValueError, match="Expecting property name"):
        json_input.loads("{not json")
    assert issubclass(json_input.JsonRefused, ValueError)  # callers' handlers take it
    assert json_input.loads('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}


def test_a_deep_note_is_store_corrupt_saying_why():
    for text in ('{"schema": 1, "kind": "step", "x": ' + DEEP + "}",
                 '{"schema": 1, "x": ' + "{\"a\": " * 70 + "1" + "}" * 70 + "}"):
        with pytest.raises(StoreCorrupt, match="nested more than 64 levels deep"):
            Note.parse(text, "commit abc")


def test_no_json_loads_outside_the_helper_reads_foreign_or_stored_data():
    """Every json.loads of gitckpt goes through json_input, but for the SDK's own output,
    gitckpt's own text, the client's reply from its service and the lines the MCP bridge
    passes on (standard library only)."""
    allowed = {("mcp/handshake.py", "msg = json.loads(text)"),
               ("hooks/install.py", "json.loads(new)"),
               ("service/client.py", "reply = json.loads(line)"),
               ("mcp/bridge.py", "return json.loads(line)")}
    root = REPO / "gitckpt"
    found = set()
    for path in root.rglob("*.py"):
        name = path.relative_to(root).as_posix()
        for line in path.read_text().splitlines():
            if "json.loads(" in line and "json_input" not in name:
                found.add((name, next(a for f, a in allowed if f == name)
                           if any(f == name and a in line for f, a in allowed)
                           else line.strip()))
    assert found <= allowed, found - allowed


# -- credentials in URLs -----------------------------------------------------------------------

def test_credentials_are_taken_out_of_what_git_prints():
    url = "git://u:PASSWORD@127.0.0.1:9418/x.git"
    said = scrub("fatal: unable to look up u:PASSWORD@127.0.0.1 (port 9418) (Name or "
                 "service not known)", secrets_of(url))
    assert "PASSWORD" not in said
    assert "127.0.0.1 (port 9418)" in said
    # without knowing the URL too: a password before a host, with or without a scheme
    assert "PASSWORD" not in scrub("unable to look up u:PASSWORD@127.0.0.1 (port 9418)")
    assert scrub("https://tok:p@ss@example.invalid/r.git: denied") == \
        "https://***@example.invalid/r.git: denied"
    said = scrub("fatal: unable to access 'https://h.invalid/x.git?token=SECRET1&"
                 "access_token=SECRET2/': Could not resolve host; also private_token=SECRET3 "
                 "in x?private_token=SECRET3")
    assert not any(s in said for s in ("SECRET1", "SECRET2", "SECRET3")), said
    assert "https://h.invalid/x.git?token=***" in said
    # the secrets of a URL, percent-decoded too, wherever a message repeats them
    assert scrub("bad credentials p@ss for user",
                 secrets_of("https://u:p%40ss@h/x")) == "bad credentials *** for user"
    token = "ghp_" + "a1B2" * 9
    assert scrub(f"{token} rejected", secrets_of(f"https://{token}@github.com/a/b")) == \
        "*** rejected"
    # a plain user name is no credential, and is not taken out of every word
    assert secrets_of("ssh://git@host/x.git") == []
    assert scrub("git push failed", secrets_of("ssh://git@host/x.git")) == "git push failed"


def test_which_urls_hold_credentials_and_what_is_left_without_them():
    cases = {
        "https://tok:p@ss@example.invalid/r.git": (True, "https://example.invalid/r.git"),
        "https://h/x.git?token=S": (True, "https://h/x.git"),
        "https://ghp_0123456789abcdefghij0123456789abcdef@github.com/a/b":
            (True, "https://github.com/a/b"),
        "ssh://git@host/x.git": (False, "ssh://git@host/x.git"),
        "git@github.com:a/b.git": (False, "git@github.com:a/b.git"),
        "/srv/git/x.git": (False, "/srv/git/x.git"),
        "origin": (False, "origin"),
    }
    for url, (held, clean) in cases.items():
        assert (has_credentials(url), without_credentials(url)) == (held, clean), url


# -- the quarantine of fetched objects ---------------------------------------------------------

@pytest.fixture(params=["git", "dir"])
def store(request, tmp_path, hermetic):
    root = make_repo(tmp_path / "repo") if request.param == "git" else \
        make_plain(hermetic / "plain")
    store = open_store(root)
    store.prepare()
    return store


def objects_of(store) -> set[str]:
    """Every file under the store's objects folder (relative paths)."""
    base = Path(store.objects_folder)
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


def loose_into(folder: Path, kind: str, body: bytes) -> str:
    oid = hash_object(kind, body)
    (folder / oid[:2]).mkdir(exist_ok=True)
    (folder / oid[:2] / oid[2:]).write_bytes(zlib.compress(b"%s %d\0" % (kind.encode(),
                                                                          len(body)) + body))
    return oid


def test_quarantined_objects_are_read_there_and_vanish_unless_admitted(store):
    before = objects_of(store)
    big = os.urandom(300_000)
    with Quarantine(store) as q:
        assert q.path.parent == Path(store.objects_folder)
        assert q.path.name.startswith(PREFIX)
        loose = loose_into(q.path, "blob", b"fetched\n")
        packer = PackWriter(str(q.path), lambda k, d: pytest.fail("no loose write"),
                            threshold=0)
        packed = packer.add("blob", big)
        packer.close()
        for oid, body in ((loose, b"fetched\n"), (packed, big)):
            assert q.has_object(oid)
            assert not store.has_object(oid)
            assert q.read_object(oid) == ("blob", body)
            assert q.object_size(oid) == len(body)
        own = store.write_blob(b"the store's own\n")  # the store's objects show through
        assert q.read_blob(own) == b"the store's own\n"
        assert q.object_size(own) == 16
    assert not q.path.exists()
    assert not store.has_object(loose)
    assert not store.has_object(packed)
    store.flush()
    added = objects_of(store) - before  # the store's own blob, loose or in a pack of its own
    assert not any(loose[2:] in f or (f.endswith((".idx", ".pack")) and store.kind == "git")
                   for f in added), added
    with Quarantine(store) as q:
        loose = loose_into(q.path, "blob", b"admitted\n")
        packer = PackWriter(str(q.path), lambda k, d: pytest.fail("no loose write"),
                            threshold=0)
        packed = packer.add("blob", big)
        packer.close()
        assert q.admit() == 3  # the loose object, the pack and its index
    assert store.read_blob(loose) == b"admitted\n"
    assert store.read_blob(packed) == big
    assert store.object_size(packed) == len(big)
    assert not any(n.startswith(PREFIX) for n in os.listdir(store.objects_folder))


def test_only_a_quarantine_no_fetch_holds_is_stale(store):
    objects = Path(store.objects_folder)
    with Quarantine(store) as live:
        assert (objects / (live.path.name + ".lock")).is_file()
        killed = objects / f"{PREFIX}killed"  # what a fetch killed while it fetched leaves
        killed.mkdir()
        (objects / f"{PREFIX}killed.lock").write_bytes(b"")
        loose_into(killed, "blob", b"unchecked\n")
        lone = objects / f"{PREFIX}early.lock"  # killed before it made its folder
        lone.write_bytes(b"")
        bare = objects / f"{PREFIX}bare"  # its lock file already removed
        bare.mkdir()
        assert stale(objects) == [bare, lone, killed]  # never the one a fetch holds
        assert sweep(objects) == 3
        assert stale(objects) == []
        assert sorted(n for n in os.listdir(objects) if n.startswith(PREFIX)) == \
            [live.path.name, live.path.name + ".lock"]
    assert not [n for n in os.listdir(objects) if n.startswith(PREFIX)]
    assert "blob" not in json.dumps(sorted(objects_of(store)))  # nothing else was left


def test_a_dir_store_reads_a_git_repack_of_itself(tmp_path, hermetic):
    """object_size of packed entries whole and deltified, as git writes them."""
    root = make_plain(hermetic / "plain")
    store = open_store(root)
    store.prepare()
    base = os.urandom(50_000)
    blobs = [store.write_blob(base + bytes([i]) * 100) for i in range(5)]
    tree = store.write_tree([TreeEntry(f"f{i}".encode(), Mode.FILE, oid)
                             for i, oid in enumerate(blobs)])
    commit = store.write_commit(tree, [], "packed\n", 1_700_000_000)
    store.flush()
    with store.lock():
        store.create_ref("refs/checkpoints/packed/head", commit)
    git(root, f"--git-dir={store.location}", "repack", "-q", "-a", "-d", "-f", "--depth=10",
        "--window=10")
    shown = git(root, f"--git-dir={store.location}", "verify-pack", "-v",
                *map(str, Path(store.objects_folder, "pack").glob("*.idx")))
    assert any(oid in line and len(line.split()) > 5 for oid in blobs
               for line in shown.splitlines())  # some are deltas
    fresh = open_store(root)
    for oid in [*blobs, tree, commit]:
        assert fresh.object_size(oid) == len(fresh.read_object(oid)[1])
    with pytest.raises(StoreCorrupt):
        fresh.object_size(hash_object("blob", b"never written"))


@pytest.mark.parametrize("text", [
    lambda n: "a" * n + " x=1 http://",  # a scheme's letters, each a start before
    lambda n: "token" * (n // 5) + " x=1",  # a credential's name, backtracked over before
    lambda n: "http://h/" + "?" * n + " x=1",  # a query's separators, each a start before
    lambda n: "http://h/?" + "a." * (n // 2) + " x=1",
], ids=["scheme", "name", "query", "dots"])
def test_taking_credentials_out_of_a_text_is_linear_in_it(text):
    """A text from elsewhere (a fetched note, a remote's message) of any length costs `scrub`
    linear work: doubling it doubles the work, and a megabyte of it is one pass."""
    assert doubling(scrub, text) < 3
    scrub(text(1_000_000))


def test_a_bare_user_and_password_are_found_in_linear_time():
    assert doubling(scrub, lambda n: "\\" * n + "@h") < 3
    assert doubling(scrub, lambda n: "@h " + "a:" * (n // 2)) < 3  # many colons, one run
    scrub("x" * 1_000_000 + "@h")


#: The pattern `_bare_userinfo` finds in one pass (url_secrets.py states it too).
BARE = re.compile(r"(?<![\w:/.@-])[^\s/@:'\"()<>]+:[^\s/'\"()<>]+@(?=[\w\[])")


@given(st.text(alphabet="ab:@/ .\\-[('é1_\t", max_size=24))
@settings(max_examples=2000, deadline=None)
def test_a_bare_user_and_password_are_hidden_as_the_pattern_hides_them(text):
    from gitckpt.safety.url_secrets import HIDDEN, _bare_userinfo

    assert _bare_userinfo(text) == BARE.sub(HIDDEN + "@", text)
