"""Which files hold credentials: by folder and name, and by a cheap look at the content of the
files that are read anyway. Each rule has an id, so `gitckpt scope` can say which one decided.

Order (the first that applies decides):
1. a folder whose whole content is credentials (`.ssh/`, `.aws/`, `.config/gh/`, ...): out;
2. examples, samples, templates, public keys and tokenizer files: in;
3. a credential name or path (`.npmrc`, `*.tfstate`, `service-account.json`, ...): out;
4. source code (`*.py`, ...): in whatever it holds; documents (`*.md`, ...) outside folders
   named for secrets: in;
5. a name that is nothing but the secret (`secret.txt`, `db_password`, `credentials.csv`), or
   any other file in a folder named for secrets (`secrets/`, `credentials/`, `keys/`): out;
   but `password.txt` and `passwords.txt` outside such folders are decided by content, as 7;
6. a name that says it holds a secret (`github_token.txt`, `vault_pass.txt`, `rootkey.csv`):
   out, except in a test or fixture folder;
7. a generic config name (`*.json`, `*.yml`, `*.properties`, `config`, ...): in unless its
   first bytes hold a credential marker (`content_sensitive`);
8. any other file in a test or fixture folder (`tests/`, `fixtures/`, `testdata/`, ...): in
   whatever it holds, as source code is: fake credentials are what fixtures are for;
9. anything else: in.
Every file that is read in steps 2, 4 (documents), 7 and 9 is also left out if its text holds a
high-confidence credential: a private key block, an AWS key pair, a provider token with a fixed
prefix (`file_secrets.credential_in`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from gitckpt.safety.file_secrets import HEAD_BYTES, credential_in
from gitckpt.safety.globs import Globs
from gitckpt.safety.redact import has_secret


class _later:
    """A regular expression compiled on first use: most commands never classify a file, and
    compiling these rules costs more than starting the interpreter. With `words`, one of
    which is in every text it matches (tests/safety/test_globs.py holds it), `search` and
    `fullmatch` answer None for a text without one, so most names never compile it."""

    def __init__(self, make: Callable[[], re.Pattern[Any]], words: tuple[str, ...] = ()
                 ) -> None:
        self._make = make
        self.words = words
        self._re: re.Pattern[Any] | None = None

    def _compiled(self) -> re.Pattern[Any]:
        if self._re is None:
            self._re = self._make()
        return self._re

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled(), name)

    def search(self, text: Any) -> re.Match[Any] | None:
        return self._compiled().search(text) if self._may(text) else None

    def fullmatch(self, text: Any) -> re.Match[Any] | None:
        return self._compiled().fullmatch(text) if self._may(text) else None

    def _may(self, text: Any) -> bool:
        return not self.words or any(w in text for w in self.words)

# 1. Folders (any depth) whose files are all credentials.
_DIRS = frozenset("""
.ssh .aws .gnupg .azure .oci .kube .docker .password-store .secrets .tokens .envdir .env
.huggingface .kaggle .mc .snowsql .fly .supabase .cloudflared .ngrok2 .purple .ethereum
.credentials legacy_credentials private-keys-v1.d keyrings .vault .terraform.d .netlify
""".split())
_DIR_PATHS = _later(lambda: re.compile(
    r"(?:^|/)(?:\.config/(?:gcloud|gh|op|rclone|doctl|hcloud|flyctl|stripe|glab-cli|ngrok|sops|"
    r"keepassxc|filezilla|kaggle|configstore|hub)|\.wrangler/config|\.local/share/"
    r"(?:jupyter/runtime|keyrings|com\.vercel\.cli)|jenkins_home/secrets|\.cache/huggingface"
    r"|\.aws|wireguard)(?:/|$)"),
    words=(".config/", ".wrangler/", ".local/", "jenkins_home/", ".cache/", ".aws", "wireguard"))

# 2. Names that look like credentials but are made to be shared.
_SHARED = [
    "*.example", "*.example.*", "*.sample", "*.sample.*", "*.template", "*.template.*",
    "*.dist", "*.tmpl", "*.pub", "*.crt", "*.cer", ".secrets.baseline", ".gitleaks.toml",
    "tokenizer*.json", "tokenizer.model", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "merges.txt", "*.schema.json", "google-services.json",
    "googleservice-info.plist", "known_hosts.go",
]

# 3. Credential names (lowercase, any depth) and paths, whatever their suffix.
_NAMES = [
    # environments and shells
    ".env", ".env.*", "*.env", ".envrc", ".dev.vars", ".vault-token", ".vault_pass",
    ".vault-pass", "*_history", ".histfile", "history.sqlite", ".dbshell", ".rhistory",
    ".lesshst",
    # keys, keystores, password safes, wallets, browser logins
    "*.pem", "*.p12", "*.pfx", "*.p8", "*.jks", "*.keystore", ".keystore", "*.kdbx", "*.ppk",
    "*.ovpn", "*.keyring", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ed25519_sk",
    "id_ecdsa_sk", "*_rsa", "*_dsa", "*_ecdsa", "*_ed25519", "ssh_host_*_key", "privkey*",
    "private*.asc", "secret*.asc", "secring.*", "*.gpg", "wallet.dat", "key4.db", "logins.json",
    "login data", "wg[0-9]*.conf",
    # netrc, git, package managers, registries, cloud command lines
    ".netrc", "_netrc", ".authinfo", ".authinfo.*", ".git-credentials", ".npmrc", ".yarnrc",
    ".yarnrc.yml", ".pypirc", ".dockercfg", ".sentryclirc", ".terraformrc", "terraform.rc",
    "credentials.tfrc.json", ".pgpass", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto",
    ".passwd-s3fs", "rclone.conf", ".databrickscfg", ".fetchmailrc", ".msmtprc", ".htpasswd",
    "htpasswd", "shadow", "gshadow", "master.passwd", "passwd", "kubeconfig", "*.kubeconfig",
    "ngrok.yml", "kaggle.json", "auth.json", "auth.toml", "pub-credentials.json",
    "stored_tokens", "access-token", "access_tokens.db", "credentials.db", "adc.json",
    # cloud service accounts and OAuth clients
    "*service-account*.json", "*service_account*.json", "serviceaccountkey.json",
    "*-firebase-adminsdk-*.json", "gcloud-service-key.json", "client_secret*.json",
    "application_default_credentials.json", "token.pickle", "*.token", "*_token", "*-token",
    # infrastructure state and variables
    "*.tfstate", "*.tfstate.*", "*.tfvars", "*.tfvars.json", "*.auto.tfvars",
    "*.auto.tfvars.json",
    # application secrets
    "wp-config.php", "local.settings.json", "sentry.properties", "settings-security.xml",
    "key.properties", "secrets.toml", "*.secret", "*.secrets", "*.jwt",
]
_PATHS = _later(lambda: re.compile(
    r"(?:^|/)(?:\.m2/settings\.xml|\.gradle/gradle\.properties|\.circleci/cli\.yml|"
    r"\.travis/config\.yml|\.config/git/credentials|\.config/hub|"
    r"\.gem/credentials|\.cargo/credentials(?:\.toml)?|\.docker/config\.json|"
    r"\.config/containers/auth\.json|\.kube/config|\.oci/config|\.snowsql/config)$"))
# Names that are nothing but the secret, unless they are source code (`src/credentials.py`).
_WORDS = [
    "secret", "secrets", "secret.*", "secrets.*", "token", "token.*", "access_token",
    "refresh_token", "api_key", "apikey", "api-key", "api_key.*", "apikey.*", "api-key.*",
    "credentials", "credentials.*", ".credentials*", "creds", "creds.*", "private_key",
    "private_key.*", "*_password", "*-password", "*_passwd", "*_password.*", "*-password.*",
    "*_passwd.*", "password", "password.txt", "passwords", "passwords.txt", "*.passwd",
    "accesskeys.csv", "*_accesskeys.csv", "*_credentials.csv",
]

# Names as often a text about passwords as a list of them (Django's docs/topics/auth/
# passwords.txt, 31 KB of prose): their content decides, as a config file's does.
_PROSE_NAMES = frozenset({"password.txt", "passwords.txt"})

# 4. Source code: in scope by name (`src/credentials.py`, `src/secrets/mod.rs`).
_CODE = frozenset("""
py pyi pyx rs go ts tsx js jsx mjs cjs java kt kts scala groovy gradle rb erb rake c h cc cpp
cxx hpp hh cs fs swift m mm php ex exs erl hrl hs ml mli clj cljs lua pl pm r jl dart vue
svelte astro elm zig nim v sol proto graphql gql sql css scss sass less svg
""".split())
# Documents: in scope by name (`docs/secrets.md`), except in a folder named for secrets.
_DOCS = frozenset("md markdown rst adoc asciidoc html htm tex ipynb".split())

# 5. Folders named for secrets: their non-code files are out.
_SECRET_DIRS = _later(lambda: re.compile(r"(?:^|[^a-z])(?:secrets?|credentials?|creds|keys|private|"
                          r"(?:api|access|auth|bot|deploy|oauth)[-_]?tokens?)(?:$|[^a-z])"),
    words=("secret", "credential", "creds", "keys", "private", "token"))

# 6. Names that say they hold a secret (lowercase): any format, a text or backup file, a table.
_QUALIFIERS = (r"(?:[-_. ]?(?:prod|production|stage|staging|dev|test|local|old|new|backup|bak"
               r"|copy|\d+))*")
_SAYS_SECRET = _later(lambda: re.compile(
    r".*passwd.*|.*vault[-_.]?pass.*|rootkey\.csv"
    # a text, list or backup file: *token*.txt, *_pass.txt, db_password_prod.txt, api_keys.txt
    r"|(?:.*token(?!iz).*|.*(?:secret|password|passwd|passphrase|credential|api[-_]?key"
    r"|access[-_]?key|private[-_]?key)s?" + _QUALIFIERS + r"|(?:.*[^a-z])?(?:pass|pwd|creds?)s?"
    + _QUALIFIERS + r")\.(?:txt|text|dat|bak|old|orig|backup|save|lst|list)"
    # a table: AWS's rootkey.csv and <user>_credentials.csv, a browser's passwords.csv
    r"|.*(?:credential|password|passwd|secret|access[-_]?key|api[-_]?key).*\.(?:csv|tsv)"
    # no suffix: vault_pass, db_pwd, app_secret, deploy_creds, stripe_api_key
    r"|.+[-_](?:pass|pwd|secret|creds|credentials|api[-_]?key|apikey)"),
    words=("pass", "key", "token", "secret", "cred", "pwd"))
# Test and fixture folders (any depth): their files are stored whatever they hold.
_TEST_DIRS = _later(lambda: re.compile(
    r"(?:^|/)(?:tests?|testing|testdata|test[-_]data|test[-_]?fixtures|fixtures?|__fixtures__"
    r"|__tests__|__mocks__|mocks?|specs?|e2e)(?:/|$)"),
    words=("test", "fixture", "mock", "spec", "e2e"))

# 7. Generic config names, decided by content.
_CONFIG = frozenset("""
json yml yaml toml ini cfg conf config cnf properties xml env plist php inc
""".split())
_CONFIG_NAMES = frozenset({"config", "settings", "credentials", "app.config", "web.config"})

# Markers that make a config file a credential file, in its first bytes.
_MARKERS = _later(lambda: re.compile(
    rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-"
    rb"|\"type\"\s*:\s*\"(?:service_account|authorized_user|external_account)\""
    rb"|\"private_key(?:_id)?\"\s*:\s*\"[^\"]{8}"
    rb"|aws_secret_access_key\s*[=:]\s*\S|aws_session_token\s*[=:]\s*\S"
    rb"|(?:_authToken|npmAuthToken|_auth|_password)\s*[=:]\s*[\"']?[^\s\"'$<{]{6}"
    rb"|\"auths\"\s*:\s*\{[^}]{0,200}\"auth\"\s*:\s*\"[A-Za-z0-9+/=]{8}"
    rb"|client-key-data\s*:\s*\S{20}"
    rb"|<password>[^<$]{4,}</password>|ClearTextPassword\"?\s+value\s*=\s*\"[^\"$]{4}"
    rb"|\"hashed_password\"\s*:\s*\"[^\"]{8}|^\s+token\s*:\s*[A-Za-z0-9._~+/=-]{20}"
    rb"|^BUNDLE_[A-Z0-9_]+__[A-Z0-9_]+\s*:\s*\"?[^\s\":]+:[^\s\"]+"
    rb"|(?:^|[;\"'\s])(?:Password|Pwd|AccountKey|SharedAccessKey)\s*=\s*[^;\"'\s$<{][^;\"'\s]{3,}"
    rb"|\bkind\s*:\s*Secret\b", re.IGNORECASE | re.MULTILINE))
_PRIVATE_KEY = _later(lambda: re.compile(
    rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key"))
_ZIP = b"PK\x03\x04"
RULES_VERSION = 3  # bump when a rule changes: cached scope decisions are made again
CONTENT_BYTES = 8192  # how much of a generic config file the marker check reads
#: Verdicts of files stored whatever they hold (the content check only explains them).
TRUSTED = ("source", "fixture")


_SHARED_RE = Globs(_SHARED)
_NAMES_RE = Globs(_NAMES)
_WORDS_RE = Globs(_WORDS)


def _suffix(name: str) -> str:
    return name.rpartition(".")[2] if "." in name.lstrip(".") else ""


@functools.lru_cache(maxsize=65536)
def _folder(path: str) -> str | None:
    """The rule that makes every file below folder `path` (no trailing slash) a credential."""
    name = path.rpartition("/")[2].lower()
    if name in _DIRS:
        return f"folder {name}/"
    low = path.lower()
    if _DIR_PATHS.search(low):
        return f"folder {low}/"
    return None


@functools.lru_cache(maxsize=65536)
def _by_name(folders: str, name: str) -> tuple[str, str]:
    """(verdict, rule) for file `name` in folder `folders` ("" at the root), after step 1."""
    low = name.lower()
    test_dir = _test_folder(folders)
    if _SHARED_RE.match(low):
        return ("fixture" if test_dir else "in",
                "shared by design (example, template, public key, tokenizer)")
    if _NAMES_RE.match(low):
        return "out", f"credential name {name}"
    if _PATHS.search(f"{folders}/{low}".lower()):
        return "out", f"credential path {folders}/{name}".lstrip("/")
    suffix = _suffix(low)
    if suffix in _CODE:
        return "source", f"source code (.{suffix})"
    secret_dir = bool(folders) and _SECRET_DIRS.search(folders.lower()) is not None
    if suffix in _DOCS and not secret_dir:
        return "fixture" if test_dir else "in", f"a document (.{suffix})"
    if low in _PROSE_NAMES and not secret_dir:  # a document about passwords as often as a list
        return "content", f"a text named for passwords ({name}): decided by its content"
    if _WORDS_RE.match(low):
        return "out", f"credential name {name}"
    if secret_dir:
        return "out", "a file in a folder named for secrets"
    if _SAYS_SECRET.fullmatch(low):
        if test_dir:
            return "fixture", f"named for a secret, in a test or fixture folder ({test_dir}/)"
        return "out", f"named for a secret: {name}"
    if suffix == "key":  # a key file, unless it is an archive (Keynote)
        return "key", f"key file ({name}): out unless its content is an archive"
    if suffix in _CONFIG or low in _CONFIG_NAMES or (not suffix and low.startswith(".")):
        return "content", f"generic config name ({name}): decided by its content"
    if test_dir:
        return "fixture", f"in a test or fixture folder ({test_dir}/)"
    return "in", ""


def _test_folder(folders: str) -> str | None:
    """The test or fixture folder (`tests`, `fixtures`, ...) that `folders` is in, or None."""
    m = _TEST_DIRS.search(folders.lower()) if folders else None
    return m[0].strip("/") if m else None


def classify(rel: str) -> tuple[str, str]:
    """(verdict, the rule) for workspace path `rel` (a folder if it ends in "/"). Verdicts:
    `out` (sensitive by path, never read); `in`, `content` and `key` (read, and
    `content_sensitive` decides on their bytes); `source` and `fixture` (TRUSTED: stored
    whatever they hold)."""
    is_dir = rel.endswith("/")
    parts = rel.rstrip("/").split("/")
    for i in range(1, len(parts) + (1 if is_dir else 0)):
        rule = _folder("/".join(parts[:i]))
        if rule:
            return "out", rule
    if is_dir:
        return "in", ""
    return _by_name("/".join(parts[:-1]), parts[-1])


def is_sensitive(rel: str) -> bool:
    """True for a path whose name alone says it holds credentials (DESIGN.md section 4)."""
    return classify(rel)[0] == "out"


def content_sensitive(data: bytes, verdict: str) -> str | None:
    """The rule by which file content `data` (of a file `classify` called `verdict`) holds a
    credential, or None. The markers of a generic config name are looked for in its first
    CONTENT_BYTES, high-confidence credentials in the first HEAD_BYTES of any file that is not
    TRUSTED, and a private key block (a fast check) in the whole file."""
    if verdict == "key":
        return None if data.startswith(_ZIP) else "a key file"
    if verdict in TRUSTED:
        return None
    if verdict == "content":
        head = data[:CONTENT_BYTES]
        if head.startswith(_ZIP):
            return None  # an archive (a Keynote `.key`, a `.jar`): not a text credential
        m = _MARKERS.search(head)
        if m:
            return f"credential marker {m[0][:24].decode('ascii', 'replace')!r}"
        if b"\0" not in head and has_secret(head.decode("utf-8", "replace")):
            return "a secret in its text"
    if b"PRIVATE KEY" in data or b"PuTTY-User-Key" in data:  # fast pre-check, then exact
        m = _PRIVATE_KEY.search(data)
        if m:
            return "a private key block"
    found = credential_in(data)
    return f"holds {found}" if found else None


def credential_pattern(data: bytes) -> str | None:
    """What credential pattern a TRUSTED file (source, fixture) holds, for `gitckpt scope`:
    stored all the same."""
    if b"PRIVATE KEY" in data[:HEAD_BYTES] and _PRIVATE_KEY.search(data[:HEAD_BYTES]):
        return "a private key block"
    return credential_in(data)
