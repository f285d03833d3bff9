"""Strict types on every floor: `mypy --strict` over the whole package (pyproject.toml's
[tool.mypy]), as CI runs it, reports nothing, and no module is exempted."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_whole_package_is_strict():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert config["files"] == ["gitckpt"]
    assert "overrides" not in config  # the opt-out list: empty


def test_mypy_strict_reports_nothing():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the `test` extra)")
    p = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Success: no issues found" in p.stdout
