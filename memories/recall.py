"""Recall: which memories and consolidations the model reads for a question.

Pure selection code (database reads, no model), so every strategy can be measured on
its own (see `manage.py evaluate`). A strategy takes the owner, the question and a
budget and returns ranked memories, each with the reasons it was picked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from .llm.base import AnswerContext, InsightNote, MemoryNote
from .models import Consolidation, Memory
from .textutil import estimate_tokens

RECENT_CONSOLIDATIONS = 10


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

    @property
    def memory_ids(self) -> list[int]:
        return [r.memory.pk for r in self.memories]

    def to_context(self) -> AnswerContext:
        return AnswerContext(
            memories=[
                MemoryNote(
                    id=r.memory.pk,
                    summary=r.memory.summary,
                    text=r.memory.raw_text[:4000],
                    source=r.memory.source,
                    entities=tuple(r.memory.entities),
                    topics=tuple(r.memory.topics),
                    importance=r.memory.importance,
                    occurred_at=r.memory.occurred_at,
                )
                for r in self.memories
            ],
            consolidations=[
                InsightNote(id=c.pk, summary=c.summary, insight=c.insight, source_ids=tuple(c.sources.values_list("pk", flat=True)))
                for c in self.consolidations
            ],
        )

    @property
    def context_tokens(self) -> int:
        return estimate_tokens(self.to_context().render())


def readable_memories(owner):
    """The memories recall may ever return: the owner's, extracted and ready."""
    return Memory.objects.filter(owner=owner, status=Memory.Status.READY)


def recall_recent(*, owner, question: str, k: int) -> RecallResult:
    """The original design: the k newest memories and the ten newest consolidations,
    whatever the question."""
    memories = readable_memories(owner).order_by("-created_at", "-id")[:k]
    consolidations = Consolidation.objects.filter(owner=owner).order_by("-created_at", "-id")[:RECENT_CONSOLIDATIONS]
    return RecallResult(
        strategy="recent",
        memories=[Recalled(m, score=0.0, reasons=["recent"]) for m in memories],
        consolidations=list(consolidations),
    )


STRATEGIES = {"recent": recall_recent}


def recall(*, owner, question: str, strategy: str | None = None, k: int | None = None) -> RecallResult:
    strategy = strategy or settings.MEMORY_RECALL_STRATEGY
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown recall strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}.")
    k = max(1, min(int(k or settings.MEMORY_RECALL_K), 500))
    return STRATEGIES[strategy](owner=owner, question=question, k=k)
