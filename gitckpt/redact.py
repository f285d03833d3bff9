"""Free text (titles, conclusions, goals, ...) made safe to store: control characters and
undecodable bytes removed, secrets redacted."""

from __future__ import annotations

import re

MARK = "«redacted»"

# Each pattern keeps its group "keep" and replaces the rest of the match with MARK.
_PATTERNS = [
    # NAME_KEY=value, NAME_TOKEN=..., NAME_SECRET=..., DB_PASSWORD=... (shell or .env style).
    re.compile(
        r"(?P<keep>\b[A-Za-z0-9_]*(?:_KEY|_TOKEN|_SECRET|PASSWORD)\s*=\s*)"
        r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']+)",
        re.IGNORECASE,
    ),
    re.compile(r"(?P<keep>\bAuthorization:\s*Bearer\s+)[^\s\"']+", re.IGNORECASE),
    # scheme://user:password@host
    re.compile(r"(?P<keep>\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(?=@)", re.IGNORECASE),
    re.compile(r"(?P<keep>--(?:password|token|api-key|secret)(?:=|\s+))[^\s\"']+",
               re.IGNORECASE),
    re.compile(
        r"(?P<keep>)\b(?:sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
        r"|AKIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,})"
    ),
]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # keeps \t and \n


def clean(text: str, *, one_line: bool = False) -> str:
    """`text` without control characters (NUL, ANSI escapes, ...) or undecodable bytes;
    with `one_line`, line breaks and runs of spaces become one space."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from argv
    text = _CONTROL.sub("", text.replace("\r\n", "\n"))
    return " ".join(text.split()) if one_line else text.strip()


def redact(text: str) -> tuple[str, int]:
    """`text` with secrets replaced by «redacted», and how many values were replaced."""
    count = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return m["keep"] + MARK

    for pattern in _PATTERNS:
        text = pattern.sub(sub, text)
    return text, count
