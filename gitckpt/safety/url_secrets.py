"""Credentials in remote URLs (a password, a token as the user name, a token in the query):
found, taken out of any text that names the URL, and never kept by gitckpt, which leaves
them to git's credential helpers."""

from __future__ import annotations

import bisect
import re
from urllib.parse import unquote

HIDDEN = "***"
# a URL's user and password: up to the last @ before the path, since a password may hold @
_USERINFO = re.compile(r"(?<=://)[^/\s'\"]*@")
# user:password@host without a scheme: git's "unable to look up u:PASSWORD@host" (git://).
# What this pattern would take out (see `_bare_userinfo`, which finds the same in one pass):
#   (?<![\w:/.@-])[^\s/@:'"()<>]+:[^\s/'"()<>]+@(?=[\w\[])
_USER_RUN = re.compile(r"[^\s/@:'\"()<>]+")  # a user name's characters, a run of them
_PASSWORD_RUN = re.compile(r"[^\s/'\"()<>]+")  # a password's (with : and @)
_NOT_START = re.compile(r"[\w:/.@-]")  # a user name does not start after one of these
_HOST_START = re.compile(r"[\w\[]")
# the value of a query parameter in a URL, or of a credential-like one anywhere. Each starts
# only where a run of what it matches begins, so none scans a run again from each of its
# characters (a fetched text of a megabyte took minutes): linear in the text.
_URL = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*+://[^\s'\"<>]+")
_QUERY_VALUE = re.compile(r"([?&;][^?=&;#\s'\"<>/]++=)[^&;#\s'\"<>]+")
_KEY_VALUE = re.compile(r"(?<![\w.-])([\w.-]++=)[^&;#\s'\"<>]+")
_SECRET_NAME = re.compile(
    r"(?i)token|secret|passw(?:or)?d|pwd|auth|key|sig|signature|credential|session")
_SHORTEST = 3  # a literal secret shorter than this is taken out by the patterns alone


def scrub(text: str, secrets: tuple[str, ...] | list[str] = ()) -> str:
    """`text` with every credential in a URL, and each of `secrets` (the credentials of the
    URLs involved, see `secrets_of`) wherever it appears, replaced by ***."""
    if "@" in text:  # each pattern only where it can match: a ref listing is megabytes
        text = _USERINFO.sub(HIDDEN + "@", text) if "://" in text else text
        text = _bare_userinfo(text)
    if "=" in text:
        text = _URL.sub(lambda m: _QUERY_VALUE.sub(r"\g<1>" + HIDDEN, m.group(0)), text) \
            if "://" in text else text
        text = _KEY_VALUE.sub(_secret_value, text)
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= _SHORTEST:
            text = text.replace(secret, HIDDEN)
    return text


def _bare_userinfo(text: str) -> str:
    """`text` with each `user:password@` before a host hidden as `***@`, as the pattern above
    would hide them, in time linear in the text (a scan by that pattern restarts inside each
    run of a user name's characters: seconds on 32 KB with an @ and no colon).

    Every start inside one run ends the user name where the run ends, so only the first start
    the pattern allows in a run can match; and a password ends at the last @ before a host in
    its run, found once per run."""
    runs = [m.span() for m in _PASSWORD_RUN.finditer(text)]  # the colon of a match is in one
    starts = [a for a, _ in runs]
    last_at: dict[int, int] = {}  # a run's index -> its last @ before a host, or -1
    out: list[str] = []
    done = 0  # the text before this is written (a match ends there, or nothing matched yet)
    for run in _USER_RUN.finditer(text):
        s, e = run.span()
        if s < done or e >= len(text) or text[e] != ":":
            continue
        start = next((i for i in range(s, e) if i == 0 or not _NOT_START.match(text, i - 1)),
                     None)
        if start is None:
            continue
        k = bisect.bisect_right(starts, e) - 1
        if k not in last_at:
            a, b = runs[k]
            last_at[k] = next((i for i in range(b - 1, a - 1, -1) if text[i] == "@"
                               and _HOST_START.match(text, i + 1)), -1)
        at = last_at[k]
        if at < e + 2:  # a password of one character at least, and an @ after it
            continue
        out += [text[done:start], HIDDEN, "@"]
        done = at + 1
    return "".join(out) + text[done:] if out else text


def _secret_value(m: re.Match[str]) -> str:
    """A `name=value` whose name says it holds a credential, with the value hidden."""
    return m[1] + HIDDEN if _SECRET_NAME.search(m[1]) else m[0]


def secrets_of(url: str) -> list[str]:
    """The credentials `url` carries, as written and percent-decoded: its password (with the
    user name before it), a user name that is a token, and the values of its query."""
    found: list[str] = []
    _, sep, rest = url.partition("://")
    if sep:
        authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
        userinfo, at, _ = authority.rpartition("@")
        if at:
            user, colon, password = userinfo.partition(":")
            found += [userinfo, password] if colon else []
            found += [user] if _token_like(unquote(user)) else []
    query = url.partition("?")[2].partition("#")[0]
    for pair in re.split(r"[&;]", query) if query else ():
        found.append(pair.partition("=")[2])
    found += [unquote(s) for s in found]
    return [s for s in dict.fromkeys(found) if s]


def has_credentials(url: str) -> bool:
    """True if `url` holds a password, a user name that is a token, or a query (git remotes
    carry none but tokens); a plain user name (git@, alice@) is no credential."""
    _, sep, rest = url.partition("://")
    if "?" in url.partition("#")[0] and "=" in url.partition("?")[2]:
        return True
    if not sep:
        return False
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    userinfo, at, _ = authority.rpartition("@")
    if not at:
        return False
    user, colon, _ = userinfo.partition(":")
    return bool(colon) or _token_like(unquote(user))


def _token_like(user: str) -> bool:
    """A user name that is a token: long, or one the secret rules recognise."""
    if len(user) >= 20:
        return True
    from gitckpt.safety.redact import spans  # the secret rules load on first use

    return bool(spans(user))


def without_credentials(url: str) -> str:
    """`url` with its password (and a token user name) and its query taken out: what may be
    kept, or suggested in its place."""
    base = url.partition("?")[0]
    scheme, sep, rest = base.partition("://")
    if not sep:
        return base
    found = re.match(r"([^/#]*)(.*)", rest, re.S)
    assert found is not None  # both groups match the empty string
    authority, tail = found.groups()
    userinfo, at, host = authority.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        keep = not colon and not _token_like(unquote(user))
        authority = f"{user}@{host}" if keep and user else host
    return f"{scheme}://{authority}{tail}"
