"""Secret redaction of free text, measured on tests/corpus: the marked secrets disappear, the
innocent lines stay as they are, the content check tells credential files from ordinary ones,
and no input is slow."""

from __future__ import annotations

import base64
import importlib.util
import random
import re
import string
import subprocess
import sys
from itertools import pairwise

import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from gitckpt.safety.redact import MARK, has_secret, redact, spans
from gitckpt.safety.secret_rules import RULES

CORPUS = REPO / "tests" / "corpus"


def _lines(name: str) -> list[str]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return [line.replace("\\n", "\n") for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def _secrets(name: str = "secret_strings.txt") -> list[tuple[str, str]]:
    """(input text, the marked secret) for each line of a secret strings file."""
    out = []
    for line in _lines(name):
        found = re.findall("⟦(.*?)⟧", line, re.S)
        assert len(found) == 1, f"one marked secret per line: {line!r}"
        out.append((line.replace("⟦", "").replace("⟧", ""), found[0]))
    return out


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATED = _module("make_secrets")
# The tuning part: written lines and generated ones; the rules may be tuned on these.
SECRETS = _secrets()
INNOCENT = _lines("innocent_strings.txt")
GENERATED_SECRETS = GENERATED.secret_lines()
GENERATED_INNOCENT = GENERATED.innocent_lines()
# Tuning part A: written by an independent author who never saw the rules, measured on them
# once (12.0% of secrets kept, 1.0% of innocent lines changed), then made tuning data.
TUNING_A_SECRETS = _secrets("tuning_a_secret_strings.txt")
TUNING_A_INNOCENT = _lines("tuning_a_innocent_strings.txt")
# The held-out part: never used for tuning (tests/corpus/README.md), only measured.
HELDOUT_SECRETS = _secrets("heldout/secret_strings.txt")
HELDOUT_INNOCENT = _lines("heldout/innocent_strings.txt")
BAR = 2.0  # percent of secrets kept, and of innocent lines changed, at most


def _kept(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(text, secret) for text, secret in pairs if secret in redact(text)[0]]


def _changed(texts: list[str]) -> list[tuple[str, str]]:
    return [(text, redact(text)[0]) for text in texts if redact(text) != (text, 0)]


def _contents() -> list[tuple[str, str, bool, str]]:
    """(path, kind, expected out, the first 8 KiB as text) for the rows of content_checked.tsv
    that `has_secret` decides: generic config names (the other rows are decided by the file
    check of gitckpt.safety.file_secrets, or are source code and test fixtures)."""
    from gitckpt.safety.sensitive import classify

    module = _module("make_contents")
    rows = []
    for line in (CORPUS / "content_checked.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            path, kind, expected = line.split("\t")
            if classify(path)[0] not in ("content", "key"):
                continue
            text = module.content_for(kind).decode(errors="replace")[:8192]
            rows.append((path, kind, expected == "out", text))
    return rows


def _pct(n: int, total: int) -> float:
    return 100.0 * n / total if total else 0.0


# --- the corpus figures ----------------------------------------------------------------------


_PARTS = {"written": (SECRETS, INNOCENT), "generated": (GENERATED_SECRETS, GENERATED_INNOCENT),
          "tuning A": (TUNING_A_SECRETS, TUNING_A_INNOCENT)}


@pytest.mark.parametrize("part", list(_PARTS))
def test_the_tuning_part_keeps_at_most_2_percent_and_changes_at_most_2_percent(part):
    secrets, innocent = _PARTS[part]
    kept, changed = _kept(secrets), _changed(innocent)
    figures = (f"tuning part ({part}): secrets kept {len(kept)}/{len(secrets)} "
               f"({_pct(len(kept), len(secrets)):.1f}%), innocent lines changed "
               f"{len(changed)}/{len(innocent)} ({_pct(len(changed), len(innocent)):.1f}%)")
    print(figures)
    for text, secret in kept:
        print(f"  kept: {secret[:40]!r} in {text[:100]!r}")
    for text, out in changed:
        print(f"  changed: {text!r} -> {out!r}")
    why = f"{figures}; kept {[t[:80] for t, _ in kept]}; changed {changed}"
    assert _pct(len(kept), len(secrets)) <= BAR, why
    assert _pct(len(changed), len(innocent)) <= BAR, why


def test_the_held_out_part_keeps_at_most_2_percent_and_changes_at_most_2_percent():
    """The held-out lines were written before the rules and are never used to tune them: when
    one fails, write a different line of its family into the tuning part and work from that."""
    # Only the counts are shown, never the lines: a failure must not invite tuning on them.
    k, c = len(_kept(HELDOUT_SECRETS)), len(_changed(HELDOUT_INNOCENT))
    n, m = len(HELDOUT_SECRETS), len(HELDOUT_INNOCENT)
    figures = (f"held-out part: secrets kept {k}/{n} ({_pct(k, n):.1f}%), "
               f"innocent lines changed {c}/{m} ({_pct(c, m):.1f}%)")
    print(figures)
    within = _pct(k, n) <= BAR and _pct(c, m) <= BAR
    assert within, figures


def test_every_rule_has_generated_values_that_it_finds_itself():
    from gitckpt.safety.redact import first_secret

    assert set(GENERATED.FORMATS) | set(GENERATED.CONTEXTS) == {rule.id for rule in RULES}
    assert GENERATED.secret_lines() == GENERATED_SECRETS  # seeded: the same lines every run
    assert GENERATED.innocent_lines() == GENERATED_INNOCENT
    r = GENERATED._R("every rule")
    missed = []
    for rule, (make, _) in GENERATED.FORMATS.items():
        for _ in range(5):
            value = make(r).replace("\\n", "\n")
            hit = first_secret(f"value: {value} (end)", frozenset((rule,)))
            if hit is None or (hit[1] not in value and value not in hit[1]):
                missed.append((rule, value[:40]))
    assert not missed, missed


def test_each_secret_line_counts_one_secret():
    wrong = [(text[:80], redact(text)[1]) for text, _ in SECRETS if redact(text)[1] != 1]
    assert not wrong, f"each corpus line holds exactly one secret: {wrong}"


@pytest.mark.parametrize("text", [t for t, _ in SECRETS] + INNOCENT
                         + [t for t, _ in GENERATED_SECRETS] + GENERATED_INNOCENT
                         + [t for t, _ in TUNING_A_SECRETS] + TUNING_A_INNOCENT)
def test_redaction_is_idempotent(text):
    out, n = redact(text)
    assert redact(out) == (out, 0)
    assert out.count(MARK) - text.count(MARK) == n


def test_spans_are_sorted_disjoint_and_what_redact_removes():
    for text, secret in SECRETS + GENERATED_SECRETS:
        found = spans(text)
        assert found == sorted(found)
        assert all(a < b < c < d for (a, b), (c, d) in pairwise(found))
        assert any(text[a:b].find(secret) >= 0 or secret.find(text[a:b]) >= 0
                   for a, b in found), text
        rebuilt, last = "", 0
        for a, b in found:
            rebuilt, last = rebuilt + text[last:a] + MARK, b
        assert rebuilt + text[last:] == redact(text)[0]
    assert all(spans(text) == [] for text in INNOCENT + GENERATED_INNOCENT)


def test_has_secret_tells_credential_files_from_ordinary_ones():
    rows = _contents()
    out_rows = [r for r in rows if r[2]]
    in_rows = [r for r in rows if not r[2]]
    missed = [f"{p} ({k})" for p, k, _, text in out_rows if not has_secret(text)]
    flagged = [f"{p} ({k})" for p, k, _, text in in_rows if has_secret(text)]
    caught = len(out_rows) - len(missed)
    figures = (f"has_secret: {caught}/{len(out_rows)} credential files caught "
               f"({_pct(caught, len(out_rows)):.1f}%), {len(flagged)}/{len(in_rows)} ordinary "
               f"files flagged ({_pct(len(flagged), len(in_rows)):.1f}%)")
    print(figures)
    assert _pct(caught, len(out_rows)) >= 90.0, f"{figures}; missed {missed}; flagged {flagged}"
    assert _pct(len(flagged), len(in_rows)) <= 5.0, f"{figures}; missed {missed}; flagged {flagged}"


# --- behaviour the issue names ---------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "MAX_KEY=5", "PRIMARY_KEY=id", "SORT_KEY=created_at", "NEXT_PAGE_TOKEN=pageToken",
    "RESET_PASSWORD=enabled", "DEFAULT_API_KEY=None", "the regex PASSWORD=\\S+ was too greedy",
    "the --token flag is read from the environment", "a module named xoxo-greeting-card",
    "see sk-learn", "the ghp_ prefix", "API_KEY=${API_KEY}", "TOKEN=$TOKEN",
    "TOKEN=<your-token>", "SECRET=xxxxxxxx", "PASSWORD=********", "password: ''",
    "token: null", "SECRET_KEY=os.environ['SECRET_KEY']", "key = process.env.API_KEY",
    "API_KEY=ENV['API_KEY']", "password: '{{ secrets.DB_PASSWORD }}'", "DB_PASSWORD=%(pw)s",
    "TOKEN_TTL=5", "commit 8e3b1c77fc4c011f1bd38f1f34920fbd01f40072",
    "request 1d0b6d6d-775d-42b2-aca1-9961aaa37dba", "sha256:" + "ab" * 32,
    "aGVsbG8gd29ybGQ= is base64", "PUBLIC_KEY_PATH=keys/jwt.pub", "token_type: bearer",
    "Authorization: Bearer <token>", "docker run -p 8080:80 nginx", "mysql -u root -p shop",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    f"API_KEY={MARK}", MARK, f"{MARK}{MARK}",
])
def test_placeholders_references_and_names_stay(text):
    assert redact(text) == (text, 0)


def _fake(alphabet: str, n: int, seed: str) -> str:
    r = random.Random(seed)
    return "".join(r.choice(alphabet) for _ in range(n))


_AN = string.ascii_letters + string.digits


@pytest.mark.parametrize(("prefix", "n", "alphabet"), [
    ("ghp_", 36, _AN), ("glpat-", 20, _AN), ("xoxb-1234567890-", 24, _AN), ("sk_live_", 24, _AN),
    ("AIza", 35, _AN), ("npm_", 36, _AN), ("hf_", 34, string.ascii_letters),
    ("sk-proj-", 80, _AN), ("dop_v1_", 64, "0123456789abcdef"), ("AKIA", 16, "ABCDEFXYZ234567"),
])
def test_known_prefixes_are_redacted_anywhere(prefix, n, alphabet):
    token = prefix + _fake(alphabet, n, prefix)
    for text in (f"used {token} today", f"({token})", f'"{token}"', f"x={token};"):
        out, count = redact(text)
        assert token not in out, text
        assert count == 1, text


def test_public_formats_are_redacted_but_do_not_mark_a_file():
    key = "AIza" + _fake(_AN, 35, "public")
    assert redact(f"apiKey: {key}") == (f"apiKey: {MARK}", 1)
    assert not has_secret(f'{{"api_key": [{{"current_key": "{key}"}}]}}')
    assert has_secret(f'{{"password": "{_fake(_AN, 20, "pw")}"}}')


def test_a_sealed_secret_is_not_a_secret():
    sealed = "AgB" + _fake(_AN + "+/", 600, "sealed") + "=="
    assert not has_secret(f"kind: SealedSecret\nspec:\n  encryptedData:\n    password: {sealed}\n")


_HEX32 = [_fake("0123456789abcdef", 32, f"hex {i}") for i in range(2)]


@pytest.mark.parametrize(("text", "value"), [
    ("Le mot de passe est Xy9#kLm2pQ, et la clave es Ab3!cD4efGh", "Ab3!cD4efGh"),
    ("Das Passwort ist Qw3#rT5yU7 und das Kennwort lautet Zx8!cV6bN4", "Zx8!cV6bN4"),
    ("gpg --batch --passphrase 'lantern meadow cobalt 42' -d x.gpg", "lantern meadow cobalt 42"),
    ("password: maple-granite-quartz-47", "maple-granite-quartz-47"),
    ("Tried logging in as root with NebulaKiwi22# first", "NebulaKiwi22#"),
    ("client = Client('AC" + _HEX32[0] + "', '" + _HEX32[1] + "')", _HEX32[1]),
    ("ipmitool -H 10.0.0.5 -U ADMIN -P hkELeYtYxiie power status", "hkELeYtYxiie"),
])
def test_a_second_secret_of_the_families_tuned_on_part_a_goes_too(text, value):
    assert value not in redact(text)[0]


@pytest.mark.parametrize("text", [
    "Logged in as ci with WebAuthn2FA and the build started.",
    "Use ed25519-sk as the key type for new hardware keys.",
    "Key ID: 8a6b2c4d-1e3f-4a5b-9c7d-0e1f2a3b4c5d",
    "gpg: key 3AA5C34371567BD2: public key imported",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/api-token-AbC123",
    "Targets: x86_64 / aarch64-linux", "password: db-password-prod", "password: see-the-wiki",
    "Twilio AC" + _HEX32[0] + " request " + _HEX32[1] + " failed",
    "The seed phrase must be written on paper and kept in the office safe.",
])
def test_look_alikes_of_the_families_tuned_on_part_a_stay(text):
    assert redact(text) == (text, 0)


def test_anchored_rules_find_what_their_patterns_find():
    """A rule with an anchor searches windows around it (or its keywords): on every corpus
    line, alone and run together, it finds the same matches as its pattern on the whole text."""
    texts = [t for t, _ in SECRETS + GENERATED_SECRETS + TUNING_A_SECRETS]
    texts += INNOCENT + GENERATED_INNOCENT + TUNING_A_INNOCENT
    texts.append(" ".join(texts))
    anchored = [rule for rule in RULES if rule.anchor is not None]
    assert len(anchored) >= 8
    for rule in anchored:
        for text in texts:
            found = [m.span() for m in rule.finditer(text, text.lower())]
            assert found == [m.span() for m in rule.regex.finditer(text)], (rule, text[:80])


def _redact_by_full_passes(text: str) -> tuple[str, int]:
    """redact as it was: every pass searches the whole text."""
    count = 0
    for _ in range(4):
        found = spans(text)
        if not found:
            break
        count += len(found)
        for start, end in reversed(found):
            text = text[:start] + MARK + text[end:]
    return text, count


def test_later_passes_near_the_replacements_find_what_full_passes_find():
    """The second pass searches only the lines near a replacement (in a text sparse with
    secrets): the same result as searching all of it, on 40 KB texts with a few secrets, some
    of them run into a token that only the replacement exposes."""
    r = random.Random("near")
    # a Stripe webhook secret is at most 100 characters: a token run into it is found only
    # once the secret is replaced (its first character no longer follows a letter)
    exposed = ("rotated whsec_" + _fake(_AN, 100, "whsec") + "ghp_" + _fake(_AN, 36, "near")
               + " today")
    assert len(spans(exposed)) == 1
    assert redact(exposed)[1] == 2
    for n in range(12):
        lines = r.choices(INNOCENT + TUNING_A_INNOCENT, k=400)
        for line in [exposed, *r.choices([t for t, _ in TUNING_A_SECRETS], k=3)]:
            lines.insert(r.randrange(len(lines)), line)
        text = "\n".join(lines)
        assert len(text) > 20_000
        assert redact(text) == _redact_by_full_passes(text), n


# --- the rule table --------------------------------------------------------------------------


def test_every_rule_is_well_formed():
    from gitckpt.safety import redact as module

    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert rule.source, rule
        assert rule.check in module._CHECKS, rule
        assert all(k == k.lower() for k in rule.keywords), rule
        assert rule.regex.groups >= max(rule.groups), rule


def test_importing_redact_compiles_no_rule():
    code = ("import sys, gitckpt.safety.redact as r; r.clean('x'); "
            "assert 'gitckpt.safety.secret_rules' not in sys.modules and not r._LAZY")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- speed and bad input ---------------------------------------------------------------------

_M = 1_000_000


def _adversarial(name: str) -> str:
    r = random.Random(name)
    return {
        "random printable": lambda: "".join(r.choice(string.printable) for _ in range(_M)),
        "a": lambda: "a" * _M,
        "=": lambda: "=" * _M,
        "password=": lambda: "password=" * (_M // 9),
        "base64": lambda: base64.b64encode(r.randbytes(_M * 3 // 4)).decode(),
        "token: ": lambda: "token: " * (_M // 7),
        "key is ": lambda: "key is " * (_M // 7),
        "Authorization: ": lambda: "Authorization: " * (_M // 15),
        "BEGIN PRIVATE KEY": lambda: "-----BEGIN PRIVATE KEY-----" * (_M // 27),
        "BEGIN then base64": lambda: "-----BEGIN RSA PRIVATE KEY-----\n"
                                     + base64.b64encode(r.randbytes(_M * 3 // 4)).decode(),
        "://a:": lambda: "://a:" * (_M // 5),
        "mysql -p": lambda: "mysql -p " * (_M // 9),
        "curl x": lambda: "curl x " * (_M // 7),
        "eyJ": lambda: ("eyJ" + "a" * 20 + ".") * (_M // 24),
        "digits:": lambda: "1234567:" * (_M // 8),
        "secrets corpus": lambda: ("\n".join(t for t, _ in SECRETS) * 80)[:_M],
    }[name]()


@pytest.mark.slow  # a megabyte of text per case
@pytest.mark.parametrize("name", [
    "random printable", "a", "=", "password=", "base64", "token: ", "key is ", "Authorization: ",
    "BEGIN PRIVATE KEY", "BEGIN then base64", "://a:", "mysql -p", "curl x", "eyJ", "digits:",
    "secrets corpus"])
def test_a_megabyte_of_adversarial_text_is_redacted_at_once(name):
    """Each case a pattern could backtrack on, a megabyte of it, redacted, and nothing left
    to redact after (the time it takes is bench/'s to measure, not a limit here: a test with
    a limit in seconds fails on a loaded machine and proves nothing on a fast one)."""
    text = _adversarial(name)
    out, _ = redact(text)
    assert redact(out)[1] == 0


def test_eight_kib_of_the_corpus_is_redacted_the_same_twice():
    text = ("\n".join(t for t, _ in SECRETS) + "\n" + "\n".join(INNOCENT))[:8192]
    out, found = redact(text)
    assert found > 0
    assert redact(text) == (out, found)


_PIECES = st.sampled_from([*"aZ09=:_-./@ \"'\n", "key", "token", "password", "ghp_", "://",
                           "Bearer ", "x7Qp2", MARK])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_any_text_redacts_consistently(text):
    out, n = redact(text)
    assert redact(out) == (out, 0)
    assert out.count(MARK) - text.count(MARK) == n
    found = spans(text)
    assert all(a < b < c < d for (a, b), (c, d) in pairwise(found))
