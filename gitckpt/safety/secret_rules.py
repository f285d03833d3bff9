"""The secret formats `safety.redact` removes from free text: an ordered table of rules, each a
regex, the group that holds the secret, a value check and the source of the format."""

# Sources named in `source`:
#   gitleaks:<id>  a rule of gitleaks' default config (github.com/gitleaks/gitleaks,
#                  config/gitleaks.toml, MIT License, Copyright (c) 2019 Zachary Rice), as quoted
#                  in tests/corpus/gitleaks_rules_excerpt.txt, translated from Go RE2 to Python;
#                  a parenthesis says what else changed (a length relaxed, the keyword context
#                  dropped, forms added).
#   vendor:        the vendor's own documentation of its token format.
#   hand-written:  written for gitckpt from the public shape of the format.
#
# Conventions of the table:
# - `pattern` is compiled on first use (`Rule.regex`), so importing this module compiles
#   nothing: `import gitckpt.safety.redact` must stay cheap; most rules never run on a text.
# - `groups`: the first of these groups that took part in the match is the secret; the rest
#   of the match (a key name, a scheme, a user name) is kept.
# - `check`: the name of the value check in gitckpt.secret_values that the secret must pass
#   (`token`, `token_mixed`, `loose`, `header`, `password`, `credential`, `prose`,
#   `prose_password`, `prose_login`, `labelled_password`, `mnemonic`, `pem`, `b64_pem`,
#   `b64_userpass`, `aws_secret`); `entropy`: the least Shannon entropy (bits per
#   character) of the value, None for the check's own default.
# - `keywords`: lower-case strings, one of which must occur in the lower-cased text for the rule
#   to run at all (a cheap prefilter, as gitleaks does); empty runs always.
# - `anchor`: a regex of the literal that every match holds (".atlasv1.", "Q~"), with `around`
#   = (the most characters of a match before the anchor, the most after it): for a pattern
#   that cannot start with a literal, the engine looks for the anchor and runs the pattern only
#   on the window around each one, instead of trying it at every position of the text; or
#   KEYWORDS: the rule's keywords are the anchors.
# - `public`: the format is public by design (Google API keys, Stripe publishable keys): still
#   redacted from free text, but not by itself a reason to keep a file out of a checkpoint
#   (`has_secret`).
# - Every quantifier is bounded and no repeated group can match the same text two ways, so no
#   input makes a rule backtrack catastrophically.

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator


class Rule:
    """One secret format: see the conventions above."""

    __slots__ = (
        "_anchor",
        "_regex",
        "anchor",
        "around",
        "check",
        "entropy",
        "groups",
        "id",
        "keywords",
        "pattern",
        "public",
        "source",
    )

    def __init__(self, id: str, pattern: str, *, source: str, check: str = "token",
                 groups: tuple[int, ...] = (1,), entropy: float | None = None,
                 keywords: tuple[str, ...] = (), public: bool = False,
                 anchor: str | None = None, around: tuple[int, int] = (0, 0)) -> None:
        self.id, self.pattern, self.groups, self.check = id, pattern, groups, check
        self.entropy, self.keywords, self.public, self.source = entropy, keywords, public, source
        self.anchor, self.around = anchor, around
        self._regex: re.Pattern[str] | None = None
        self._anchor: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex

    def finditer(self, text: str, low: str | None = None,
                 present: tuple[str, ...] | None = None) -> Iterator[re.Match[str]]:
        """The matches of the pattern in `text`, as `regex.finditer` finds them; with an
        anchor, by searching only the window around each anchor. `low` is `text.lower()`,
        where the anchor KEYWORDS finds its keywords (those of them in `present`, if given)."""
        if self.anchor is None or (self.anchor == KEYWORDS and (low is None
                                                               or len(low) != len(text))):
            yield from self.regex.finditer(text)
            return
        anchors: Iterable[tuple[int, int]]
        if self.anchor == KEYWORDS:
            assert low is not None  # the branch above took a missing one
            anchors = sorted(_occurrences(low, self.keywords if present is None else present))
        else:
            if self._anchor is None:
                self._anchor = re.compile(self.anchor)
            anchors = (a.span() for a in self._anchor.finditer(text))
        before, after = self.around
        # a match that starts at its anchor is tried there only, not searched for
        search, done = self.regex.search if before else self.regex.match, 0
        for start, end in anchors:
            if end <= done or start < done:
                continue  # inside the last match
            # +1: the character after the longest match is in the window, so an end boundary
            # such as (?![A-Za-z0-9]) sees it; a lookbehind sees before the window anyway
            m = search(text, max(done, start - before), end + after + 1)
            if m is not None and m.end() > m.start():
                done = m.end()
                yield m

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"


# The anchor of a rule whose keywords are where its matches start: found with str.find in the
# lower-cased text, for a rule of many words that are rare in a text (other languages).
KEYWORDS = "(keywords)"


def _occurrences(low: str, words: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """(start, end) of every occurrence of each of `words` in `low`."""
    for w in words:
        i = low.find(w)
        while i >= 0:
            yield i, i + len(w)
            i = low.find(w, i + 1)


# --- shared fragments ------------------------------------------------------------------------
# Every pattern starts with a literal or a one-character class, so the regex engine can skip
# ahead to its first character: a leading \b or lookbehind makes it try every position (60 times
# slower). A token's left boundary is therefore a lookbehind placed after its prefix.


def _lb(width: int) -> str:
    """After a prefix `width` characters long: the token did not start inside a word."""
    return f"(?<![A-Za-z0-9_].{{{width}}})"


def _word(first: str, rest: str, width: int) -> str:
    """A key word (any case) that starts a word or a camelCase hump: `_word("K", "ey", 3)`
    matches key in MAX_KEY, apiKey and "key", not in monkey."""
    return (f"[{first}{first.lower()}](?i:{rest})"
            f"(?:(?<![A-Za-z0-9].{{{width}}})|(?<=[a-z]{first}.{{{width - 1}}}))")


def _either(*alternatives: str) -> str:
    """Alternatives that each start with a class of one letter in two cases (as `_word`'s
    [Kk]) or with a literal character, as one pattern that starts with the class of all those
    characters: the engine skips ahead to one of them, where an alternation of words in
    classes or (?i:) groups tries every branch at every position (three to five times slower
    on prose). An alternation of plain literals gains nothing: the engine already skips ahead
    for it."""
    firsts, branches = [], []
    for a in alternatives:
        n = 4 if a[0] == "[" and a[3] == "]" and a[1:3].isalpha() else 1
        assert n == 4 or a[0] not in "[(\\.?*+|^$", a
        firsts.append(a[1:3] if n == 4 else re.escape(a[0]))
        branches.append(f"(?<={a[:n] if n == 4 else re.escape(a[0])})" + a[n:])
    return "[" + "".join(dict.fromkeys(firsts)) + "](?:" + "|".join(branches) + ")"


def _ci(first: str, rest: str) -> str:
    """A key word in any case, anywhere in a name (PGPASSWORD, client_secret)."""
    return f"[{first}{first.lower()}](?i:{rest})"


_E = r"(?![A-Za-z0-9_])"         # a token ends here
_ED = r"(?![A-Za-z0-9_-])"       # ... for tokens whose alphabet has '-'

# The value of an assignment: quoted (groups 1-3, quotes included) or bare (group 4).
_VALUE = (r"""(?:("[^"\n]{0,1024}")|('[^'\n]{0,1024}')|(`[^`\n]{0,1024}`)"""
          r"""|([^\s"'`,;&|<>\\]{1,1024}))""")
_VG = (1, 2, 3, 4)
# Between a key and its value: a closing quote or bracket, then = : => := ?= += ||=; or the
# comma between two quoted arguments (define('DB_PASSWORD', '...'), ("token", "...")).
_SEP = (r"""(?:["'\]]{0,2}[ \t]*(?:=>|:=|\?=|\+=|\|\|=|=|:)|["'][ \t]*,(?=[ \t]*["']))"""
        r"[ \t]*")

# Concatenated compounds that end in "key" (APIKEY, secretkey, AccountKey is a camel hump).
_KEY_COMPOUNDS = ("api", "app", "access", "secret", "private", "signing", "master", "auth",
                  "client", "account", "encryption", "license", "service", "shared", "server",
                  "subscription", "webhook", "deploy", "admin", "root", "bot", "user", "ingest",
                  "write", "read", "storage")
# After "key": not a public key (PUBLIC_KEY, publicKey, "public key:").
# ... nor a key that names a record, an object or a cache entry (primary key, sort key,
# idempotency key, S3 key, host key, GPG key): its value is an identifier.
_ID_KEYS = ("public", "primary", "foreign", "sort", "partition", "range", "hash", "idempotency",
            "cache", "object", "row", "unique", "composite", "lookup", "index", "routing",
            "shard", "dedup", "dedupe", "translation", "s3", "host", "gpg", "pgp")
_NOT_PUBLIC = "".join(f"(?<!(?i:{w})...)(?<!(?i:{w})[ _.-]...)" for w in _ID_KEYS)
# (the lookahead first: a separator must follow, so "key is ..." fails before the lookbehinds)
_KEY = ("[Kk](?i:ey)" + r"(?=[A-Za-z0-9_.-]{0,8}[\"'\]]{0,2}[ \t]*[=:?+|,])" + _NOT_PUBLIC
        + "(?:(?<![A-Za-z0-9]...)|(?<=[a-z]K..)|"
        + "|".join(f"(?<=(?i:{c})...)" for c in _KEY_COMPOUNDS) + ")")

# More segments of a variable name after its secret's word (TF_TOKEN_app_terraform_io,
# DB_PASSWORD_STAGING), but not a segment that says the value is something else: its id, file,
# URL, length, expiry (TOKEN_FILE=, PASSWORD_MIN_LENGTH=, SECRET_ARN=).
_NAME_META = ("id|ids|name|names|path|file|files|dir|type|kind|url|uri|endpoint|host|port|len"
              "|length|size|ttl|expiry|expires|expiration|timeout|count|min|max|limit|header"
              "|field|param|prefix|env|var|hint|policy|format|version|mode|enabled|required"
              "|rotation|ref|arn|location|provider|label|description|regex|pattern|scope"
              "|audience|issuer|fingerprint|algorithm|usage|reset|manager|helper|cmd|command"
              "|script|strength|chars|characters|lifetime|age|created|updated|rotated|source"
              "|store")
_MORE_NAME = r"(?:[_.-](?!(?i:" + _NAME_META + r")(?![A-Za-z0-9]))[A-Za-z0-9]{1,24}){0,3}"

# A name that says its value is a secret (db-password, /prod/api/token, ClientSecret).
# (a lookahead finds the word, then the name is taken whole: no backtracking into it)
_SECRET_NAME = (r"(?=[\w./:-]{0,60}?(?i:pass|pwd|secret|token|api[_-]?key|private[_-]?key"
                r"|access[_-]?key|credential|auth))[\w./:-]{1,120}+")

# Up to 12 more words of the same command line (each word taken whole, so a long line costs
# one step per word, not one per character).
_WORDS = r"(?:[ \t]+[^\s|;&]{1,300}+){0,12}?"

# A password attached to its flag (-pSecret), or quoted (-p'Secret').
_ATTACHED = r"[\"']?([^\s\"'`;&|<>-][^\s\"'`;&|<>]{0,255})"

_PEM_BEGIN = r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"

# --- prose: a secret named in a sentence -----------------------------------------------------
# The words that name a secret in a sentence: password, secret, token, key, credential, PAT.
_PROSE_WORDS = (("P", "assword", 8), ("P", "asswd", 6), ("P", "assphrase", 10), ("P", "wd", 3),
                ("P", "w", 2), ("P", "asscode", 8),
                ("S", "ecret", 6), ("T", "oken", 5), ("K", "ey", 3), ("C", "redential", 10),
                ("C", "reds", 5), ("P", "at", 3))
_PROSE_NOUN = _either(*[_word(*w) + (_NOT_PUBLIC if w[0] == "K" else "")
                        + r"(?i:s)?(?![A-Za-z0-9_-])" for w in _PROSE_WORDS],
                      # recovery codes, backup codes (2FA): the code is the secret
                      *[_word(*w) + r"[ \t-](?i:codes?)(?![A-Za-z0-9_-])"
                        for w in (("R", "ecovery", 8), ("B", "ackup", 6))])
# The same in other languages: password (contraseña, senha, Passwort, mot de passe, пароль,
# 密码, パスワード, ...), key (clave, chave, clé, Schlüssel, ключ, 密钥, キー, ...) and token.
# A word in a script with spaces takes a few more letters (plural, case: пароля, senhas); a
# word in CJK stands next to other characters.
_INTL_WORDS = ("contraseña", "clave", "senha", "chave", "mot de passe", "clé", "jeton",
               "passwort", "kennwort", "schlüssel", "wachtwoord", "sleutel", "hasło", "klucz",
               "şifre", "parola", "chiave", "lösenord", "nyckel", "adgangskode", "salasana",
               "mật khẩu", "kata sandi", "sandi", "passord", "heslo", "jelszó", "wagwoord",
               "пароль", "ключ", "токен", "парол", "гасло", "κωδικός")
# Words in scripts without spaces or with prefixes joined to the word (Hebrew ה-, Arabic ال-):
# no word boundary.
_INTL_CJK = ("密码", "密碼", "口令", "密钥", "秘钥", "密鑰", "令牌", "パスワード", "暗証番号",
             "キー", "トークン", "秘密鍵", "비밀번호", "암호", "토큰", "סיסמה", "סיסמא",
             "كلمة المرور", "كلمة السر", "पासवर्ड", "รหัสผ่าน")


def _intl_noun() -> str:
    """The words of _INTL_WORDS (a word boundary before, a few letters of inflection after)
    and _INTL_CJK as one pattern that starts with the class of their first letters (as
    `_either`: a plain alternation of 50 words costs ten times as much on every text)."""
    firsts, branches = [], []
    for w in _INTL_WORDS:
        first = w[0].upper() + w[0]
        firsts.append(first)
        branches.append(f"(?<=[{first}])(?i:{w[1:]})(?<!\\w.{{{len(w)}}})\\w{{0,3}}(?!\\w)")
    for w in _INTL_CJK:
        firsts.append(w[0])
        branches.append(f"(?<={w[0]}){w[1:]}")
    return "[" + "".join(dict.fromkeys(firsts)) + "](?:" + "|".join(branches) + ")"


_INTL_NOUN = _intl_noun()
_INTL_KEYWORDS = tuple(w.lower() for w in _INTL_WORDS + _INTL_CJK)

# The words between a secret's name and its value: "the token is now <value>", "es", "ist".
_LINK_WORDS = ("(?i:is|was|are|now|to|set|becomes|became|reads|changed|updated|reset|rotated"
               "|still|es|era|est|était|ist|lautet|war|é|è|är|jest|это|là|adalah|je|είναι"
               "|היא|הוא|هي|है|คือ|=|:|->|=>|—|–|-)")
_LINK = _LINK_WORDS  # (the name the qualifier fragment below uses)
_PROSE_LINK = (r"(?P<link>[ \t]*[:=：][ \t]*|[ \t]*(?:是|为|為|は|은|는|이|가)[ \t]*[:：]?[ \t]*"
               r"|[ \t]+(?:" + _LINK_WORDS + r"[ \t]*:?[ \t]+){1,3})")
# Words between the name and the link ("for the staging database", "we use in CI"): any word
# without a colon, quote or bracket, at most six of at most 30 characters.
# Not when the first word says what follows is about the secret, not the secret: "Key ID:",
# "token type", "password policy".
_PROSE_META = ("id|ids|name|type|kind|fingerprint|length|size|format|version|policy|field|file"
               "|path|url|endpoint|header|prefix|rotation|expiry|expires|ttl|label|alias|arn"
               "|scope|count|age|strength|manager|store|vault|prompt")
_PROSE_QUALIFIER = (r"(?![ \t]+(?i:" + _PROSE_META + r")(?![A-Za-z0-9]))"
                    r"""(?P<q>(?:[ \t]+[^\s:=："'`<>()][^\s:=："`<>()]{0,29}){0,6}?)""")
# The value: quoted (groups 1-3, quotes included), or a run of printable ASCII but quotes, <,
# > and backslash that is not only letters (group 4); a value that fails its check lets the
# regex try the next word: the lookahead makes 'rotation' and 'account:' fail in the regex,
# not in the check (a digit, a symbol inside the value or one that may end it must be
# there).
_PV = r"[!#-&(-;=?-\[\]-_a-~]"
_PV_NOT_LETTER = r"[!#-&(-;=?@\[\]-_{-~]"
_PV_END = r"[#-&*+/@^_~-]"  # a symbol that may end a value (not the punctuation of a sentence)
_PROSE_VALUE = (r"""(?:("[^"\n]{6,256}")|('[^'\n]{6,256}')|(`[^`\n]{6,256}`)"""
                r"|(?=[A-Za-z]{0,511}(?:[0-9]|" + _PV_NOT_LETTER + _PV + "|" + _PV_END + "))(" + _PV
                + "{8,512}))")


_PG = (3, 4, 5, 6)  # the value groups of `_prose` (1 and 2 are the qualifier and the link)


# What makes a sentence with no value cheap: a value that passes its check holds a digit, a
# quote or a symbol other than ',', '.' and ':' (letters joined by those read as a name), so a
# run of letters, spaces and that punctuation up to the end of the line (or past where the
# value could be) fails at once, in one tight loop: "key is key is ..." and "token: token: ..."
# cost one scan per name instead of a try of every qualifier and link.
_PROSE_GUARD = r"(?=[A-Za-z \t,.:]{0,240}+[^A-Za-z \t,.:\n])"


def _prose(noun: str) -> str:
    """`noun`, a remark in parentheses, qualifier words, a link (or none) and the value."""
    return (noun + _PROSE_GUARD + r"(?:[ \t]*\([^()\n]{1,30}\))?" + _PROSE_QUALIFIER
            + "(?:" + _PROSE_LINK + r"|[ \t]+)" + _PROSE_VALUE)


_XML_NAMES = ("password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
              "api-key", "accesskey", "access_key", "secretkey", "secret_key", "privatekey",
              "private_key", "credential", "credentials")


def _with_scheme(url: str) -> str:
    """A URL with or without its https:// (spelt out: a leading optional group is slow)."""
    return f"(https?://{url}|{url})"


def _prefix(id: str, pattern: str, source: str, keywords: tuple[str, ...], *,
            check: str = "token", entropy: float | None = None, public: bool = False,
            anchor: str | None = None, around: tuple[int, int] = (0, 0)) -> Rule:
    return Rule(id, pattern, source=source, check=check, entropy=entropy, keywords=keywords,
                public=public, anchor=anchor, around=around)


def _assign(id: str, key: str, check: str, keywords: tuple[str, ...], source: str) -> Rule:
    return Rule(id, key + _SEP + _VALUE, groups=_VG, check=check, keywords=keywords,
                source=source)


_GENERIC = "hand-written (after gitleaks:generic-api-key)"

RULES: tuple[Rule, ...] = (
    # --- cloud providers ---------------------------------------------------------------------
    _prefix("aws-access-key-id",
            r"((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)" + _lb(4) + r"[A-Z0-9]{16})" + _E,
            "gitleaks:aws-access-token (alphabet widened to [A-Z0-9])",
            ("akia", "asia", "abia", "acca", "a3t")),
    Rule("aws-key-pair",  # the pair is one secret: one «redacted» from the id to the key
         r"((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
         r"(?:[ \t,;:|/=]{1,8}[A-Za-z]{1,20}){0,3}?[ \t,;:|/=]{1,8}"
         r"[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
         source="hand-written: an AWS secret access key just after its access key id, with "
         "no key name (a CSV row, 'id / secret')", check="aws_secret",
         keywords=("akia", "asia", "abia", "acca", "a3t")),
    Rule("aws-secret-access-key",
         _ci("S", "ecret") + r"(?i:[ _-]?access)?(?i:[ _-]?key)?"
         r"""["'\]]{0,2}[ \t]*(?:=>|:=|[:=]|(?i:is))?[ \t]*["']?"""
         r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
         source="vendor: AWS secret access key (40 base64 characters) after its key name",
         keywords=("secret",), entropy=3.5),
    _prefix("gcp-api-key", r"(AIza" + _lb(4) + r"[A-Za-z0-9_-]{35})" + _ED,
            "gitleaks:gcp-api-key", ("aiza",), public=True),
    _prefix("google-oauth-client-secret", r"(GOCSPX-" + _lb(7) + r"[A-Za-z0-9_-]{24,40})" + _ED,
            "vendor: Google OAuth client secret prefix GOCSPX-", ("gocspx-",)),
    _prefix("google-oauth-refresh-token",
            r"(1//0(?<![A-Za-z0-9/]....)[A-Za-z0-9_-]{40,512})" + _ED,
            "vendor: Google OAuth refresh token 1//0...", ("1//0",)),
    _prefix("google-oauth-access-token", r"(ya29\." + _lb(5) + r"[A-Za-z0-9_-]{30,4096})" + _ED,
            "vendor: Google OAuth access token ya29.", ("ya29.",)),
    _prefix("firebase-fcm-server-key",
            r"(AAAA" + _lb(4) + r"[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,200})" + _ED,
            "vendor: Firebase Cloud Messaging legacy server key", ("apa91b",)),
    Rule("azure-storage-key",
         r"(?:AccountKey|SharedAccessKey|SharedAccessSignature)=([^;\"'\s]{20,1024})",
         source="vendor: Azure storage / Service Bus connection strings",
         check="credential", keywords=("accountkey", "sharedaccess")),
    _prefix("azure-ad-client-secret",
            r"(?<![A-Za-z0-9_~.-])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})"
            r"(?![A-Za-z0-9_~.-])",
            "gitleaks:azure-ad-client-secret (boundaries as lookarounds)", ("q~",),
            anchor="Q~", around=(4, 34)),
    _prefix("digitalocean-token", r"(do[opr]_v1_" + _lb(7) + r"[a-f0-9]{64})" + _E,
            "gitleaks:digitalocean-pat (with the doo_/dor_ forms)", ("_v1_",)),
    _prefix("databricks-token", r"(dapi" + _lb(4) + r"[a-f0-9]{32}(?:-\d)?)" + _ED,
            "gitleaks:databricks-api-token", ("dapi",)),
    _prefix("heroku-api-key-v2", r"(HRKU-" + _lb(5) + r"[A-Za-z0-9_-]{20,100})" + _ED,
            "gitleaks:heroku-api-key-v2 (length relaxed)", ("hrku-",)),
    _prefix("cloudflare-origin-ca-key", r"(v1\.0-" + _lb(5) + r"[a-f0-9]{24}-[a-f0-9]{146})" + _E,
            "vendor: Cloudflare Origin CA key", ("v1.0-",)),
    _prefix("alibaba-access-key-id", r"(LTAI" + _lb(4) + r"[A-Za-z0-9]{20})" + _E,
            "vendor: Alibaba Cloud AccessKey ID prefix LTAI", ("ltai",)),
    _prefix("tencent-secret-id", r"(AKID" + _lb(4) + r"[A-Za-z0-9]{32})" + _E,
            "vendor: Tencent Cloud SecretId prefix AKID", ("akid",), check="token_mixed"),
    _prefix("scaleway-access-key", r"(SCW" + _lb(3) + r"[A-Z0-9]{17})" + _E,
            "vendor: Scaleway access key id prefix SCW", ("scw",), check="token_mixed"),
    _prefix("aws-bedrock-api-key", r"(ABSK" + _lb(4) + r"[A-Za-z0-9+/]{109,269}={0,2})"
            r"(?![A-Za-z0-9+/=])", "gitleaks:aws-amazon-bedrock-api-key-long-lived",
            ("absk",)),
    _prefix("dynatrace-token",
            r"(dt0c01\." + _lb(7) + r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})" + _E,
            "gitleaks:dynatrace-api-token", ("dt0c01.",)),
    _prefix("hashicorp-vault-token", r"(hv[sbr]\." + _lb(4) + r"[A-Za-z0-9_-]{20,500})" + _ED,
            "gitleaks:vault-service-token (hvb./hvr. added, length relaxed)",
            ("hvs.", "hvb.", "hvr.")),
    _prefix("hashicorp-vault-legacy-token",
            r"(s\.(?<![A-Za-z0-9._/-]..)[A-Za-z0-9]{24})(?![A-Za-z0-9._-])",
            "gitleaks:vault-service-token (legacy s. form)", ("s.",), check="token_mixed"),
    _prefix("terraform-cloud-token",
            r"([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{40,200})" + _ED,
            "gitleaks:hashicorp-tf-api-token (length relaxed; the id in any case, as gitleaks' "
            "(?i) has it)", ("atlasv1",), anchor=r"\.atlasv1\.", around=(14, 200)),
    Rule("okta-api-token", r"SSWS[ \t]+(00[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])",
         source="vendor: Okta API token after its SSWS scheme", keywords=("ssws",)),
    _prefix("mapbox-secret-token",
            r"(sk\.eyJ1Ijoi" + _lb(11) + r"[A-Za-z0-9_-]{10,300}\.[A-Za-z0-9_-]{20,100})" + _ED,
            "vendor: Mapbox secret access token (sk. + base64url JSON)", ("sk.eyj1ijoi",)),
    # --- source hosting, CI, package registries ---------------------------------------------
    _prefix("github-token", r"(gh[pousr]_" + _lb(4) + r"[A-Za-z0-9]{20,251})" + _E,
            "gitleaks:github-pat/github-oauth/github-app-token/github-refresh-token (from 20)",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _prefix("github-fine-grained-pat", r"(github_pat_" + _lb(11) + r"[A-Za-z0-9_]{22,255})" + _E,
            "gitleaks:github-fine-grained-pat (length relaxed)", ("github_pat_",)),
    _prefix("gitlab-token",
            r"(gl(?:pat|ptt|rt|rtr|dt|ft|cbt|imt|oas|agent|soat|ffct|wt)-(?<![A-Za-z0-9_]gl..)"
            r"[A-Za-z0-9_-]{20,300}(?:\.[A-Za-z0-9_-]{2,50}){0,2})" + _ED,
            "gitleaks:gitlab-pat/gitlab-ptt/gitlab-runner-authentication-token + vendor: GitLab "
            "token prefixes", ("glpat-", "glptt-", "glrt", "gldt-", "glft-", "glcbt-", "glimt-",
                               "gloas-", "glagent-", "glsoat-", "glffct-", "glwt-")),
    _prefix("npm-token", r"(npm_" + _lb(4) + r"[A-Za-z0-9]{30,40})" + _E,
            "gitleaks:npm-access-token", ("npm_",)),
    _prefix("pypi-token", r"(pypi-Ag" + _lb(7) + r"[A-Za-z0-9_-]{40,4096})" + _ED,
            "gitleaks:pypi-upload-token (any index, not only pypi.org)", ("pypi-ag",)),
    _prefix("rubygems-token", r"(rubygems_" + _lb(9) + r"[a-f0-9]{48})" + _E,
            "gitleaks:rubygems-api-token", ("rubygems_",)),
    _prefix("dockerhub-token", r"(dckr_(?:pat|oat)_" + _lb(9) + r"[A-Za-z0-9_-]{27,60})" + _ED,
            "vendor: Docker Hub personal and organization access token prefixes",
            ("dckr_pat_", "dckr_oat_")),
    _prefix("pulumi-token", r"(pul-" + _lb(4) + r"[a-f0-9]{40})" + _E,
            "vendor: Pulumi access token", ("pul-",)),
    _prefix("atlassian-api-token", r"(AT(?:ATT|CTT)3" + _lb(6) + r"[A-Za-z0-9_=-]{50,300})" + _ED,
            "gitleaks:atlassian-api-token (ATATT3 form, length relaxed)", ("atatt3", "atctt3")),
    _prefix("bitbucket-app-password", r"(ATBB" + _lb(4) + r"[A-Za-z0-9_=.-]{28,100})" + _ED,
            "vendor: Bitbucket app password prefix ATBB", ("atbb",)),
    _prefix("circleci-token",
            r"(CCIP(?:AT|RJ)_" + _lb(7) + r"[A-Za-z0-9]{22}_[a-f0-9]{40})" + _E,
            "vendor: CircleCI personal and project API tokens (CCIPAT_, CCIPRJ_)", ("ccip",)),
    _prefix("buildkite-token", r"(bkua_" + _lb(5) + r"[a-f0-9]{40})" + _E,
            "vendor: Buildkite user API access token", ("bkua_",)),
    _prefix("sonarqube-token", r"(sq[upa]_" + _lb(4) + r"[a-f0-9]{40})" + _E,
            "vendor: SonarQube user, project and global analysis tokens", ("squ_", "sqp_", "sqa_")),
    _prefix("sourcegraph-token",
            r"(sgp_" + _lb(4) + r"(?:(?:[a-f0-9]{16}|local)_)?[a-f0-9]{40})" + _E,
            "gitleaks:sourcegraph-access-token (the prefixed forms)", ("sgp_",)),
    _prefix("artifactory-token",
            r"((?:AKCp" + _lb(4) + r"[A-Za-z0-9]{69}|cmVmd" + _lb(5) + r"[A-Za-z0-9]{59}))" + _E,
            "gitleaks:artifactory-api-key/artifactory-reference-token", ("akcp", "cmvmd")),
    _prefix("nuget-api-key", r"(oy2" + _lb(3) + r"[a-z0-9]{43})" + _E,
            "vendor: NuGet.org API key", ("oy2",), check="token_mixed"),
    _prefix("octopus-deploy-api-key", r"(API-" + _lb(4) + r"[A-Z0-9]{26})" + _E,
            "gitleaks:octopus-deploy-api-key", ("api-",), check="token_mixed"),
    _prefix("netlify-token", r"(nf[pc]_" + _lb(4) + r"[A-Za-z0-9]{36,40})" + _E,
            "vendor: Netlify personal access token nfp_ (and nfc_)", ("nfp_", "nfc_")),
    _prefix("render-api-key", r"(rnd_" + _lb(4) + r"[A-Za-z0-9]{28,40})" + _E,
            "vendor: Render API key", ("rnd_",), check="token_mixed"),
    _prefix("flyio-token",
            r"((?:FlyV1[ \t]+fm[12][ar]?_|fm" + _lb(2) + r"[12][ar]?_)[A-Za-z0-9+/]{100,2000}={0,3}"
            r"(?:,fm[12][ar]?_[A-Za-z0-9+/]{100,2000}={0,3}){0,4}|fo1_" + _lb(4)
            + r"[A-Za-z0-9_-]{43})(?![A-Za-z0-9+/=_-])",
            "gitleaks:flyio-access-token (with its FlyV1 scheme and a comma-separated list)",
            ("fm1", "fm2", "fo1_")),
    # --- chat and messaging ------------------------------------------------------------------
    _prefix("slack-token", r"(xox[abposre]-" + _lb(5) + r"[A-Za-z0-9-]{10,250})",
            "gitleaks:slack-bot-token/slack-user-token/slack-legacy-workspace-token (merged)",
            ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
            check="token_mixed"),
    _prefix("slack-app-token", r"(xapp-" + _lb(5) + r"\d-[A-Za-z0-9-]{10,250})",
            "gitleaks:slack-app-token", ("xapp-",)),
    _prefix("slack-webhook-url", _with_scheme(r"hooks\.slack\.com/(?:services|workflows|triggers)/"
                                              r"[A-Za-z0-9+/_-]{20,250}"),
            "gitleaks:slack-webhook-url (length relaxed)", ("hooks.slack.com",)),
    _prefix("discord-bot-token",
            r"([MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})" + _ED,
            "vendor: Discord bot token (base64 user id . timestamp . HMAC)", (".",),
            check="token_mixed"),
    _prefix("discord-webhook-url",
            _with_scheme(r"(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{5,30}/"
                         r"[A-Za-z0-9_-]{20,100}"),
            "vendor: Discord webhook URL", ("discord",), anchor="discord",
            around=(15, 160)),
    _prefix("telegram-bot-token", r"(\d{5,16}:A[A-Za-z0-9_-]{34})" + _ED,
            "gitleaks:telegram-bot-api-token (keyword context dropped)", (":a",),
            anchor=":A", around=(16, 34)),
    _prefix("twilio-api-key", r"(SK" + _lb(2) + r"[0-9a-fA-F]{32})" + _E,
            "gitleaks:twilio-api-key", ("sk",)),
    _prefix("sendgrid-api-key",
            r"(SG\." + _lb(3) + r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})" + _ED,
            "gitleaks:sendgrid-api-token (the two parts as the vendor documents them)", ("sg.",)),
    _prefix("mailgun-api-key", r"(key-" + _lb(4) + r"[0-9a-f]{32})" + _E,
            "gitleaks:mailgun-private-api-token (keyword context dropped)", ("key-",)),
    _prefix("mailchimp-api-key", r"([0-9a-f]{32}-us[0-9]{1,2})" + _E,
            "gitleaks:mailchimp-api-key (keyword context dropped)", ("-us",),
            anchor="-us", around=(32, 2)),
    _prefix("brevo-api-key", r"(xkeysib-" + _lb(8) + r"[a-f0-9]{64}-[A-Za-z0-9]{16})" + _E,
            "vendor: Brevo (Sendinblue) API key", ("xkeysib-",)),
    _prefix("mailgun-api-key-v2", r"([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})" + _E,
            "vendor: Mailgun API key (hex-hex-hex, after gitleaks:mailgun-signing-key)",
            ("-",), anchor=r"-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9_])", around=(32, 0)),
    _prefix("resend-api-key", r"(re_" + _lb(3) + r"[A-Za-z0-9]{8}_[A-Za-z0-9]{24})" + _E,
            "vendor: Resend API key", ("re_",), check="token_mixed"),
    _prefix("twilio-sid-auth-token",  # the pair is one secret, as an AWS key pair
            r"(AC[0-9a-f]{32}(?![A-Za-z0-9])(?:[ \t,;:|/=\"'()]{1,8}"
            r"(?i:auth|token|secret|key|and|api|twilio_auth_token|authtoken)){0,3}?"
            r"[ \t,;:|/=\"'()]{1,8}[0-9a-f]{32})(?![A-Za-z0-9])",
            "hand-written: a Twilio auth token just after its account SID (Client(sid, token), "
            "'SID / token')", ("ac",)),
    _prefix("teams-webhook-url",
            r"(https://[A-Za-z0-9-]{1,63}\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}"
            r"/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}(?:/[A-Za-z0-9_-]{1,100})?"
            r"|https://outlook\.office(?:365)?\.com/webhook/[0-9a-f-]{36}@[0-9a-f-]{36}"
            r"/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36})",
            "gitleaks:microsoft-teams-webhook (with the legacy outlook.office.com form)",
            ("incomingwebhook",)),
    _prefix("automation-webhook-url",
            _with_scheme(r"(?:hooks\.zapier\.com/hooks/catch/\d{3,12}/[A-Za-z0-9]{5,12}"
                         r"|maker\.ifttt\.com/(?:trigger/[A-Za-z0-9_-]{1,64}/with/)?key"
                         r"/[A-Za-z0-9_-]{20,64})"),
            "vendor: Zapier catch hook and IFTTT Webhooks URLs (the path is the secret)",
            ("hooks.zapier.com", "maker.ifttt.com")),
    # --- payments and commerce ---------------------------------------------------------------
    _prefix("stripe-secret-key",
            r"([sr]k_(?:live|test|prod)_" + _lb(8) + r"[A-Za-z0-9]{10,255})" + _E,
            "gitleaks:stripe-access-token", ("sk_", "rk_")),
    _prefix("stripe-publishable-key", r"(pk_(?:live|test)_" + _lb(8) + r"[A-Za-z0-9]{10,255})" + _E,
            "vendor: Stripe publishable key (public by design)", ("pk_",), public=True),
    _prefix("stripe-webhook-secret", r"(whsec_" + _lb(6) + r"[A-Za-z0-9+/=]{20,100})",
            "vendor: Stripe webhook signing secret", ("whsec_",)),
    _prefix("square-token",
            r"((?:EAAA" + _lb(4) + r"|sq0(?:atp|csp)-" + _lb(7) + r")[A-Za-z0-9_-]{22,100})" + _ED,
            "gitleaks:square-access-token (with the sq0csp- secret)", ("eaaa", "sq0")),
    _prefix("braintree-access-token",
            r"(access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32})" + _E,
            "vendor: Braintree / PayPal access token", ("access_token$",)),
    _prefix("shopify-token", r"(shp(?:at|ss|ca|pa)_" + _lb(6) + r"[a-fA-F0-9]{32})" + _E,
            "gitleaks:shopify-access-token/shopify-shared-secret/shopify-custom-access-token",
            ("shpat_", "shpss_", "shpca_", "shppa_")),
    _prefix("woocommerce-key", r"(c[ks]_" + _lb(3) + r"[a-f0-9]{40})" + _E,
            "vendor: WooCommerce REST API consumer key ck_ and secret cs_", ("ck_", "cs_")),
    _prefix("shippo-token", r"(shippo_(?:live|test)_" + _lb(12) + r"[a-fA-F0-9]{40})" + _E,
            "gitleaks:shippo-api-token", ("shippo_",)),
    _prefix("easypost-token", r"(EZ[AT]K" + _lb(4) + r"[A-Za-z0-9]{54})" + _E,
            "gitleaks:easypost-api-token/easypost-test-api-token", ("ezak", "eztk")),
    _prefix("duffel-token", r"(duffel_(?:test|live)_" + _lb(12) + r"[A-Za-z0-9_=-]{43})" + _ED,
            "gitleaks:duffel-api-token", ("duffel_",)),
    _prefix("plaid-access-token",
            r"(access-" + _lb(7) + r"(?:sandbox|development|production)-"
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})" + _E,
            "gitleaks:plaid-api-token (without the keyword context)", ("access-",)),
    # --- AI and ML services ------------------------------------------------------------------
    _prefix("anthropic-api-key",
            r"(sk-ant-(?<![A-Za-z0-9_-].{7})[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{40,200})" + _ED,
            "gitleaks:anthropic-api-key (any key kind and length)", ("sk-ant-",)),
    _prefix("openai-api-key",
            r"(sk-(?<![A-Za-z0-9_-]...)(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}"
            r"|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}))" + _ED,
            "gitleaks:openai-api-key (project keys of any length)", ("sk-",)),
    _prefix("sk-api-key", r"(sk-(?<![A-Za-z0-9_-]...)[A-Za-z0-9_-]{16,300})" + _ED,
            "hand-written: the sk- keys of OpenAI-compatible providers and proxies", ("sk-",),
            check="token_mixed"),
    _prefix("ai-provider-key",
            r"((?:gsk_" + _lb(4) + r"|xai-" + _lb(4) + r"|pplx-" + _lb(5) + r"|r8_" + _lb(3)
            + r"|fw_" + _lb(3) + r"|csk-" + _lb(4) + r")[A-Za-z0-9]{24,128})" + _E,
            "vendor: Groq gsk_, xAI xai-, Perplexity pplx-, Replicate r8_, Fireworks fw_, "
            "Cerebras csk- API keys", ("gsk_", "xai-", "pplx-", "r8_", "fw_", "csk-"),
            check="token_mixed"),
    _prefix("huggingface-token",
            r"((?:hf_" + _lb(3) + r"|api_org_" + _lb(8) + r")[A-Za-z0-9]{30,40})" + _E,
            "gitleaks:huggingface-access-token (with org tokens)", ("hf_", "api_org_")),
    _prefix("langsmith-api-key",
            r"(lsv2_" + _lb(5) + r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})" + _E,
            "vendor: LangSmith personal and service API keys", ("lsv2_",)),
    _prefix("pinecone-api-key",
            r"(pcsk_" + _lb(5) + r"[A-Za-z0-9]{4,12}_[A-Za-z0-9]{40,100})" + _E,
            "vendor: Pinecone API key", ("pcsk_",)),
    _prefix("elevenlabs-api-key", r"(sk_" + _lb(3) + r"[a-f0-9]{48})" + _E,
            "vendor: ElevenLabs API key (sk_ and 48 hex digits)", ("sk_",)),
    # --- productivity, monitoring, identity --------------------------------------------------
    _prefix("linear-api-key",
            r"(lin_(?:api_" + _lb(8) + r"|oauth_" + _lb(10) + r")[A-Za-z0-9]{32,80})" + _E,
            "gitleaks:linear-api-key", ("lin_",)),
    _prefix("notion-token",
            r"((?:secret_" + _lb(7) + r"[A-Za-z0-9]{43}|ntn_" + _lb(4) + r"[A-Za-z0-9]{40,60}))"
            + _E, "gitleaks:notion-api-token + vendor: legacy secret_ integration tokens",
            ("secret_", "ntn_"), check="token_mixed"),
    _prefix("doppler-token",
            r"(dp\.(?:pt|st|sa|ct)\." + _lb(6)
            + r"(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,64})" + _E,
            "gitleaks:doppler-api-token (all token kinds)", ("dp.",)),
    _prefix("postman-api-key", r"(PMAK-" + _lb(5) + r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34})" + _E,
            "gitleaks:postman-api-token", ("pmak-",)),
    _prefix("sentry-token", r"(sntry[usa]_" + _lb(7) + r"[A-Za-z0-9+/=_-]{32,400})" + _ED,
            "gitleaks:sentry-user-token (and org tokens)", ("sntry",)),
    _prefix("new-relic-key", r"(NR(?:AK|II|AA|JS)-" + _lb(5) + r"[A-Za-z0-9]{19,40})" + _E,
            "gitleaks:new-relic-user-api-key (with the other NR key kinds)",
            ("nrak-", "nrii-", "nraa-", "nrjs-")),
    _prefix("grafana-token",
            r"((?:glc_" + _lb(4) + r"[A-Za-z0-9+/]{32,400}={0,3}|glsa_" + _lb(5)
            + r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi" + _lb(8)
            + r"[A-Za-z0-9]{70,400}={0,3}))(?![A-Za-z0-9+/=_-])",
            "gitleaks:grafana-cloud-api-token/grafana-service-account-token/grafana-api-key",
            ("glc_", "glsa_", "eyjrijoi")),
    _prefix("supabase-token",
            r"((?:sbp_" + _lb(4) + r"[a-f0-9]{40}|sb_secret_" + _lb(10)
            + r"[A-Za-z0-9_-]{20,100}))" + _ED,
            "vendor: Supabase access token and secret key prefixes", ("sbp_", "sb_secret_")),
    _prefix("planetscale-token",
            r"(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64})" + _ED,
            "vendor: PlanetScale token and password prefixes", ("pscale_",)),
    _prefix("figma-token", r"(figd_" + _lb(5) + r"[A-Za-z0-9_-]{40})" + _ED,
            "vendor: Figma personal access token", ("figd_",)),
    _prefix("airtable-pat", r"(pat" + _lb(3) + r"[A-Za-z0-9]{14}\.[a-f0-9]{64})" + _E,
            "gitleaks:airtable-personnal-access-token", ("pat",)),
    _prefix("honeycomb-api-key", r"(hc[ax](?:ik|mk|lk)_" + _lb(6) + r"[a-z0-9]{40,70})" + _E,
            "vendor: Honeycomb ingest and management keys", ("hcaik_", "hcxik_", "hcamk_",
                                                              "hcxmk_", "hcalk_", "hcxlk_")),
    _prefix("hubspot-private-app-token",
            r"(pat-(?:na|eu|ap)\d-" + _lb(8)
            + r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})" + _E,
            "vendor: HubSpot private app access token", ("pat-",)),
    _prefix("clickup-token", r"(pk_" + _lb(3) + r"\d{5,10}_[A-Z0-9]{32})" + _E,
            "vendor: ClickUp personal API token", ("pk_",)),
    _prefix("typeform-token", r"(tfp_" + _lb(4) + r"[A-Za-z0-9_.=-]{59})" + _ED,
            "gitleaks:typeform-api-token (without the keyword context)", ("tfp_",)),
    _prefix("contentful-pat", r"(CFPAT-" + _lb(6) + r"[A-Za-z0-9_-]{43})" + _ED,
            "vendor: Contentful personal access token", ("cfpat-",)),
    _prefix("readme-api-key", r"(rdme_" + _lb(5) + r"[a-z0-9]{70})" + _E,
            "gitleaks:readme-api-token", ("rdme_",)),
    _prefix("prefect-api-key", r"(pnu_" + _lb(4) + r"[A-Za-z0-9]{36})" + _E,
            "gitleaks:prefect-api-token", ("pnu_",)),
    _prefix("infracost-api-key", r"(ico-" + _lb(4) + r"[A-Za-z0-9]{32})" + _E,
            "gitleaks:infracost-api-token", ("ico-",), check="token_mixed"),
    _prefix("frameio-token", r"(fio-u-" + _lb(6) + r"[A-Za-z0-9_=-]{64})" + _ED,
            "gitleaks:frameio-api-token", ("fio-u-",)),
    _prefix("scalingo-token", r"(tk-us-" + _lb(6) + r"[A-Za-z0-9_-]{48})" + _ED,
            "gitleaks:scalingo-api-token", ("tk-us-",)),
    _prefix("posthog-personal-api-key", r"(phx_" + _lb(4) + r"[A-Za-z0-9]{43})" + _E,
            "vendor: PostHog personal API key", ("phx_",)),
    _prefix("posthog-project-key", r"(phc_" + _lb(4) + r"[A-Za-z0-9]{43})" + _E,
            "vendor: PostHog project API key (public by design)", ("phc_",), public=True),
    _prefix("mapbox-public-token",
            r"(pk\.eyJ1Ijoi" + _lb(11) + r"[A-Za-z0-9_-]{10,300}\.[A-Za-z0-9_-]{20,100})" + _ED,
            "vendor: Mapbox public access token (public by design)", ("pk.eyj1ijoi",),
            public=True),
    _prefix("tailscale-key",
            r"(tskey-" + _lb(6) + r"(?:auth|api|client|scim|webhook)-"
            r"[A-Za-z0-9]{6,24}-[A-Za-z0-9]{20,64})" + _E,
            "vendor: Tailscale auth, API and OAuth client keys", ("tskey-",)),
    _prefix("neon-password", r"(npg_" + _lb(4) + r"[A-Za-z0-9]{12,40})" + _E,
            "vendor: Neon database password prefix npg_", ("npg_",), check="token_mixed"),
    _prefix("dropbox-token", r"(sl\." + _lb(3) + r"(?:[A-Za-z]\.)?[A-Za-z0-9_=-]{130,1400})" + _ED,
            "gitleaks:dropbox-short-lived-api-token (without the keyword context)", ("sl.",)),
    _prefix("facebook-access-token", r"(EAA[A-Z]" + _lb(4) + r"[A-Za-z0-9]{100,500})" + _E,
            "gitleaks:facebook-page-access-token (any EAA? app)", ("eaa",)),
    _prefix("twitter-bearer-token", r"(A{22}[A-Za-z0-9%]{80,100})(?![A-Za-z0-9%])",
            "gitleaks:twitter-bearer-token (without the keyword context)", ("a" * 22,)),
    _prefix("adobe-client-secret", r"(p8e-" + _lb(4) + r"[A-Za-z0-9]{32})" + _E,
            "gitleaks:adobe-client-secret", ("p8e-",), check="token_mixed"),
    _prefix("onepassword-secret-key",
            r"(A3-" + _lb(3) + r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
            r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})" + _E,
            "gitleaks:1password-secret-key", ("a3-",), check="token_mixed"),
    _prefix("openshift-token", r"(sha256~" + _lb(7) + r"[A-Za-z0-9_-]{43})" + _ED,
            "gitleaks:openshift-user-token", ("sha256~",)),
    _prefix("onepassword-service-token", r"(ops_eyJ" + _lb(7) + r"[A-Za-z0-9+/=_-]{100,2000})"
            + _ED, "vendor: 1Password service account token", ("ops_",)),
    _prefix("age-secret-key",
            r"(AGE-SECRET-KEY-1" + _lb(16) + r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})" + _E,
            "gitleaks:age-secret-key", ("age-secret-key-1",)),
    # --- keys and tokens of generic shape ----------------------------------------------------
    _prefix("jwt",
            r"(eyJ" + _lb(3) + r"[A-Za-z0-9_-]{10,4096}\.ey[A-Za-z0-9_-]{10,16384}"
            r"(?:\.[A-Za-z0-9_-]{8,8192})?)" + _ED,
            "gitleaks:jwt (base64url parts, unsigned tokens too)", ("eyj",)),
    Rule("private-key-block",
         "(" + _PEM_BEGIN + r"(?:[^-]|-(?!----)){0,65536}?" + _PEM_END + ")",
         source="gitleaks:private-key (the body stops at the first dash run, so a BEGIN with "
         "no END costs one scan)", check="pem", keywords=("private key",)),
    Rule("private-key-unterminated",
         "(" + _PEM_BEGIN + r"(?=[A-Za-z0-9+/=\s\\:,.-]{40})"
         r"(?:[A-Za-z0-9+/=\s\\:,.]{1,65536}+|-(?!----)){1,65536}+)",
         source="hand-written: a PEM private key cut before its END line", check="pem",
         keywords=("private key",)),
    Rule("putty-private-key",
         _ci("P", "rivate-Lines") + r":[ \t]*\d{1,4}[ \t]*\r?\n([A-Za-z0-9+/=\s]{16,16384})",
         source="vendor: PuTTY .ppk private key lines", check="pem", keywords=("private-lines",)),
    _prefix("private-key-base64",
            r"(LS0tLS1CRUdJTi" + _lb(14) + r"[A-Za-z0-9+/]{20,65536}={0,2})(?![A-Za-z0-9+/=])",
            "hand-written: a PEM private key in base64 (kubeconfig client-key-data)",
            ("ls0tls1crudjti",), check="b64_pem"),
    _prefix("crypt-password-hash",
            r"(\$(?<![A-Za-z0-9$./].)(?:2[abxy]|apr1|1|5|6|y|gy|7|argon2(?:id|i|d))\$"
            r"[A-Za-z0-9./$=,+-]{20,400})",
            "hand-written: crypt(3), bcrypt and argon2 password hashes (htpasswd, shadow)",
            ("$",)),
    # --- credentials in URLs and connection strings ------------------------------------------
    Rule("url-password",
         r"://[^\s:/@?#\"'<>]{0,256}:([^\s/\"'<>]{1,256})@(?=[A-Za-z0-9\[])",
         source="hand-written: RFC 3986 userinfo user:password@ in any scheme", check="loose",
         keywords=("://",)),
    Rule("url-token-user", r"://([A-Za-z0-9_.~+%-]{20,256})@(?=[A-Za-z0-9\[])",
         source="hand-written: a token as the URL user (Sentry DSN key, https://<token>@host)",
         check="prose", keywords=("://",)),
    Rule("url-query-signature",
         r"[?&;](?i:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)"
         r"=([^&\s#\"'<>]{8,2048})",
         source="vendor: Azure SAS sig=, AWS and GCS signed-URL signatures", check="credential",
         keywords=("sig", "signature", "security-token")),
    Rule("pgpass-line",
         r"(?m)^[^\s:#]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:(\S{1,256})$",
         source="vendor: PostgreSQL .pgpass host:port:db:user:password", check="password",
         keywords=(":",)),
    Rule("netrc-password",
         _word("M", "achine", 7) + r"[ \t]+\S{1,253}(?:[ \t]+(?i:login|account)[ \t]+\S{1,253})"
         r"{0,2}[ \t]+(?i:password)[ \t]+(\S{1,256})",
         source="vendor: .netrc machine/login/password", check="password",
         keywords=("machine",)),
    Rule("bundler-credentials",
         r"BUNDLE_" + _lb(7) + r"(?=[A-Z0-9_]{0,200}__)[A-Z0-9_]{1,200}[\"']?[ \t]*[:=][ \t]*"
         r"[\"']?([^\s\"':]{1,128}:[^\s\"']{1,256})",
         source="vendor: Bundler BUNDLE_<HOST> user:password settings", check="password",
         keywords=("bundle_",)),
    # --- assignments and key-value pairs (shell, .env, INI, properties, JSON, YAML, TOML) ----
    # PGPASSWORD, hashed_password, DB_PASS, db-pwd, dbPass (not bypass, compass).
    _assign("assignment-password",
            r"(?:" + _ci("P", "ass(?:w(?:or)?d|phrase|code)") + "|" + _word("P", "ass", 4) + "|"
            + _word("P", "wd", 3) + "|" + _word("P", "w", 2) + r")"
            r"(?i:[_.-]?(?:hash|hashed|b64|base64|enc|encrypted|value|string|plain))?"
            + _MORE_NAME, "password", ("pass", "pw"),
            _GENERIC + " and gitleaks:database-password"),
    # client_secret, SECRET, SECRET_KEY, secret_key_base, secretAccessKey, secrets.
    _assign("assignment-secret",
            _ci("S", "ecret") + r"(?i:[_.-]?(?:access[_.-]?)?key)?"
            r"(?i:[_.-]?(?:base|data|value|b64|base64|hash|string|id))?(?i:s)?" + _MORE_NAME,
            "credential", ("secret",), _GENERIC),
    # TOKEN, GITHUB_TOKEN, _authToken, npmAuthToken, refresh_token, tokens.
    _assign("assignment-token",
            _ci("T", "oken") + r"(?i:s|[_.-]?(?:value|data|secret|string|b64))?" + _MORE_NAME,
            "credential", ("token",), _GENERIC),
    # MAX_KEY (then the value decides), apiKey, APIKEY, AccountKey, client-key-data.
    _assign("assignment-key",
            _KEY + r"(?i:s|[_.-]?(?:data|base|value|secret|b64|base64|string))?",
            "credential", ("key",), _GENERIC),
    # "auth": (docker config), _auth= (npm), basicAuth, npmAuthIdent (not oauth).
    _assign("assignment-auth",
            _word("A", "uth", 4) + r"(?i:[_.-]?(?:key|ident|string|value|header))?",
            "credential", ("auth",), _GENERIC),
    _assign("assignment-credential", _ci("C", r"red(?:ential)?s?|onnect\.sid"),
            "credential", ("cred", "connect.sid"), _GENERIC),
    # session=, sessionid=, JSESSIONID=, PHPSESSID=, laravel_session= (cookies).
    _assign("assignment-session",
            r"(?:" + _ci("S", r"ess(?:ion)?[_.-]?id") + "|" + _word("S", "ession", 7) + ")"
            r"(?i:[_.-]?(?:key|token|secret|cookie))?",
            "credential", ("sess",), _GENERIC),
    _assign("assignment-signature", _ci("S", "ignature"), "credential", ("signature",),
            _GENERIC),
    Rule("xml-element-secret",
         r">(?:" + "|".join(f"(?<=(?i:{n})>)" for n in _XML_NAMES) + r")([^<\n]{1,1024})</",
         source="hand-written: <password>...</password> (Maven settings.xml and the like)",
         check="password", keywords=("</",)),
    Rule("xml-add-key-value",
         _ci("K", "ey") + r"=\"[^\"\n]{0,60}(?i:password|passwd|pwd|secret|token|apikey"
         r"|api[_-]key)[^\"\n]{0,20}\"[ \t]+(?i:value)=(\"[^\"\n]{1,1024}\")",
         source="gitleaks:nuget-config-password (any secret-named key of <add key= value=>)",
         check="password", keywords=("value=",)),
    Rule("name-value-pair",
         "(?:" + _either("[Nn]ame", "[Kk]ey", "ParameterKey", "parameter_key")
         + r"[\"']?[ \t]*[:=][ \t]*[\"']?" + _SECRET_NAME
         + r"[\"']?[ \t]*[,;]?[ \t]*(?:[Vv]alue|ParameterValue|parameter_value)"
         r"[\"']?[ \t]*[:=][ \t]*" + _VALUE
         + r"|--name(?:=|[ \t]+)[\"']?" + _SECRET_NAME + r"[\"']?(?:[ \t]+--?[A-Za-z][\w-]{0,30}"
         r"(?:(?:=|[ \t]+)(?!-)\S{1,200})?){0,6}?[ \t]+--value(?:=|[ \t]+)" + _VALUE + ")",
         groups=(*_VG, 5, 6, 7, 8), check="password", keywords=("value",),
         source="hand-written: a secret's name and its value side by side ({name: DB_PASSWORD, "
         "value: ...}, ParameterKey=DbPassword,ParameterValue=..., az keyvault secret set "
         "--name db-password --value ..., aws ssm put-parameter)"),
    Rule("sql-password",
         # one class of first letters, then the branches (see _either; about five times faster)
         r"[IiWwSs](?:(?<=[Ii])(?i:dentified)[ \t]+(?i:by)(?:[ \t]+(?i:password))?[ \t]+"
         r"('[^'\n]{1,256}'|\"[^\"\n]{1,256}\")"
         r"|(?<=[Ww])(?i:ith)(?:[ \t]+(?i:encrypted|unencrypted))?[ \t]+(?i:password)[ \t]*=?"
         r"[ \t]*('[^'\n]{1,256}')"
         r"|(?<=[Ss])(?i:et)[ \t]+(?i:password)(?:[ \t]+(?i:for)[ \t]+[^\s=]{1,200})?[ \t]*=[ \t]*"
         r"(?:(?i:password)\()?('[^'\n]{1,256}'))", groups=(1, 2, 3), check="password",
         source="vendor: SQL CREATE/ALTER USER ... IDENTIFIED BY '...', WITH PASSWORD '...', "
         "SET PASSWORD = '...' (MySQL, PostgreSQL, Oracle)",
         keywords=("identified", "with password", "with encrypted password",
                   "with unencrypted password", "set password"),
         anchor=KEYWORDS, around=(0, 500)),
    Rule("oracle-user-password",
         r"(?:jdbc:oracle:(?:thin|oci8?):|(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)"
         r"(?:[ \t]+-[A-Za-z]{1,10}){0,4}[ \t]+(?:(?i:target|userid)[ \t=]+)?)[\"']?"
         r"[A-Za-z0-9_$#.]{1,64}/([^\s@/\"']{1,256})(?=@|[\s\"']|$)",
         source="vendor: Oracle user/password@service (JDBC thin URL, sqlplus, Data Pump)",
         check="password", keywords=("jdbc:oracle:", "sqlplus", "sqlldr", "expdp", "impdp",
                                     "rman", "dgmgrl"),
         anchor=KEYWORDS, around=(0, 420)),  # a match starts at its keyword
    Rule("smtp-auth-credentials",
         r"AUTH[ \t]+(?:PLAIN|XOAUTH2)[ \t]+([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])",
         source="vendor: SMTP/IMAP AUTH PLAIN base64(\\0user\\0password), AUTH XOAUTH2",
         check="b64_userpass", keywords=("auth plain", "auth xoauth2")),
    # --- HTTP headers ------------------------------------------------------------------------
    Rule("authorization-header",
         _ci("A", "uthorization") + r"[\"']?[ \t]*[:=][ \t]*[\"']?"
         r"(?:(?i:bearer|basic|token|bot|digest|negotiate|apikey|api-key|key|sso-key|ssws|gapi"
         r"|oauth|jwt)[ \t]+|[A-Z][A-Za-z0-9_.-]{1,30}[ \t]+(?=[^\s\"'<>,;]{8}))?"
         r"([^\s\"'<>,;]{1,8192})",
         source="hand-written: RFC 9110 Authorization: <scheme> <credentials> (any scheme "
         "word: Splunk, Zoho-oauthtoken, ...)", check="header",
         keywords=("authorization",)),
    Rule("bearer-token", _word("B", "earer", 6) + r"[ \t]+([A-Za-z0-9._~+/=-]{8,8192})",
         source="hand-written: RFC 6750 Bearer token outside a header", check="credential",
         keywords=("bearer",)),
    Rule("basic-auth-credentials",
         _word("B", "asic", 5) + r"[ \t]+([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])",
         source="hand-written: RFC 7617 Basic base64(user:password)", check="b64_userpass",
         keywords=("basic",)),
    # --- command lines -----------------------------------------------------------------------
    Rule("cli-secret-flag",
         r"--(?<![A-Za-z0-9-]..)(?:[A-Za-z0-9]{1,20}-){0,2}"
         r"(?i:password|passwd|pass|pwd|passphrase|token|secret|api-?key|access-?key"
         r"|account-?key|secret-?key|private-?key|client-?secret|auth|credentials?|bearer)"
         r"(?:=|[ \t]+)" + _VALUE, groups=_VG, check="password",
         source="hand-written: --password/--token/--api-key/--secret ... flags",
         keywords=("--",)),
    Rule("cli-java-pass-flag",
         r"-(?<![A-Za-z0-9-].)(?i:storepass|keypass|srcstorepass|deststorepass|srckeypass"
         r"|destkeypass|passin|passout|password)(?:=|[ \t]+)(?:(?i:pass|env|file):)?" + _VALUE,
         groups=_VG, check="password",
         source="vendor: keytool -storepass/-keypass, openssl -passin/-passout",
         keywords=("pass",)),
    Rule("cli-single-dash-secret-flag",
         r"-(?<![A-Za-z0-9-].)(?i:token|secret|api-?key|access-?key|secret-?key|passphrase"
         r"|passwd|pwd|client-?secret|auth-?token)(?:=|[ \t]+)" + _VALUE, groups=_VG,
         check="password", source="hand-written: Go and Java style -token/-secret/-apikey flags",
         keywords=("-token", "-secret", "-api", "-access", "-passphrase", "-passwd", "-pwd",
                   "-client", "-auth")),
    Rule("cli-mysql-password",
         r"m(?:ysql(?:dump|admin|import|check|sh)?|ariadb(?:-dump|-admin)?)"
         + _WORDS + r"[ \t]+-p" + _ATTACHED,
         source="vendor: mysql -p<password> (attached; a separate word is a database name)",
         check="password", keywords=("mysql", "mariadb")),
    Rule("cli-login-password",
         r"(?:(?:docker|podman|nerdctl|buildah|skopeo|crane|oras)(?:[ \t]+[a-z-]{1,20})?"
         r"[ \t]+login|helm[ \t]+registry[ \t]+login|az[ \t]+login"
         r"|mongo(?:sh|dump|restore|export|import)?"
         r"|sshpass)" + _WORDS + r"[ \t]+-p[ \t]*"
         r"(?:'([^'\n]{1,256})'|\"([^\"\n]{1,256})\"|([^\s\"'`;&|<>-][^\s\"'`;&|<>]{0,255}))",
         groups=(1, 2, 3), source="vendor: docker login -p, az login -p, mongosh -p, sshpass -p",
         check="password", keywords=("login", "mongo", "sshpass")),
    Rule("cli-sql-ldap-password",
         r"(?:(?:sqlcmd|bcp|osql|isql|ipmitool)" + _WORDS
         + r"[ \t]+-P|ldap(?:search|modify|add|delete|whoami|passwd|modrdn)" + _WORDS
         + r"[ \t]+-w)[ \t]*" + _VALUE, groups=_VG,
         source="vendor: sqlcmd -P <password>, ipmitool -P <password>, ldapsearch -w "
         "<password>", check="password",
         keywords=("sqlcmd", "bcp", "osql", "isql", "ipmitool", "ldap"),
         anchor=KEYWORDS, around=(0, 5000)),
    Rule("cli-htpasswd-password",
         r"htpasswd[ \t]+(?:-[A-Za-z]{0,6}(?:n[A-Za-z]{0,6}b|b[A-Za-z]{0,6}n)[A-Za-z]{0,6}"
         r"[ \t]+\S{1,256}|-[A-Za-z]{0,6}b[A-Za-z]{0,6}(?:[ \t]+\S{1,256}){2})[ \t]+" + _VALUE,
         groups=_VG, source="vendor: htpasswd -b <file> <user> <password>, htpasswd -nb <user> "
         "<password>", check="password",
         keywords=("htpasswd",)),
    Rule("cli-gh-secret-set",
         r"gh[ \t]+secret[ \t]+set" + _WORDS + r"[ \t]+(?:-b|--body)(?:=|[ \t]+)" + _VALUE,
         groups=_VG, source="vendor: gh secret set NAME --body <value>", check="loose",
         keywords=("secret set",)),
    Rule("cli-archive-password",
         r"(?:7z|7za|7zr|rar|unrar)" + _WORDS + r"[ \t]+-p" + _ATTACHED,
         source="vendor: 7-Zip and RAR -p<password>", check="password",
         keywords=("7z", "rar")),
    Rule("cli-zip-password",
         r"(?:u(?<![\w./-]u)nzip|z(?<![\w./-]z)ip(?:cloak)?)" + _WORDS + r"[ \t]+-P[ \t]*" + _VALUE,
         groups=_VG, source="vendor: zip/unzip -P <password>", check="password",
         keywords=("zip",)),
    Rule("cli-ssh-keygen-passphrase",
         r"ssh-keygen" + _WORDS + r"[ \t]+-[NP][ \t]*" + _VALUE, groups=_VG,
         source="vendor: ssh-keygen -N <new passphrase>, -P <old passphrase>", check="password",
         keywords=("ssh-keygen",)),
    Rule("cli-smb-user-password",
         r"(?:smbclient|rpcclient|smbcacls|smbget|smbmap|winexe|crackmapexec|netexec|nxc"
         r"|mount\.cifs)" + _WORDS
         + r"[ \t]+(?:-U|--user(?:name)?)(?:=|[ \t]*)[\"']?"
         r"[^\s%\"']{1,128}%([^\s\"']{1,256})",
         source="vendor: smbclient -U <user>%<password> (Samba tools)", check="password",
         keywords=("%",)),
    Rule("cli-windows-password",
         r"(?:xfreerdp3?|wlfreerdp|sdl-freerdp|cmdkey)" + _WORDS
         + r"[ \t]+/(?i:p|pass|password):" + _VALUE, groups=_VG,
         source="vendor: xfreerdp /p:<password>, cmdkey /pass:<password>", check="password",
         keywords=("freerdp", "cmdkey")),
    Rule("cli-positional-password",
         r"(?:mc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S{1,100}[ \t]+\S{1,300}"
         r"|(?:poetry|composer)[ \t]+config(?:[ \t]+--?[a-z-]{1,20})?[ \t]+http-basic\.\S{1,200}"
         r"|lftp" + _WORDS + r"[ \t]+-u[ \t]+[\"']?[^\s,\"']{1,128}(?=,))"
         r"(?:[ \t]+\S{1,128}[ \t]+|,)" + _VALUE, groups=_VG,
         source="vendor: mc alias set <name> <url> <access key> <secret key>, poetry/composer "
         "config http-basic.<repo> <user> <password>, lftp -u <user>,<password>",
         check="password", keywords=("alias set", "host add", "http-basic", "lftp")),
    Rule("cli-keychain-password",
         r"security[ \t]+add-(?:generic|internet)-password" + _WORDS + r"[ \t]+-w[ \t]+" + _VALUE,
         groups=_VG, source="vendor: macOS security add-generic-password -w <password>",
         check="password", keywords=("add-generic-password", "add-internet-password")),
    Rule("cli-openssl-password",
         r"openssl" + _WORDS + r"[ \t]+-(?:k|pass|passin|passout)[ \t]+(?:(?i:pass):)?" + _VALUE,
         groups=_VG, source="vendor: openssl -k <password>, -pass pass:<password>",
         check="password", keywords=("openssl",)),
    Rule("cli-redis-password",
         r"redis-cli" + _WORDS + r"[ \t]+-a[ \t]+" + _VALUE, groups=_VG,
         source="vendor: redis-cli -a <password>", check="password", keywords=("redis-cli",)),
    Rule("cli-password-stdin",
         r"(?:echo|printf)[ \t]+(?:-[neE]{1,3}[ \t]+)?[\"']?([^\s\"'`|;&<>$]{6,1024})[\"']?"
         r"[ \t]*\|" + _WORDS + r"[ \t]+(?:--password-stdin|--stdin|-S(?![A-Za-z0-9-])|chpasswd)",
         source="hand-written: echo <password> | ... login --password-stdin, | sudo -S, "
         "| passwd --stdin, | chpasswd", check="password",
         keywords=("password-stdin", "--stdin", "-s", "chpasswd")),
    Rule("curl-user-password",
         r"(?:curl|wget|https?|xh)" + _WORDS + r"[ \t]+(?:-u|--user|--proxy-user|-a"
         r"|--auth)(?:=|[ \t]*)[\"']?[^\s:\"']{0,128}:([^\s\"']{1,256})",
         source="gitleaks:curl-auth-user (simplified)", check="password",
         keywords=("curl", "wget", "http", "xh")),
    # --- prose -------------------------------------------------------------------------------
    Rule("prose-secret", _prose("(?:" + _PROSE_NOUN + ")"), groups=_PG,
         source="hand-written: 'the token is <value>', 'the password for the staging database: "
         "<value>' and the like; the value must look random (with qualifier words and no link "
         "word, strongly so)", check="prose",
         keywords=("pass", "pw", "secret", "token", "key", "cred", "pat", "recovery", "backup")),
    Rule("prose-secret-intl", _prose(_INTL_NOUN), groups=_PG,
         source="hand-written: the same in other languages ('la contraseña es <value>', "
         "'das Passwort lautet <value>', '密码是 <value>', 'パスワード：<value>')",
         check="prose_password", keywords=_INTL_KEYWORDS,
         anchor=KEYWORDS, around=(0, 800)),  # a name, its remark, words, link and value
    Rule("prose-seed-phrase",
         _either(_word("S", "eed", 4), _word("R", "ecovery", 8), _word("W", "allet", 6))
         + r"[ \t-](?i:phrase|words|mnemonic)(?![A-Za-z])"
         + _PROSE_QUALIFIER
         + "(?:" + _PROSE_LINK + r"|[ \t]+)"
         r"""(?:"((?:[a-z]{3,8} ){11,23}[a-z]{3,8})"|'((?:[a-z]{3,8} ){11,23}[a-z]{3,8})'"""
         r"|((?:[a-z]{3,8}[ \t]){11,23}[a-z]{3,8})(?![A-Za-z]))", groups=(3, 4, 5),
         source="hand-written: a BIP-39 mnemonic (12 to 24 words) after 'seed phrase'",
         check="mnemonic", keywords=("seed", "recovery", "wallet"),
         anchor=KEYWORDS, around=(0, 700)),
    Rule("prose-login",
         _either(_word("L", "og", 3) + r"(?i:ged|ging|s)?[ \t-]?(?i:in|on)",
                 _word("S", "ign", 4) + r"(?i:ed|ing|s)?[ \t-]?(?i:in)",
                 _word("A", "uthenticat", 11) + r"(?i:e|ed|es|ing)",
                 _word("B", "ind", 4) + r"(?i:s|ing)?",
                 _word("C", "onnect", 7) + r"(?i:ed|ing|s)?")
         + r"(?:[ \t]+(?i:to|into|on)[ \t]+[^\s]{1,64})?[ \t]+(?i:as|with|using)[ \t]+"
         r"[\"'`]?[A-Za-z0-9_.@+%\\=,-]{1,100}[\"'`]?"
         r"(?:[ \t]*/[ \t]*|[ \t]*:[ \t]*|[ \t]+(?i:with|using|and|/)[ \t]+"
         r"(?:(?i:the|a|its|their|his|her|password|passwd|passphrase|pw|pwd)[ \t]+){0,2})"
         + _PROSE_VALUE, groups=_VG,
         source="hand-written: 'logged in as root with <password>', 'log in with <user> / "
         "<password>'", check="prose_login",
         keywords=("log", "sign", "authenticat", "bind", "connect"),
         anchor=r"[ \t](?i:as|with|using)[ \t]", around=(100, 720)),
    Rule("prose-user-pass-pair",
         _word("U", "ser", 4) + r"(?i:name)?[ \t]*[:=]?[ \t]+[\"'`]?[A-Za-z0-9_.@+%\\-]{1,64}"
         r"[\"'`]?[ \t]*[,;/|]?[ \t]+(?:(?i:and|with)[ \t]+)?"
         r"(?i:pass(?:word|wd|phrase)?|pwd|pw)(?![A-Za-z])[ \t]*[:=]?[ \t]*" + _PROSE_VALUE,
         groups=_VG, source="hand-written: 'user <name>, pass <password>' in a sentence",
         check="prose_password", keywords=("user",)),
    Rule("prose-value-as",
         r"(?:[Uu]se[ds]?|[Uu]sing|[Tt]r(?:y|ied)|[Ss]et|[Ee]ntered|[Tt]yped|[Pp]asted?|[Pp]ut)"
         r"[ \t]+" + _PROSE_VALUE + r"[ \t]+as[ \t]+(?:(?i:the|a|an|our|my|your|its|their|new"
         r"|old|temporary|temp|initial|default|root|admin|api|db|database|wifi|wi-fi)[ \t]+){0,3}"
         r"(?:" + _PROSE_NOUN + ")"
         # not "used ed25519-sk as the key type", "Argon2id as the password hash"
         r"(?![ \t]+(?i:type|format|size|length|id|name|file|path|algorithm|hash|hashing"
         r"|scheme|policy|field|rotation|manager|store|storage|prompt|rules?|derivation"
         r"|generator|server|provider|backend|vault)(?![A-Za-z]))", groups=_VG,
         source="hand-written: 'used <value> as the password'", check="prose_password",
         keywords=(" as ",), anchor=r"[ \t]as[ \t]", around=(530, 60)),
    Rule("labelled-user-password",
         r"(?m)^[ \t]*[A-Z][A-Za-z0-9 ._-]{0,30}:[ \t]*[A-Za-z0-9_.@+-]{1,64}[ \t]*/[ \t]*"
         + _PROSE_VALUE + r"[ \t]*$", groups=_VG,
         source="hand-written: a line 'Jenkins: admin / <password>' (a label, a user name, a "
         "slash and a password; of both cases, so 'Targets: x86_64 / aarch64-linux' is not "
         "one)", check="labelled_password", keywords=("/",)),
    Rule("prose-user-password",
         _either(_word("L", "ogin", 5), _word("C", "redential", 10) + "s?",
                 _word("C", "reds", 5), _word("A", "ccount", 7)) + r"(?![A-Za-z0-9_-])"
         r"[^\n:=]{0,40}?[ \t]*[:=][ \t]*[A-Za-z0-9_.@+-]{1,64}[ \t]*/[ \t]*"
         r"([^\s/]{6,256})",
         source="hand-written: 'login: <user> / <password>' in a sentence", check="password",
         keywords=("login", "cred", "account"),
         anchor=KEYWORDS, around=(0, 400)),
)


# --- formats that make a file a credential file ----------------------------------------------
# A file whose text holds one of these is left out of snapshots whatever its name (source code
# and test fixtures excepted: gitckpt.sensitive). Only formats with a fixed prefix that ordinary
# text never begins a long token with: a false alarm costs the user a file in every checkpoint.
# Each prefix begins a run of at least 20 token characters ([A-Za-z0-9_-]); a prefix that ends
# in "." is followed by that run. That run is what the pre-filter in gitckpt.file_secrets looks
# for, before the rule named here (its regex and value check) decides.
FILE_PREFIXES: dict[str, tuple[str, ...]] = {
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "github-fine-grained-pat": ("github_pat_",),
    "gitlab-token": ("glpat-", "glptt-", "glrt-", "gldt-", "glft-", "glcbt-", "glimt-",
                     "gloas-", "glagent-", "glsoat-", "glffct-", "glwt-"),
    "slack-token": ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
    "slack-app-token": ("xapp-",),
    "stripe-secret-key": ("sk_live_", "rk_live_", "sk_prod_", "rk_prod_"),
    "stripe-webhook-secret": ("whsec_",),
    "aws-access-key-id": ("AKIA", "ASIA"),  # only with its secret nearby: an AWS key pair
    "npm-token": ("npm_",),
    "pypi-token": ("pypi-Ag",),
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-proj-", "sk-svcacct-", "sk-admin-"),
    "huggingface-token": ("hf_", "api_org_"),
    "digitalocean-token": ("dop_v1_", "doo_v1_", "dor_v1_"),
    "google-oauth-client-secret": ("GOCSPX-",),
    "google-oauth-access-token": ("ya29.",),
    "hashicorp-vault-token": ("hvs.", "hvb.", "hvr."),
    "dockerhub-token": ("dckr_pat_",),
    "shopify-token": ("shpat_", "shpss_", "shpca_", "shppa_"),
    "linear-api-key": ("lin_api_", "lin_oauth_"),
    "notion-token": ("ntn_",),
    "postman-api-key": ("PMAK-",),
    "sentry-token": ("sntrys_", "sntryu_", "sntrya_"),
    "new-relic-key": ("NRAK-", "NRII-", "NRAA-", "NRJS-"),
    "grafana-token": ("glsa_", "glc_"),
    "supabase-token": ("sbp_", "sb_secret_"),
    "rubygems-token": ("rubygems_",),
    "pulumi-token": ("pul-",),
    "heroku-api-key-v2": ("HRKU-",),
    "age-secret-key": ("AGE-SECRET-KEY-1",),
    "figma-token": ("figd_",),
    "planetscale-token": ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
    "atlassian-api-token": ("ATATT3", "ATCTT3"),
    "brevo-api-key": ("xkeysib-",),
    "databricks-token": ("dapi",),
    "doppler-token": ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."),
    "sendgrid-api-key": ("SG.",),
}
