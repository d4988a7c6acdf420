"""Listing and searching an owner's memories for the bank page and the API."""

from django.db.models import Count, Q, QuerySet

from ..models import Memory
from .entities import entity_filter, json_item

SORTS = {"new": ("-created_at", "-id"), "old": ("created_at", "id"), "importance": ("-importance", "-id"), "occurred": ("-occurred_at", "-id")}


def filter_memories(*, owner, q: str = "", topic: str = "", entity: str = "", status: str = "", sort: str = "new") -> QuerySet[Memory]:
    """The owner's live memories matching the filters, in the chosen order (no annotations:
    cheap enough to page through 100,000 rows)."""
    memories = Memory.objects.filter(owner=owner)
    if q:
        memories = memories.filter(Q(summary__icontains=q) | Q(raw_text__icontains=q) | Q(source__icontains=q))
    # Entities and topics are JSON lists; matching the quoted value works on SQLite and PostgreSQL alike.
    if topic:
        memories = memories.filter(json_item("topics", topic))
    if entity:
        # "Priya" finds "Priya Raman" (and the other way) when the space knows one of her.
        memories = memories.filter(entity_filter(owner=owner, entity=entity))
    if status:
        memories = memories.filter(status=status)
    return memories.order_by(*SORTS.get(sort, SORTS["new"]))


def search_memories(**filters) -> QuerySet[Memory]:
    """filter_memories plus each memory's connection count (for a page of rows, not for counting)."""
    return filter_memories(**filters).annotate(
        link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)
    )


def get_memory(*, owner, memory_id: int) -> Memory | None:
    """One of the owner's live memories, or None (also when it is someone else's)."""
    return Memory.objects.filter(owner=owner, pk=memory_id).first()
