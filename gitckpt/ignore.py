"""gitignore patterns with git's own semantics (wildmatch, anchoring, negation, `**`).

Used by the plain-folder scanner, where no git is there to ask. A pattern decides about one
path and its own kind (file or folder); the scanner applies it to every folder on the way
down and stops at an ignored folder, as git does, so a pattern never matches "through" a
parent folder (which is where general-purpose gitignore libraries differ from git).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
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
        regex = re.compile(translate(line), re.DOTALL)
    except re.error as e:  # a reversed range such as [z-a]
        raise ValueError(f"{line!r}: {e}") from e
    return Pattern(regex, negated, dir_only, anchored)


class IgnoreFile:
    """The patterns of one .gitignore (or .ckptignore, or a list of excludes)."""

    def __init__(self, lines: list[str]) -> None:
        self.patterns = [p for p in map(parse_line, lines) if p is not None]

    @classmethod
    def from_text(cls, text: str) -> IgnoreFile:
        return cls(text.removeprefix("\ufeff").split("\n"))

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern speaks."""
        name = rel.rsplit("/", 1)[-1]
        for p in reversed(self.patterns):  # the last matching pattern wins
            if p.dir_only and not is_dir:
                continue
            if p.regex.fullmatch(rel if p.anchored else name):
                return not p.negated
        return None
