"""Whether the text of a file holds a high-confidence credential (a provider token with a fixed
prefix, an AWS key pair), found by a cheap pre-filter and confirmed by the redaction rules.

Cost: only the first HEAD_BYTES are looked at, with C-speed byte operations until a candidate
turns up. A token is a run of at least 20 token characters ([A-Za-z0-9_-]) that begins with a
prefix of `secret_rules.FILE_PREFIXES`: text without such a run (most prose) costs one
`bytes.translate` and one search; other text a second translate and a few substring searches
for the prefixes. A rule's regex runs only on a small window around a candidate.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from gitckpt.safety.redact import first_secret

HEAD_BYTES = 1024 * 1024  # how much of a file the credential check reads
# Built on first use (`_prefix_tables`), so importing this module costs nothing:
# _TOKENS: token characters become "a", anything else " ": a file without a run of 20 "a"
#   (_RUN) holds no token.
# _CLASSES: letters and digits become "a", the separators of prefixes (_ - .) "_", anything
#   else " ". A separator followed by 12 letters or digits (_NEEDLE): every token whose prefix
#   ends in a separator has one (its prefix's own, or one inside a long URL-safe body).
_RUN = b"a" * 20
_NEEDLE = b"_" + b"a" * 12
# Prefixes that need not be followed by such a stretch, found by a plain search ("IA" finds
# AKIA and ASIA; a short URL-safe body may have a separator every few characters).
_BARE = {b"IA": (b"AKIA", b"ASIA"), b"dapi": (b"dapi",), b"glpat-": (b"glpat-",),
         b"GOCSPX-": (b"GOCSPX-",), b"dckr_pat_": (b"dckr_pat_",)}
# At most this many candidates are looked at per file: a page documenting token formats with
# placeholders, or a table of key ids, has many, and each costs a small regex run. A real token
# after that many candidates is missed (the cost bound wins).
_MAX_CANDIDATES = 64
_WINDOW = 600  # bytes either side of an AWS key id in which its secret must be
_AWS_SECRET = r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"

#: (token translation, class translation, every prefix, prefix -> rule id, AWS secret regex)
_Tables = tuple[bytes, bytes, tuple[bytes, ...], dict[bytes, str], re.Pattern[str]]
_tables: _Tables | None = None


def _prefix_tables() -> _Tables:
    """(_TOKENS, _CLASSES, every prefix, prefix -> rule id, the AWS secret key regex), built
    on first use from `secret_rules.FILE_PREFIXES`."""
    global _tables
    if _tables is None:
        from gitckpt.safety.secret_rules import FILE_PREFIXES
        owner = {p.encode(): rule for rule, ps in FILE_PREFIXES.items() for p in ps}
        chars = [chr(i) for i in range(256)]
        tokens = bytes(ord("a") if c.isascii() and (c.isalnum() or c in "_-") else ord(" ")
                       for c in chars)
        classes = bytes(ord("a") if c.isascii() and c.isalnum()
                        else ord("_") if c in "_-." else ord(" ") for c in chars)
        _tables = tokens, classes, tuple(owner), owner, re.compile(_AWS_SECRET)
    return _tables


def credential_in(data: bytes) -> str | None:
    """What high-confidence credential the first HEAD_BYTES of `data` hold ("a ghp_ token",
    "an AWS key pair"), or None. Binary data (a NUL in the first 8 KiB) holds none."""
    head = data[:HEAD_BYTES]
    if not head or b"\0" in head[:8192]:
        return None
    tokens, classes, prefixes, owner, _ = _prefix_tables()
    if _RUN not in head.translate(tokens):
        return None  # most text: no run of 20 token characters, so no token
    return _search(head, head.translate(classes), prefixes, owner)


def _search(head: bytes, classes: bytes, prefixes: tuple[bytes, ...],
            owner: dict[bytes, str]) -> str | None:
    """The first candidate token in `head` (`classes` its translation) that its rule
    confirms."""
    done: set[int] = set()  # candidates by where they start
    tried: set[bytes] = set()  # ... and by what they are (a placeholder repeated is one)

    def confirm(s: int, e: int, starts: tuple[bytes, ...]) -> str | None:
        done.add(s)
        run = head[s:e]
        if run in tried:
            return None
        tried.add(run)
        prefix = next(p for p in starts if run.startswith(p))
        return _confirm(head, s, e, owner[prefix])

    pos = 0
    while (p := classes.find(_NEEDLE, pos)) >= 0 and len(done) < _MAX_CANDIDATES:
        s = classes.rfind(b" ", 0, p) + 1  # the run of token characters around it
        e = classes.find(b" ", p)
        pos = e = len(head) if e < 0 else e
        if head.startswith(prefixes, s):
            found = confirm(s, e, prefixes)
            if found:
                return found
    for literal, starts in _BARE.items():
        pos = 0
        while (p := head.find(literal, pos)) >= 0 and len(done) < _MAX_CANDIDATES:
            pos = p + len(literal)
            s = p - 2 if literal == b"IA" else p
            if s < 0 or s in done or (s and classes[s - 1] != 0x20) \
                    or not head.startswith(starts, s):
                continue
            e = classes.find(b" ", s)
            found = confirm(s, len(head) if e < 0 else e, starts)
            if found:
                return found
    return None


def _confirm(head: bytes, s: int, e: int, rule: str) -> str | None:
    """The description of the credential of `rule` in the run head[s:e], if its rule accepts
    it (and, for an AWS key id, a secret key stands near it)."""
    lo = max(0, s - 32)
    text = head[lo:e + 96].decode("utf-8", "replace")  # SG.<22>.<43> goes on after a dot
    hit = first_secret(text, frozenset((rule,)))
    if hit is None:
        return None
    _, value = hit
    if rule != "aws-access-key-id":
        from gitckpt.safety.secret_rules import FILE_PREFIXES
        prefix = next((p for p in FILE_PREFIXES[rule] if value.startswith(p)), None)
        return f"a {prefix} token" if prefix else f"a {rule} token"
    around = head[max(0, s - _WINDOW):e + _WINDOW].decode("utf-8", "replace")
    for m in _prefix_tables()[4].finditer(around):
        if _random_key(m[0]):
            return "an AWS key pair"
    return None


def _random_key(v: str) -> bool:
    """A 40-character AWS secret key: mixed case and digits, random (not a commit id, not a
    path of words)."""
    if not (any(c.isupper() for c in v) and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)):
        return False
    if "example" in v.lower():
        return False
    n = len(v)
    entropy = math.log2(n) - sum(c * math.log2(c) for c in Counter(v).values()) / n
    return entropy >= 4.2
