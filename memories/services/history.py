"""The audit trail: every change to a memory or consolidation is an Event row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..models import Consolidation, Event, Memory

MEMORY_FIELDS = ("source", "summary", "entities", "topics", "importance", "occurred_at", "status")
EDITABLE_FIELDS = ("summary", "entities", "topics", "importance", "occurred_at", "expires_at")


@dataclass(frozen=True)
class Actor:
    """Who made a change, as the history shows it."""

    label: str
    user: Any = None

    @classmethod
    def for_user(cls, user) -> Actor:
        return cls(f"user:{user.get_username()}", user)

    @classmethod
    def for_token(cls, token) -> Actor:
        return cls(f"api token {token.name!r} ({token.prefix}…) of {token.owner.get_username()}", token.owner)

    @classmethod
    def for_command(cls, name: str) -> Actor:
        return cls(f"command:{name}")


SYSTEM = Actor("system")
SCHEDULER = Actor("scheduler")
INBOX_WATCHER = Actor("inbox watcher")


def _jsonable(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def snapshot(memory: Memory, fields=MEMORY_FIELDS) -> dict:
    return {name: _jsonable(getattr(memory, name)) for name in fields}


def consolidation_snapshot(consolidation: Consolidation) -> dict:
    return {
        "summary": consolidation.summary,
        "insight": consolidation.insight,
        "sources": sorted(consolidation.sources.owned_by(consolidation.owner_id).values_list("pk", flat=True)),
    }


def event(
    subject,
    action: str,
    actor: Actor | None,
    *,
    before: dict | None = None,
    after: dict | None = None,
    note: str = "",
    at: datetime | None = None,
) -> Event:
    """The history record of one change, unsaved: what `record` saves, and what the bulk
    writers (a backlog stored, faded or revived at once) save many of in one INSERT."""
    kind = Event.Subject.MEMORY if isinstance(subject, Memory) else Event.Subject.CONSOLIDATION
    actor = actor or SYSTEM
    made = Event(
        owner_id=subject.owner_id,
        subject_type=kind,
        subject_id=subject.pk,
        action=action,
        actor=actor.label[:200],
        actor_user=actor.user,
        before=before or {},
        after=after or {},
        note=note[:500],
    )
    if at is not None:
        made.created_at = at
    return made


def record(
    subject, action: str, actor: Actor | None, *, before: dict | None = None, after: dict | None = None, note: str = ""
) -> Event:
    made = event(subject, action, actor, before=before, after=after, note=note)
    made.save()
    return made


def record_many(memories, action: str, actor: Actor | None, *, after: dict | None = None, note: str = "") -> None:
    """The same event for many memories in one INSERT (a consolidation of a whole backlog)."""
    Event.objects.bulk_create(event(m, action, actor, after=after, note=note) for m in memories)


def memory_history(*, owner, memory_id: int):
    """The events of one of the owner's memories, newest first (also after a purge)."""
    return Event.objects.owned_by(owner).filter(subject_type=Event.Subject.MEMORY, subject_id=memory_id)


def consolidation_history(*, owner, consolidation_id: int):
    return Event.objects.owned_by(owner).filter(subject_type=Event.Subject.CONSOLIDATION, subject_id=consolidation_id)
