"""The recalled memories cut into the sentences the extractive answer picks from."""

from __future__ import annotations

from dataclasses import dataclass

from ... import textutil
from ..base import AnswerContext, MemoryNote
from .summary import plain_text

MAX_SENTENCES = 4000


@dataclass
class Sentence:
    memory: MemoryNote
    rank: int
    text: str
    stems: frozenset
    score: float = 0.0
    relevant: bool = False
    following: str = ""  # the next sentence of the same memory
    preceding: str = ""  # the sentence before it in the same memory
    lead: str = ""  # quoted before it: the sentence before, when that one gives the value asked
    coverage: float = 0.0  # the share (by rarity) of what is asked, names aside, its memory holds
    margin: float = -1.0  # how much closer it is to the question than to one asking nothing
    by_date: bool = False


def sentences_of(context: AnswerContext) -> list[Sentence]:
    out = []
    for rank, m in enumerate(context.memories):
        parts = [p.strip() for p in textutil.sentences(plain_text(m.text or m.summary)) or [m.summary]]
        parts = [p for p in parts if len(p) >= 3]
        for index, part in enumerate(parts):
            following = parts[index + 1][:1000] if index + 1 < len(parts) else ""
            preceding = parts[index - 1][:1000] if index else ""
            out.append(Sentence(m, rank, part[:1000], frozenset(textutil.terms(part)), following=following, preceding=preceding))
            if len(out) >= MAX_SENTENCES:
                return out
    return out
