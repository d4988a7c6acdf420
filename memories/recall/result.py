"""What recall hands over: the ranked memories with their reasons, the consolidations,
and the context the model reads of them."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import F

from ..llm.base import AnswerContext, InsightNote, MemoryNote
from ..models import Consolidation, Memory, MemoryLink
from ..textutil import estimate_tokens, sentences
from .speaker import speaker_label

# The reason recall/newer.py gives a memory it put above an older one saying nearly the
# same (no update marked), read back into the answer's context as AnswerContext.restated.
RESTATED = re.compile(r"^newer than #(\d+), saying nearly the same$")


def restated_reason(older_id: int) -> str:
    return f"newer than #{older_id}, saying nearly the same"


# Below the first ranks a memory whose text is longer than this may be shown by its
# summary alone (see memory_note's `brief` and budget.py).
BRIEF_CHARS = 100


@dataclass
class Recalled:
    memory: Memory
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class RecallResult:
    strategy: str
    memories: list[Recalled]
    consolidations: list[Consolidation]
    #: Why each consolidation was picked, by consolidation id.
    consolidation_reasons: dict[int, list[str]] = field(default_factory=dict)
    #: Memories shown by their summary alone (see memory_note's `brief`).
    brief_ids: frozenset[int] = frozenset()
    _context: AnswerContext | None = field(default=None, repr=False, compare=False)
    _tokens: int | None = field(default=None, repr=False, compare=False)

    @property
    def memory_ids(self) -> list[int]:
        return [r.memory.pk for r in self.memories]

    def to_context(self) -> AnswerContext:
        """What the model reads; built once (the result is not changed after recall) and
        with the insights' source ids read in one query for all of them."""
        if self._context is None:
            sources: dict[int, list[int]] = defaultdict(list)
            if self.consolidations:
                # Live sources of the insight's own owner: a row naming another space's memory never counts.
                through = Consolidation.sources.through.objects.filter(
                    consolidation_id__in=[c.pk for c in self.consolidations],
                    memory__in=Memory.objects.all(),
                    memory__owner=F("consolidation__owner"),
                )
                for cid, mid in through.values_list("consolidation_id", "memory_id").order_by("memory_id"):
                    sources[cid].append(mid)
            self._context = AnswerContext(
                memories=[memory_note(r.memory, brief=r.memory.pk in self.brief_ids) for r in self.memories],
                consolidations=[
                    InsightNote(id=c.pk, summary=c.summary, insight=c.insight, source_ids=tuple(sources[c.pk]))
                    for c in self.consolidations
                ],
                date_matches=tuple(
                    r.memory.pk
                    for r in self.memories
                    if any(
                        x.startswith(("occurred in ", "occurred on ", "held through ", "held in the period")) for x in r.reasons
                    )
                ),
                restated=tuple(
                    (int(m.group(1)), r.memory.pk) for r in self.memories for x in r.reasons if (m := RESTATED.match(x))
                ),
                changes=self._changes(),
            )
        return self._context

    def _changes(self) -> tuple[tuple[int, int, str], ...]:
        """The updates marked between two recalled memories, with what the update check said
        changed (the link it wrote), in one query."""
        ids = {r.memory.pk for r in self.memories}
        pairs = {(r.memory.pk, r.memory.outdated_by_id) for r in self.memories if r.memory.outdated_by_id in ids}
        if not pairs:
            return ()
        owner = self.memories[0].memory.owner_id
        prefix = f"{MemoryLink.UPDATES}:"
        links = MemoryLink.objects.owned_by(owner).filter(
            to_memory_id__in={old for old, _ in pairs}, relationship__startswith=prefix
        )
        return tuple(
            sorted(
                (old, new, why.removeprefix(prefix).strip())
                for old, new, why in links.values_list("to_memory_id", "from_memory_id", "relationship")
                if (old, new) in pairs
            )
        )

    @property
    def context_tokens(self) -> int:
        if self._tokens is None:
            self._tokens = estimate_tokens(self.to_context().render())
        return self._tokens


def memory_note(memory: Memory, *, max_chars: int = 4000, brief: bool = False) -> MemoryNote:
    """What the model reads of a memory. Nothing is said twice: an extractive summary
    (every sentence of it is in the text) is the text itself, and entities and topics the
    text already shows in so many words are left out; they cost tokens and add nothing.
    `brief`: a text longer than its summary is left out, the summary stands for it, and
    so are the topics (key words of that text); for the lower ranks of a context, which
    the model reads for leads, not for detail."""
    text = memory.raw_text[:max_chars]
    summary = memory.summary
    if brief and summary.strip() and len(text) > BRIEF_CHARS and len(summary) < len(text):
        text = ""
        # Whose line it is stays said ("Ann: ..."): the summary may begin past the label,
        # and a line about Ann's race is not about whoever it names.
        label = speaker_label(memory.raw_text)
        if label and not summary.startswith(label):
            summary = label + summary
    topics = () if brief else memory.topics
    if text and summary_in_text(summary, memory.raw_text) and len(text) == len(memory.raw_text):
        summary = text  # AnswerContext.render prints a text equal to its summary once
    shown = f" {_lower_words(summary if summary == text else f'{summary} {text}')} "
    return MemoryNote(
        id=memory.pk,
        summary=summary,
        text=text,
        source=memory.source,
        entities=tuple(e for e in map(str, memory.entities) if f" {_plain(e)} " not in shown),
        topics=tuple(t for t in map(str, topics) if f" {_plain(t)} " not in shown),
        importance=memory.importance,
        occurred_at=memory.occurred_at,
        valid_until=memory.valid_until if memory.outdated_by_id else None,
        outdated_by=memory.outdated_by_id,
        said_by=str((memory.metadata or {}).get("said_by") or "")[:100],
    )


def summary_in_text(summary: str, text: str) -> bool:
    """Whether the summary only repeats sentences of the text (an extractive summary,
    possibly cut short with an ellipsis)."""
    if not summary.strip():
        return True
    flat = " ".join(text.split())
    return all(" ".join(s.rstrip("…").split()) in flat for s in sentences(summary))


_NON_WORD = re.compile(r"[\W_]+")


def _lower_words(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


_plain = _lower_words
