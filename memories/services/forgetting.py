"""Forgetting on purpose: importance that fades unless a memory is used, per-space
retention of old sources, and what an answer used (which keeps a memory fresh).

Expiry needs no task: recall leaves out a memory past its `expires_at` at once (it stays
in the bank, marked expired, until deleted or purged). Nothing here erases: retention
deletes through `delete_memory` (a tombstone and a history event), fading keeps the
importance it started from (`base_importance`) and any use brings it back.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from ..models import Event, Memory, SpaceSettings
from . import history
from .history import SCHEDULER, SYSTEM, Actor
from .lifecycle import delete_memory

# Fading moves in steps at least this large: a daily task does not write (or record) a
# change of a hundredth every day for every memory.
FADE_STEP = 0.05
FADE_FLOOR = 0.05
CHUNK = 2000  # rows read at a time
WRITE_BATCH = 500  # rows written in one transaction: a short hold of SQLite's write lock
RETENTION_BATCH = 1000

log = logging.getLogger(__name__)


def faded_importance(base: float, idle_days: float, *, after: int | None = None, half_life: int | None = None) -> float:
    """What `base` importance has faded to after `idle_days` without use."""
    after = settings.MEMORY_FADE_AFTER_DAYS if after is None else after
    half_life = settings.MEMORY_FADE_HALF_LIFE_DAYS if half_life is None else half_life
    if half_life <= 0 or idle_days <= after:
        return base
    return max(min(base, FADE_FLOOR), round(base * 0.5 ** ((idle_days - after) / half_life), 2))


def fade_importance(*, now: datetime | None = None, actor: Actor = SCHEDULER, owner=None) -> int:
    """Lower the importance of memories unused for a while; returns how many changed."""
    now = now or timezone.now()
    if settings.MEMORY_FADE_HALF_LIFE_DAYS <= 0:
        return 0
    cutoff = now - timedelta(days=settings.MEMORY_FADE_AFTER_DAYS)
    idle = Memory.objects.filter(status=Memory.Status.READY, created_at__lt=cutoff).filter(
        Q(last_recalled_at__isnull=True) | Q(last_recalled_at__lt=cutoff)
    )
    if owner is not None:
        idle = idle.owned_by(owner)
    changed = 0
    rows = idle.only("id", "owner_id", "importance", "base_importance", "created_at", "last_recalled_at").order_by("pk")
    batch: list[Memory] = []
    for memory in rows.iterator(chunk_size=CHUNK):
        base = memory.base_importance if memory.base_importance is not None else memory.importance
        since = max(memory.created_at, memory.last_recalled_at or memory.created_at)
        target = faded_importance(base, (now - since).total_seconds() / 86400)
        if memory.importance - target >= FADE_STEP or (target <= FADE_FLOOR < memory.importance):
            batch.append(_faded(memory, base, target))
        if len(batch) >= WRITE_BATCH:
            changed += _save_faded(batch, actor, now)
            batch = []
    return changed + _save_faded(batch, actor, now)


def _faded(memory: Memory, base: float, target: float) -> Memory:
    memory.before_fade = memory.importance
    memory.base_importance, memory.importance = base, target
    return memory


def _save_faded(batch: list[Memory], actor: Actor, now: datetime) -> int:
    if not batch:
        return 0
    with transaction.atomic():
        Memory.objects.bulk_update(batch, ["importance", "base_importance"])
        Event.objects.bulk_create(
            history.event(
                m,
                Event.Action.FADED,
                actor,
                before={"importance": m.before_fade},
                after={"importance": m.importance, "base_importance": m.base_importance},
                note="unused for a while",
                at=now,
            )
            for m in batch
        )
    return len(batch)


# What an answer used is marked at most this often per memory: asking the same thing again
# within it changes nothing a fading measured in days could notice, and writes nothing.
USED_RESOLUTION = timedelta(minutes=1)


def mark_used(*, owner, memory_ids, now: datetime | None = None, actor: Actor = SYSTEM) -> None:
    """An answer read these memories: they are fresh again, and a faded importance is back.
    Best effort: the answer is already made, so a busy database skips this (logged) rather
    than fail the question that read them."""
    ids = [int(i) for i in memory_ids]
    if not ids:
        return
    now = now or timezone.now()
    mine = (
        Memory.objects.owned_by(owner)
        .filter(pk__in=ids)
        .filter(
            Q(last_recalled_at__isnull=True) | Q(last_recalled_at__lt=now - USED_RESOLUTION) | Q(base_importance__isnull=False)
        )
    )
    try:
        with transaction.atomic():
            revived = list(mine.filter(base_importance__isnull=False).only("id", "owner_id", "importance", "base_importance"))
            mine.update(last_recalled_at=now)
            for memory in revived:
                Memory.objects.filter(pk=memory.pk).update(importance=memory.base_importance, base_importance=None)
            Event.objects.bulk_create(
                history.event(
                    m,
                    Event.Action.REVIVED,
                    actor,
                    before={"importance": m.importance},
                    after={"importance": m.base_importance},
                    note="used in an answer",
                    at=now,
                )
                for m in revived
            )
    except DatabaseError:
        log.warning("could not mark memories %s as used", ids, exc_info=True)


def apply_retention(*, now: datetime | None = None, actor: Actor = SCHEDULER) -> int:
    """Delete (tombstone, recorded) what each space's retention setting says to forget.
    Spaces are apart: one that fails is logged and the next goes on."""
    now = now or timezone.now()
    deleted = 0
    for space in SpaceSettings.objects.filter(retention_days__isnull=False).select_related("owner").order_by("pk"):
        try:
            deleted += _retain(space, now, actor)
        except Exception:
            log.exception("retention for %s failed; going on with the next space", space.owner)
    return deleted


def _retain(space: SpaceSettings, now: datetime, actor: Actor) -> int:
    old = Memory.objects.owned_by(space.owner).filter(occurred_at__lt=now - timedelta(days=space.retention_days))
    prefixes = space.source_prefixes()
    if prefixes:
        matches = Q()
        for prefix in prefixes:
            matches |= Q(source__startswith=prefix)
        old = old.filter(matches)
    # Important enough is kept, whatever fading did to it meanwhile.
    old = old.filter(importance__lt=space.keep_importance).filter(
        Q(base_importance__isnull=True) | Q(base_importance__lt=space.keep_importance)
    )
    deleted = 0
    for pk in old.values_list("pk", flat=True)[:RETENTION_BATCH]:
        if delete_memory(owner=space.owner, memory_id=pk, actor=actor) is not None:
            deleted += 1
    return deleted


def fade_everyone(*, now: datetime | None = None, actor: Actor = SCHEDULER) -> int:
    """Fading, owner by owner: one space whose rows the code cannot handle is logged and
    skipped, the others fade as usual."""
    faded = 0
    owners = Memory.objects.filter(status=Memory.Status.READY).values_list("owner_id", flat=True).distinct().order_by()
    for owner_id in sorted(set(owners)):
        try:
            faded += fade_importance(now=now, actor=actor, owner=get_user_model()(pk=owner_id))
        except Exception:
            log.exception("fading for owner %s failed; going on with the next owner", owner_id)
    return faded


def maintain(*, now: datetime | None = None, actor: Actor = SCHEDULER) -> dict[str, int]:
    """The daily task: fading and retention."""
    return {"faded": fade_everyone(now=now, actor=actor), "forgotten": apply_retention(now=now, actor=actor)}
