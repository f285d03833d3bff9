"""The glob sets that name credential files answer as the one regex they replace: fnmatch's
translation of every pattern, joined, matched against the whole name."""

from __future__ import annotations

import fnmatch
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gitckpt.safety import sensitive
from gitckpt.safety.globs import Globs

LISTS = {"shared": sensitive._SHARED, "names": sensitive._NAMES, "words": sensitive._WORDS}
EDGE = ["*", "**", "*a*", "a*b", "ab*ba", "*.x.*", "a?c", "[ab]*", "*[!a]", "x]y", "a\\b",
        "", "*a*b*", "a**", "**a"]


def regex(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def pieces(patterns: list[str]) -> list[str]:
    """The literal parts of the patterns, and a few characters besides: the names that come
    near a pattern's edges."""
    out = {"", ".", "a", "b", "x", "-", "_", "/", "\n", "0", "9", "é"}
    for p in patterns:
        out.update(s for s in re.split(r"[*?\[\]]", p) if s)
        out.add(p.replace("*", ""))
    return sorted(out)


def names(patterns: list[str]):
    return st.lists(st.sampled_from(pieces(patterns)), max_size=5).map("".join)


def test_every_pattern_and_its_neighbours_match_as_the_regex():
    for label, patterns in {**LISTS, "edge": EDGE}.items():
        globs, want = Globs(patterns), regex(patterns)
        for p in patterns:
            for name in {p, p.replace("*", ""), p.replace("*", "zz"), p[1:], p[:-1], p + "x",
                         "x" + p, p.replace("*", "", 1), p.replace("?", "q")}:
                assert globs.match(name) == bool(want.match(name)), (label, p, name)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(LISTS)), st.data())
def test_the_credential_name_sets_agree_with_their_regex(label, data):
    patterns = LISTS[label]
    name = data.draw(names(patterns))
    assert Globs(patterns).match(name) == bool(regex(patterns).match(name))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet="ab.*?[]!-", max_size=6), min_size=1, max_size=4),
       st.text(alphabet="ab.-]![", max_size=8))
def test_any_patterns_agree_with_their_regex(patterns, name):
    try:
        want = regex(patterns)
    except re.error:  # a class fnmatch cannot translate into a valid regex; not ours to say
        return
    assert Globs(patterns).match(name) == bool(want.match(name))


def test_importing_the_rules_compiles_nothing_and_a_plain_name_needs_no_regex():
    g = Globs(sensitive._NAMES)
    assert g.match(".env.local")
    assert g.match("x.pem")
    assert g.match("id_rsa")
    assert not g.match("readme.txt")
    assert g._re is None  # every plain pattern said no without the regex of the others
    assert g.match("wg0.conf")
    assert g._re is not None


#: (the regex, whether it must match the whole text)
GUARDED = {"says secret": (sensitive._SAYS_SECRET, True),
           "credential folder": (sensitive._DIR_PATHS, False),
           "secrets folder": (sensitive._SECRET_DIRS, False),
           "test folder": (sensitive._TEST_DIRS, False)}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(GUARDED)), st.data())
def test_every_text_a_guarded_regex_matches_holds_one_of_the_words_checked_first(label, data):
    pattern, whole = GUARDED[label]
    assert pattern.words, label
    text = data.draw(st.from_regex(pattern.pattern, fullmatch=whole))
    assert any(w in text for w in pattern.words), (label, text)
