"""Listing and searching an owner's memories for the bank page and the API."""

from datetime import date, datetime, time, timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from ..models import Memory

SORTS = {"new": ("-created_at", "-id"), "old": ("created_at", "id"), "importance": ("-importance", "-id"), "occurred": ("-occurred_at", "-id")}


# Which time a date range applies to: when it happened, or when it was stored.
DATE_FIELDS = {"occurred": "occurred_at", "stored": "created_at"}


def day_start(day: date) -> datetime:
    """Midnight at the start of a calendar day in the server's time zone."""
    return timezone.make_aware(datetime.combine(day, time.min))


def filter_memories(*, owner, q: str = "", topic: str = "", entity: str = "", status: str = "", sort: str = "new",
                    source: str = "", date_by: str = "occurred", date_from: date | None = None,
                    date_to: date | None = None) -> QuerySet[Memory]:
    """The owner's live memories matching the filters, in the chosen order (no annotations:
    cheap enough to page through 100,000 rows). date_from and date_to are whole days, both
    included, of occurred_at or created_at (date_by)."""
    memories = Memory.objects.filter(owner=owner)
    field = DATE_FIELDS.get(date_by, "occurred_at")
    if date_from:
        memories = memories.filter(**{f"{field}__gte": day_start(date_from)})
    if date_to:
        memories = memories.filter(**{f"{field}__lt": day_start(date_to + timedelta(days=1))})
    if source:
        memories = memories.filter(source=source)
    if q:
        memories = memories.filter(Q(summary__icontains=q) | Q(raw_text__icontains=q) | Q(source__icontains=q))
    # Entities and topics are JSON lists; matching the quoted value works on SQLite and PostgreSQL alike.
    if topic:
        memories = memories.filter(topics__icontains=f'"{topic}"')
    if entity:
        memories = memories.filter(entities__icontains=f'"{entity}"')
    if status:
        memories = memories.filter(status=status)
    return memories.order_by(*SORTS.get(sort, SORTS["new"]))


def search_memories(**filters) -> QuerySet[Memory]:
    """filter_memories plus each memory's connection count (for a page of rows, not for counting)."""
    return filter_memories(**filters).annotate(
        link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)
    )
