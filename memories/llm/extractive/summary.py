"""Extractive summaries: the text's own most central sentences, never its markup.

Markdown headings, list markers, emphasis, link targets and code fences, and navigation
lines ("Home | About | Subscribe"), are what a note is laid out with, not what it says.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ... import textutil

_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LIST_MARK = re.compile(r"^\s{0,12}(?:[-*+•]|\d{1,3}[.)])\s{1,4}")
_LINK = re.compile(r"!?\[([^\]\n]{0,300})\]\([^)\n]{0,2000}\)")
_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3}|`{1,2})(?=\S)([^*_`\n]{1,500}?)(?<=\S)\1")
_TABLE_RULE = re.compile(r"^\s{0,3}\|?\s{0,3}:?-{2,}")
_NAV_SEPARATORS = re.compile(r"\s[|·•»›]\s")


def plain_text(text: str) -> str:
    """The text without its markup: headings kept as their own lines (so they can be told
    apart), fenced code, rules and navigation lines dropped."""
    out = []
    in_fence = False
    for line in (text or "").splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or _TABLE_RULE.match(line) or line.strip() in ("---", "***", "___"):
            continue
        if len(_NAV_SEPARATORS.findall(f" {line} ")) >= 2 and len(line.split()) <= 20:
            continue  # "Home | About | Subscribe"
        line = _LIST_MARK.sub("", line)
        line = _LINK.sub(r"\1", line)
        line = _EMPHASIS.sub(r"\2", line)
        out.append(line.replace("|", " ").rstrip() if line.lstrip().startswith("|") else line.rstrip())
    return "\n".join(out)


def _candidates(text: str) -> list[str]:
    """Sentences worth quoting: not headings, not one- or two-word labels."""
    kept = []
    paragraphs = []
    for line in plain_text(text).split("\n"):
        if _HEADING.match(line):
            paragraphs.append("\n\n")  # a heading ends what came before it
            continue
        paragraphs.append(line + "\n")
    for sentence in textutil.sentences("".join(paragraphs)):
        if len(sentence.split()) >= 3 or sentence.rstrip().endswith((".", "!", "?")):
            kept.append(sentence)
    return kept


def summarize(text: str, max_sentences: int = 2, max_chars: int = 320) -> str:
    sents = _candidates(text)
    if not sents:
        sents = textutil.sentences(plain_text(text).replace("#", " "))
    if not sents:
        return text.strip()[:max_chars]
    if len(sents) <= max_sentences and len(" ".join(sents)) <= max_chars:
        return " ".join(sents)
    freq = Counter(textutil.terms(" ".join(sents)))

    def centrality(item):
        index, sentence = item
        terms = textutil.terms(sentence)
        if not terms:
            return 0.0
        # Early sentences carry the topic more often (a small lead bonus).
        return sum(freq[t] for t in set(terms)) / math.sqrt(len(terms)) + (1.0 if index == 0 else 0.0)

    best = sorted(enumerate(sents[:2000]), key=centrality, reverse=True)[:max_sentences]
    chosen = [s for _, s in sorted(best)]
    out = " ".join(chosen)
    return out if len(out) <= max_chars else out[: max_chars - 1].rsplit(" ", 1)[0] + "…"
