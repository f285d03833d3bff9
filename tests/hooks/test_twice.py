"""One moment heard through two recipes: hosts that also run another host's hooks (Cursor,
Copilot CLI and Devin read `.claude/settings*.json`) fire gitckpt twice for one session
start or one stop, often at the same instant. The agent hears each handoff and each
reminder once, whichever recipe fires first."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from conftest import service
from test_hooks import claude, hook, quiet

from gitckpt.core.operations import SessionStartRequest
from gitckpt.service import events
from gitckpt.service.workspace import open_workspace


def cursor_start(root) -> dict:
    """Cursor's sessionStart (cursor.com/docs/hooks), which Cursor also hands, as it is, to
    the hooks it loads from `.claude/settings.json` (there read as Claude Code's)."""
    return {"conversation_id": "conv-1", "generation_id": "g1", "session_id": "conv-1",
            "hook_event_name": "sessionStart", "workspace_roots": [str(root)],
            "cwd": str(root), "is_background_agent": False, "composer_mode": "agent"}


def handoffs(results) -> list:
    return [p for p in results if "twice task" in p.stdout]


def test_one_start_through_two_recipes_hands_off_once(ws):
    service.init(ws.root, "twice task")
    first = hook("session-start", cursor_start(ws.root), host="cursor", cwd=ws.root)
    second = hook("session-start", cursor_start(ws.root), host="claude", cwd=ws.root)
    assert "twice task" in json.loads(first.stdout)["additional_context"]
    assert second.returncode == 0
    assert "twice task" not in second.stdout
    assert "two recipes" in second.stderr, second.stderr


def test_two_recipes_at_the_same_instant_hand_off_once(ws):
    service.init(ws.root, "twice task")
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda host: hook("session-start", cursor_start(ws.root),
                                                  host=host, cwd=ws.root), ["cursor", "claude"]))
    assert all(p.returncode == 0 for p in results), [p.stderr for p in results]
    assert len(handoffs(results)) == 1, [p.stderr for p in results]


def test_other_sessions_and_other_moments_are_not_the_same_start(ws):
    service.init(ws.root, "twice task")
    a = hook("session-start", claude("SessionStart", ws.root, source="startup"))
    b = hook("session-start", claude("SessionStart", ws.root, source="startup",
                                     session_id="another-window"))
    c = hook("session-start", claude("SessionStart", ws.root, source="clear"))
    assert len(handoffs([a, b, c])) == 3, [p.stderr for p in (a, b, c)]


def test_the_same_start_after_the_window_is_a_new_start(ws):
    service.init(ws.root, "twice task")
    now = [1000.0]
    start_request = SessionStartRequest(False, session="s", source="resume", host="cursor")
    other_recipe = SessionStartRequest(False, session="s", source="resume", host="claude")
    first = events.session_start(open_workspace(ws.root), start_request, clock=lambda: now[0])
    now[0] += events.TWICE_WINDOW - 0.1
    again = events.session_start(open_workspace(ws.root), other_recipe, clock=lambda: now[0])
    now[0] += events.TWICE_WINDOW
    later = events.session_start(open_workspace(ws.root), start_request, clock=lambda: now[0])
    assert (first.twice, later.twice) == (None, None)
    assert again.twice is not None
    assert abs(again.twice - (events.TWICE_WINDOW - 0.1)) < 1e-6


def test_the_same_recipe_at_once_is_a_new_start(ws):
    """`claude -p --resume ID` run again within the window is a second start (one recipe
    does not fire twice for one start): it gets its handoff."""
    service.init(ws.root, "twice task")
    now = [1000.0]
    resume = SessionStartRequest(False, session="s", source="resume", host="claude")
    first = events.session_start(open_workspace(ws.root), resume, clock=lambda: now[0])
    now[0] += 1.3
    second = events.session_start(open_workspace(ws.root), resume, clock=lambda: now[0])
    assert (first.twice, second.twice) == (None, None)


def test_two_stop_hooks_at_the_same_instant_remind_once(ws):
    service.init(ws.root, "twice task")
    (ws.root / "unsaved.txt").write_text("x\n")
    stop = claude("Stop", ws.root, stop_hook_active=False)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: hook("stop", stop), range(2)))
    said = [p for p in results if p.stdout.strip()]
    assert len(said) == 1, [(p.stdout, p.stderr) for p in results]
    quiet(next(p for p in results if p not in said))


def test_a_store_whose_memory_cannot_be_written_still_hands_off(ws):
    service.init(ws.root, "twice task")
    state = service.open_timeline(ws.root).store.state
    (state.ensure() / events.MEMORY_LOCK).mkdir()  # no lock file can be made there (root too)
    p = hook("session-start", claude("SessionStart", ws.root, source="startup"))
    assert "twice task" in p.stdout, p.stderr
