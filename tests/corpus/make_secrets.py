"""Generated free text for the redaction tests: a value of every secret format that
gitckpt.safety.secret_rules redacts, in prose, commands, logs and config lines; and innocent
lines that look like them (placeholders, prefixes named in prose, masked and truncated
values, hashes).

Part of the TUNING corpus: rules may be tuned on these lines (the held-out lines are in
heldout/ and never are). Seeded, so every run gives the same lines; every value is random
characters of the public shape of its format, none is real.

    spec = importlib.util.spec_from_file_location("make_secrets", CORPUS / "make_secrets.py")

`secret_lines()` -> [(text, the secret in it)]; `innocent_lines()` -> [text];
`FORMATS` names the rule ids covered (a test checks that every rule of secret_rules is).
Running `python tests/corpus/make_secrets.py [secret|innocent]` prints the lines.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
from collections.abc import Callable

_AN = string.ascii_letters + string.digits
_URL = _AN + "-_"
_B64 = _AN + "+/"
_HEX = "0123456789abcdef"
_UP = string.ascii_uppercase + string.digits
_LOW = string.ascii_lowercase + string.digits
# Words for passphrases and BIP-39 style recovery phrases (all from the BIP-39 English list).
_WORDLIST = ("abandon ability absorb acoustic adapt advice afraid agent alarm album alley amber "
             "anchor ankle antique anxiety arena armor arrow artist asthma atom auction autumn "
             "avocado badge bamboo banana barrel basket battle beacon bicycle blanket bonus "
             "bridge bronze bubble cabin cactus camera canal canvas carbon castle cement cherry "
             "circle clever coconut copper cradle crystal dolphin donkey eagle elbow empower "
             "fiscal galaxy harvest ladder magnet noble orphan ozone pistol rhythm sudden").split()


class _R:
    """Random values of a shape, from a seeded generator."""

    def __init__(self, seed: str) -> None:
        self.r = random.Random(seed)

    def c(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def an(self, n: int) -> str:
        return self.c(_AN, n)

    def hex(self, n: int) -> str:
        return self.c(_HEX, n)

    def url(self, n: int) -> str:
        return self.c(_URL, n)

    def digits(self, n: int) -> str:
        return str(self.r.randint(10 ** (n - 1), 10 ** n - 1))

    def pick(self, items):
        return self.r.choice(items)

    def password(self) -> str:
        return self.an(1) + self.c(_AN + "!#%*+-=?@^_", self.r.randint(11, 19))

    def human_password(self) -> str:
        words = ["Falcon", "Meadow", "Copper", "Glacier", "Pepper", "Orchid", "Tundra", "Velvet"]
        return (self.pick(words) + self.pick("!#$@%&*") + self.digits(self.r.randint(2, 4))
                + self.pick(words).lower())

    def b64url_json(self, obj: dict) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.pick('89ab')}{h[17:20]}-{h[20:]}"

    def passphrase(self, seps: str = "-.") -> str:
        """Diceware style: three or four words and a number, one separator."""
        words = self.r.sample(_WORDLIST, self.r.choice([3, 4]))
        return self.pick(seps).join([*words, self.digits(2)])

    def mnemonic(self) -> str:
        return " ".join(self.r.sample(_WORDLIST, self.pick([12, 24])))

    def pem_body(self, lines: int) -> str:
        return "\\n".join(self.c(_B64, 64) for _ in range(lines)) + "\\n" + self.c(_B64, 40) + "=="


def _jwt(r: _R) -> str:
    head = r.b64url_json({"alg": r.pick(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    body = r.b64url_json({"sub": r.digits(7), "iat": int(r.digits(10)), "scope": "api"})
    return f"{head}.{body}.{r.url(43)}"


def _discord(r: _R) -> str:
    uid = base64.b64encode(r.digits(18).encode()).decode().rstrip("=")
    return f"{uid}.{r.url(6)}.{r.url(38)}"


def _pem(r: _R) -> str:
    label = r.pick(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    return f"-----BEGIN {label}-----\\n{r.pem_body(6)}\\n-----END {label}-----"


# Token formats: a generator of the value, and the variable name it usually sits in.
FORMATS: dict[str, tuple[Callable[[_R], str], str]] = {
    "aws-access-key-id": (lambda r: r.pick(["AKIA", "ASIA"]) + r.c(_UP, 16), "AWS_ACCESS_KEY_ID"),
    "gcp-api-key": (lambda r: "AIza" + r.url(35), "GOOGLE_API_KEY"),
    "google-oauth-client-secret": (lambda r: "GOCSPX-" + r.url(28), "GOOGLE_CLIENT_SECRET"),
    "google-oauth-refresh-token": (lambda r: "1//0" + r.url(r.pick([60, 100])),
                                   "GOOGLE_REFRESH_TOKEN"),
    "google-oauth-access-token": (lambda r: "ya29." + r.url(120), "GOOGLE_ACCESS_TOKEN"),
    "firebase-fcm-server-key": (lambda r: "AAAA" + r.url(7) + ":APA91b" + r.url(134),
                                "FCM_SERVER_KEY"),
    "azure-ad-client-secret": (lambda r: r.c(_AN + "_~.", 3) + r.digits(1) + "Q~"
                               + r.c(_AN + "_~.-", 34), "AZURE_CLIENT_SECRET"),
    "digitalocean-token": (lambda r: r.pick(["dop", "doo", "dor"]) + "_v1_" + r.hex(64),
                           "DIGITALOCEAN_TOKEN"),
    "databricks-token": (lambda r: "dapi" + r.hex(32), "DATABRICKS_TOKEN"),
    "heroku-api-key-v2": (lambda r: "HRKU-" + r.url(60), "HEROKU_API_KEY"),
    "cloudflare-origin-ca-key": (lambda r: "v1.0-" + r.hex(24) + "-" + r.hex(146),
                                 "CF_ORIGIN_CA_KEY"),
    "alibaba-access-key-id": (lambda r: "LTAI" + r.an(20), "ALIBABA_ACCESS_KEY_ID"),
    "tencent-secret-id": (lambda r: "AKID" + r.an(32), "TENCENTCLOUD_SECRET_ID"),
    "scaleway-access-key": (lambda r: "SCW" + r.c(_UP, 17), "SCW_ACCESS_KEY"),
    "aws-bedrock-api-key": (lambda r: "ABSK" + base64.b64encode(r.r.randbytes(99)).decode(),
                            "AWS_BEARER_TOKEN_BEDROCK"),
    "dynatrace-token": (lambda r: "dt0c01." + r.c(_UP, 24) + "." + r.c(_UP, 64),
                        "DT_API_TOKEN"),
    "hashicorp-vault-token": (lambda r: r.pick(["hvs.", "hvb."]) + r.an(24) if r.r.random() < .5
                              else "hvs.CAESI" + r.url(90), "VAULT_TOKEN"),
    "hashicorp-vault-legacy-token": (lambda r: "s." + r.an(24), "VAULT_TOKEN"),
    "terraform-cloud-token": (lambda r: r.c(string.ascii_lowercase + string.digits, 14)
                              + ".atlasv1." + r.url(67), "TFE_TOKEN"),
    "github-token": (lambda r: r.pick(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + r.an(36),
                     "GITHUB_TOKEN"),
    "github-fine-grained-pat": (lambda r: "github_pat_11" + r.c(_UP, 20) + "_" + r.an(59),
                                "GH_TOKEN"),
    "gitlab-token": (lambda r: r.pick(["glpat-", "glptt-", "glrt-", "gldt-"]) + r.url(20),
                     "GITLAB_TOKEN"),
    "npm-token": (lambda r: "npm_" + r.an(36), "NPM_TOKEN"),
    "pypi-token": (lambda r: "pypi-AgEIcHlwaS5vcmc" + r.url(150), "PYPI_TOKEN"),
    "rubygems-token": (lambda r: "rubygems_" + r.hex(48), "GEM_HOST_API_KEY"),
    "dockerhub-token": (lambda r: "dckr_pat_" + r.url(27), "DOCKERHUB_TOKEN"),
    "pulumi-token": (lambda r: "pul-" + r.hex(40), "PULUMI_ACCESS_TOKEN"),
    "atlassian-api-token": (lambda r: "ATATT3xFfGF0" + r.url(170) + "=" + r.c(_UP, 8),
                            "JIRA_API_TOKEN"),
    "bitbucket-app-password": (lambda r: "ATBB" + r.an(32), "BITBUCKET_APP_PASSWORD"),
    "circleci-token": (lambda r: r.pick(["CCIPAT_", "CCIPRJ_"]) + r.an(22) + "_" + r.hex(40),
                       "CIRCLECI_TOKEN"),
    "buildkite-token": (lambda r: "bkua_" + r.hex(40), "BUILDKITE_API_TOKEN"),
    "sonarqube-token": (lambda r: r.pick(["squ_", "sqp_", "sqa_"]) + r.hex(40), "SONAR_TOKEN"),
    "sourcegraph-token": (lambda r: "sgp_" + r.hex(16) + "_" + r.hex(40), "SRC_ACCESS_TOKEN"),
    "artifactory-token": (lambda r: r.pick(["AKCp" + r.an(69), "cmVmd" + r.an(59)]),
                          "ARTIFACTORY_API_KEY"),
    "nuget-api-key": (lambda r: "oy2" + r.c(_LOW, 43), "NUGET_API_KEY"),
    "octopus-deploy-api-key": (lambda r: "API-" + r.c(_UP, 26), "OCTOPUS_API_KEY"),
    "netlify-token": (lambda r: "nfp_" + r.an(36), "NETLIFY_AUTH_TOKEN"),
    "render-api-key": (lambda r: "rnd_" + r.an(32), "RENDER_API_KEY"),
    "flyio-token": (lambda r: r.pick(["FlyV1 ", ""]) + "fm2_" + r.c(_B64, 180), "FLY_API_TOKEN"),
    "slack-token": (lambda r: f"{r.pick(['xoxb', 'xoxp'])}-{r.digits(12)}-{r.digits(13)}-"
                    f"{r.an(24)}", "SLACK_BOT_TOKEN"),
    "slack-app-token": (lambda r: f"xapp-1-A{r.c(_UP, 10)}-{r.digits(13)}-{r.hex(64)}",
                        "SLACK_APP_TOKEN"),
    "slack-webhook-url": (lambda r: f"https://hooks.slack.com/services/T{r.c(_UP, 10)}/"
                          f"B{r.c(_UP, 10)}/{r.an(24)}", "SLACK_WEBHOOK_URL"),
    "discord-bot-token": (_discord, "DISCORD_TOKEN"),
    "discord-webhook-url": (lambda r: f"https://discord.com/api/webhooks/{r.digits(18)}/"
                            f"{r.url(68)}", "DISCORD_WEBHOOK"),
    "telegram-bot-token": (lambda r: f"{r.digits(r.pick([9, 10]))}:AA{r.url(33)}",
                           "TELEGRAM_BOT_TOKEN"),
    "twilio-api-key": (lambda r: "SK" + r.hex(32), "TWILIO_API_KEY"),
    "sendgrid-api-key": (lambda r: "SG." + r.url(22) + "." + r.url(43), "SENDGRID_API_KEY"),
    "mailgun-api-key": (lambda r: "key-" + r.hex(32), "MAILGUN_API_KEY"),
    "mailchimp-api-key": (lambda r: r.hex(32) + "-us" + str(r.r.randint(1, 21)),
                          "MAILCHIMP_API_KEY"),
    "brevo-api-key": (lambda r: "xkeysib-" + r.hex(64) + "-" + r.an(16), "BREVO_API_KEY"),
    "mailgun-api-key-v2": (lambda r: r.hex(32) + "-" + r.hex(8) + "-" + r.hex(8),
                           "MAILGUN_API_KEY"),
    "resend-api-key": (lambda r: "re_" + r.an(8) + "_" + r.an(24), "RESEND_API_KEY"),
    "teams-webhook-url": (lambda r: f"https://acme.webhook.office.com/webhookb2/{r.uuid()}@"
                          f"{r.uuid()}/IncomingWebhook/{r.hex(32)}/{r.uuid()}", "TEAMS_WEBHOOK"),
    "automation-webhook-url": (lambda r: r.pick([
        f"https://hooks.zapier.com/hooks/catch/{r.digits(7)}/{r.c(_LOW, 7)}",
        f"https://maker.ifttt.com/trigger/deploy/with/key/{r.url(22)}"]), "ZAPIER_HOOK_URL"),
    "stripe-secret-key": (lambda r: r.pick(["sk_live_", "rk_live_", "sk_test_"])
                          + r.an(r.pick([24, 99])), "STRIPE_SECRET_KEY"),
    "stripe-publishable-key": (lambda r: "pk_live_" + r.an(99), "STRIPE_PUBLISHABLE_KEY"),
    "stripe-webhook-secret": (lambda r: "whsec_" + r.an(32), "STRIPE_WEBHOOK_SECRET"),
    "woocommerce-key": (lambda r: r.pick(["ck_", "cs_"]) + r.hex(40), "WC_CONSUMER_SECRET"),
    "shippo-token": (lambda r: "shippo_" + r.pick(["live", "test"]) + "_" + r.hex(40),
                     "SHIPPO_API_TOKEN"),
    "easypost-token": (lambda r: r.pick(["EZAK", "EZTK"]) + r.an(54), "EASYPOST_API_KEY"),
    "duffel-token": (lambda r: "duffel_live_" + r.url(43), "DUFFEL_ACCESS_TOKEN"),
    "plaid-access-token": (lambda r: "access-production-" + r.uuid(), "PLAID_ACCESS_TOKEN"),
    "square-token": (lambda r: r.pick(["EAAA", "sq0atp-", "sq0csp-"]) + r.url(60),
                     "SQUARE_ACCESS_TOKEN"),
    "braintree-access-token": (lambda r: f"access_token$production${r.c(_HEX[:10] + 'xyz', 16)}"
                               f"${r.hex(32)}", "BRAINTREE_ACCESS_TOKEN"),
    "shopify-token": (lambda r: r.pick(["shpat_", "shpss_", "shpca_"]) + r.hex(32),
                      "SHOPIFY_ACCESS_TOKEN"),
    "anthropic-api-key": (lambda r: "sk-ant-api03-" + r.url(93) + "AA", "ANTHROPIC_API_KEY"),
    "openai-api-key": (lambda r: r.pick(["sk-proj-", "sk-svcacct-"]) + r.url(156)
                       if r.r.random() < .6 else "sk-" + r.an(20) + "T3BlbkFJ" + r.an(20),
                       "OPENAI_API_KEY"),
    "sk-api-key": (lambda r: "sk-" + r.pick([r.hex(32), r.an(48), r.an(r.r.randint(20, 30)),
                                             "or-v1-" + r.hex(64)]), "LLM_API_KEY"),
    "huggingface-token": (lambda r: "hf_" + r.c(string.ascii_letters, 34), "HF_TOKEN"),
    "langsmith-api-key": (lambda r: r.pick(["lsv2_pt_", "lsv2_sk_"]) + r.hex(32) + "_"
                          + r.hex(10), "LANGSMITH_API_KEY"),
    "pinecone-api-key": (lambda r: "pcsk_" + r.an(6) + "_" + r.an(63), "PINECONE_API_KEY"),
    "elevenlabs-api-key": (lambda r: "sk_" + r.hex(48), "ELEVENLABS_API_KEY"),
    "ai-provider-key": (lambda r: r.pick(["gsk_" + r.an(52), "xai-" + r.an(80), "pplx-" + r.an(48),
                                          "r8_" + r.an(37), "fw_" + r.an(24)]), "AI_API_KEY"),
    "linear-api-key": (lambda r: "lin_api_" + r.an(40), "LINEAR_API_KEY"),
    "notion-token": (lambda r: r.pick(["ntn_" + r.an(46), "secret_" + r.an(43)]),
                     "NOTION_TOKEN"),
    "doppler-token": (lambda r: "dp." + r.pick(["st.prd.", "pt.", "sa."]) + r.an(43),
                      "DOPPLER_TOKEN"),
    "postman-api-key": (lambda r: "PMAK-" + r.hex(24) + "-" + r.hex(34), "POSTMAN_API_KEY"),
    "sentry-token": (lambda r: "sntrys_eyJpYXQiOjE3MT" + r.url(120), "SENTRY_AUTH_TOKEN"),
    "new-relic-key": (lambda r: r.pick(["NRAK-", "NRII-"]) + r.c(_UP, 27), "NEW_RELIC_API_KEY"),
    "grafana-token": (lambda r: "glsa_" + r.an(32) + "_" + r.hex(8), "GRAFANA_TOKEN"),
    "supabase-token": (lambda r: r.pick(["sbp_" + r.hex(40), "sb_secret_" + r.url(31)]),
                       "SUPABASE_ACCESS_TOKEN"),
    "planetscale-token": (lambda r: r.pick(["pscale_tkn_", "pscale_pw_"]) + r.url(43),
                          "PLANETSCALE_TOKEN"),
    "figma-token": (lambda r: "figd_" + r.url(40), "FIGMA_TOKEN"),
    "airtable-pat": (lambda r: "pat" + r.an(14) + "." + r.hex(64), "AIRTABLE_TOKEN"),
    "honeycomb-api-key": (lambda r: r.pick(["hcaik_", "hcxik_"]) + r.c(_LOW, 58),
                          "HONEYCOMB_API_KEY"),
    "hubspot-private-app-token": (lambda r: "pat-" + r.pick(["na1", "eu1"]) + "-" + r.uuid(),
                                  "HUBSPOT_ACCESS_TOKEN"),
    "clickup-token": (lambda r: "pk_" + r.digits(8) + "_" + r.c(_UP, 32), "CLICKUP_API_TOKEN"),
    "typeform-token": (lambda r: "tfp_" + r.url(59), "TYPEFORM_TOKEN"),
    "contentful-pat": (lambda r: "CFPAT-" + r.url(43), "CONTENTFUL_MANAGEMENT_TOKEN"),
    "readme-api-key": (lambda r: "rdme_" + r.c(_LOW, 70), "README_API_KEY"),
    "prefect-api-key": (lambda r: "pnu_" + r.an(36), "PREFECT_API_KEY"),
    "infracost-api-key": (lambda r: "ico-" + r.an(32), "INFRACOST_API_KEY"),
    "frameio-token": (lambda r: "fio-u-" + r.url(64), "FRAMEIO_TOKEN"),
    "scalingo-token": (lambda r: "tk-us-" + r.url(48), "SCALINGO_API_TOKEN"),
    "posthog-personal-api-key": (lambda r: "phx_" + r.an(43), "POSTHOG_PERSONAL_API_KEY"),
    "posthog-project-key": (lambda r: "phc_" + r.an(43), "POSTHOG_PROJECT_API_KEY"),
    "mapbox-public-token": (lambda r: "pk.eyJ1Ijoi" + r.url(40) + "." + r.url(22),
                            "MAPBOX_ACCESS_TOKEN"),
    "tailscale-key": (lambda r: "tskey-" + r.pick(["auth", "api", "client"]) + "-" + r.an(12)
                      + "-" + r.an(32), "TS_AUTHKEY"),
    "neon-password": (lambda r: "npg_" + r.an(11) + r.digits(1), "PGPASSWORD"),
    "dropbox-token": (lambda r: "sl." + r.url(135), "DROPBOX_ACCESS_TOKEN"),
    "facebook-access-token": (lambda r: "EAA" + r.c(string.ascii_uppercase, 1) + r.an(150),
                              "FACEBOOK_ACCESS_TOKEN"),
    "twitter-bearer-token": (lambda r: "A" * 22 + r.an(90), "TWITTER_BEARER_TOKEN"),
    "adobe-client-secret": (lambda r: "p8e-" + r.an(32), "ADOBE_CLIENT_SECRET"),
    "onepassword-secret-key": (lambda r: "A3-" + "-".join(r.c(_UP, n) for n in (6, 11, 5, 5, 5)),
                               "OP_SECRET_KEY"),
    "openshift-token": (lambda r: "sha256~" + r.url(43), "OPENSHIFT_TOKEN"),
    "onepassword-service-token": (lambda r: "ops_eyJzaWduSW5BZGRyZXNzIjoi" + r.url(300),
                                  "OP_SERVICE_ACCOUNT_TOKEN"),
    "mapbox-secret-token": (lambda r: "sk.eyJ1Ijoi" + r.url(40) + "." + r.url(22),
                            "MAPBOX_SECRET_TOKEN"),
    "age-secret-key": (lambda r: "AGE-SECRET-KEY-1" + r.c("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
                       "SOPS_AGE_KEY"),
    "jwt": (_jwt, "ACCESS_TOKEN"),
    "private-key-block": (_pem, "PRIVATE_KEY"),
    "private-key-base64": (lambda r: base64.b64encode(
        f"-----BEGIN RSA PRIVATE KEY-----\n{r.c(_B64, 64)}\n".encode()).decode(),
                           "CLIENT_KEY_DATA"),
    "crypt-password-hash": (lambda r: "$2b$12$" + r.c(_AN + "./", 53), "ADMIN_PASSWORD_HASH"),
}

# Formats that only exist in a context: each a list of line templates, the secret marked
# ⟦{v}⟧, and the kind of value {v} is.
CONTEXTS: dict[str, tuple[str, list[str]]] = {
    "aws-key-pair": ("aws", [
        "key pair: AKIA{id} / ⟦{v}⟧", "backup-bot,AKIA{id},⟦{v}⟧,Active,2024-05-01",
        "ASIA{id} ⟦{v}⟧ (session, 1 h)"]),
    "okta-api-token": ("okta", ["curl -H 'Authorization: SSWS ⟦{v}⟧' https://acme.okta.com/api/v1/users",
                                "Okta token: SSWS ⟦{v}⟧"]),
    "aws-secret-access-key": ("aws", [
        "aws_secret_access_key = ⟦{v}⟧", "export AWS_SECRET_ACCESS_KEY=⟦{v}⟧",
        "The secret key is ⟦{v}⟧ (user ci-deployer).", '"SecretAccessKey": "⟦{v}⟧"']),
    "azure-storage-key": ("b64key", [
        "DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=⟦{v}⟧;"
        "EndpointSuffix=core.windows.net",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;"
        "SharedAccessKey=⟦{v}⟧"]),
    "putty-private-key": ("b64body", [
        "PuTTY-User-Key-File-3: ssh-ed25519\\nEncryption: none\\nPrivate-Lines: 1\\n⟦{v}⟧"]),
    "private-key-unterminated": ("pemhead", [
        "the key got cut off in the log: ⟦{v}⟧"]),
    "url-password": ("urlpw", [
        "DATABASE_URL=postgres://app:⟦{v}⟧@db.internal:5432/shop",
        "Connected to redis://default:⟦{v}⟧@cache-1.internal:6379/0 to flush the queue.",
        "mongodb+srv://reporter:⟦{v}⟧@cluster0.x1y2z.mongodb.net/stats",
        "level=info msg=connect dsn=mysql://root:⟦{v}⟧@10.0.3.4:3306/crm"]),
    "url-token-user": ("hex32", [
        "SENTRY_DSN=https://⟦{v}⟧@o4504.ingest.sentry.io/4505",
        "git clone https://⟦{v}⟧@git.internal.example.com/acme/site.git"]),
    "url-query-signature": ("sig", [
        "https://acme.blob.core.windows.net/backups/db.tar?sv=2022-11-02&se=2024-07-01&sr=b"
        "&sp=r&sig=⟦{v}⟧",
        "GET https://bucket.s3.amazonaws.com/a.zip?X-Amz-Credential=x&X-Amz-Signature=⟦{v}⟧"]),
    "pgpass-line": ("password", ["db.internal:5432:shop:app:⟦{v}⟧"]),
    "netrc-password": ("password", ["machine api.heroku.com login ops@acme.io password ⟦{v}⟧"]),
    "bundler-credentials": ("userpass", ['BUNDLE_GEMS__ACME__IO: "⟦{v}⟧"']),
    "assignment-password": ("password", [
        "DB_PASSWORD=⟦{v}⟧", "  password: ⟦{v}⟧", '"password": "⟦{v}⟧",',
        "env PGPASSWORD='⟦{v}⟧' psql -h db -U app shop", "smtp_pass = '⟦{v}⟧'",
        "docker run -e MYSQL_ROOT_PASSWORD=⟦{v}⟧ mysql:8"]),
    "assignment-secret": ("random", [
        "env SECRET_KEY=⟦{v}⟧ python manage.py runserver", "client_secret: ⟦{v}⟧",
        "SESSION_SECRET=⟦{v}⟧ node server.js", "JWT_SECRET='⟦{v}⟧'"]),
    "assignment-token": ("random", [
        "ACCESS_TOKEN=⟦{v}⟧", "api_token: ⟦{v}⟧", 'token = "⟦{v}⟧"',
        "env BOT_TOKEN=⟦{v}⟧ ./bot"]),
    "assignment-key": ("random", [
        "API_KEY=⟦{v}⟧", '"apiKey": "⟦{v}⟧"', "encryption_key: ⟦{v}⟧",
        "sudo env MASTER_KEY=⟦{v}⟧ ./migrate"]),
    "assignment-auth": ("random", ['"auth": "⟦{v}⟧"', "AUTH_HEADER=⟦{v}⟧"]),
    "assignment-credential": ("random", ["CREDENTIALS=⟦{v}⟧", "creds: ⟦{v}⟧"]),
    "assignment-session": ("random", ["Cookie: sessionid=⟦{v}⟧; csrftoken=x",
                                      "Set-Cookie: session=⟦{v}⟧; HttpOnly"]),
    "assignment-signature": ("random", ["signature=⟦{v}⟧", "webhook signature: ⟦{v}⟧"]),
    "xml-element-secret": ("password", ["<password>⟦{v}⟧</password>",
                                        "<apiKey>⟦{v}⟧</apiKey>"]),
    "xml-add-key-value": ("password", ['<add key="ClearTextPassword" value="⟦{v}⟧" />']),
    "authorization-header": ("random", [
        "Authorization: Bearer ⟦{v}⟧", "curl -H 'Authorization: token ⟦{v}⟧' https://api.x.io",
        "{{'Authorization': 'Bearer ⟦{v}⟧'}}"]),
    "bearer-token": ("random", ["Called the API with bearer ⟦{v}⟧ and got 200."]),
    "basic-auth-credentials": ("basic", ["Authorization: Basic ⟦{v}⟧"]),
    "cli-secret-flag": ("random", [
        "./deploy.sh --token ⟦{v}⟧ --env prod", "acme-cli login --api-key=⟦{v}⟧",
        "python sync.py --password '⟦{v}⟧'", "vault write auth --secret ⟦{v}⟧"]),
    "cli-java-pass-flag": ("password", ["keytool -list -keystore app.jks -storepass '⟦{v}⟧'"]),
    "cli-mysql-password": ("password", ["mysql -h db -u admin -p⟦{v}⟧ shop"]),
    "cli-login-password": ("password", ["docker login -u ci -p ⟦{v}⟧ registry.acme.io",
                                        "sshpass -p '⟦{v}⟧' ssh root@10.0.0.5"]),
    "cli-archive-password": ("password", ["7z x backup.7z -p⟦{v}⟧"]),
    "cli-sql-ldap-password": ("password", ["sqlcmd -S sql01 -U sa -P '⟦{v}⟧'",
                                           "ldapwhoami -x -D uid=ci,dc=acme -w '⟦{v}⟧'"]),
    "cli-htpasswd-password": ("password", ["htpasswd -b .htpasswd admin '⟦{v}⟧'"]),
    "cli-gh-secret-set": ("random", ["gh secret set SENTRY_TOKEN --body ⟦{v}⟧"]),
    "cli-openssl-password": ("password", ["openssl enc -d -aes-256-cbc -in a.enc -k ⟦{v}⟧"]),
    "cli-redis-password": ("password", ["redis-cli -h cache -a '⟦{v}⟧' INFO"]),
    "cli-password-stdin": ("password", [
        "echo ⟦{v}⟧ | docker login -u ci --password-stdin registry.acme.io"]),
    "curl-user-password": ("password", ["curl -u admin:⟦{v}⟧ https://nexus.acme.io/api"]),
    "prose-secret": ("prose", [
        "The password for the staging database is ⟦{v}⟧.", "Jenkins admin password: ⟦{v}⟧",
        "Logged in as ops with password ⟦{v}⟧, then rotated it.", "the api key is ⟦{v}⟧",
        "Wi-Fi passphrase is ⟦{v}⟧", "Credentials for the kiosk: admin / ⟦{v}⟧",
        "sftp password ⟦{v}⟧ (expires Friday)", "secret for the webhook: ⟦{v}⟧"]),
    "twilio-sid-auth-token": ("hex32", [
        'client = Client("AC{sid}", "⟦{v}⟧")', "Twilio AC{sid} auth token ⟦{v}⟧",
        "TWILIO=AC{sid}:⟦{v}⟧"]),
    "name-value-pair": ("password", [
        '- {name: DB_PASSWORD, value: "⟦{v}⟧"}', "ParameterKey=DbPassword,ParameterValue=⟦{v}⟧",
        "az keyvault secret set --vault-name kv-prod --name smtp-password --value '⟦{v}⟧'",
        "aws ssm put-parameter --name /prod/api/token --type SecureString --value '⟦{v}⟧'"]),
    "sql-password": ("password", ["CREATE USER 'app'@'%' IDENTIFIED BY '⟦{v}⟧';",
                                  "ALTER ROLE reporter WITH PASSWORD '⟦{v}⟧';",
                                  "SET PASSWORD FOR 'ops'@'localhost' = '⟦{v}⟧';"]),
    "oracle-user-password": ("urlpw", ["jdbc:oracle:thin:scott/⟦{v}⟧@db.internal:1521/ORCL",
                                       "sqlplus system/⟦{v}⟧@//ora.internal:1521/PDB1"]),
    "smtp-auth-credentials": ("saslplain", ["C: AUTH PLAIN ⟦{v}⟧",
                                            "smtp: AUTH PLAIN ⟦{v}⟧ -> 235 2.7.0 Accepted"]),
    "cli-single-dash-secret-flag": ("random", ["./exporter -token ⟦{v}⟧ -listen :9100",
                                               "terraform-provider-acme -api-key=⟦{v}⟧"]),
    "cli-zip-password": ("password", ["zip -r -P '⟦{v}⟧' backup.zip data/",
                                      "unzip -P '⟦{v}⟧' backup.zip"]),
    "cli-ssh-keygen-passphrase": ("password", [
        "ssh-keygen -t ed25519 -N '⟦{v}⟧' -f deploy_key"]),
    "cli-smb-user-password": ("urlpw", ["smbclient //fs01/share -U backup%⟦{v}⟧ -c ls"]),
    "cli-windows-password": ("urlpw", ["xfreerdp /v:10.0.0.9 /u:admin /p:⟦{v}⟧ /cert:ignore",
                                       "cmdkey /add:fs01 /user:ops /pass:⟦{v}⟧"]),
    "cli-positional-password": ("urlpw", [
        "mc alias set minio https://minio.acme.io:9000 minioadmin ⟦{v}⟧",
        "poetry config http-basic.acme deploy ⟦{v}⟧", "lftp -u ftpuser,⟦{v}⟧ ftp.acme.io"]),
    "cli-keychain-password": ("password", [
        "security add-generic-password -a ci -s deploy -w '⟦{v}⟧'"]),
    "prose-secret-intl": ("password", [
        "La contraseña de la base de datos es ⟦{v}⟧", "Das Kennwort für den Server lautet ⟦{v}⟧",
        "数据库的密码是 ⟦{v}⟧", "パスワード：⟦{v}⟧", "Le mot de passe est ⟦{v}⟧ (temporaire)",
        "Пароль: ⟦{v}⟧", "A senha do Wi-Fi é ⟦{v}⟧"]),
    "prose-seed-phrase": ("mnemonic", ['The seed phrase is "⟦{v}⟧".',
                                       "wallet recovery phrase: ⟦{v}⟧"]),
    "prose-login": ("password", ["Logged in as admin with ⟦{v}⟧ and it worked.",
                                 "log in with qa@acme.io / ⟦{v}⟧ to reproduce"]),
    "prose-user-pass-pair": ("password", ["SMTP relay: user mailer, pass ⟦{v}⟧",
                                          "username deploy password ⟦{v}⟧"]),
    "prose-value-as": ("password", ["I used ⟦{v}⟧ as the root password.",
                                    "Set ⟦{v}⟧ as the new Wi-Fi passphrase"]),
    "labelled-user-password": ("password", ["Jenkins: admin / ⟦{v}⟧", "NAS console: root / ⟦{v}⟧"]),
    "prose-user-password": ("password", [
        "Login for the NAS: admin / ⟦{v}⟧", "credentials: svc-backup / ⟦{v}⟧",
        "The test account = qa@acme.io / ⟦{v}⟧"]),
}


# Lines for value shapes rather than rules: a passphrase of words with spaces, quoted.
SHAPES: list[tuple[str, list[str]]] = [
    ("spaced", ["gpg --batch --passphrase '⟦{v}⟧' -d notes.gpg",
                "Shared the Wi-Fi passphrase '⟦{v}⟧' with the guests.",
                'PASSPHRASE="⟦{v}⟧"']),
]


def _context_value(kind: str, r: _R) -> str:
    return {
        "aws": lambda: r.c(_B64, 40),
        "okta": lambda: "00" + r.url(40),
        "b64key": lambda: r.c(_B64, 86) + "==",
        "b64body": lambda: r.c(_B64, 64) + "\\n" + r.c(_B64, 40),
        "pemhead": lambda: "-----BEGIN RSA PRIVATE KEY-----\\n" + r.pem_body(3),
        "urlpw": lambda: r.an(1) + r.c(_AN + "-._~!*", r.r.randint(11, 19)),
        "hex32": lambda: r.hex(32),
        "sig": lambda: r.c(_AN + "%", 44),
        "password": lambda: r.pick([r.password(), r.human_password(), r.passphrase()]),
        "spaced": lambda: r.passphrase(" "),
        "userpass": lambda: f"deploy:{r.an(24)}",
        "random": lambda: r.pick([r.an(32), r.hex(40), r.password(),
                                  base64.b64encode(r.r.randbytes(24)).decode()]),
        "basic": lambda: base64.b64encode(f"ci:{r.password()}".encode()).decode(),
        "prose": lambda: r.pick([r.password(), r.human_password(), r.an(24)]),
        "saslplain": lambda: base64.b64encode(f"\0mailer\0{r.password()}".encode()).decode(),
        "mnemonic": lambda: r.mnemonic(),
    }[kind]()


# Where a token format is written: prose, a command, a log line, a config line.
_TOKEN_TEMPLATES = [
    "Rotated ⟦{v}⟧ this morning; the old one is revoked.",
    "The deploy job still uses ⟦{v}⟧ (found in the CI settings).",
    "Q: is ⟦{v}⟧ the prod key or the staging one?",
    "curl -s -H 'X-Api-Key: ⟦{v}⟧' https://api.example.com/v1/items",
    "some-cli auth login --with-token ⟦{v}⟧",
    "2024-06-02 10:11:12,042 DEBUG outgoing request used ⟦{v}⟧",
    "[warn] token rejected: ⟦{v}⟧ (401)",
    "{name}=⟦{v}⟧",
    "export {name}=⟦{v}⟧",
    '{lname}: "⟦{v}⟧"',
]


def secret_lines(seed: str = "gitckpt-tuning-generated") -> list[tuple[str, str]]:
    """(text, the secret in it): four lines per token format, every context template."""
    r = _R(seed)
    out = []
    for make, name in FORMATS.values():
        for template in r.r.sample(_TOKEN_TEMPLATES, 4):
            v = make(r)
            out.append(_fill(template, v, name=name, lname=name.lower()))
    for kind, templates in [*CONTEXTS.values(), *SHAPES]:
        for template in templates:
            template = template.replace("{id}", r.c("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
            template = template.replace("{sid}", r.hex(32))
            out.append(_fill(template, _context_value(kind, r)))
    return out


def _fill(template: str, v: str, **names: str) -> tuple[str, str]:
    line = template.replace("{v}", v).replace("{{", "{").replace("}}", "}")
    for k, value in names.items():
        line = line.replace("{" + k + "}", value)
    start, end = line.index("⟦"), line.index("⟧")
    return (line[:start] + line[start + 1:end] + line[end + 1:]).replace("\\n", "\n"), \
        line[start + 1:end].replace("\\n", "\n")


# Innocent lines: each token format's prefix in placeholders, prose and masked values, and
# the look-alikes of developer text.
_INNOCENT_TEMPLATES = [
    "{name}={prefix}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "{name}={prefix}...",
    "{name}=<your {lname}>",
    "Set {name} in the environment; it starts with {prefix}.",
    "{name} = (hidden)",
    "The {lname} ending in ...{tail} was rotated.",
    "{name}: ********",
    "Tokens that begin with `{prefix}` are {rule} credentials.",
]


def _prefix_of(rule: str, value: str) -> str:
    for sep in ("_", "-", ".", "$"):
        i = value.find(sep, 1)
        if 0 < i <= 12:
            return value[:i + 1]
    return value[:4]


def innocent_lines(seed: str = "gitckpt-tuning-innocent") -> list[str]:
    """Lines that redaction must leave alone: two per token format, and look-alikes."""
    r = _R(seed)
    out = []
    for rule, (make, name) in FORMATS.items():
        if rule in ("private-key-block", "private-key-base64", "jwt", "crypt-password-hash"):
            continue
        value = make(r)
        prefix = _prefix_of(rule, value)
        for template in r.r.sample(_INNOCENT_TEMPLATES, 2):
            out.append(template.format(name=name, lname=name.lower().replace("_", " "),
                                       prefix=prefix, tail=r.hex(4), rule=rule))
    for _ in range(6):
        words = r.pick(["hello world", "not a secret", "config v2", "the quick brown fox"])
        out += [
            f"commit {r.hex(40)}",
            f"image: ghcr.io/acme/api@sha256:{r.hex(64)}",
            f"request id {r.uuid()} took {r.r.randint(3, 900)} ms",
            f"echo {base64.b64encode(words.encode()).decode()} | base64 -d",
            '"integrity": "sha512-'
            + base64.b64encode(hashlib.sha512(r.hex(8).encode()).digest()).decode() + '"',
            f"etag: \"{r.hex(32)}\"",
        ]
    out += [
        "Label: SECRET = (shown once)", "Use GIT_SSH_KEY=~/.ssh/git_ed25519 file",
        "SIGNING_KEY = (from KMS)", "ssh-add ~/.ssh/id_ed25519",
        "The password field shows dots (hidden).", "TOKEN: (none)",
        "Discord bot tokens are three parts.",
        "export OPENAI_API_KEY=$(op read op://dev/openai/key)",
        "password: <redacted by the log filter>", "api_key: [set via CI variable]",
        "--password <password>", "mysql -u root -p", "env API_SECRET= npm start",
        "SECRET_KEY is generated on first boot.", "The Telegram bot id is 123456789.",
    ]
    return out


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["innocent"]:
        print("\n".join(innocent_lines()))
    else:
        for text, secret in secret_lines():
            print(text.replace(secret, "⟦" + secret + "⟧").replace("\n", "\\n"))
