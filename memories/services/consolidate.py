"""Consolidate: connect an owner's new memories and write one insight per batch."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..llm import ProviderError, get_provider
from ..llm.base import MemoryNote
from ..models import Consolidation, ConsolidationRun, Memory, MemoryLink

log = logging.getLogger(__name__)

# A run that has not finished after this long died with its worker; its lock is released.
STALE_RUN_AFTER = timedelta(hours=1)


class ConsolidationBusy(Exception):
    """Another consolidation of this owner's memories is running."""


@dataclass
class ConsolidationOutcome:
    run: ConsolidationRun
    consolidations: list[Consolidation]


def note_for(memory: Memory) -> MemoryNote:
    return MemoryNote(
        id=memory.pk,
        summary=memory.summary,
        text=memory.raw_text[:4000],
        source=memory.source,
        entities=tuple(memory.entities),
        topics=tuple(memory.topics),
        importance=memory.importance,
        occurred_at=memory.occurred_at,
    )


def unconsolidated(owner):
    return Memory.objects.filter(owner=owner, status=Memory.Status.READY, consolidated_at__isnull=True)


def _start_run(owner) -> ConsolidationRun:
    ConsolidationRun.objects.filter(
        owner=owner, finished_at__isnull=True, started_at__lt=timezone.now() - STALE_RUN_AFTER
    ).update(finished_at=timezone.now(), error="abandoned: the worker running it stopped")
    try:
        with transaction.atomic():
            return ConsolidationRun.objects.create(owner=owner)
    except IntegrityError:
        raise ConsolidationBusy(f"A consolidation for {owner} is already running.") from None


def consolidate_owner(*, owner, batch_size: int | None = None, max_batches: int | None = None) -> ConsolidationOutcome:
    """Consolidate the owner's backlog oldest first, a batch at a time, until it is
    drained (fewer than two left) or the per-run cap is reached."""
    batch_size = max(2, batch_size or settings.MEMORY_CONSOLIDATE_BATCH_SIZE)
    max_batches = max_batches or settings.MEMORY_CONSOLIDATE_MAX_BATCHES
    run = _start_run(owner)
    made: list[Consolidation] = []
    provider = get_provider()
    try:
        for _ in range(max_batches):
            batch = list(unconsolidated(owner).order_by("created_at", "pk")[:batch_size])
            if len(batch) < 2:
                break
            result = provider.consolidate([note_for(m) for m in batch])
            made.append(_store(owner, batch, result, provider.label))
            run.memories_consolidated += len(batch)
    except ProviderError as exc:
        log.warning("consolidation for %s stopped: %s", owner, exc)
        run.error = str(exc)[:2000]
    finally:
        provider.close()
        run.consolidations_made = len(made)
        run.finished_at = timezone.now()
        run.save()
    return ConsolidationOutcome(run=run, consolidations=made)


def _store(owner, batch: list[Memory], result, provider_label: str) -> Consolidation:
    ids = {m.pk for m in batch}
    with transaction.atomic():
        consolidation = Consolidation.objects.create(
            owner=owner, summary=result.summary.strip(), insight=result.insight.strip(), provider=provider_label
        )
        consolidation.sources.set(batch)
        # A model may name ids outside the batch or link a memory to itself: drop those.
        links = {}
        for c in result.connections:
            if c.from_id in ids and c.to_id in ids and c.from_id != c.to_id:
                links[(c.from_id, c.to_id)] = c.relationship.strip()[:500] or "related"
        MemoryLink.objects.bulk_create(
            MemoryLink(from_memory_id=a, to_memory_id=b, relationship=rel, consolidation=consolidation)
            for (a, b), rel in links.items()
        )
        Memory.objects.filter(pk__in=ids).update(consolidated_at=timezone.now())
    return consolidation


def consolidate_all() -> list[ConsolidationOutcome]:
    """The scheduled job: every owner with at least two memories waiting."""
    User = get_user_model()
    outcomes = []
    for owner in User.objects.filter(pk__in=unconsolidated_owner_ids()):
        try:
            outcomes.append(consolidate_owner(owner=owner))
        except ConsolidationBusy:
            log.info("consolidation for %s already running; skipped", owner)
    return outcomes


def unconsolidated_owner_ids():
    return Memory.objects.filter(status=Memory.Status.READY, consolidated_at__isnull=True).values("owner_id").distinct()
