"""The environment switches read on both sides of the watcher: whether it runs at all, asked
by every resume and doctor, without importing the watcher itself."""

from __future__ import annotations

import os


def watch_enabled() -> bool:
    """GITCKPT_WATCH: anything but off/0/false/no keeps the background watcher on."""
    return os.environ.get("GITCKPT_WATCH", "on").strip().lower() not in (
        "off", "0", "false", "no")
