"""gitignore patterns with git's own semantics (wildmatch, anchoring, negation, `**`).

Used by the plain-folder scanner, where no git is there to ask. A pattern decides about one
path and its own kind (file or folder); the scanner applies it to every folder on the way
down and stops at an ignored folder, as git does, so a pattern never matches "through" a
parent folder (which is where general-purpose gitignore libraries differ from git).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, cast

_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
            "lower": "a-z", "space": r"\s", "blank": r" \t", "xdigit": "0-9a-fA-F",
            "punct": r"!-/:-@\[-`{-~", "print": r" -~", "graph": r"!-~", "cntrl": r"\x00-\x1f"}


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """The regex for the bracket expression starting at pat[i] == "[", and where it ends."""
    j = i + 1
    negate = j < len(pat) and pat[j] in "!^"
    if negate:
        j += 1
    parts = []
    first = True
    while j < len(pat) and (pat[j] != "]" or first):
        first = False
        if pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            if end == -1 or pat[j + 2:end] not in _CLASSES:
                return None
            parts.append(_CLASSES[pat[j + 2:end]])
            j = end + 2
            continue
        c = pat[j]
        if c == "\\" and j + 1 < len(pat):
            j += 1
            c = pat[j]
        if j + 2 < len(pat) and pat[j + 1] == "-" and pat[j + 2] != "]":
            parts.append(re.escape(c) + "-" + re.escape(pat[j + 2]))
            j += 3
            continue
        parts.append(re.escape(c))
        j += 1
    if j >= len(pat):
        return None  # no closing bracket: git takes "[" literally
    body = "".join(parts)
    return ("[^/" + body + "]" if negate else "[" + body + "]"), j + 1


MAX_STARS = 3  # wildcards a pattern may have and still be matched by a regex


def translate(pat: str) -> str:
    """A regex (for fullmatch) equivalent to git's wildmatch with WM_PATHNAME."""
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            if pat.startswith("**", i) and (i == 0 or pat[i - 1] == "/") and (
                    i + 2 == n or pat[i + 2] == "/"):
                if i + 2 == n:
                    out.append(".*")  # trailing "**": everything inside
                    i += 2
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more folders
                    i += 3
                    while pat.startswith("**/", i):
                        i += 3  # "**/**/" is "**/": one group, or the regex backtracks forever
                continue
            while i < n and pat[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[" and (found := _bracket(pat, i)) is not None:
            out.append(found[0])
            i = found[1]
            continue
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class _Matcher(Protocol):
    """What a pattern matches with: a compiled regex, or an `_Automaton`."""

    def fullmatch(self, text: str, /) -> object: ...


@dataclass(frozen=True)
class Pattern:
    regex: _Matcher
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the whole relative path, not just the name


def parse_line(line: str) -> Pattern | None:
    """One line of a .gitignore file, as git reads it (None for blanks and comments)."""
    line = line.removesuffix("\r")
    if not line or line.startswith("#"):
        return None
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]  # trailing spaces go, unless escaped
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/") if dir_only else line
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/") if anchored else line
    try:
        regex: _Matcher = re.compile(translate(line), re.DOTALL)
    except re.error as e:  # a reversed range such as [z-a]
        raise ValueError(f"{line!r}: {e}") from e
    if line.count("*") > MAX_STARS:
        # Each `*` is a backtracking point of the regex: a failing match would cost about
        # len(name) ** stars. Such a pattern is matched by simulating its automaton instead.
        regex = _Automaton(line)
    return Pattern(regex, negated, dir_only, anchored)


class _Automaton:
    """A wildmatch pattern matched in time proportional to len(text) * len(pattern)."""

    def __init__(self, pat: str) -> None:
        self.tokens: list[tuple[str, object]] = []
        i, n = 0, len(pat)
        while i < n:
            c = pat[i]
            if c == "*":
                if pat.startswith("**", i) and (i == 0 or pat[i - 1] == "/") and (
                        i + 2 == n or pat[i + 2] == "/"):
                    self.tokens.append(("all", None) if i + 2 == n else ("dirs", None))
                    i += 2 if i + 2 == n else 3
                    continue
                while i < n and pat[i] == "*":
                    i += 1
                self.tokens.append(("star", None))
                continue
            if c == "?":
                self.tokens.append(("one", None))
            elif c == "[" and (found := _bracket(pat, i)) is not None:
                self.tokens.append(("class", re.compile(found[0], re.DOTALL)))
                i = found[1]
                continue
            elif c == "\\" and i + 1 < n:
                i += 1
                self.tokens.append(("char", pat[i]))
            else:
                self.tokens.append(("char", c))
            i += 1

    def _close(self, states: set[int]) -> set[int]:
        todo, out = list(states), set(states)
        while todo:
            i = todo.pop()
            if i >= 0 and i < len(self.tokens) and self.tokens[i][0] in (
                    "star", "dirs", "all") and i + 1 not in out:
                out.add(i + 1)  # a wildcard may match nothing
                todo.append(i + 1)
        return out

    def fullmatch(self, text: str) -> bool:  # noqa: C901 (baseline)
        """States are token indices; `~i` is inside the `**/` of token i (it has consumed
        characters and can leave only through a "/")."""
        end = len(self.tokens)
        states = self._close({0})
        for ch in text:
            nxt: set[int] = set()
            for i in states:
                if i < 0:  # inside a `**/`
                    nxt.add(i)
                    if ch == "/":
                        nxt.add(~i + 1)
                    continue
                if i == end:
                    continue
                kind, data = self.tokens[i]
                if kind == "char":
                    if ch == data:
                        nxt.add(i + 1)
                elif kind == "one":
                    if ch != "/":
                        nxt.add(i + 1)
                elif kind == "class":
                    if cast("re.Pattern[str]", data).fullmatch(ch):
                        nxt.add(i + 1)
                elif kind == "star":
                    if ch != "/":
                        nxt.add(i)
                elif kind == "dirs":  # (?:.*/)?: characters, then a "/"
                    nxt.add(~i)
                    if ch == "/":
                        nxt.add(i + 1)
                else:  # all: .*
                    nxt.add(i)
            if not nxt:
                return False
            states = self._close(nxt)
        return end in states


def _tolerant(line: str) -> Pattern | None:
    try:
        return parse_line(line)
    except ValueError:
        return None  # git skips a pattern it cannot use; the others still count


class IgnoreFile:
    """The patterns of one .gitignore (or .ckptignore, or a list of excludes)."""

    def __init__(self, lines: list[str]) -> None:
        self.patterns = [p for p in map(parse_line, lines) if p is not None]

    @classmethod
    def from_text(cls, text: str) -> IgnoreFile:
        """The patterns of a file found on disk or in a tree: a pattern that cannot be used
        is passed over (the user's own lists, `IgnoreFile(lines)`, raise instead)."""
        out = cls([])
        out.patterns = [p for p in map(_tolerant, text.removeprefix("\ufeff").split("\n"))
                        if p is not None]
        return out

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern speaks."""
        name = rel.rsplit("/", 1)[-1]
        for p in reversed(self.patterns):  # the last matching pattern wins
            if p.dir_only and not is_dir:
                continue
            if p.regex.fullmatch(rel if p.anchored else name):
                return not p.negated
        return None
