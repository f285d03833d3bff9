"""The service's thin client speaks the declarations' wire forms without loading them: what it
writes by hand is what the requests derive, read back by the service as the same request."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gitckpt.core.decode import decode
from gitckpt.core.ops.events import CommandCall, HookCall
from gitckpt.hooks import ends
from gitckpt.service import client
from gitckpt.store import logs

text = st.text(max_size=20)


@given(host=text, event=text, raw=text, here=text, voice=st.sampled_from(["mcp", "cli"]),
       prefix=text)
def test_a_hooks_message_is_its_requests_wire_form(host, event, raw, here, voice, prefix):
    message = client.hook_message(host, event, raw, here, voice, prefix)
    call = HookCall(host, event, raw, here, voice, prefix)
    assert message == {"op": call.op, "request": call.to_wire()}
    assert decode(HookCall, message["request"]) == call


@given(argv=st.lists(text, max_size=4), here=text, tty=st.booleans(),
       env=st.dictionaries(text, text, max_size=2), git=st.dictionaries(text, text, max_size=2))
def test_a_commands_message_is_its_requests_wire_form(argv, here, tty, env, git):
    message = client.command_message(argv, here, tty, env, git)
    call = CommandCall(tuple(argv), here, tty, env, git)
    assert message == {"op": call.op, "request": call.to_wire()}
    assert decode(CommandCall, message["request"]) == call


def test_the_hooks_log_file_is_the_stores(monkeypatch, tmp_path):
    for env in ({}, {"XDG_STATE_HOME": str(tmp_path / "s")}, {"GITCKPT_LOG_DIR": str(tmp_path)}):
        monkeypatch.delenv("XDG_STATE_HOME", raising=False)
        monkeypatch.delenv("GITCKPT_LOG_DIR", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert ends.log_file() == str(logs.log_file())


def test_only_a_served_command_goes_to_the_service():
    """The command is the first word after the global options: `service log` is no `log`."""
    assert client.served(["save", "t"], tty=False)
    assert client.served(["-C", "dir", "--json", "resume"], tty=True)
    assert client.served(["--color", "never", "log"], tty=False)
    assert not client.served(["log"], tty=True)  # paged on a terminal: run there
    assert client.served(["log", "--no-pager"], tty=True)
    assert not client.served(["service", "log"], tty=False)
    assert not client.served(["-C", "save", "init", "x"], tty=False)
    assert client.served(["restore", "3", "--apply"], tty=False)
    assert client.served(["restore", "3", "--apply"], tty=True)  # not paged: served
    assert not client.served(["restore", "3"], tty=True)  # a preview, paged
    assert not client.served(["save", "--help"], tty=False)
    assert not client.served([], tty=False)


def test_the_address_holds_the_version_and_the_settings_not_a_sessions_own(monkeypatch):
    here = client.address()
    assert here.startswith(client.runtime_dir())
    monkeypatch.setenv("GITCKPT_ROOT", "/a/project")
    monkeypatch.setenv("GITCKPT_SERVICE_WAIT", "9")
    assert client.address() == here
    monkeypatch.setenv("GITCKPT_MAX_FILE_SIZE", "12345")
    assert client.address() != here
