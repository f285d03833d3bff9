"""Free text (titles, conclusions, goals, ...) made safe to store: control characters and
undecodable bytes removed, secrets redacted."""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter

MARK = "«redacted»"

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


def _candidates(text: str, *, files: bool = False, only: frozenset[str] | None = None):
    """(start, end, rule id) of every value some rule accepts; with `files`, formats public by
    design are skipped; with `only`, only those rules run (one hit is enough there, so this is
    a generator)."""
    if not text:
        return
    from gitckpt.secret_rules import KEYWORDS, RULES  # on first use: importing redact is cheap

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


_LAZY: dict[str, re.Pattern[str]] = {}


def _re(name: str) -> re.Pattern[str]:
    """A helper regex, compiled on first use so that importing this module stays cheap."""
    pattern = _LAZY.get(name)
    if pattern is None:
        pattern = _LAZY[name] = re.compile(_PATTERNS[name])
    return pattern


def _public_regex() -> re.Pattern[str]:
    """One regex matching exactly the formats public by design."""
    pattern = _LAZY.get("public")
    if pattern is None:
        from gitckpt.secret_rules import RULES
        alts = "|".join(f"(?:{r.regex.pattern})" for r in RULES if r.public)
        pattern = _LAZY["public"] = re.compile(alts)
    return pattern


# --- what a secret value looks like ----------------------------------------------------------

_PATTERNS = {
    # References, templates and placeholders: the value names where the secret lives.
    "placeholder": r"\$\{|\$\(|\{\{|\{%|<%|#\{|@\{|%\{|\$[A-Za-z_][A-Za-z0-9_]*$"
                   r"|%[A-Za-z_][A-Za-z0-9_]*%$|%(?:\([A-Za-z_]\w*\))?[sdr]$|<[^<>]*>$"
                   r"|\[[^\[\]]*\]$|\{[^{}]*\}$|!{1,2}[A-Za-z][\w:-]*$|ENC\[|arn:|vault:"
                   # a remark in parentheses: (hidden), (masked), (prompted at login
                   r"|\([A-Za-z][A-Za-z .,'-]*\)?$"
                   r"|(?:ref\+)?[a-z][a-z0-9+.-]*://|\.{3}|…|(?i:x{3,}|\*{2,}|#{3,}|_{3,}"
                   r"|-{3,}|\?{3,})",
    "repeat": r"(.)\1{3,}",
    "filler": r"(?i)your|example|placeholder|changeme|redacted|insert|replace|dummy|<|>",
    # Code that computes the value: os.environ[...], getenv(...), process.env.X, ENV.fetch.
    "code": r"[A-Za-z_][A-Za-z0-9_.]*[(\[]|(?i:process\.env|os\.environ|getenv)|ENV\b",
    # One segment of a name: a word, a camelCase or CONSTANT word, or a number.
    "name_seg": r"[a-z]+(?:[A-Z][a-z]+)*|[A-Z][a-z]+(?:[A-Z][a-z]+)*|[A-Z]+|[0-9]+",
    "name_split": r"[._:/~-]+",
    "number": r"[+-]?\d+(?:[.,:]\d+)*(?:[A-Za-z%]{1,3})?|v?\d+(?:\.\d+)+(?:[-+][\w.]+)?"
              r"|\d{4}-\d\d-\d\d(?:[T ][\d:.]+Z?)?|0x[0-9a-fA-F]{1,8}",
    "tech": r"(?i)sha-?\d+|md5|base(?:32|64)|[hrep]s(?:256|384|512)|utf-?8\w*|aes-?\d+\w*"
            r"|x509|pkcs#?\d+|ed25519|rsa\d*|p-?\d{3}|ssh-\w+|ecdsa-[\w-]+|http2?|tls1\w*",
    "email": r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    "ext": r"\.[A-Za-z0-9]{1,5}$",
    # A path to a file, from home, the current folder or a variable: ~/.ssh/id_ed25519,
    # $HOME/.config/gh, ./certs/dev.pem; or absolute with lower-case names (/etc/ssl/x.key).
    "path": r"(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|\.{1,2})[/\\](?:[A-Za-z0-9_.@+-]{1,64}[/\\]?)+"
            r"|/(?:[a-z0-9_.@+-]{1,64}/?)+",
    "regex": r"\\[dDsSwWbB]|\.\*|\.\+|\[\^|\{[A-Za-z_][\w.]*\}"
             r"|%(?:\([A-Za-z_]\w*\))?[sd](?![A-Za-z0-9])",
    "hex": r"[0-9a-f]+",
    # OpenPGP key ids and fingerprints as gpg prints them: 16 or 40 upper-case hex digits.
    "key_id": r"[0-9A-F]{16}|[0-9A-F]{40}",
    # A digest named by its algorithm: SHA256:<base64>, sha384-<base64>, md5:<hex>, h1:<b64>.
    "digest": r"(?i:sha-?(?:1|224|256|384|512)|md5|blake2[bs]?|h1)[:=-]",
    "pw_word": r"(?i)p(?:ass|w)|recovery|backup",  # a password, or a 2FA code: short values
    # An identifier made of a name and a UUID or a digest: checkout-<uuid>, deps-<sha256>.
    "name_id": r"[A-Za-z][A-Za-z0-9_.]*[-:#/_](?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
               r"-[0-9a-f]{12}|[0-9a-f]{40}|[0-9a-f]{64})",
    # A relative path with a file name: uploads/2024/06/<uuid>.jpg, backups/db/x.sql.gz
    "rel_path": r"(?:[A-Za-z0-9_.@+-]{1,64}/){1,16}[A-Za-z0-9_.@+-]{0,120}\.[A-Za-z0-9]{1,8}",
    # The rest of a URL after a token in its userinfo: @github.com/acme/site.git
    "at_host": r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d{1,5})?(?:[/?#]\S*)?$",
    "pem_strip": r"-----[A-Z ]+-----|\\n|\s",
    "arn": r"arn:[a-z0-9-]{2,20}:[A-Za-z0-9-]{1,60}:[^\s\"'<>,;]{0,2048}",
}

_WORDS = frozenset("""
none null nil undefined true false yes no on off enabled disabled enable disable empty blank
required optional unset default changeme change_me changeit secret secrets password passwd pass
token tokens key keys apikey api_key value string str redacted hidden masked removed omitted
example sample dummy fake foo bar baz test testing placeholder todo tbd fixme xxx n/a na
bearer basic digest negotiate ntlm oauth jwt ssws bot pw pwd anonymous
""".split())


_CLOG = [0.0] + [c * math.log2(c) for c in range(1, 513)]  # c log2 c, looked up


def _entropy(s: str) -> float:
    """Shannon entropy of the characters of `s`, in bits per character."""
    n = len(s)
    if not n:
        return 0.0
    if n <= 512:  # str.count per distinct character runs in C: four times a Counter's speed
        return math.log2(n) - sum(map(_CLOG.__getitem__, map(s.count, set(s)))) / n
    return math.log2(n) - sum(c * math.log2(c) for c in Counter(s).values()) / n


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT = frozenset("0123456789")
_ALNUM = _LOWER | _UPPER | _DIGIT


def _classes(s: str) -> int:
    """How many of lower case, upper case, digits and other characters `s` has."""
    chars = set(s)
    n = (not chars.isdisjoint(_LOWER)) + (not chars.isdisjoint(_UPPER))
    n += not chars.isdisjoint(_DIGIT)
    return n + (not chars <= _ALNUM)


def _name_like(v: str) -> bool:
    """Whether `v` reads as a name, or a path of names, rather than random characters."""
    parts = [p for p in _re("name_split").split(v) if p]
    seg = _re("name_seg")
    return bool(parts) and all(seg.fullmatch(p) for p in parts)


def _placeholder(v: str) -> bool:
    return (MARK in v or "«" in v or v.lower() in _WORDS
            or _re("placeholder").match(v) is not None)


def _not_secret(v: str) -> bool:
    """Placeholders, references, names, numbers, paths: values that are not a secret."""
    if _placeholder(v) or v.lower().strip("_-.") in _WORDS or _re("code").match(v):
        return True
    if _re("number").fullmatch(v) or _re("tech").fullmatch(v) or _re("email").fullmatch(v):
        return True
    if _name_like(v) or "/" in v and _name_like(_re("ext").sub("", v)):
        return True  # created_at, pageToken, keys/jwt.pub, /run/secrets/db_password
    if _re("path").fullmatch(v) or _re("rel_path").fullmatch(v) or _re("name_id").fullmatch(v):
        return True  # ~/.ssh/id_ed25519, uploads/2024/x.jpg, deps-<sha256>
    if _re("key_id").fullmatch(v) or _re("digest").match(v):
        return True  # an OpenPGP key id or fingerprint; SHA256:<base64> (an ssh fingerprint)
    return _re("regex").search(v) is not None  # PASSWORD=\S+, key: users:{id}


def _sealed(v: str) -> bool:
    """Ciphertext made to be committed: a Bitnami SealedSecret value, an ansible-vault block."""
    return len(v) >= 300 and v.startswith("Ag") or v.startswith("$ANSIBLE_VAULT")


def _case_noise(v: str) -> bool:
    """Whether the letters of `v` change case at random (hkELeYtYxiie), as no word or
    camelCase name does: ten letters or more and five changes of case at least."""
    if len(v) < 10:
        return False
    upper = [c.isupper() for c in v]
    return sum(a != b for a, b in itertools.pairwise(upper)) >= 5


def _random(v: str, min_len: int, min_entropy: float) -> bool:
    """Whether a value in a secret's place looks like one: long enough, not a name or a
    placeholder, several kinds of characters, enough entropy."""
    if len(v) < min_len or _not_secret(v) or _sealed(v):
        return False
    e = _entropy(v)
    if _re("repeat").search(v) and e < 3.0 or _re("filler").search(v):
        return False
    if v.isalpha() and (len(v) < 16 or e < 3.5) and not _case_noise(v):
        return False
    if _classes(v) < 2 and not (len(v) >= 20 and e >= 3.8):
        return False
    return e >= min_entropy


# Each check takes the value (without its quotes), the rule's least entropy and the match.


def _check_token(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A known prefix or a fixed shape: enough entropy, not a placeholder."""
    if _re("filler").search(v):
        return False
    return _entropy(v) >= (entropy if entropy is not None else 3.0)


def _check_token_mixed(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A short or common prefix (sk-, xox?-, s.): letters and digits as well."""
    return (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
            and _check_token(v, entropy, m))


def _check_loose(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A URL password: anything but a placeholder."""
    return not _placeholder(v) and _re("repeat").fullmatch(v) is None


def _check_header(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """The credentials of an Authorization header: anything but a placeholder or a word."""
    if len(v) < 6 or not _check_loose(v, entropy, m) or _re("code").match(v):
        return False
    return not (v.isalpha() and len(v) < 16)  # a scheme word alone (Bearer, Splunk)


def _check_password(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    return _random(v, 6, entropy or 2.3) or _passphrase(v)


def _check_credential(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    return _random(v, 8, entropy or 2.5)


def _check_prose(v: str, entropy: float | None, m: re.Match[str], *,
                 password: bool | None = None) -> bool:
    """A value named only in a sentence: letters and digits, and random-looking. After
    qualifier words with no link word ("the secret key for AWS <value>") only a strong value
    counts: the words may have run on past the name into the sentence."""
    if password is None:
        password = _re("pw_word").match(m.group(0)) is not None
    groups = m.re.groupindex
    if "q" in groups and m.group("q") and m.group("link") is None:
        return _strong(v)
    if " " in v or "\t" in v:  # a quoted value of several words
        return password and _passphrase(v)
    if password and _passphrase(v):
        return True
    if not _random(v, 8 if password else 12, 2.8 if password else 3.0):
        return False
    if not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
            or _classes(v) >= 3 and (password or _entropy(v) >= 3.3)):
        return False
    return not (len(v) < 16 and _re("hex").fullmatch(v))


def _check_prose_password(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A value that a sentence names as a password (in any language, or by logging in)."""
    return _check_prose(v, entropy, m, password=True)


def _check_prose_login(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """The password of a login in a sentence; after 'with' or 'using' and no password word, a
    symbol or twelve characters of three kinds as well ('logged in as ci with WebAuthn2FA' is
    not a password)."""
    if not _check_prose(v, entropy, m, password=True):
        return False
    if re.search(r"(?i:/|pass|pw)", m.group()[: m.start(m.lastindex or 0) - m.start()]):
        return True
    return not v.isalnum() or len(v) >= 12 and _classes(v) >= 3


def _check_labelled_password(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """The password of a line 'Label: user / password': of both cases, and three kinds of
    characters, or a passphrase of words (a pair of names or versions is not a login)."""
    if _passphrase(v):
        return True
    return (any(c.isupper() for c in v) and any(c.islower() for c in v) and _classes(v) >= 3
            and _check_prose(v, entropy, m, password=True))


def _strong(v: str) -> bool:
    """Whether `v` is random beyond doubt: long, upper and lower case and digits, no spaces,
    no '=' but base64 padding."""
    if len(v) < 16 or not v.isascii() or any(c.isspace() for c in v) or "=" in v.rstrip("="):
        return False
    if not (any(c.isupper() for c in v) and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)):
        return False
    return not _not_secret(v) and _entropy(v) >= 3.5


_STOP = frozenset("""
the a an and or of to in on at for from by with is are was were be been it its this that these
those not no yes as if then than so but into onto over under via per must should can will would
may might leave set see use using used your our my their his her we you they me us them here
there what which who when where how all any some each every new old only just also still yet
please ask later blank empty same least most more less characters chars long short
""".split())
_TECH = frozenset("""
prod production staging stage dev develop development test tests local db database vault
secret secrets key keys token tokens pass password passwd user users admin root api app env
file path name config default temp tmp main master primary backup service server client web
http https ssh ssl tls aws gcp azure kube docker git ci cd deploy read write only
""".split())


def _passphrase(v: str) -> bool:
    """Whether `v` is a passphrase of words: three or more words of letters (one may end in
    digits), joined by one kind of separator, with a number or four words at least, and no word
    that reads as a sentence or names a thing (maple-granite-quartz-47, 'violet raven
    granite72'); not a name such as db-password-prod or see-the-wiki."""
    seps = {c for c in v if not c.isalnum()}
    if len(seps) != 1 or not v.isascii() or not 9 <= len(v) <= 200:
        return False
    parts = v.split(seps.pop())
    words = [p.rstrip("0123456789").lower() for p in parts]
    if not 3 <= len(parts) <= 12 or not all(w.isalpha() and 3 <= len(w) <= 10 or not w
                                            and p.isdigit() and len(p) <= 4
                                            for w, p in zip(words, parts, strict=True)):
        return False
    letters = [w for w in words if w]
    if len(letters) < 3 or len(set(letters)) < len(letters) or not letters[0]:
        return False
    if any(w in _STOP or w in _TECH or w in _WORDS for w in letters):
        return False
    return len(letters) >= 4 or any(c.isdigit() for c in v)


def _check_mnemonic(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A BIP-39 recovery phrase: 12, 15, 18, 21 or 24 distinct-enough words, none a stop
    word (so a sentence is not one)."""
    words = v.split()
    return (len(words) in (12, 15, 18, 21, 24) and len(set(words)) >= len(words) - 2
            and not any(w in _STOP for w in words))


def _check_pem(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """A private key block: a real base64 body, not '...'."""
    body = _re("pem_strip").sub("", v)
    return len(body) >= 40 and _entropy(body) > 4.0


def _b64(v: str) -> bytes:
    import base64  # here, not at the top: two rare checks need it, every import would pay
    try:
        return base64.b64decode(v + "=" * (-len(v) % 4))
    except ValueError:  # binascii.Error is a ValueError
        return b""


def _check_aws_secret(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """An AWS secret access key (the last 40 characters of `v`): random characters of mixed
    case and digits (not a commit id, not a path of words)."""
    v = v[-40:]
    if not (any(c.isupper() for c in v) and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)):
        return False
    return not _re("filler").search(v) and _entropy(v) >= 4.2


def _check_b64_pem(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    return b"PRIVATE KEY" in _b64(v[:120])


def _check_b64_userpass(v: str, entropy: float | None, m: re.Match[str]) -> bool:
    """Basic credentials: base64 of user:password; SASL PLAIN's NUL-separated
    authzid\0user\0password and XOAUTH2's user=...\x01auth=Bearer ... too."""
    raw = _b64(v)
    if not raw.isascii():
        return False
    if b"\x01auth=" in raw:
        return True
    text = raw.replace(b"\0", b":").decode()
    return ":" in text.strip(":") and text.isprintable()


_CHECKS = {
    "token": _check_token, "token_mixed": _check_token_mixed, "loose": _check_loose,
    "header": _check_header, "password": _check_password, "credential": _check_credential,
    "prose": _check_prose, "prose_password": _check_prose_password, "mnemonic": _check_mnemonic,
    "prose_login": _check_prose_login, "labelled_password": _check_labelled_password,
    "pem": _check_pem, "b64_pem": _check_b64_pem,
    "aws_secret": _check_aws_secret,
    "b64_userpass": _check_b64_userpass,
}
