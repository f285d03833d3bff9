"""A set of fnmatch patterns matched against whole names without compiling most of them: the
plain ones become set, prefix, suffix and substring tests, and only the rest one regex.

`Globs(patterns).match(name)` is `re.compile("|".join(fnmatch.translate(p) ...)).match(name)`
(a whole-name, case-sensitive match, `*` matching any characters), answered in microseconds
where compiling that regex costs milliseconds: a hook that classifies one file pays the
compile, and most of its patterns are `*.pem`, `.env.*` or `id_rsa`. tests/safety/test_globs.py
holds the equivalence as a property.
"""

from __future__ import annotations

import fnmatch
import re

_CLASS_OR_ONE = frozenset("?[")  # what the plain tests cannot match: left to the regex


class Globs:
    """Whole-name matching against a fixed list of fnmatch patterns."""

    def __init__(self, patterns: list[str]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        inner: list[str] = []
        ends: list[tuple[str, str]] = []
        rest: list[str] = []
        for p in patterns:
            stars = p.count("*")
            if _CLASS_OR_ONE.intersection(p):
                rest.append(p)
            elif stars == 0:
                exact.add(p)
            elif stars == 1 and p.startswith("*"):
                suffixes.append(p[1:])
            elif stars == 1 and p.endswith("*"):
                prefixes.append(p[:-1])
            elif stars == 1:
                head, _, tail = p.partition("*")
                ends.append((head, tail))
            elif stars == 2 and p.startswith("*") and p.endswith("*") and len(p) > 2:
                inner.append(p[1:-1])
            else:
                rest.append(p)
        self._exact = frozenset(exact)
        self._prefixes = tuple(prefixes)
        self._suffixes = tuple(suffixes)
        self._inner = tuple(inner)
        self._ends = tuple(ends)
        self._rest = rest
        # what each of the rest must contain: its literal runs before any `[` class
        self._needs = tuple(tuple(part for part in re.split(r"[*?]", p.partition("[")[0])
                                  if part) for p in rest)
        self._re: re.Pattern[str] | None = None

    def match(self, name: str) -> bool:
        """True if `name` as a whole matches one of the patterns."""
        if name in self._exact or name.startswith(self._prefixes) \
                or name.endswith(self._suffixes):
            return True
        if any(part in name for part in self._inner):
            return True
        for head, tail in self._ends:  # `a*b`: the two ends must not overlap
            if len(name) >= len(head) + len(tail) and name.startswith(head) \
                    and name.endswith(tail):
                return True
        if not any(all(part in name for part in needs) for needs in self._needs):
            return False  # no pattern left could match: its regex need not be compiled
        if self._re is None:
            self._re = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self._rest))
        return self._re.match(name) is not None
