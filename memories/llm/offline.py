"""The built-in offline engine: deterministic, no network, no model.

It is extractive, not a language model: summaries are the input's own most central
sentences, answers quote the sentences of the context that best match the question.
"""

from __future__ import annotations

import re

from .. import textutil
from .extractive import answers as answers_mod
from .extractive import entities as entities_mod
from .extractive import insights as insights_mod
from .extractive import summary as summary_mod
from .base import (
    AnswerContext,
    ConsolidationResult,
    Extraction,
    FilePart,
    MemoryNote,
    Provider,
    UpdateJudgement,
)

# Kept for callers that read them from here; the linear versions live in extractive.entities.
DATE_RE = entities_mod.DATE_RE
AMOUNT_RE = entities_mod.AMOUNT_RE
MONTHS = "|".join(textutil.MONTH_NAMES)
# Words that open a sentence but are not names (recall's speaker signal reads them too).
NOT_ENTITIES = textutil.NOT_ENTITIES
# When something happened, said the way people say it ("last weekend", "two days ago").
RELATIVE_TIME_RE = re.compile(
    r"\b(?:yesterday|tonight|recently|tomorrow|(?:last|this|next|past)\s+(?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    + "|".join(textutil.WEEKDAYS)
    + r")|(?:\d+|a|an|one|two|three|four|five|six|few|couple of)\s+(?:days?|weeks?|months?|years?)\s+ago)\b",
    re.I,
)
# Someone reporting what they did or have: "I joined", "we went", "my daughter".
PERSONAL_EVENT_RE = re.compile(
    r"\b(?:I|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+|even\s+)?(?:[a-z]+ed|went|got|took|made|did|had|saw|bought|began|gave|held|"
    r"ran|won|met|found|left|lost|built|wrote|sold|spent|brought|taught|read|drew|sang|flew|drove|rode|swam|caught|"
    r"became|kept|felt|heard|told|paid|put|set|chose|fell|grew|threw|broke|ate)\b|\bmy\s+[a-z]+",
    re.I,
)
W_HAPPENED = 0.1
# A bound on top of linear patterns: the first MAX_ANALYSED_CHARS say what a memory is
# about; a megabyte of text costs no more than this much of it.
MAX_ANALYSED_CHARS = 200_000
# Files whose summary is their content alone (a note, a page), not what kind of file they are.
PROSE_TYPES = {"text/plain", "text/markdown", "text/html"}
SIGNAL_WORDS = {
    "decid",
    "decision",
    "agree",
    "deadline",
    "due",
    "must",
    "urgent",
    "important",
    "critical",
    "priority",
    "remember",
    "never",
    "always",
    "goal",
    "launch",
    "plan",
    "commit",
    "promis",
    "risk",
    "problem",
    "fix",
    "budget",
    "contract",
    "sign",
    "hire",
    "fire",
    "allerg",
    "birthday",
    "password",
    "doctor",
    "diagnos",
}
# Words that ask about the memory as a whole rather than about something in it.
META_TERMS = {
    textutil.stem(w)
    for w in "memory memories know key theme themes summarize summary overview main important recent latest everything stored store remember tell about".split()
}


extract_entities = entities_mod.extract_entities
summarize = summary_mod.summarize


def importance_of(text: str, entities: list[str]) -> float:
    """0.3 to start; more for decisions and commitments, dates and amounts, named things,
    something that happened (a first-person report, a time it happened) and substance;
    less for a fragment or a text that only asks. Clamped to 0.05-0.95 so a person's
    rating can always say "more" or "less" than the engine did."""
    stems = set(textutil.terms(text))
    score = 0.3
    if any(s.startswith(w) for s in stems for w in SIGNAL_WORDS):
        score += 0.15
    score += min(0.15, 0.05 * (len(DATE_RE.findall(text)) + len(AMOUNT_RE.findall(text))))
    score += min(0.15, 0.03 * len(entities))
    if RELATIVE_TIME_RE.search(text):
        score += W_HAPPENED
    if PERSONAL_EVENT_RE.search(text):
        score += W_HAPPENED
    if len(text) > 400:
        score += 0.1
    elif len(text) > 200:
        score += 0.05
    elif len(text) < 40:
        score -= 0.1
    if all(s.rstrip().endswith("?") for s in textutil.sentences(text)):
        score -= 0.1
    return round(min(0.95, max(0.05, score)), 2)


class OfflineProvider(Provider):
    name = "offline"
    is_language_model = False

    @property
    def model(self) -> str:
        return "extractive engine"

    def extract(self, *, text: str, files: list[FilePart], source: str) -> Extraction:
        # A file's text starts with the reader's notes about it (type, size, what would
        # read it): names and topics come from the file's own words only.
        notes_chars = max((f.notes_chars for f in files), default=0)
        notes, body = (text[:notes_chars], text[notes_chars:]) if 0 < notes_chars <= len(text) else ("", text)
        body = body.strip()
        if not text.strip():
            described = ", ".join(f"{f.name} ({f.mime_type or 'unknown type'}, {f.size:,} bytes)" for f in files) or source
            return Extraction(
                summary=f"File {described}. Its content needs a multimodal provider (set GEMINI_API_KEY) to be read.",
                importance=0.3,
            )
        body = body[:MAX_ANALYSED_CHARS]
        if not body:
            return Extraction(summary=summarize(notes), importance=0.3)
        entities = extract_entities(body)
        summary = summarize(body)
        if notes and not any(f.mime_type in PROSE_TYPES for f in files):
            # A picture, a recording, a table: say what it is, then what it says.
            lead = textutil.sentences(notes)[:1]
            summary = " ".join([*lead, summarize(body, max_sentences=1)])
        return Extraction(
            summary=summary,
            entities=entities,
            topics=entities_mod.topics_of(body, entities),
            importance=importance_of(body, entities),
        )

    def consolidate(self, memories: list[MemoryNote]) -> ConsolidationResult:
        return insights_mod.consolidate(memories)

    def answer(self, *, question: str, context: AnswerContext) -> str:
        return answers_mod.answer(question=question, context=context)

    def judge_updates(self, *, new: MemoryNote, candidates: list[MemoryNote]) -> list[UpdateJudgement]:
        from .extractive import update_rules

        return update_rules.judge(new, candidates)
