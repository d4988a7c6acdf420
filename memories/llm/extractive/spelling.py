"""A word a line spells its own way: a typo ("membrship", "intervew"), a clipping ("num",
"info") or a contraction ("bday", "appt", "hrs") of a word the question says.

People who jot notes or text in a hurry spell that way, and a line that never spells the
question's word is set aside as not saying it. Which line words may stand so is decided by
statistics, not a list: only a word that is no word of the language, or a rare one, in a
spelling dictionary's word frequencies (pyspellchecker's lists, counted over running
text). "bay" is a word, so it is never "birthday" contracted; "bday" is not. A name the
owner writes is no word of the language either, which is why the match itself is strict:
one edit from a word of five letters or more (two from nine), the word's beginning, or its
letters in order with the same first and last.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from spellchecker import SpellChecker

from ... import textutil

# A word used less often than this in running text counts as a writer's own spelling:
# "mgr" (3e-8) and "xmas" (1.5e-7) are in the dictionary as rare words; "quid" (5e-6),
# "pass" (1e-4) and "mo" (3.6e-6) are words people write as words.
RARE = 1e-6
# The languages pyspellchecker ships word frequencies for (of those the notes are read in).
LANGUAGES = frozenset({"en", "de", "es", "fr", "it", "nl", "pt", "ru"})
# A thing made a noun of a noun keeps its thing (said_as._SAME_THING_SUFFIXES): the word
# "membrship" is read as "member" misspelt too.
_SUFFIXES = ("ship", "hood")


@cache
def _dictionary(lang: str) -> SpellChecker:
    return SpellChecker(language=lang, distance=1)


def own_spelling(word: str, languages: Iterable[str] = ("en",)) -> bool:
    """Whether the word (lower case) is rare or no word at all in every one of the languages."""
    checked = [lang for lang in dict.fromkeys(languages) if lang in LANGUAGES] or ["en"]
    return all(_dictionary(lang).word_usage_frequency(word) < RARE for lang in checked)


def _edits(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance (a swap of two letters is one edit), or
    limit + 1 once it is past the limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before = None
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


def _in_order(short: str, long: str) -> bool:
    letters = iter(long)
    return all(c in letters for c in short)


def spells(written: str, asked: str) -> bool:
    """Whether `written` (a line's word, lower case) is `asked` (a question's word) typed
    with one slip, clipped, or contracted."""
    if written == asked or len(written) < 3 or not written.isalpha() or not asked.isalpha():
        return False
    slips = 2 if len(asked) >= 9 else 1
    if len(asked) >= 5 and _edits(written, asked, slips) <= slips:
        return True
    if len(asked) >= len(written) + 2:
        if asked.startswith(written):
            return True  # "num", "info"
        if written[0] == asked[0] and written[-1] == asked[-1] and _in_order(written, asked):
            return True  # "bday", "appt", "hrs"
    for suffix in _SUFFIXES:
        if written.endswith(suffix) and len(written) - len(suffix) >= 4:
            return spells(written[: -len(suffix)], asked)
    return False


def respelled(line_words: Iterable[str], asked_words: Iterable[str], languages: Iterable[str] = ("en",)) -> frozenset[str]:
    """The stems of the asked words the line writes its own way (its words, lower case)."""
    asked = [w for w in dict.fromkeys(asked_words) if len(w) >= 4 and w.isalpha()]
    if not asked:
        return frozenset()
    languages = tuple(languages)
    out = set()
    for word in dict.fromkeys(line_words):
        if word in asked or len(word) < 3 or not word.isalpha():
            continue
        matched = [a for a in asked if spells(word, a)]
        if matched and own_spelling(word, languages):
            out.update(textutil.stem(a) for a in matched)
    return frozenset(out)
