"""The secret formats `gitckpt.redact` removes from free text: an ordered table of rules, each a
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
#   nothing: `import gitckpt.redact` must stay cheap and most rules never run on a given text.
# - `groups`: the first of these groups that took part in the match is the secret; the rest
#   of the match (a key name, a scheme, a user name) is kept.
# - `check`: the name of the value check in gitckpt.redact that the secret must pass
#   (`token`, `token_mixed`, `loose`, `header`, `password`, `credential`, `prose`, `pem`,
#   `b64_pem`, `b64_userpass`, `aws_secret`); `entropy`: the least Shannon entropy (bits per
#   character) of the value, None for the check's own default.
# - `keywords`: lower-case strings, one of which must occur in the lower-cased text for the rule
#   to run at all (a cheap prefilter, as gitleaks does); empty runs always.
# - `public`: the format is public by design (Google API keys, Stripe publishable keys): still
#   redacted from free text, but not by itself a reason to keep a file out of a checkpoint
#   (`has_secret`).
# - Every quantifier is bounded and no repeated group can match the same text two ways, so no
#   input makes a rule backtrack catastrophically.

from __future__ import annotations

import re


class Rule:
    """One secret format: see the conventions above."""

    __slots__ = ("id", "pattern", "groups", "check", "entropy", "keywords", "public", "source",
                 "_regex")

    def __init__(self, id: str, pattern: str, *, source: str, check: str = "token",
                 groups: tuple[int, ...] = (1,), entropy: float | None = None,
                 keywords: tuple[str, ...] = (), public: bool = False) -> None:
        self.id, self.pattern, self.groups, self.check = id, pattern, groups, check
        self.entropy, self.keywords, self.public, self.source = entropy, keywords, public, source
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern)
        return self._regex

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"


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
_KEY = ("[Kk](?i:ey)" + _NOT_PUBLIC + "(?:(?<![A-Za-z0-9]...)|(?<=[a-z]K..)|"
        + "|".join(f"(?<=(?i:{c})...)" for c in _KEY_COMPOUNDS) + ")")

# Up to 12 more words of the same command line (each word taken whole, so a long line costs
# one step per word, not one per character).
_WORDS = r"(?:[ \t]+[^\s|;&]{1,300}+){0,12}?"

# A password attached to its flag (-pSecret), or quoted (-p'Secret').
_ATTACHED = r"[\"']?([^\s\"'`;&|<>-][^\s\"'`;&|<>]{0,255})"

_PEM_BEGIN = r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"

# The words that name a secret in a sentence: password, secret, token, key, credential, PAT.
_PROSE_WORDS = (("P", "assword", 8), ("P", "asswd", 6), ("P", "assphrase", 10), ("P", "wd", 3),
                ("P", "w", 2),
                ("S", "ecret", 6), ("T", "oken", 5), ("K", "ey", 3), ("C", "redential", 10),
                ("P", "at", 3))

# The words between a secret's name and its value in a sentence: "the token is now <value>".
_LINK = ("(?i:is|was|are|now|to|set|becomes|became|reads|changed|updated|reset|rotated|still"
         "|=|:|->|=>)")

_XML_NAMES = ("password", "passwd", "passphrase", "secret", "token", "apikey", "api_key",
              "api-key", "accesskey", "access_key", "secretkey", "secret_key", "privatekey",
              "private_key", "credential", "credentials")


def _with_scheme(url: str) -> str:
    """A URL with or without its https:// (spelt out: a leading optional group is slow)."""
    return f"(https?://{url}|{url})"


def _prefix(id: str, pattern: str, source: str, keywords: tuple[str, ...], *,
            check: str = "token", entropy: float | None = None, public: bool = False) -> Rule:
    return Rule(id, pattern, source=source, check=check, entropy=entropy, keywords=keywords,
                public=public)


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
            "gitleaks:azure-ad-client-secret (boundaries as lookarounds)", ("q~",)),
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
    _prefix("hashicorp-vault-token", r"(hv[sbr]\." + _lb(4) + r"[A-Za-z0-9_-]{20,500})" + _ED,
            "gitleaks:vault-service-token (hvb./hvr. added, length relaxed)",
            ("hvs.", "hvb.", "hvr.")),
    _prefix("hashicorp-vault-legacy-token",
            r"(s\.(?<![A-Za-z0-9._/-]..)[A-Za-z0-9]{24})(?![A-Za-z0-9._-])",
            "gitleaks:vault-service-token (legacy s. form)", ("s.",), check="token_mixed"),
    _prefix("terraform-cloud-token",
            r"([a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{40,200})" + _ED,
            "gitleaks:hashicorp-tf-api-token (length relaxed)", ("atlasv1",)),
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
    _prefix("dockerhub-token", r"(dckr_pat_" + _lb(9) + r"[A-Za-z0-9_-]{27,60})" + _ED,
            "vendor: Docker Hub personal access token prefix", ("dckr_pat_",)),
    _prefix("pulumi-token", r"(pul-" + _lb(4) + r"[a-f0-9]{40})" + _E,
            "vendor: Pulumi access token", ("pul-",)),
    _prefix("atlassian-api-token", r"(AT(?:ATT|CTT)3" + _lb(6) + r"[A-Za-z0-9_=-]{50,300})" + _ED,
            "gitleaks:atlassian-api-token (ATATT3 form, length relaxed)", ("atatt3", "atctt3")),
    _prefix("bitbucket-app-password", r"(ATBB" + _lb(4) + r"[A-Za-z0-9_=.-]{28,100})" + _ED,
            "vendor: Bitbucket app password prefix ATBB", ("atbb",)),
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
            "vendor: Discord webhook URL", ("discord",)),
    _prefix("telegram-bot-token", r"(\d{5,16}:A[A-Za-z0-9_-]{34})" + _ED,
            "gitleaks:telegram-bot-api-token (keyword context dropped)", (":a",)),
    _prefix("twilio-api-key", r"(SK" + _lb(2) + r"[0-9a-fA-F]{32})" + _E,
            "gitleaks:twilio-api-key", ("sk",)),
    _prefix("sendgrid-api-key",
            r"(SG\." + _lb(3) + r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})" + _ED,
            "gitleaks:sendgrid-api-token (the two parts as the vendor documents them)", ("sg.",)),
    _prefix("mailgun-api-key", r"(key-" + _lb(4) + r"[0-9a-f]{32})" + _E,
            "gitleaks:mailgun-private-api-token (keyword context dropped)", ("key-",)),
    _prefix("mailchimp-api-key", r"([0-9a-f]{32}-us[0-9]{1,2})" + _E,
            "gitleaks:mailchimp-api-key (keyword context dropped)", ("-us",)),
    _prefix("brevo-api-key", r"(xkeysib-" + _lb(8) + r"[a-f0-9]{64}-[A-Za-z0-9]{16})" + _E,
            "vendor: Brevo (Sendinblue) API key", ("xkeysib-",)),
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
            r"(?i:[_.-]?(?:hash|hashed|b64|base64|enc|encrypted|value|string|plain))?",
            "password", ("pass", "pw"), _GENERIC + " and gitleaks:database-password"),
    # client_secret, SECRET, SECRET_KEY, secret_key_base, secretAccessKey, secrets.
    _assign("assignment-secret",
            _ci("S", "ecret") + r"(?i:[_.-]?(?:access[_.-]?)?key)?"
            r"(?i:[_.-]?(?:base|data|value|b64|base64|hash|string|id))?(?i:s)?",
            "credential", ("secret",), _GENERIC),
    # TOKEN, GITHUB_TOKEN, _authToken, npmAuthToken, refresh_token, tokens.
    _assign("assignment-token",
            _ci("T", "oken") + r"(?i:s|[_.-]?(?:value|data|secret|string|b64))?",
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
    # --- HTTP headers ------------------------------------------------------------------------
    Rule("authorization-header",
         _ci("A", "uthorization") + r"[\"']?[ \t]*[:=][ \t]*[\"']?"
         r"(?:(?i:bearer|basic|token|bot|digest|negotiate|apikey|api-key|key|sso-key|ssws|gapi"
         r"|oauth|jwt)[ \t]+)?([^\s\"'<>,;]{1,8192})",
         source="hand-written: RFC 9110 Authorization: <scheme> <credentials>", check="header",
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
         r"|account-?key|secret-?key|private-?key|client-?secret|auth|credentials?)"
         r"(?:=|[ \t]+)" + _VALUE, groups=_VG, check="password",
         source="hand-written: --password/--token/--api-key/--secret ... flags",
         keywords=("--",)),
    Rule("cli-java-pass-flag",
         r"-(?<![A-Za-z0-9-].)(?i:storepass|keypass|srcstorepass|deststorepass|srckeypass"
         r"|destkeypass|passin|passout|password)[ \t]+(?:(?i:pass|env|file):)?" + _VALUE,
         groups=_VG, check="password",
         source="vendor: keytool -storepass/-keypass, openssl -passin/-passout",
         keywords=("pass",)),
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
         r"(?:(?:sqlcmd|bcp|osql|isql)" + _WORDS + r"[ \t]+-P|(?:ldap(?:search|modify|add|delete"
         r"|whoami|passwd)|ldapmodrdn)" + _WORDS + r"[ \t]+-w)[ \t]*" + _VALUE, groups=_VG,
         source="vendor: sqlcmd -P <password>, ldapsearch -w <password>", check="password",
         keywords=("sqlcmd", "bcp", "osql", "isql", "ldap")),
    Rule("cli-htpasswd-password",
         r"htpasswd[ \t]+-[A-Za-z]{0,6}b[A-Za-z]{0,6}(?:[ \t]+\S{1,256}){2}[ \t]+" + _VALUE,
         groups=_VG, source="vendor: htpasswd -b <file> <user> <password>", check="password",
         keywords=("htpasswd",)),
    Rule("cli-gh-secret-set",
         r"gh[ \t]+secret[ \t]+set" + _WORDS + r"[ \t]+(?:-b|--body)(?:=|[ \t]+)" + _VALUE,
         groups=_VG, source="vendor: gh secret set NAME --body <value>", check="loose",
         keywords=("secret set",)),
    Rule("cli-archive-password",
         r"(?:7z|7za|7zr|rar|unrar)" + _WORDS + r"[ \t]+-p" + _ATTACHED,
         source="vendor: 7-Zip and RAR -p<password>", check="password",
         keywords=("7z", "rar")),
    Rule("cli-openssl-password",
         r"openssl" + _WORDS + r"[ \t]+-(?:k|pass|passin|passout)[ \t]+(?:(?i:pass):)?" + _VALUE,
         groups=_VG, source="vendor: openssl -k <password>, -pass pass:<password>",
         check="password", keywords=("openssl",)),
    Rule("cli-redis-password",
         r"redis-cli" + _WORDS + r"[ \t]+-a[ \t]+[\"']?([^\s\"'`;&|<>]{1,512})",
         source="vendor: redis-cli -a <password>", check="password", keywords=("redis-cli",)),
    Rule("cli-password-stdin",
         r"(?:echo|printf)[ \t]+(?:-[neE]{1,3}[ \t]+)?[\"']?([^\s\"'`|;&<>$]{6,1024})[\"']?"
         r"[ \t]*\|" + _WORDS + r"[ \t]+--password-stdin",
         source="hand-written: echo <password> | ... login --password-stdin", check="password",
         keywords=("password-stdin",)),
    Rule("curl-user-password",
         r"(?:curl|wget|https?|xh)" + _WORDS + r"[ \t]+(?:-u|--user|--proxy-user|-a"
         r"|--auth)(?:=|[ \t]*)[\"']?[^\s:\"']{0,128}:([^\s\"']{1,256})",
         source="gitleaks:curl-auth-user (simplified)", check="password",
         keywords=("curl", "wget", "http", "xh")),
    # --- prose -------------------------------------------------------------------------------
    Rule("prose-secret",
         r"(?:" + "|".join(_word(*w) + (_NOT_PUBLIC if w[0] == "K" else "")
                           for w in _PROSE_WORDS) + r")(?i:s)?(?![A-Za-z0-9_-])"
         r"(?:[ \t]*\([^()\n]{1,30}\))?"  # password (prod): ...
         # after a qualifier ("for the staging database") only with a link word or a colon
         r"(?:(?:[ \t]+(?i:for|of|on|in|at|to)(?:[ \t]+[A-Za-z0-9_.@-]{1,30}){1,5}?){1,2}"
         r"(?:[ \t]*[:=][ \t]*|[ \t]+(?:" + _LINK + r"[ \t]*:?[ \t]+){1,3})"
         r"|[ \t]*[:=][ \t]*|[ \t]+(?:" + _LINK + r"[ \t]*:?[ \t]+){0,3})"
         r"[\"'`]?([A-Za-z0-9+/=_.@~!#$%^&*?-]{8,512})",
         source="hand-written: 'the token is <value>' and the like; the value must look random",
         check="prose", keywords=("pass", "pw", "secret", "token", "key", "cred", "pat")),
    Rule("prose-user-password",
         r"(?:" + _word("L", "ogin", 5) + "|" + _word("C", "redential", 10) + "s?|"
         + _word("C", "reds", 5) + "|" + _word("A", "ccount", 7) + r")(?![A-Za-z0-9_-])"
         r"[^\n:=]{0,40}?[ \t]*[:=][ \t]*[A-Za-z0-9_.@+-]{1,64}[ \t]*/[ \t]*"
         r"([^\s/]{6,256})",
         source="hand-written: 'login: <user> / <password>' in a sentence", check="password",
         keywords=("login", "cred", "account")),
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
