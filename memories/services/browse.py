"""Listing and searching an owner's memories for the bank page and the API."""

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Now

from ..models import Memory

SORTS = {"new": ("-created_at", "-id"), "old": ("created_at", "id"), "importance": ("-importance", "-id"), "occurred": ("-occurred_at", "-id")}


# Whether a memory's fact still holds: current, superseded by a newer fact, or expired.
FACT_STATES = {
    "current": Q(outdated_by__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=Now())),
    "superseded": Q(outdated_by__isnull=False),
    "expired": Q(expires_at__lte=Now()),
}


def filter_memories(*, owner, q: str = "", topic: str = "", entity: str = "", status: str = "", sort: str = "new",
                    fact: str = "") -> QuerySet[Memory]:
    """The owner's live memories matching the filters, in the chosen order (no annotations:
    cheap enough to page through 100,000 rows)."""
    memories = Memory.objects.filter(owner=owner)
    if q:
        memories = memories.filter(Q(summary__icontains=q) | Q(raw_text__icontains=q) | Q(source__icontains=q))
    # Entities and topics are JSON lists; matching the quoted value works on SQLite and PostgreSQL alike.
    if topic:
        memories = memories.filter(topics__icontains=f'"{topic}"')
    if entity:
        memories = memories.filter(entities__icontains=f'"{entity}"')
    if status:
        memories = memories.filter(status=status)
    if fact in FACT_STATES:
        memories = memories.filter(FACT_STATES[fact])
    return memories.order_by(*SORTS.get(sort, SORTS["new"]))


def search_memories(**filters) -> QuerySet[Memory]:
    """filter_memories plus each memory's connection count (for a page of rows, not for counting)."""
    return filter_memories(**filters).annotate(
        link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)
    )
