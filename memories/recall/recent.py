"""The original design's recall: the newest memories, whatever the question."""

from __future__ import annotations

from datetime import datetime

from .readable import readable_memories, usable_consolidations
from .result import RecallResult, Recalled

RECENT_CONSOLIDATIONS = 10


def recall_recent(*, owner, question: str, k: int, now: datetime | None = None) -> RecallResult:
    """The original design: the k newest memories and the ten newest consolidations,
    whatever the question."""
    memories = readable_memories(owner).order_by("-created_at", "-id")[:k]
    consolidations = usable_consolidations(owner).order_by("-created_at", "-id")[:RECENT_CONSOLIDATIONS]
    return RecallResult(
        strategy="recent",
        memories=[Recalled(m, score=0.0, reasons=["recent"]) for m in memories],
        consolidations=list(consolidations),
    )
