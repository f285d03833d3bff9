"""mypy in CI: strict on core/, safety/, store/base.py and store/working_copy.py, and held to
the committed .ci/mypy-baseline.txt elsewhere, which may only shrink (.ci/mypy_baseline.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "mypy_baseline.py"


def checker() -> ModuleType:
    """.ci/mypy_baseline.py, imported from its path (it is no module of the package)."""
    spec = importlib.util.spec_from_file_location("mypy_baseline", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mypy_reports_nothing_beyond_the_baseline():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the `test` extra)")
    p = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_an_error_outside_the_baseline_fails_the_check(monkeypatch, capsys):
    mb = checker()
    baseline = mb.read_baseline()
    extra = "gitckpt/engine/notes.py: attr-defined: \"Note\" has no attribute \"nope\""
    assert mb.compare([*baseline, extra], baseline) == ([extra], [])
    monkeypatch.setattr(mb, "run_mypy", lambda: sorted([*baseline, extra]))
    assert mb.main([]) == 1
    assert extra in capsys.readouterr().out


def test_a_fixed_error_is_a_note_and_passes(monkeypatch, capsys):
    mb = checker()
    gone = "gitckpt/cli/x.py: misc: fixed since"
    monkeypatch.setattr(mb, "read_baseline", lambda: [gone])
    monkeypatch.setattr(mb, "run_mypy", lambda: [])
    assert mb.main([]) == 0
    out = capsys.readouterr().out
    assert gone in out
    assert "--update" in out


def test_errors_are_compared_without_line_numbers_and_counted():
    mb = checker()
    out = ["gitckpt/cli/x.py:12: error: Name \"f\" already defined on line 3  [no-redef]",
           "gitckpt/cli/x.py:12: note: See https://mypy.readthedocs.io",
           "gitckpt/cli/x.py:40:7: error: \"None\" not callable  [misc]",
           "gitckpt/cli/x.py:90:7: error: \"None\" not callable  [misc]"]
    found = mb.normalise(out)
    assert found == ["gitckpt/cli/x.py: misc: \"None\" not callable",
                     "gitckpt/cli/x.py: misc: \"None\" not callable",
                     "gitckpt/cli/x.py: no-redef: Name \"f\" already defined on line N"]
    # moved by an unrelated edit: the same errors
    assert mb.normalise(x.replace(":12:", ":15:") for x in out) == found
    # a second error of the same text is a new one
    assert mb.compare(found, found[1:]) == ([found[0]], [])


def test_strict_modules_are_never_in_the_baseline(monkeypatch, capsys):
    mb = checker()
    strict = mb.strict_modules()
    assert {"gitckpt.core.*", "gitckpt.safety.*", "gitckpt.store.base",
            "gitckpt.store.working_copy"} <= set(strict)
    for path, expected in [("gitckpt/core/ids.py", True), ("gitckpt/core/__init__.py", True),
                           ("gitckpt/safety/redact.py", True), ("gitckpt/store/base.py", True),
                           ("gitckpt/store/working_copy.py", True),
                           ("gitckpt/store/git/store.py", False),
                           ("gitckpt/store/basement.py", False), ("gitckpt/corex.py", False)]:
        assert mb.in_strict(f"{path}: misc: m", strict) is expected, path
    assert not [e for e in mb.read_baseline() if mb.in_strict(e, strict)]
    # an error there fails the check even when the baseline lists it
    error = "gitckpt/core/ids.py: type-arg: Missing type arguments for generic type \"dict\""
    monkeypatch.setattr(mb, "read_baseline", lambda: [error])
    monkeypatch.setattr(mb, "run_mypy", lambda: [error])
    assert mb.main([]) == 1
    assert "strict" in capsys.readouterr().out
