"""Many texts stored at once as extracted memories: the fast path evaluation and benchmarks
load conversations with (thousands of turns, no task or model call per memory)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..llm.offline import OfflineProvider
from ..models import Event, Memory, content_hash
from . import history
from .history import SYSTEM, Actor, snapshot


def bulk_remember(*, owner, items: list[dict], batch_size: int = 500, actor: Actor = SYSTEM) -> list[Memory]:
    """Store many texts as ready memories, extracted by the offline engine, each with its
    "created" and "extracted" history like a memory that came the usual way. Each item:
    {"text", "source", "occurred_at"} and optionally "entities" known beforehand (the
    speaker of a chat turn), kept ahead of the extracted ones. No duplicate check: the
    caller gives distinct texts (a conversation's turns) in a space of its own."""
    engine = OfflineProvider()
    now = timezone.now()
    memories = []
    for item in items:
        extraction = engine.extract(text=item["text"], files=[], source=item.get("source", ""))
        memories.append(
            Memory(
                owner=owner,
                source=(item.get("source") or "bulk")[:500],
                raw_text=item["text"],
                content_hash=content_hash(item["text"]),
                summary=extraction.summary,
                entities=list(dict.fromkeys([*item.get("entities", []), *extraction.entities]))[:30],
                topics=extraction.topics[:30],
                importance=extraction.importance,
                occurred_at=item.get("occurred_at") or now,
                status=Memory.Status.READY,
                provider=engine.label,
            )
        )
    # Written batch_size at a time, each batch its own short transaction: a load of
    # thousands never holds the write lock long enough to make another writer wait.
    stored: list[Memory] = []
    for start in range(0, len(memories), batch_size):
        with transaction.atomic():
            batch = Memory.objects.bulk_create(memories[start : start + batch_size])
            Event.objects.bulk_create(
                history.event(m, action, actor, after=after, note=note, at=now)
                for m in batch
                for action, after, note in (
                    (Event.Action.CREATED, {"source": m.source, "content_hash": m.content_hash}, "stored in bulk"),
                    (Event.Action.EXTRACTED, snapshot(m), engine.label),
                )
            )
        stored.extend(batch)
    return stored
