"""The words arm's speed-ups give what the plain way gives: BM25's stem finder
(bm25._starts_finder) and the owner's word lookups remembered between questions
(sqlite_search's cache)."""

from __future__ import annotations

import random
import re
from collections import Counter

from memories.recall import bm25


def _regex_finds(needles, text):
    ordered = sorted(needles, key=len, reverse=True)
    return re.compile(r"(?<![^\W_])(" + "|".join(map(re.escape, ordered)) + r")").findall(text)


def test_the_stem_finder_finds_what_the_regex_finds():
    rng = random.Random(26)
    alphabet = list("abcdeé ñ_-'1 2.:") + ["ß", "ö", "σ", "ж", "\u2044", "\n"]
    stems = ["ab", "abc", "abcd", "b", "c1", "ca", "é", "ñab", "2", "bcd", "ж", "öσ"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        needles = set(rng.sample(stems, rng.randint(1, 5)))
        assert Counter(bm25._starts_finder(needles)(text)) == Counter(_regex_finds(needles, text)), (needles, text)
    # A needle that is not all letters and digits (a fold can give one): the regex's own answer.
    assert Counter(bm25._starts_finder({"1\u20442", "1"})("1\u20442 cup, 1 egg")) == Counter(["1\u20442", "1"])


def test_a_longer_stem_takes_its_place_from_a_shorter_one():
    find = bm25._starts_finder({"launch", "launche", "la"})
    assert sorted(find("launched the launch; la la-land; relaunch _launch")) == sorted(
        ["launche", "launch", "la", "la", "la", "launch"]  # "la-land" twice; a word starts after "_"
    )
