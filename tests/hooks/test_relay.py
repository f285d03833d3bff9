"""A hook and the service under trouble: a peer that acknowledges and then goes silent, a
service that is only slow, and one that runs out of file descriptors. No event is lost, none
is acted on twice, and a hook keeps to its wait."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import service
from test_hooks import claude, drifts, hook, quiet

from gitckpt.hooks import run as hooks
from gitckpt.service.client import ACK, address, ask, claim, claims_dir
from gitckpt.service.listener import Listener

pytestmark = pytest.mark.service


def Relay(serve):
    return Listener(address(), serve, lambda request, conn: None)


def _silent_peer(path: Path, got: list, stop: threading.Event) -> socket.socket:
    """A listener that acknowledges, reads the request, and then never answers (a relay
    wedged after its ACK). Its claims folder is there, as a real relay's is."""
    os.makedirs(path.parent, mode=0o700, exist_ok=True)
    os.mkdir(claims_dir(str(path)), 0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)

    def run():
        conn, _ = listener.accept()
        with conn:
            conn.sendall(ACK)
            data = b""
            while not data.endswith(b"\n"):
                data += conn.recv(65536)
            got.append(data)
            stop.wait(60)  # silent: holds the connection open, says nothing

    threading.Thread(target=run, daemon=True).start()
    return listener


def test_a_silent_relay_costs_the_hook_its_wait_and_the_hook_does_the_work(ws):
    import json

    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    path = Path(address())
    got, stop = [], threading.Event()
    listener = _silent_peer(path, got, stop)
    try:
        start = time.monotonic()
        p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                     tool_input={"command": "make"}),
                 env={"GITCKPT_SERVICE_WAIT": "1"})
        took = time.monotonic() - start
    finally:
        stop.set()
        listener.close()
    quiet(p)
    assert "(served)" not in p.stderr, p.stderr
    assert took >= 1, took  # it waited for the silent peer (a bound below, not a limit)
    [d] = drifts(ws.root)
    assert d.note.tool["command"] == "make"  # done in the hook's own process, once
    # The request reached the peer, and the hook claimed it back: the peer, waking up now,
    # finds it taken and must not act on it.
    [request] = got
    token = json.loads(request)["claim"]
    assert os.path.exists(os.path.join(claims_dir(str(path)), token))
    assert claim(claims_dir(str(path)), token) is False
    os.unlink(path)


def test_a_slow_relay_that_took_the_hook_finishes_it_and_the_hook_does_not(ws):
    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    gate, served = threading.Event(), []

    def slow(request):
        gate.wait(60)
        served.append(hooks.answer(request))
        return served[-1]

    relay = Relay(slow)
    assert relay.start()
    try:
        p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                     tool_input={"command": "slow"}),
                 env={"GITCKPT_SERVICE_WAIT": "0.5"})
        quiet(p)
        assert "did not answer in 0.5 s; it finishes it there (served)" in p.stderr, p.stderr
        assert drifts(ws.root) == []  # the hook did not do it itself
        gate.set()
        for _ in range(200):
            if served:
                break
            time.sleep(0.05)
        assert served, served
        assert "drift" in served[0]["log"], served
        [d] = drifts(ws.root)
        assert d.note.tool["command"] == "slow"
    finally:
        gate.set()
        relay.close()
    assert not os.path.exists(claims_dir(address()))


def test_a_relay_refuses_a_request_the_hook_claimed_back(ws):
    """The other side of the race: a relay that only now gets to a request the hook has
    claimed back (it was stopped) answers `refused` and does nothing."""
    seen = []
    relay = Relay(lambda r: seen.append(r) or {"stdout": "", "log": "served"})
    assert relay.start()
    try:
        token = "ab" * 16
        assert claim(relay.claims, token)  # the hook's claim, made first
        assert relay._take(token) is False
        assert seen == []
        assert not os.path.exists(os.path.join(relay.claims, token))  # settled: cleaned
        assert ask({"host": "claude", "kind": "stop", "raw": "{}", "here": "/"})["log"] \
            == "served"
        assert os.listdir(relay.claims) == []  # the answered claim is removed by the hook
    finally:
        relay.close()


_EXHAUSTED = textwrap.dedent("""
    import logging, os, resource, sys, threading, time
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    warned = threading.Event()  # the relay tried to accept while no descriptor was free

    class Seen(logging.Handler):
        def emit(self, record):
            if "cannot take a connection" in record.getMessage():
                warned.set()

    logging.getLogger().addHandler(Seen())
    from gitckpt.service.client import address
    from gitckpt.service.listener import Listener
    relay = Listener(address(), lambda r: {"stdout": "", "log": "served"}, lambda r, c: None)
    assert relay.start()
    print("ready", flush=True)
    assert sys.stdin.readline() == "exhaust\\n"
    # The thread that answered the first request closes its connection after the hook has the
    # answer: let it, or the descriptor it frees once all are taken serves a later request.
    while [t for t in threading.enumerate()
           if t is not threading.main_thread() and t.name != "gitckpt-accept"]:
        time.sleep(0.01)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as e:
        assert e.errno == 24, e  # EMFILE
    print("full", flush=True)
    assert sys.stdin.readline() == "free\\n"
    # A loaded machine may not run the relay's thread before the hook gives up: its connection
    # waits in the backlog, and the relay meets EMFILE once it runs. Free only after that.
    warned.wait(30)
    for fd in held:
        os.close(fd)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print("freed", flush=True)
    sys.stdin.readline()
    relay.close()
""")


def test_a_relay_out_of_file_descriptors_serves_again_once_they_are_free():
    child = subprocess.Popen([sys.executable, "-c", _EXHAUSTED], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ})
    request = {"host": "claude", "kind": "stop", "raw": "{}", "here": "/"}
    try:
        assert child.stdout.readline() == "ready\n"
        assert ask(request)["log"] == "served"
        child.stdin.write("exhaust\n")
        child.stdin.flush()
        assert child.stdout.readline() == "full\n"
        # No descriptor for the connection: no ACK, so the hook sends nothing and runs itself.
        assert ask(request) is None
        assert ask(request) is None
        child.stdin.write("free\n")
        child.stdin.flush()
        assert child.stdout.readline() == "freed\n"
        answers = []
        for _ in range(40):  # the accept loop's pause is at most 1 s
            answers.append(ask(request))
            if answers[-1] is not None:
                break
            time.sleep(0.1)
        assert answers[-1] == {"stdout": "", "log": "served"}, answers
    finally:
        child.stdin.close()
        err = child.stderr.read()
        child.wait(30)
    assert "the service cannot take a connection" in err
    assert "Too many open files" in err
    assert child.returncode == 0, err
