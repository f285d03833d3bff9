"""mypy on the package, held to a baseline that may only shrink.

Runs `python -m mypy gitckpt` (configured in pyproject.toml) and compares its errors with
.ci/mypy-baseline.txt, each written `path: code: message` without its line number, so an edit
that moves an old error does not break the check. Fails (exit 1) on an error that is not in
the baseline, on any error of a strict module (the `[[tool.mypy.overrides]]` entry with
`disallow_untyped_defs`: those are never baselined), and on a baseline that lists one. Errors
fixed since are a note: `--update` rewrites the baseline to what mypy reports now.

    python .ci/mypy_baseline.py            # check
    python .ci/mypy_baseline.py --update   # rewrite the baseline (after fixing errors)

Standard library only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
PACKAGE = "gitckpt"
HEADER = ("# mypy errors outside the strict modules, as .ci/mypy_baseline.py writes them:\n"
          "# `path: code: message`, sorted. It may only shrink: fix, then run it with --update.\n")

# path:line[:column]: error: message  [code]
_ERROR = re.compile(r"^(?P<path>[^:\n]+?):\d+(?::\d+)?: error: (?P<message>.*?)"
                    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$")
_LINE_REF = re.compile(r"\bon line \d+\b")  # "already defined on line 12"


def normalise(output: Iterable[str]) -> list[str]:
    """The error lines of mypy's `output` as `path: code: message` (notes dropped; a line
    number inside a message, too), sorted."""
    found = []
    for line in output:
        m = _ERROR.match(line.rstrip("\n"))
        if m is None:
            continue
        path = m["path"].replace("\\", "/")
        message = _LINE_REF.sub("on line N", m["message"].strip())
        found.append(f"{path}: {m['code'] or 'misc'}: {message}")
    return sorted(found)


def compare(current: Iterable[str], baseline: Iterable[str]) -> tuple[list[str], list[str]]:
    """(errors not in the baseline, baseline entries mypy no longer reports), both sorted;
    counted as multisets: a second error of the same text is a new one."""
    now, then = Counter(current), Counter(baseline)
    return sorted((now - then).elements()), sorted((then - now).elements())


def strict_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The module patterns of the strict `[[tool.mypy.overrides]]` entries."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    found: list[str] = []
    for entry in config.get("tool", {}).get("mypy", {}).get("overrides", []):
        if entry.get("disallow_untyped_defs"):
            modules = entry.get("module", [])
            found += [modules] if isinstance(modules, str) else modules
    return found


def in_strict(entry: str, modules: Iterable[str]) -> bool:
    """Whether a baseline `entry` is an error of a module matching one of `modules`
    (`a.b.*`: a.b and everything below it)."""
    path = entry.split(": ", 1)[0].removesuffix(".py").removesuffix("/__init__")
    module = path.replace("/", ".")
    for pattern in modules:
        if pattern.endswith(".*"):
            base = pattern[:-2]
            if module == base or module.startswith(base + "."):
                return True
        elif module == pattern:
            return True
    return False


def read_baseline(path: Path = BASELINE) -> list[str]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted(x for x in lines if x.strip() and not x.startswith("#"))


def run_mypy() -> list[str]:
    """mypy's errors on the package, normalised; exits 2 if mypy could not run."""
    cmd = [sys.executable, "-m", "mypy", PACKAGE, "--no-error-summary", "--no-pretty",
           "--no-color-output", "--show-error-codes"]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    errors = normalise(p.stdout.splitlines())
    if p.returncode not in (0, 1) or (p.returncode == 1 and not errors):
        sys.stderr.write(f"mypy could not check the package (exit {p.returncode}):\n"
                         f"{p.stdout}{p.stderr}")
        sys.exit(2)
    return errors


def _show(title: str, entries: list[str]) -> None:
    print(f"{title} ({len(entries)}):")
    for e in entries:
        print(f"  {e}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--update", action="store_true",
                        help="rewrite the baseline to the errors mypy reports now")
    args = parser.parse_args(argv)
    strict = strict_modules()
    current = run_mypy()
    baseline = read_baseline()
    failed = False
    strict_now = [e for e in current if in_strict(e, strict)]
    if strict_now:
        _show("Errors in strict modules (these are never baselined: fix them)", strict_now)
        failed = True
    strict_then = [e for e in baseline if in_strict(e, strict)]
    if strict_then:
        _show(f"{BASELINE.name} lists errors of strict modules (remove them)", strict_then)
        failed = True
    new, fixed = compare(current, baseline)
    if args.update:
        if strict_now:
            print(f"{BASELINE.name} not written.")
            return 1
        BASELINE.write_text(HEADER + "".join(f"{e}\n" for e in current), encoding="utf-8")
        print(f"{BASELINE.name}: {len(current)} errors ({len(fixed)} fixed, {len(new)} added).")
        return 0
    new = [e for e in new if not in_strict(e, strict)]  # listed above already
    if new:
        _show(f"New mypy errors, not in {BASELINE.name}", new)
        failed = True
    if fixed:
        _show(f"Fixed since the baseline: run `python .ci/mypy_baseline.py --update` to "
              f"shrink {BASELINE.name}", fixed)
    if not failed:
        print(f"mypy: {len(current)} errors, all in the baseline "
              f"(strict modules clean).")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
