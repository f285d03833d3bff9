"""Free text (titles, conclusions, goals, ...) made safe to store: control characters and
undecodable bytes removed, secrets redacted."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

# The value checks, their helper patterns (compiled on first use) and the mark redaction writes.
from gitckpt.safety.secret_values import _CHECKS, _LAZY, MARK, _re

__all__ = ["MARK", "clean", "first_secret", "has_secret", "redact", "spans"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # keeps \t and \n


def clean(text: str, *, one_line: bool = False) -> str:
    """`text` without control characters (NUL, ANSI escapes, ...) or undecodable bytes;
    with `one_line`, line breaks and runs of spaces become one space."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from argv
    text = _CONTROL.sub("", text.replace("\r\n", "\n"))
    return " ".join(text.split()) if one_line else text.strip()


def redact(text: str) -> tuple[str, int]:
    """`text` with secrets replaced by «redacted», and how many values were replaced."""
    count, found = 0, spans(text)
    for _ in range(4):  # replacing can expose a token boundary; the second pass finds nothing
        if not found:
            break
        count += len(found)
        parts, marks, last, at = [], [], 0, 0
        for start, end in found:
            parts += [text[last:start], MARK]
            at += start - last
            marks.append(at)
            at += len(MARK)
            last = end
        parts.append(text[last:])
        text = "".join(parts)
        found = _spans_near(text, marks)
    return text, count


# How far from a «redacted» a value that its replacement exposes can start or end: a new
# match holds the mark or touches it (a token boundary that a replaced neighbour blocked), and
# no rule's match reaches further than a command line of 12 words (the PEM rules do, but a
# block with a mark inside fails its check). The window is widened to whole lines.
_NEAR = 4096


def _spans_near(text: str, marks: list[int]) -> list[tuple[int, int]]:
    """`spans(text)` where a replacement at the offsets `marks` may have exposed a new one:
    only the lines within _NEAR of a mark are searched again, the whole text when those cover
    half of it (a text dense with secrets)."""
    windows: list[list[int]] = []
    for at in marks:
        lo, hi = max(0, at - _NEAR), at + len(MARK) + _NEAR
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = hi
        else:
            windows.append([lo, hi])
    if sum(hi - lo for lo, hi in windows) * 2 >= len(text):
        return spans(text)
    found: list[tuple[int, int]] = []
    for lo, hi in windows:
        if lo > 0:
            line = text.rfind("\n", max(0, lo - _NEAR), lo)
            lo = line + 1 if line >= 0 else lo
        if hi < len(text):
            line = text.find("\n", hi, hi + _NEAR)
            hi = line if line >= 0 else hi
        if found and lo < found[-1][1]:
            lo = found[-1][1]
        found += [(a + lo, b + lo) for a, b in spans(text[lo:hi])]
    return found


def spans(text: str) -> list[tuple[int, int]]:
    """The secrets in `text` as sorted, non-overlapping (start, end) offsets."""
    found = sorted((start, end) for start, end, _ in _candidates(text))
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def has_secret(text: str) -> bool:
    """Whether `text` (the first few KiB of a file) holds a credential. Formats that are public
    by design (a Google API key in a Firebase client config, a Stripe publishable key) do not
    count on their own."""
    return any(True for _ in _candidates(text, files=True))


def first_secret(text: str, rule_ids: frozenset[str]) -> tuple[str, str] | None:
    """(rule id, value) of the first value in `text` that one of the rules `rule_ids` accepts,
    or None: the same patterns and value checks as redaction (placeholders are not secrets)."""
    for start, end, rule in _candidates(text, only=rule_ids):
        return rule, text[start:end]
    return None


# --- finding candidates ----------------------------------------------------------------------


def _candidates(text: str, *, files: bool = False,  # noqa: C901 (baseline)
                only: frozenset[str] | None = None) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule id) of every value some rule accepts; with `files`, formats public by
    design are skipped; with `only`, only those rules run (one hit is enough there, so this is
    a generator)."""
    if not text:
        return
    from gitckpt.safety.secret_rules import (  # on first use: importing redact is cheap
        KEYWORDS,
        RULES,
    )

    low = text.lower()
    seen: dict[str, bool] = {}
    # a keyword with a character beyond ASCII is not in an ASCII text (str.isascii costs
    # nothing): "contraseña" or "密码" need no search of a megabyte of logs
    ascii_text = low.isascii()
    public = _public_regex() if files else None
    arns = _arns(text) if "arn:" in low else None
    starts: list[int] = []  # accepted spans, sorted by start: a value inside one needs no check
    ends: list[int] = []
    for rule in RULES:
        if only is not None and rule.id not in only:
            continue
        if rule.keywords:
            for kw in rule.keywords:
                hit = seen.get(kw)
                if hit is None:
                    hit = seen[kw] = (not ascii_text or kw.isascii()) and kw in low
                if hit:
                    break
            else:
                continue
        if files and rule.public:
            continue
        check = _CHECKS[rule.check]
        # the verdicts of this rule by the text of its match: a log that repeats a value (or a
        # placeholder, or "token: token: ...") has it checked once
        decided: dict[str, bool] = {}
        present = None
        if rule.anchor == KEYWORDS:  # every keyword in the text is an anchor
            present = tuple(kw for kw in rule.keywords if seen.get(kw) or seen.setdefault(
                kw, (not ascii_text or kw.isascii()) and kw in low))
        for m in rule.finditer(text, low, present):
            whole = m.group()
            if decided.get(whole) is False:
                continue
            for g in rule.groups:
                start = m.start(g)
                if start >= 0:
                    break
            else:
                continue
            end = m.end(g)
            value = text[start:end]
            if len(value) >= 2 and value[0] in "\"'`" and value[-1] == value[0]:
                value = value[1:-1]  # the quotes go with the value, the check sees inside
                if text[start] == "`" and " " in value:
                    continue  # `cat token.txt`: a command substitution
            else:  # a bare value loses the sentence's punctuation and a URL's @host/path
                value = _trim(_re("at_host").sub("", value))
                end = start + len(value)
            i = bisect.bisect_right(starts, start) - 1
            if i >= 0 and ends[i] >= end:
                continue  # already found (the prose rule finds most assignments again)
            ok = decided.get(whole)
            if ok is None:
                ok = decided[whole] = (bool(value) and MARK not in value
                                       and check(value, rule.entropy, m))
            if not ok:
                continue
            if public is not None and public.fullmatch(value):
                continue
            if arns and bisect.bisect_right(arns, start) % 2 == 1:
                continue  # inside an ARN (...:secret:prod/db-password-Qx8p2L): a resource name
            starts.insert(i + 1, start)
            ends.insert(i + 1, end)
            yield start, end, rule.id


def _arns(text: str) -> list[int]:
    """The start and end offsets of the Amazon Resource Names in `text`, in one sorted list
    (an offset at an even index starts an ARN)."""
    return [i for m in _re("arn").finditer(text) for i in m.span()]


_TRAIL = ".,:;!?)]}"


def _trim(v: str) -> str:
    """`v` without the punctuation that ends a sentence or closes a bracket opened before it."""
    while v and v[-1] in _TRAIL:
        closer = v[-1]
        if closer in ")]}" and v.count(closer) <= v.count("([{"[")]}".index(closer)]):
            break  # a balanced bracket belongs to the value
        v = v[:-1]
    return v


def _public_regex() -> re.Pattern[str]:
    """One regex matching exactly the formats public by design."""
    pattern = _LAZY.get("public")
    if pattern is None:
        from gitckpt.safety.secret_rules import RULES
        alts = "|".join(f"(?:{r.regex.pattern})" for r in RULES if r.public)
        pattern = _LAZY["public"] = re.compile(alts)
    return pattern
