"""The real hosts, pinned and installed from npm by `.ci/run` (GITCKPT_TEST_HOSTS names the
folder of their commands, `node_modules/.bin`): a test of a host that is not there skips,
saying why. (Not a conftest: `from conftest import ...` in tests/hosts is tests/conftest.py.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: The versions the suite runs (and `.ci/run` installs); docs/hosts.md's matrix names them.
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "copilot": ("@github/copilot", "1.0.102"),
    "opencode": ("opencode-ai", "1.18.33"),
}


def host_binary(name: str) -> Path:
    """The pinned host command `name`, or the test skips with the reason."""
    folder = os.environ.get("GITCKPT_TEST_HOSTS")
    if not folder:
        pytest.skip(f"no host folder: .ci/run installs {PINNED[name][0]}@{PINNED[name][1]} "
                    "and names its node_modules/.bin in GITCKPT_TEST_HOSTS")
    path = Path(folder) / name
    if not path.exists():
        pytest.skip(f"{name} is not in {folder} (its npm install failed; see .ci/run's log)")
    return path


def gitckpt_bin() -> str:
    """The gitckpt under test, as a host's PATH finds it."""
    found = shutil.which("gitckpt")
    assert found, "gitckpt is not on PATH (pip install -e . in the test's environment)"
    return found

