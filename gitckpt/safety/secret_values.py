"""What a secret value looks like: the value checks that the rules of safety.secret_rules
name, and the helper patterns, word lists and measures (entropy, kinds of characters) they use."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

MARK = "«redacted»"  # what redaction writes in a secret's place: a value holding it is none

_LAZY: dict[str, re.Pattern[str]] = {}


def _re(name: str) -> re.Pattern[str]:
    """A helper regex, compiled on first use so that importing this module stays cheap."""
    pattern = _LAZY.get(name)
    if pattern is None:
        pattern = _LAZY[name] = re.compile(_PATTERNS[name])
    return pattern


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
    if _name_like(v) or ("/" in v and _name_like(_re("ext").sub("", v))):
        return True  # created_at, pageToken, keys/jwt.pub, /run/secrets/db_password
    if _re("path").fullmatch(v) or _re("rel_path").fullmatch(v) or _re("name_id").fullmatch(v):
        return True  # ~/.ssh/id_ed25519, uploads/2024/x.jpg, deps-<sha256>
    if _re("key_id").fullmatch(v) or _re("digest").match(v):
        return True  # an OpenPGP key id or fingerprint; SHA256:<base64> (an ssh fingerprint)
    return _re("regex").search(v) is not None  # PASSWORD=\S+, key: users:{id}


def _sealed(v: str) -> bool:
    """Ciphertext made to be committed: a Bitnami SealedSecret value, an ansible-vault block."""
    return (len(v) >= 300 and v.startswith("Ag")) or v.startswith("$ANSIBLE_VAULT")


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
    if (_re("repeat").search(v) and e < 3.0) or _re("filler").search(v):
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
    if not ((any(c.isdigit() for c in v) and any(c.isalpha() for c in v))
            or (_classes(v) >= 3 and (password or _entropy(v) >= 3.3))):
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
    return not v.isalnum() or (len(v) >= 12 and _classes(v) >= 3)


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
    if not 3 <= len(parts) <= 12 or not all((w.isalpha() and 3 <= len(w) <= 10) or (not w
                                            and p.isdigit() and len(p) <= 4)
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
