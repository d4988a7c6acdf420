"""The built-in offline engine: deterministic, no network, no model.

It is extractive, not a language model: summaries are the input's own most central
sentences, answers quote the sentences of the context that best match the question.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

from .. import textutil
from .base import (
    AnswerContext,
    Connection,
    ConsolidationResult,
    Extraction,
    FilePart,
    MemoryNote,
    Provider,
    UpdateJudgement,
)

MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
DATE_RE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|(?:{MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTHS})(?:,?\s+\d{{4}})?"
    rf"|(?:{MONTHS})\s+\d{{4}}"
    rf"|Q[1-4]\s+\d{{4}}|Q[1-4]\b"
    rf"|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday))\b"
)
AMOUNT_RE = re.compile(
    r"(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?\s?(?:[kKmMbB]|million|billion|thousand)?\b"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|(?:USD|EUR|GBP|dollars|euros)\b))"
)
EMAIL_RE = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
# A run of capitalised words (allowing "of", "de", "&" inside): names, organisations, places, products.
PROPER_RE = re.compile(
    r"\b(?:[A-Z][a-zA-Z0-9'’&.\-]*[a-zA-Z0-9]|[A-Z]{2,}[0-9]*)(?:\s+(?:(?:of|de|la|van|von|the|&)\s+){0,2}(?:[A-Z][a-zA-Z0-9'’&.\-]*[a-zA-Z0-9]|[A-Z]{2,}[0-9]*))*"
)
NOT_ENTITIES = {w.capitalize() for w in textutil.STOPWORDS} | {
    "I", "OK", "Yes", "No", "Mr", "Mrs", "Ms", "Dr", "Also", "Then", "Today", "Tomorrow", "Yesterday",
    "Summary", "Notes", "Note", "Action", "Items", "Todo", "TODO", "Re", "Fwd",
} | set(MONTHS.split("|"))
# When something happened, said the way people say it ("last weekend", "two days ago").
RELATIVE_TIME_RE = re.compile(
    r"\b(?:yesterday|tonight|recently|tomorrow|(?:last|this|next|past)\s+(?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:\d+|a|an|one|two|three|four|five|six|few|couple of)\s+(?:days?|weeks?|months?|years?)\s+ago)\b",
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
SIGNAL_WORDS = {
    "decid", "decision", "agree", "deadline", "due", "must", "urgent", "important", "critical", "priority",
    "remember", "never", "always", "goal", "launch", "plan", "commit", "promis", "risk", "problem", "fix",
    "budget", "contract", "sign", "hire", "fire", "allerg", "birthday", "password", "doctor", "diagnos",
}
# Words that ask about the memory as a whole rather than about something in it.
META_TERMS = {textutil.stem(w) for w in "memory memories know key theme themes summarize summary overview main important recent latest everything stored store remember tell about".split()}


def extract_entities(text: str, limit: int = 15) -> list[str]:
    found: dict[str, None] = {}
    for regex in (EMAIL_RE, DATE_RE, AMOUNT_RE):
        for match in regex.finditer(text):
            found.setdefault(match.group(0).strip(" ,."), None)
    sentence_starts = {m.end() for m in re.finditer(r"(?:^|[.!?:]\s+|\n\s*[-*•]?\s*)", text)}
    mid_sentence = set()
    candidates = []
    for match in PROPER_RE.finditer(text):
        phrase = match.group(0).strip(" .'’-")
        words = phrase.split()
        while words and words[0] in NOT_ENTITIES:
            words = words[1:]
        while words and words[-1].lower() in {"of", "de", "la", "van", "von", "the", "&"}:
            words = words[:-1]
        if not words:
            continue
        phrase = " ".join(words)
        at_start = match.start() in sentence_starts and phrase.split()[0] == match.group(0).split()[0]
        if not at_start:
            mid_sentence.add(phrase)
        candidates.append((phrase, at_start))
    for phrase, at_start in candidates:
        # A single capitalised word opening a sentence is usually just a word ("Meeting"),
        # unless the text also capitalises it mid-sentence.
        if at_start and " " not in phrase and phrase not in mid_sentence and not phrase.isupper():
            continue
        if any(phrase in d for d in DATE_RE.findall(phrase)):
            continue
        found.setdefault(phrase, None)
    return list(found)[:limit]


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


def summarize(text: str, max_sentences: int = 2, max_chars: int = 320) -> str:
    sents = textutil.sentences(text)
    if not sents:
        return text.strip()[:max_chars]
    if len(sents) <= max_sentences and len(" ".join(sents)) <= max_chars:
        return " ".join(sents)
    freq = Counter(textutil.terms(text))
    def centrality(item):
        index, sentence = item
        terms = textutil.terms(sentence)
        if not terms:
            return 0.0
        # Early sentences carry the topic more often (a small lead bonus).
        return sum(freq[t] for t in set(terms)) / math.sqrt(len(terms)) + (1.0 if index == 0 else 0.0)
    best = sorted(enumerate(sents), key=centrality, reverse=True)[:max_sentences]
    chosen = [s for _, s in sorted(best)]
    out = " ".join(chosen)
    return out if len(out) <= max_chars else out[: max_chars - 1].rsplit(" ", 1)[0] + "…"


class OfflineProvider(Provider):
    name = "offline"
    is_language_model = False

    @property
    def model(self) -> str:
        return "extractive engine"

    def extract(self, *, text: str, files: list[FilePart], source: str) -> Extraction:
        if not text.strip():
            described = ", ".join(f"{f.name} ({f.mime_type or 'unknown type'}, {f.size:,} bytes)" for f in files) or source
            family = sorted({(f.mime_type or "file").split("/")[0] for f in files}) or ["file"]
            return Extraction(
                summary=f"File {described}. Its content needs a multimodal provider (set GEMINI_API_KEY) to be read.",
                entities=[f.name for f in files],
                topics=family,
                importance=0.3,
            )
        entities = extract_entities(text)
        return Extraction(
            summary=summarize(text),
            entities=entities,
            topics=textutil.keywords(text, limit=6),
            importance=importance_of(text, entities),
        )

    def consolidate(self, memories: list[MemoryNote]) -> ConsolidationResult:
        keys_of = {m.id: self._keys(m) for m in memories}
        connections = []
        for i, a in enumerate(memories):
            for b in memories[i + 1 :]:
                shared = [k for k in keys_of[a.id] if k in keys_of[b.id]]
                if shared:
                    connections.append(Connection(a.id, b.id, "both mention " + _join(shared[:3])))
        spread: dict[str, list[int]] = defaultdict(list)
        for m in memories:
            for key in keys_of[m.id]:
                spread[key].append(m.id)
        topics = Counter(t for m in memories for t in m.topics)
        top_topics = [t for t, _ in topics.most_common(4)]
        summary = f"{len(memories)} memories" + (f" about {_join(top_topics)}." if top_topics else ".")
        # Most widely shared first; on a tie a named thing (entity) says more than a keyword.
        entity_keys = {e.lower() for m in memories for e in m.entities}
        shared_keys = sorted(
            (k for k, ids in spread.items() if len(ids) > 1), key=lambda k: (-len(spread[k]), k not in entity_keys, k)
        )
        if shared_keys:
            theme = shared_keys[0]
            ids = spread[theme]
            example = next(m for m in memories if m.id == ids[0])
            insight = (
                f"The strongest shared theme is {theme!r}: it runs through {len(ids)} of {len(memories)} memories "
                f"({', '.join(f'Memory {i}' for i in ids)}). For example: {example.summary}"
            )
        else:
            insight = f"These {len(memories)} memories share no entity or topic yet; they stand on their own."
        return ConsolidationResult(summary=summary, insight=insight, connections=connections)

    def answer(self, *, question: str, context: AnswerContext) -> str:
        if not context.memories:
            return "I have no memories to answer from yet."
        q_terms = [t for t in dict.fromkeys(textutil.terms(question)) if t not in META_TERMS]
        if not q_terms:
            return self._overview(context)
        # Weight question terms by how rare they are in the context (an inverse document frequency).
        docs = {m.id: set(textutil.terms(f"{m.text or m.summary} {' '.join(m.entities)}")) for m in context.memories}
        n = len(docs)
        weight = {t: math.log(1 + n / (1 + sum(t in d for d in docs.values()))) for t in q_terms}
        scored = []
        for m in context.memories:
            for sentence in textutil.sentences(m.text or m.summary) or [m.summary]:
                s_terms = set(textutil.terms(sentence))
                hit = [t for t in q_terms if t in s_terms]
                if hit:
                    score = sum(weight[t] for t in hit) * (1 + 0.2 * m.importance)
                    scored.append((score, len(hit), m.id, sentence))
        if not scored:
            return "I couldn't find anything about that in your memories."
        scored.sort(key=lambda s: (-s[0], -s[1]))
        best = scored[0][0]
        picked, seen = [], set()
        for score, _, memory_id, sentence in scored:
            if score < best * 0.5 or len(picked) == 3:
                break
            if (memory_id, sentence) not in seen:
                seen.add((memory_id, sentence))
                picked.append((memory_id, sentence))
        return "From your memories:\n\n" + "\n".join(self._current_first(picked, context, q_terms))

    @staticmethod
    def _current_first(picked: list[tuple[int, str]], context: AnswerContext, q_terms: list[str]) -> list[str]:
        """What is true now before what was: a superseded memory's successor (in the context)
        is quoted first, even when it shares no word with the question ("I moved to Berlin"
        for "Where do I live?"), and the old memory is marked as past."""
        notes = {m.id: m for m in context.memories}

        def current_of(note: MemoryNote) -> MemoryNote | None:
            seen = set()
            while note.outdated_by and note.outdated_by in notes and note.id not in seen:
                seen.add(note.id)
                note = notes[note.outdated_by]
            return note if not note.valid_until else None

        def best_sentence(note: MemoryNote) -> str:
            sents = textutil.sentences(note.text or note.summary) or [note.summary]
            return max(sents, key=lambda s: sum(t in set(textutil.terms(s)) for t in q_terms))

        current, past, quoted = [], [], set()
        for memory_id, sentence in picked:
            note = notes[memory_id]
            if note.valid_until:
                successor = current_of(note)
                if successor is not None and successor.id not in quoted:
                    quoted.add(successor.id)
                    current.append(f"- {best_sentence(successor)} [Memory {successor.id}]")
                past.append(f"- Past ({note.past_marker}): {sentence} [Memory {memory_id}]")
            elif memory_id not in quoted or all(sentence not in line for line in current):
                quoted.add(memory_id)
                current.append(f"- {sentence} [Memory {memory_id}]")
        return current + past

    def judge_updates(self, *, new: MemoryNote, candidates: list[MemoryNote]) -> list[UpdateJudgement]:
        from . import update_rules

        return update_rules.judge(new, candidates)

    @staticmethod
    def _overview(context: AnswerContext) -> str:
        top = sorted(context.memories, key=lambda m: -m.importance)[:5]
        lines = [f"- {m.summary} [Memory {m.id}]" for m in top]
        insights = [f"- Insight: {c.insight}" for c in context.consolidations[:2]]
        return "Here is what stands out in your memories:\n\n" + "\n".join(lines + insights)

    @staticmethod
    def _keys(m: MemoryNote) -> list[str]:
        keys = dict.fromkeys(e.lower() for e in m.entities)
        keys.update(dict.fromkeys(t.lower() for t in m.topics))
        return list(keys)


def _join(items: list[str]) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
