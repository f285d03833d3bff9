"""No regular expression of gitckpt costs more than linear work on its input: each one found
in the package (module-level patterns and the literal patterns of `re.*` calls), used as the
code uses it (a scan, or a match anchored at the start), is fed runs of every character class
it takes and of its own words, at 16 KB and 32 KB and then 1 MB. The work is the process's CPU
time compared with itself: doubling the input must not more than triple it (a quadratic scan
quadruples it), and a megabyte costs what the 16 KB cost times the size, with room."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import time
from pathlib import Path

import pytest
from conftest import doubling

import gitckpt

pytestmark = pytest.mark.slow

PACKAGE = Path(gitckpt.__file__).parent
SCANS = {"search", "sub", "subn", "split", "findall", "finditer"}
ANCHORED = {"match", "fullmatch"}
PUMPS = [*"aA0 \t\n-_./\\:=\"'@#${[(<*+,;|~`!?%&^é", "aA", "a ", "a-", "a.", "a_", "0.",
         "a=", "a:", "ab", "%2", "\r\n", "a\n", "a/", "a@"]


def patterns() -> dict[tuple[object, int], tuple[re.Pattern, str, set[str]]]:
    """Every pattern of the package, with where it is and how the code calls it."""
    found: dict[tuple[object, int], tuple[re.Pattern, str, set[str]]] = {}

    def add(p: object, where: str, uses: set[str]) -> None:
        if isinstance(p, re.Pattern):
            found.setdefault((p.pattern, p.flags), (p, where, set()))[2].update(uses)

    for info in pkgutil.walk_packages([str(PACKAGE)], "gitckpt."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        tree = ast.parse(Path(module.__file__).read_text())
        used: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in SCANS | ANCHORED:
                v = node.value
                name = v.id if isinstance(v, ast.Name) else getattr(v, "attr", None)
                if name:
                    used.setdefault(name, set()).add(node.attr)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in SCANS | ANCHORED | {"compile"} and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str | bytes)):
                flags = re.IGNORECASE if any(
                    isinstance(k, ast.Attribute) and k.attr in ("I", "IGNORECASE")
                    for k in ast.walk(node) if k is not node.args[0]) else 0
                try:
                    p = re.compile(node.args[0].value, flags)
                except re.error:
                    continue
                fn = node.func.attr
                # compiled: called as the name it is bound to is (below), else unknown
                add(p, f"{info.name}:{node.lineno}", set() if fn == "compile" else {fn})
        for name, value in vars(module).items():
            uses = used.get(name, set())
            items = value.values() if isinstance(value, dict) else \
                value if isinstance(value, list | tuple | frozenset | set) else [value]
            for item in items:
                for p in item if isinstance(item, tuple) else (item,):
                    add(p, f"{info.name}.{name}", uses if p is value else set())
    return found


FOUND = patterns()


def _cost(p: re.Pattern, anchored: str | None, text: str | bytes, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        began = time.thread_time()
        if anchored:
            getattr(p, anchored)(text)
        else:
            for _m in p.finditer(text):
                pass
        best = min(best, time.thread_time() - began)
    return best


def _text(p: re.Pattern, pump: str, n: int) -> str | bytes:
    text = _run(pump)(n)
    return text.encode("utf-8") if isinstance(p.pattern, bytes) else text


def _pumps(p: re.Pattern) -> list[str]:
    source = p.pattern if isinstance(p.pattern, str) else p.pattern.decode("latin-1")
    own = sorted({c for c in source if c.isprintable() and c not in "()[]{}?*+|^$\\"})
    return [*PUMPS, *own, *re.findall(r"[A-Za-z_]{2,}", source)[:12]]


def test_the_package_has_patterns_to_check():
    assert len(FOUND) >= 40  # the finder still finds them (57 when this was written)


@pytest.mark.parametrize("key", sorted(FOUND, key=lambda k: FOUND[k][1]),
                         ids=lambda k: FOUND[k][1])
def test_each_pattern_costs_linear_work(key):
    p, where, uses = FOUND[key]
    # a pattern not seen called is checked as a scan, the costlier use
    anchored = sorted(uses)[0] if uses and not uses & SCANS else None
    worst, worst_pump = 0.0, None
    for pump in _pumps(p):
        if _cost(p, anchored, _text(p, pump, 16384), runs=1) < 0.002:
            continue  # too little to compare: at most a few microseconds a kilobyte
        small = _cost(p, anchored, _text(p, pump, 16384))
        double = _cost(p, anchored, _text(p, pump, 32768))
        assert double < 3 * small, (where, pump, small, double)
        if small > worst:
            worst, worst_pump = small, pump
    if worst_pump is not None:  # the costliest run, at a megabyte: what 64 times 16 KB cost
        big = _cost(p, anchored, _text(p, worst_pump, 1 << 20), runs=1)
        assert big < 3 * 64 * worst, (where, worst_pump, worst, big)


def _run(pump: str):
    """Texts of `pump` repeated to a given length."""
    return lambda n: (pump * (n // len(pump) + 1))[:n]


@pytest.mark.parametrize("pump", [*PUMPS, "key", "token", "password=", "ghp_", "AKIA", "eyJ",
                                  "://a:", "Bearer ", "-----BEGIN "])
def test_the_secret_rules_cost_linear_work(pump):
    """The secret rules are patterns built at run time from their tables, so the finder above
    does not see them: the redaction of a text, and the scan of a file's bytes, are doubled
    instead (tests/safety/test_redact.py redacts a megabyte of each hostile shape)."""
    from gitckpt.safety.file_secrets import credential_in
    from gitckpt.safety.redact import redact

    assert doubling(redact, _run(pump), floor=1e-3) < 3, pump
    assert doubling(lambda t: credential_in(t.encode()), _run(pump), floor=1e-3) < 3, pump
