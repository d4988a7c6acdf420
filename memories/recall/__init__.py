"""Recall: which memories and consolidations the model reads for a question.

Pure selection code (database reads, no model), so every strategy can be measured on
its own (see `manage.py evaluate`). A strategy takes the owner, the question and a
budget and returns ranked memories, each with the reasons it was picked.

Strategies:
- `recent` (recent.py): the original design, the k newest memories whatever the question.
- `hybrid` (hybrid.py): three arms find candidates, the full-text index (lexical.py),
  embeddings (meaning.py) and the local model's latent terms (latent_terms.py), fused
  (fusion.py: the words' relevance plus a credit by rank from each of the others); then what else the store knows re-ranks them: dates the question names,
  matched as intervals to the memories' days and to the times their words name (dates.py), entities and topics, importance and recency (scoring.py), the speaker a
  question names (speaker.py), the key words of the best matches (feedback.py), the
  turns around a hit in the same conversation and memories linked to it
  (neighbours.py), the sessions first and breadth for set questions (sessions.py, off:
  measured, did not hold across folds), the sources of the digests the background built that
  the question matches (digests.py, off: measured, did not hold across folds), what is true now (current.py); the token budget (budget.py) decides
  what is read, with the consolidations over what was found (consolidations.py). Which
  memories any of it may read is readable.py; the full-text index it searches is lexical_index.py, searched by search.py.
What it would otherwise work out of each memory on every question (the times its words
name, what showing it costs, the key words of its entities and topics) is stored on the
memory when it is written (stored.py).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from ..models import Memory
from .readable import READABLE_STATUSES, readable_memories, usable_consolidations
from .budget import FULL_TEXT_RANKS, max_context_tokens
from .dates import DateSpan, date_spans
from .fusion import fuse
from .hybrid import recall_hybrid
from .neighbours import source_group
from .recent import recall_recent
from .result import BRIEF_CHARS, RecallResult, Recalled, memory_note, summary_in_text
from .words import cached_stem, terms

__all__ = [
    "BRIEF_CHARS",
    "DEFAULT_STRATEGY",
    "FULL_TEXT_RANKS",
    "PENDING_REASON",
    "READABLE_STATUSES",
    "STRATEGIES",
    "DateSpan",
    "RecallResult",
    "Recalled",
    "cached_stem",
    "date_spans",
    "fuse",
    "max_context_tokens",
    "memory_note",
    "readable_memories",
    "recall",
    "recall_hybrid",
    "recall_recent",
    "source_group",
    "summary_in_text",
    "terms",
    "usable_consolidations",
]

# Read-your-writes: a memory still waiting for extraction is read by its raw text (see
# readable.py), and says so.
PENDING_REASON = "pending: saved, not extracted yet (found by its text)"

STRATEGIES = {"hybrid": recall_hybrid, "recent": recall_recent}
DEFAULT_STRATEGY = "hybrid"


def recall(
    *, owner, question: str, strategy: str | None = None, k: int | None = None, now: datetime | None = None
) -> RecallResult:
    strategy = strategy or settings.MEMORY_RECALL_STRATEGY or DEFAULT_STRATEGY
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown recall strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}.")
    k = max(1, min(int(k or settings.MEMORY_RECALL_K), 500))
    result = STRATEGIES[strategy](owner=owner, question=question or "", k=k, now=now)
    if settings.MEMORY_REVIEW_MODE:
        # New input waits for a person's approval before recall may read it.
        result.memories = [r for r in result.memories if r.memory.status != Memory.Status.PENDING]
    for r in result.memories:
        if r.memory.status == Memory.Status.PENDING:
            r.reasons.append(PENDING_REASON)
    return result
