"""Consolidate: connect an owner's new memories and write one insight per batch."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from ..llm import ProviderError, get_provider, provider_name
from ..llm.base import MemoryNote
from ..llm.extractive import insights
from ..models import Consolidation, ConsolidationRun, Event, Memory, MemoryLink
from . import usage
from .digests import digests_due, refresh_digests
from .history import SYSTEM, Actor, consolidation_snapshot, record, record_many

log = logging.getLogger(__name__)

# A run that has not finished after this long died with its worker; its lock is released.
STALE_RUN_AFTER = timedelta(hours=1)
STORE_CHUNK = 25


class ConsolidationBusy(Exception):
    """Another consolidation of this owner's memories is running."""


@dataclass
class ConsolidationOutcome:
    run: ConsolidationRun
    consolidations: list[Consolidation]


def note_for(memory: Memory) -> MemoryNote:
    """The whole memory for the consolidator. Unlike the answer context (recall.memory_note,
    which drops what the text already says to save tokens), every entity and topic stays:
    connections are found by comparing them."""
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
    # Near-duplicates add nothing to an insight their original is already part of.
    return Memory.objects.owned_by(owner).filter(
        status=Memory.Status.READY, consolidated_at__isnull=True, duplicate_of__isnull=True
    )


def _start_run(owner) -> ConsolidationRun:
    ConsolidationRun.objects.filter(
        owner=owner, finished_at__isnull=True, started_at__lt=timezone.now() - STALE_RUN_AFTER
    ).update(finished_at=timezone.now(), error="abandoned: the worker running it stopped")
    try:
        with transaction.atomic():
            return ConsolidationRun.objects.create(owner=owner)
    except IntegrityError:
        raise ConsolidationBusy(f"A consolidation for {owner} is already running.") from None


def consolidate_owner(
    *,
    owner,
    batch_size: int | None = None,
    max_batches: int | None = None,
    actor: Actor = SYSTEM,
    on_batch: Callable[[int], None] | None = None,
) -> ConsolidationOutcome:
    """Repair insights whose sources changed, then consolidate the owner's backlog: memories
    close to each other (by meaning, or by words without an embedding layer) are grouped,
    at most `batch_size` a group, closest first; the ones close to nothing are grouped as
    unrelated. A language model gets at most `max_batches` groups a run (each is a call);
    the offline engine drains the backlog (up to MEMORY_CONSOLIDATE_MAX_BACKLOG) in one run.
    A lone memory left over waits for the next run. on_batch(memories in it) is called
    after each group (progress bars)."""
    batch_size = max(2, batch_size or settings.MEMORY_CONSOLIDATE_BATCH_SIZE)
    run = _start_run(owner)
    made: list[Consolidation] = []
    provider = None
    try:
        # Inside the try: a misconfigured provider must end this run (with the reason), not
        # leave it open to hold the owner's lock until the stale limit.
        provider = get_provider()
        if max_batches is None and provider.is_language_model:
            max_batches = settings.MEMORY_CONSOLIDATE_MAX_BATCHES
        for stale in Consolidation.objects.owned_by(owner).filter(stale_at__isnull=False).order_by("pk"):
            _rederive(stale, provider, actor)
        backlog = list(unconsolidated(owner).order_by("created_at", "pk")[: settings.MEMORY_CONSOLIDATE_MAX_BACKLOG])
        by_id = {m.pk: m for m in backlog}
        groups = insights.group([note_for(m) for m in backlog], max_size=batch_size)
        groups = groups[:max_batches] if max_batches else groups
        # Each group's insight is computed before its write transaction opens (the offline
        # engine embeds and compares the group's texts, a language model is a network
        # call): a user's write waits at most for one short store, never for the thinking.
        # The offline engine's insights are stored STORE_CHUNK to a transaction (a crash
        # loses at most one chunk, whose memories stay unconsolidated); a model's one by one.
        chunk = 1 if provider.is_language_model else STORE_CHUNK
        for start in range(0, len(groups), chunk):
            computed = []
            for notes in groups[start : start + chunk]:
                computed.append(([by_id[n.id] for n in notes], provider.consolidate(notes)))
                if on_batch is not None:
                    on_batch(len(notes))
            with transaction.atomic():
                for batch, result in computed:
                    if stored := _store(owner, batch, result, provider.label, actor):
                        made.append(stored)
                        run.memories_consolidated += stored.source_count
                usage.record_call(owner_id=owner.pk, provider=provider_name(), calls=len(computed))
                # Saved per chunk so "consolidate now" can show the batches done while it runs.
                run.consolidations_made = len(made)
                run.save(update_fields=["memories_consolidated", "consolidations_made"])
        # The digests recall searches (services/digests.py): built again when memories
        # arrived or left since, whatever the provider (they are grouped by meaning).
        refresh_digests(owner)
    except ProviderError as exc:
        log.warning("consolidation for %s stopped: %s", owner, exc)
        run.error = str(exc)[:2000]
        if provider is not None:  # a provider that could not even be made was never called
            usage.record_call(owner_id=owner.pk, provider=provider_name(), failed=True)
    except Exception as exc:
        # A bug or data the code did not expect: the run says so and the caller decides
        # whether to go on (the scheduled run goes on with the next owner).
        run.error = f"internal error: {type(exc).__name__}: {exc}"[:2000]
        raise
    finally:
        if provider is not None:
            provider.close()
        run.consolidations_made = len(made)
        run.finished_at = timezone.now()
        run.save()
    return ConsolidationOutcome(run=run, consolidations=made)


def _store(owner, batch: list[Memory], result, provider_label: str, actor: Actor) -> Consolidation | None:
    """Write one computed insight. Its memories were read before the insight was computed,
    so what changed meanwhile is checked here, under the write lock: a memory deleted or
    consolidated by another run since is left out, and an insight left with fewer than two
    sources is not written (its memories wait for the next run). One that lost a source is
    marked stale, so the next run writes it again from the sources that stand. A result
    with no insight (the group shares nothing) writes none."""
    still = set(
        Memory.objects.filter(
            pk__in=[m.pk for m in batch], owner=owner, status=Memory.Status.READY, consolidated_at__isnull=True
        ).values_list("pk", flat=True)
    )
    if len(still) < 2:
        return None
    if not result.insight.strip():
        # The group shares nothing: no insight is claimed, and its memories were read
        # (they do not wait to be read again by every later run).
        Memory.objects.filter(pk__in=still).update(consolidated_at=timezone.now())
        return None
    # The insight may be about part of the group only; the rest were read and share nothing with it.
    wanted = set(result.about) if result.about is not None else {m.pk for m in batch}
    lost_a_source = bool(wanted - still)
    read = still
    batch = [m for m in batch if m.pk in still and m.pk in wanted]
    if len(batch) < 2:
        return None
    ids = {m.pk for m in batch}
    with transaction.atomic():
        consolidation = Consolidation.objects.create(
            owner=owner,
            summary=result.summary.strip(),
            insight=result.insight.strip(),
            provider=provider_label,
            stale_at=timezone.now() if lost_a_source else None,
        )
        consolidation.sources.set(batch)
        _link(consolidation, ids, result.connections)
        Memory.objects.filter(pk__in=read).update(consolidated_at=timezone.now())
        record(consolidation, Event.Action.CREATED, actor, after=consolidation_snapshot(consolidation))
        record_many(batch, Event.Action.CONSOLIDATED, actor, after={"consolidation": consolidation.pk})
    consolidation.source_count = len(batch)  # what stood when it was written, for the run's count
    return consolidation


def _link(consolidation: Consolidation, ids: set[int], connections) -> None:
    # A model may name ids outside the batch or link a memory to itself: drop those.
    links = {}
    for c in connections:
        if c.from_id in ids and c.to_id in ids and c.from_id != c.to_id:
            links[(c.from_id, c.to_id)] = c.relationship.strip()[:500] or "related"
    MemoryLink.objects.bulk_create(
        MemoryLink(from_memory_id=a, to_memory_id=b, relationship=rel, consolidation=consolidation)
        for (a, b), rel in links.items()
    )


def _rederive(consolidation: Consolidation, provider, actor: Actor) -> None:
    """A stale insight is written again from the sources that still stand, or retired
    when fewer than two remain."""
    before = consolidation_snapshot(consolidation)
    # Only the owner's sources: a row naming another space's memory must not put its text in this insight.
    remaining = list(
        consolidation.sources.owned_by(consolidation.owner_id).filter(status=Memory.Status.READY).order_by("created_at", "pk")
    )
    if len(remaining) < 2:
        with transaction.atomic():
            consolidation.retired_at = timezone.now()
            consolidation.save(update_fields=["retired_at", "updated_at"])
            consolidation.links.all().delete()
            record(consolidation, Event.Action.RETIRED, actor, before=before, note="fewer than two sources remain")
        return
    result = provider.consolidate([note_for(m) for m in remaining])
    usage.record_call(owner_id=consolidation.owner_id, provider=provider_name())
    if result.about is not None:
        remaining = [m for m in remaining if m.pk in set(result.about)]
    if len(remaining) < 2 or not result.insight.strip():
        # What stands shares nothing any more: the insight goes, as with fewer than two.
        with transaction.atomic():
            consolidation.retired_at = timezone.now()
            consolidation.save(update_fields=["retired_at", "updated_at"])
            consolidation.links.all().delete()
            record(consolidation, Event.Action.RETIRED, actor, before=before, note="its sources share nothing")
        return
    with transaction.atomic():
        consolidation.summary, consolidation.insight = result.summary.strip(), result.insight.strip()
        consolidation.stale_at = None
        consolidation.save(update_fields=["summary", "insight", "stale_at", "updated_at"])
        consolidation.sources.set(remaining)
        consolidation.links.all().delete()
        _link(consolidation, {m.pk for m in remaining}, result.connections)
        record(consolidation, Event.Action.REDERIVED, actor, before=before, after=consolidation_snapshot(consolidation))


def queue_consolidation(*, owner) -> bool:
    """Consolidate the owner's backlog in a django-q2 worker (the "consolidate now" button).
    False when a run of theirs is already going: its result is what they are waiting for."""
    from django_q.tasks import async_task

    if ConsolidationRun.objects.owned_by(owner).filter(finished_at__isnull=True).exists():
        return False
    async_task("memories.tasks.consolidate_owner", owner.pk, task_name=f"consolidate-{owner.pk}")
    return True


def planned_batches(*, owner=None) -> int:
    """How many batches the next run(s) will make at most: for a progress bar's total."""
    waiting = (
        unconsolidated(owner).count()
        if owner is not None
        else Memory.objects.filter(status=Memory.Status.READY, consolidated_at__isnull=True, duplicate_of__isnull=True).count()
    )
    batch_size = max(2, settings.MEMORY_CONSOLIDATE_BATCH_SIZE)
    return -(-waiting // batch_size) if owner is None else min(-(-waiting // batch_size), settings.MEMORY_CONSOLIDATE_MAX_BATCHES)


def consolidate_all(*, actor: Actor = SYSTEM, on_batch: Callable[[int], None] | None = None) -> list[ConsolidationOutcome]:
    """The scheduled job: every owner with memories waiting or insights to repair. Owners
    are apart: one whose run fails (its run row records why) does not stop the others."""
    User = get_user_model()
    outcomes = []
    stale_owners = Consolidation.objects.filter(stale_at__isnull=False).values("owner_id")
    due = Q(pk__in=unconsolidated_owner_ids()) | Q(pk__in=stale_owners)
    if settings.MEMORY_DIGESTS:
        due |= digests_due()
    for owner in User.objects.filter(due).order_by("pk"):
        try:
            outcomes.append(consolidate_owner(owner=owner, actor=actor, on_batch=on_batch))
        except ConsolidationBusy:
            log.info("consolidation for %s already running; skipped", owner)
        except Exception:
            log.exception("consolidation for %s failed; going on with the next owner", owner)
            if failed := ConsolidationRun.objects.owned_by(owner).order_by("-pk").first():
                outcomes.append(ConsolidationOutcome(run=failed, consolidations=[]))
    return outcomes


def unconsolidated_owner_ids():
    return (
        Memory.objects.filter(status=Memory.Status.READY, consolidated_at__isnull=True, duplicate_of__isnull=True)
        .values("owner_id")
        .distinct()
    )
