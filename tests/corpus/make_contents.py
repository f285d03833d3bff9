"""Fake file contents for tests/corpus/content_checked.tsv.

`content_for(kind)` returns the bytes of a file of the given kind. Every value that looks like a
secret is generated here from random characters of the right shape (prefix, length, charset);
none is real. The same kind always gives the same bytes (the generator is seeded by the kind's
name), so tests can compare results between runs.

Load it from a test without making tests/corpus a package:

    spec = importlib.util.spec_from_file_location("make_contents", CORPUS / "make_contents.py")
"""

from __future__ import annotations

import base64
import io
import json
import random
import string
import zipfile
from collections.abc import Callable

_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"


class _Fake:
    """Random values of a given shape, from a generator seeded by the kind's name."""

    def __init__(self, seed: str) -> None:
        self.r = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def hex(self, n: int) -> str:
        return self.chars(_HEX, n)

    def alnum(self, n: int) -> str:
        return self.chars(_ALNUM, n)

    def password(self, n: int = 18) -> str:
        return self.alnum(n - 2) + self.r.choice("-_.@+") + self.alnum(1)

    def digits(self, n: int) -> str:
        return self.chars(string.digits, n)

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def pem(self, label: str, prefix: str, lines: int = 12) -> str:
        body = [prefix + self.chars(_B64, 64 - len(prefix))]
        body += [self.chars(_B64, 64) for _ in range(lines - 2)]
        body.append(self.chars(_B64, 44) + "==")
        return "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----", ""])


_PKCS8_RSA_PREFIX = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"


def _json(obj: object) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode()


def _text(s: str) -> bytes:
    return s.lstrip("\n").encode()


# --- secret-bearing kinds --------------------------------------------------------------------


def _gcp_service_account(f: _Fake) -> bytes:
    project = "acme-prod-" + f.digits(6)
    email = f"deployer@{project}.iam.gserviceaccount.com"
    return _json({
        "type": "service_account",
        "project_id": project,
        "private_key_id": f.hex(40),
        "private_key": f.pem("PRIVATE KEY", _PKCS8_RSA_PREFIX, 26),
        "client_email": email,
        "client_id": f.digits(21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
        + email.replace("@", "%40"),
        "universe_domain": "googleapis.com",
    })


def _gcp_authorized_user(f: _Fake) -> bytes:
    return _json({
        "client_id": f.digits(12) + "-" + f.chars(string.ascii_lowercase + string.digits, 32)
        + ".apps.googleusercontent.com",
        "client_secret": "GOCSPX-" + f.chars(_URLSAFE, 28),
        "refresh_token": "1//0g" + f.chars(_URLSAFE, 98),
        "type": "authorized_user",
    })


def _npmrc_auth_token(f: _Fake) -> bytes:
    return _text(f"""
registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken=npm_{f.alnum(36)}
always-auth=true
""")


def _docker_config_auths(f: _Fake) -> bytes:
    auth = base64.b64encode(f"acmebot:{f.password(24)}".encode()).decode()
    return _json({"auths": {"registry.example.com": {"auth": auth}}})


def _kubeconfig_token(f: _Fake) -> bytes:
    token = "eyJhbGciOiJSUzI1NiIsImtpZCI6I" + f.chars(_URLSAFE, 40) + ".eyJpc3MiOiJrdWJlcm5ldGVz" \
        + f.chars(_URLSAFE, 200) + "." + f.chars(_URLSAFE, 342)
    return _text(f"""
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: {base64.b64encode(f.alnum(600).encode()).decode()}
contexts:
- name: prod
  context: {{cluster: prod, user: deployer}}
current-context: prod
users:
- name: deployer
  user:
    token: {token}
""")


def _database_yml_password(f: _Fake) -> bytes:
    return _text(f"""
default: &default
  adapter: postgresql
  encoding: unicode
  pool: 5

production:
  <<: *default
  host: db.internal
  database: shop_production
  username: shop
  password: {f.password(20)}
""")


def _spring_properties_password(f: _Fake) -> bytes:
    return _text(f"""
spring.datasource.url=jdbc:postgresql://db.internal:5432/shop
spring.datasource.username=shop
spring.datasource.password={f.password(20)}
spring.jpa.hibernate.ddl-auto=validate
server.port=8080
""")


def _spring_yaml_password(f: _Fake) -> bytes:
    return _text(f"""
spring:
  datasource:
    url: jdbc:mysql://db.internal:3306/shop
    username: shop
    password: {f.password(20)}
  mail:
    host: smtp.example.com
    password: {f.password(16)}
""")


def _maven_settings_password(f: _Fake) -> bytes:
    return _text(f"""
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <servers>
    <server>
      <id>ossrh</id>
      <username>acme-release</username>
      <password>{f.password(22)}</password>
    </server>
  </servers>
</settings>
""")


def _gradle_properties_signing(f: _Fake) -> bytes:
    return _text(f"""
org.gradle.jvmargs=-Xmx2g
signing.keyId={f.hex(8).upper()}
signing.password={f.password(18)}
signing.secretKeyRingFile=/home/ci/.gnupg/secring.gpg
ossrhUsername=acme-release
ossrhPassword={f.password(20)}
""")


def _bundle_config_credentials(f: _Fake) -> bytes:
    return _text(f"""
---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_GEMS__CONTRIBSYS__COM: "{f.hex(8)}:{f.hex(8)}"
""")


def _pip_conf_credentials(f: _Fake) -> bytes:
    return _text(f"""
[global]
index-url = https://ci:{f.alnum(32)}@pypi.internal.example.com/simple/
timeout = 60
""")


def _nuget_config_password(f: _Fake) -> bytes:
    return _text(f"""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="acme" value="https://nuget.internal.example.com/v3/index.json" />
  </packageSources>
  <packageSourceCredentials>
    <acme>
      <add key="Username" value="ci" />
      <add key="ClearTextPassword" value="{f.password(20)}" />
    </acme>
  </packageSourceCredentials>
</configuration>
""")


def _appsettings_connection_string(f: _Fake) -> bytes:
    return _json({
        "ConnectionStrings": {
            "Default": "Server=tcp:acme.database.windows.net,1433;Database=shop;User ID=shop;"
            f"Password={f.password(20)};Encrypt=True;"
        },
        "Logging": {"LogLevel": {"Default": "Warning"}},
    })


def _web_config_connection_string(f: _Fake) -> bytes:
    conn = f"Data Source=db;Initial Catalog=shop;User ID=shop;Password={f.password(18)}"
    return _text(f"""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <connectionStrings>
    <add name="Shop" providerName="System.Data.SqlClient"
         connectionString="{conn}" />
  </connectionStrings>
</configuration>
""")


def _mycnf_client_password(f: _Fake) -> bytes:
    return _text(f"""
[client]
user = backup
password = {f.password(20)}
host = db.internal
""")


def _k8s_secret(f: _Fake) -> bytes:
    b64 = base64.b64encode
    return _text(f"""
apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
data:
  username: {b64(b"shop").decode()}
  password: {b64(f.password(20).encode()).decode()}
""")


def _jupyter_config_password(f: _Fake) -> bytes:
    salted = base64.b64encode(f.r.randbytes(16)).decode().rstrip("=")
    digest = base64.b64encode(f.r.randbytes(32)).decode().rstrip("=")
    return _json({"IdentityProvider": {
        "hashed_password": f"argon2:$argon2id$v=19$m=10240,t=10,p=8${salted}${digest}"}})


def _wrangler_toml_secret(f: _Fake) -> bytes:
    return _text(f"""
name = "api"
main = "src/index.ts"
compatibility_date = "2024-06-01"

[vars]
ENVIRONMENT = "production"
STRIPE_SECRET_KEY = "sk_live_51{f.alnum(97)}"
""")


def _gitlab_runner_config(f: _Fake) -> bytes:
    return _text(f"""
concurrent = 4

[[runners]]
  name = "build-1"
  url = "https://gitlab.example.com"
  token = "glrt-{f.chars(_URLSAFE, 20)}"
  executor = "docker"
  [runners.docker]
    image = "alpine:3.20"
""")


def _compose_literal_password(f: _Fake) -> bytes:
    return _text(f"""
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: shop
      POSTGRES_PASSWORD: {f.password(24)}
""")


def _env_style_config(f: _Fake) -> bytes:
    return _text(f"""
STRIPE_SECRET_KEY=sk_live_{f.alnum(24)}
SENDGRID_API_KEY=SG.{f.chars(_URLSAFE, 22)}.{f.chars(_URLSAFE, 43)}
""")


def _pem_private_key(f: _Fake) -> bytes:
    return f.pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 25).encode()


# --- ordinary kinds --------------------------------------------------------------------------


def _package_json(f: _Fake) -> bytes:
    return _json({
        "name": "@acme/site", "version": "1.4.2", "private": True, "type": "module",
        "scripts": {"build": "vite build", "test": "vitest run", "lint": "eslint ."},
        "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1"},
        "devDependencies": {"vite": "^5.2.0", "vitest": "^1.6.0", "eslint": "^9.4.0"},
    })


def _ci_yaml(f: _Fake) -> bytes:
    return _text("""
stages: [test, build]

test:
  stage: test
  image: python:3.12
  script:
    - pip install -e '.[test]'
    - pytest -q

build:
  stage: build
  script:
    - docker build -t registry.example.com/acme/site:$CI_COMMIT_SHA .
""")


def _github_actions_secrets_refs(f: _Fake) -> bytes:
    return _text("""
name: release
on: {push: {tags: ['v*']}}
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci && npm publish
        env:
          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
""")


def _database_yml_env(f: _Fake) -> bytes:
    return _text("""
default: &default
  adapter: postgresql
  pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>

production:
  <<: *default
  url: <%= ENV["DATABASE_URL"] %>
  password: <%= ENV["SHOP_DATABASE_PASSWORD"] %>
""")


def _spring_properties_plain(f: _Fake) -> bytes:
    return _text("""
spring.application.name=shop
spring.datasource.url=${DATABASE_URL}
spring.datasource.password=${DATABASE_PASSWORD}
management.endpoints.web.exposure.include=health,info
""")


def _maven_settings_mirrors(f: _Fake) -> bytes:
    return _text("""
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <mirrors>
    <mirror>
      <id>central-proxy</id>
      <mirrorOf>central</mirrorOf>
      <url>https://maven.internal.example.com/repository/central/</url>
    </mirror>
  </mirrors>
</settings>
""")


def _gradle_properties_jvmargs(f: _Fake) -> bytes:
    return _text("""
org.gradle.jvmargs=-Xmx2048m -Dfile.encoding=UTF-8
org.gradle.parallel=true
android.useAndroidX=true
kotlin.code.style=official
""")


def _bundle_config_path(f: _Fake) -> bytes:
    return _text("""
---
BUNDLE_PATH: "vendor/bundle"
BUNDLE_JOBS: "4"
BUNDLE_WITHOUT: "development:test"
""")


def _pip_conf_plain(f: _Fake) -> bytes:
    return _text("""
[global]
index-url = https://pypi.org/simple
timeout = 60
require-virtualenv = true
""")


def _nuget_config_sources(f: _Fake) -> bytes:
    return _text("""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
  </packageSources>
</configuration>
""")


def _appsettings_logging(f: _Fake) -> bytes:
    return _json({
        "Logging": {"LogLevel": {"Default": "Information", "Microsoft.AspNetCore": "Warning"}},
        "AllowedHosts": "*",
    })


def _web_config_plain(f: _Fake) -> bytes:
    return _text("""
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <system.webServer>
    <handlers>
      <add name="aspNetCore" path="*" verb="*" modules="AspNetCoreModuleV2" />
    </handlers>
    <aspNetCore processPath="dotnet" arguments=".\\Shop.dll" hostingModel="inprocess" />
  </system.webServer>
</configuration>
""")


def _mycnf_server_tuning(f: _Fake) -> bytes:
    return _text("""
[mysqld]
character-set-server = utf8mb4
innodb_buffer_pool_size = 1G
max_connections = 200
""")


def _k8s_sealed_secret(f: _Fake) -> bytes:
    return _text(f"""
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: db
spec:
  encryptedData:
    password: AgB{f.chars(_B64, 680)}==
""")


def _k8s_deployment(f: _Fake) -> bytes:
    return _text("""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: site
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: site
          image: registry.example.com/acme/site:1.4.2
          envFrom:
            - secretRef: {name: db}
""")


def _jupyter_config_plain(f: _Fake) -> bytes:
    return _json({"ServerApp": {"ip": "127.0.0.1", "port": 8888, "open_browser": False}})


def _wrangler_toml_plain(f: _Fake) -> bytes:
    return _text("""
name = "api"
main = "src/index.ts"
compatibility_date = "2024-06-01"

[vars]
ENVIRONMENT = "production"
""")


def _ssh_client_config(f: _Fake) -> bytes:
    return _text("""
Host bastion
  HostName bastion.example.com
  User deploy
  IdentityFile ~/.ssh/id_ed25519
""")


def _git_config(f: _Fake) -> bytes:
    return _text(
        '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote "origin"]\n'
        "\turl = https://github.com/acme/site.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    )


def _compose_env_refs(f: _Fake) -> bytes:
    return _text("""
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD_FILE: /run/secrets/db_password
    secrets: [db_password]
secrets:
  db_password:
    file: ./secrets/db_password.txt
""")


def _tokenizer_json(f: _Fake) -> bytes:
    return _json({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 0, "content": "[PAD]", "special": True},
                         {"id": 100, "content": "[UNK]", "special": True}],
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "vocab": {"[PAD]": 0, "[UNK]": 100, "the": 1996, "token": 19204}},
    })


def _hf_model_config(f: _Fake) -> bytes:
    return _json({"architectures": ["BertModel"], "hidden_size": 768, "num_attention_heads": 12,
                  "vocab_size": 30522, "pad_token_id": 0})


def _vscode_settings(f: _Fake) -> bytes:
    return _json({"editor.formatOnSave": True, "python.testing.pytestEnabled": True,
                  "files.exclude": {"**/__pycache__": True}})


def _firebase_google_services(f: _Fake) -> bytes:
    number = f.digits(12)
    return _json({
        "project_info": {"project_number": number, "project_id": "acme-app",
                         "storage_bucket": "acme-app.appspot.com"},
        "client": [{
            "client_info": {"mobilesdk_app_id": f"1:{number}:android:{f.hex(16)}",
                            "android_client_info": {"package_name": "com.acme.app"}},
            "api_key": [{"current_key": "AIzaSy" + f.chars(_URLSAFE, 33)}],
        }],
        "configuration_version": "1",
    })


def _keynote_zip(f: _Fake) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in [("Index/Document.iwa", f.r.randbytes(512)),
                           ("Metadata/DocumentIdentifier", f.uuid().upper().encode()),
                           ("Metadata/Properties.plist", b"<?xml version=\"1.0\"?><plist/>")]:
            z.writestr(zipfile.ZipInfo(name, date_time=(2024, 6, 11, 12, 0, 0)), data)
    return buf.getvalue()


# --- text files named for nothing, holding a high-confidence credential or none --------------


def _aws_key_id(f: _Fake) -> str:
    return "AKIA" + f.chars(string.ascii_uppercase + "234567", 16)


def _aws_secret(f: _Fake) -> str:
    return f.chars(_B64, 40)


def _aws_iam_user_csv(f: _Fake) -> bytes:
    return _text(f"""
User name,Password,Access key ID,Secret access key,Console login link
ci-deployer,,{_aws_key_id(f)},{_aws_secret(f)},https://123456789012.signin.aws.amazon.com/console
""")


def _aws_pair_in_notes(f: _Fake) -> bytes:
    return _text(f"""
Deploy notes, 11 June

- bucket: acme-prod-assets (eu-west-1)
- the CI user's keys, until we move them to the vault:
    access key id  {_aws_key_id(f)}
    secret key     {_aws_secret(f)}
- rotate after the release
""")


def _github_token_text(f: _Fake) -> bytes:
    return _text(f"ghp_{f.alnum(36)}\n")


def _credentials_dump_text(f: _Fake) -> bytes:
    return _text(f"""
AWSAccessKeyId={_aws_key_id(f)}
AWSSecretKey={_aws_secret(f)}
password = {f.password(20)}
github: ghp_{f.alnum(36)}
""")


def _slack_token_in_doc(f: _Fake) -> bytes:
    return _text(f"""
# Deploying the alert bot

Set the token in the service's environment:

```sh
export SLACK_BOT_TOKEN=xoxb-{f.digits(12)}-{f.digits(13)}-{f.alnum(24)}
systemctl restart alert-bot
```
""")


def _stripe_key_in_script(f: _Fake) -> bytes:
    return _text(f"""
#!/bin/sh
set -eu
export STRIPE_SECRET_KEY=sk_live_{f.alnum(99)}
exec node dist/billing.js "$@"
""")


def _gitlab_token_in_log(f: _Fake) -> bytes:
    return _text(f"""
$ git clone https://oauth2:glpat-{f.chars(_URLSAFE, 20)}@gitlab.example.com/acme/site.git
Cloning into 'site'...
$ make deploy
deploy: done in 41 s
""")


def _anthropic_key_in_example(f: _Fake) -> bytes:
    return _text(f"""
# Copy to .env and fill in
ANTHROPIC_API_KEY=sk-ant-api03-{f.chars(_URLSAFE, 93)}AA
LOG_LEVEL=info
""")


def _pem_in_markdown(f: _Fake) -> bytes:
    return ("# Bastion access\n\nThe deploy key:\n\n```\n"
            + f.pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 6)
            + "```\n").encode()


def _aws_docs_example(f: _Fake) -> bytes:
    return _text("""
# AWS credentials

Put your keys in `~/.aws/credentials`, never in the repository:

    [default]
    aws_access_key_id = AKIAIOSFODNN7EXAMPLE
    aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
""")


def _aws_key_id_only(f: _Fake) -> bytes:
    rows = "\n".join(f"{user},{_aws_key_id(f)},Active,2024-0{m}-1{m}"
                     for m, user in enumerate(["ci", "backup", "analytics"], 1))
    return _text(f"user,access_key_id,status,last_rotated\n{rows}\n")


def _token_placeholders_doc(f: _Fake) -> bytes:
    return _text("""
# Tokens

| service | variable | looks like |
|---|---|---|
| GitHub | `GITHUB_TOKEN` | `ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` |
| Slack | `SLACK_BOT_TOKEN` | `xoxb-0000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx` |
| Stripe | `STRIPE_SECRET_KEY` | `sk_live_...` |
| GitLab | `GITLAB_TOKEN` | `glpat-<20 characters>` |
""")


def _hash_list(f: _Fake) -> bytes:
    return "".join(f"{f.hex(64)}  dist/pkg-{i}.tar.gz\n" for i in range(40)).encode()


def _base64_blob_text(f: _Fake) -> bytes:
    raw = base64.b64encode(f.r.randbytes(3000)).decode()
    return ("\n".join(raw[i:i + 76] for i in range(0, len(raw), 76)) + "\n").encode()


def _lockfile_integrity(f: _Fake) -> bytes:
    out = ["# yarn lockfile v1", ""]
    for i in range(30):
        digest = base64.b64encode(f.r.randbytes(64)).decode()
        out += [f"pkg-{i}@^1.{i}.0:", f"  version \"1.{i}.3\"",
                f"  resolved \"https://registry.yarnpkg.com/pkg-{i}/-/pkg-{i}-1.{i}.3.tgz\"",
                f"  integrity sha512-{digest}", ""]
    return "\n".join(out).encode()


def _source_with_token(f: _Fake) -> bytes:
    return _text(f"""
# Local development settings. Do not use in production.
GITHUB_TOKEN = "ghp_{f.alnum(36)}"
DEBUG = True
""")


def _fixture_with_token(f: _Fake) -> bytes:
    return _text(f"""
HTTP/1.1 200 OK
Content-Type: application/json

{{"token": "xoxb-{f.digits(12)}-{f.digits(13)}-{f.alnum(24)}", "ok": true}}
""")


def _fixture_with_pem(f: _Fake) -> bytes:
    return f.pem("PRIVATE KEY", _PKCS8_RSA_PREFIX, 10).encode()


def _csv_user_export(f: _Fake) -> bytes:
    rows = "".join(f"{f.uuid()},user{i}@example.com,{f.hex(40)},2024-05-{i + 1:02d}\n"
                   for i in range(25))
    return ("id,email,avatar_sha1,created\n" + rows).encode()


KINDS: dict[str, tuple[str, Callable[[_Fake], bytes]]] = {
    # kind: (one-line description, maker); the sensitive ones first
    "gcp-service-account": ("GCP service-account key JSON with a private key",
                            _gcp_service_account),
    "gcp-authorized-user": ("gcloud ADC user credentials with client secret and refresh token",
                            _gcp_authorized_user),
    "npmrc-auth-token": ("npm config lines with an _authToken", _npmrc_auth_token),
    "docker-config-auths": ("Docker config.json with a base64 user:password auth",
                            _docker_config_auths),
    "kubeconfig-token": ("kubeconfig with a service-account bearer token", _kubeconfig_token),
    "database-yml-password": ("Rails database.yml with a literal password", _database_yml_password),
    "spring-properties-password": ("Spring application.properties with a datasource password",
                                   _spring_properties_password),
    "spring-yaml-password": ("Spring application.yml with literal passwords",
                             _spring_yaml_password),
    "maven-settings-password": ("Maven settings.xml with a server password",
                                _maven_settings_password),
    "gradle-properties-signing": ("gradle.properties with signing and publishing passwords",
                                  _gradle_properties_signing),
    "bundle-config-credentials": ("Bundler config with gem-server credentials",
                                  _bundle_config_credentials),
    "pip-conf-credentials": ("pip.conf whose index URL carries a token", _pip_conf_credentials),
    "nuget-config-password": ("NuGet.Config with a ClearTextPassword", _nuget_config_password),
    "appsettings-connection-string": ("ASP.NET appsettings with a SQL password",
                                      _appsettings_connection_string),
    "web-config-connection-string": ("IIS web.config with a SQL password",
                                     _web_config_connection_string),
    "mycnf-client-password": ("MySQL option file with a [client] password", _mycnf_client_password),
    "k8s-secret": ("Kubernetes Secret manifest with base64 data", _k8s_secret),
    "jupyter-config-password": ("Jupyter server config with a hashed password",
                                _jupyter_config_password),
    "wrangler-toml-secret": ("wrangler.toml with a live Stripe key in [vars]",
                             _wrangler_toml_secret),
    "gitlab-runner-config": ("GitLab Runner config.toml with a runner token",
                             _gitlab_runner_config),
    "compose-literal-password": ("Compose file with a literal database password",
                                 _compose_literal_password),
    "env-style-config": ("KEY=value lines with live API keys", _env_style_config),
    "pem-private-key": ("PEM RSA private key", _pem_private_key),
    "aws-iam-user-csv": ("AWS console download of an IAM user's access key (CSV)",
                         _aws_iam_user_csv),
    "aws-pair-in-notes": ("notes holding an AWS access key id and its secret key",
                          _aws_pair_in_notes),
    "github-token-text": ("a GitHub token alone in a text file", _github_token_text),
    "credentials-dump-text": ("an AWS key pair, a password and a GitHub token",
                              _credentials_dump_text),
    "slack-token-in-doc": ("a Markdown page with a Slack bot token in a code block",
                           _slack_token_in_doc),
    "stripe-key-in-script": ("a shell script exporting a live Stripe key",
                             _stripe_key_in_script),
    "gitlab-token-in-log": ("a job log with a GitLab token in a clone URL", _gitlab_token_in_log),
    "anthropic-key-in-example": ("an example env file holding a real-looking Anthropic key",
                                 _anthropic_key_in_example),
    "pem-in-markdown": ("a Markdown page with an OpenSSH private key", _pem_in_markdown),
    # ordinary kinds
    "package-json": ("ordinary package.json", _package_json),
    "ci-yaml": ("ordinary CI pipeline YAML", _ci_yaml),
    "github-actions-secrets-refs": ("workflow that only references ${{ secrets.* }}",
                                    _github_actions_secrets_refs),
    "database-yml-env": ("Rails database.yml reading the password from ENV", _database_yml_env),
    "spring-properties-plain": ("Spring properties with ${...} placeholders",
                                _spring_properties_plain),
    "maven-settings-mirrors": ("Maven settings.xml with mirrors only", _maven_settings_mirrors),
    "gradle-properties-jvmargs": ("gradle.properties with build flags only",
                                  _gradle_properties_jvmargs),
    "bundle-config-path": ("Bundler config with paths only", _bundle_config_path),
    "pip-conf-plain": ("pip.conf without credentials", _pip_conf_plain),
    "nuget-config-sources": ("NuGet.Config with package sources only", _nuget_config_sources),
    "appsettings-logging": ("ASP.NET appsettings with logging only", _appsettings_logging),
    "web-config-plain": ("IIS web.config without connection strings", _web_config_plain),
    "mycnf-server-tuning": ("MySQL option file with server tuning only", _mycnf_server_tuning),
    "k8s-sealed-secret": ("Bitnami SealedSecret (encrypted for the cluster, made to be committed)",
                          _k8s_sealed_secret),
    "k8s-deployment": ("Kubernetes Deployment referencing a Secret by name", _k8s_deployment),
    "jupyter-config-plain": ("Jupyter server config without a password", _jupyter_config_plain),
    "wrangler-toml-plain": ("wrangler.toml with ordinary vars", _wrangler_toml_plain),
    "ssh-client-config": ("ssh_config naming an identity file", _ssh_client_config),
    "git-config": ("a repository's git config", _git_config),
    "compose-env-refs": ("Compose file using Docker secrets files", _compose_env_refs),
    "tokenizer-json": ("Hugging Face tokenizer.json", _tokenizer_json),
    "hf-model-config": ("Hugging Face model config.json", _hf_model_config),
    "vscode-settings": ("VS Code settings.json", _vscode_settings),
    "firebase-google-services": ("Firebase google-services.json (client API key, public by design)",
                                 _firebase_google_services),
    "keynote-zip": ("Keynote document: a zip archive", _keynote_zip),
    "aws-docs-example": ("documentation with AWS's published example key pair",
                         _aws_docs_example),
    "aws-key-id-only": ("a table of AWS access key ids without their secrets", _aws_key_id_only),
    "token-placeholders-doc": ("documentation of token formats with placeholders",
                               _token_placeholders_doc),
    "hash-list": ("SHA-256 checksums", _hash_list),
    "base64-blob-text": ("base64 of random bytes, 76 columns", _base64_blob_text),
    "lockfile-integrity": ("a yarn.lock with sha512 integrity hashes", _lockfile_integrity),
    "source-with-token": ("Python settings holding a GitHub token (stored: source code)",
                          _source_with_token),
    "fixture-with-token": ("a recorded HTTP response holding a Slack token (a test fixture)",
                           _fixture_with_token),
    "fixture-with-pem": ("a PEM private key made for tests (a test fixture)", _fixture_with_pem),
    "csv-user-export": ("a CSV export with UUIDs, e-mails and SHA-1 hashes", _csv_user_export),
}


def content_for(kind: str) -> bytes:
    """The fake bytes of a file of `kind` (a key of KINDS); KeyError for an unknown kind."""
    return KINDS[kind][1](_Fake(kind))


if __name__ == "__main__":  # print one kind, or list them all
    import sys

    if len(sys.argv) > 1:
        sys.stdout.buffer.write(content_for(sys.argv[1]))
    else:
        for name, (about, _) in KINDS.items():
            print(f"{name}\t{about}")
