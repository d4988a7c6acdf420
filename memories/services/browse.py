"""Listing and searching an owner's memories for the bank page and the API."""

from django.db.models import Count, Q, QuerySet

from ..models import Memory

SORTS = {"new": ("-created_at", "-id"), "old": ("created_at", "id"), "importance": ("-importance", "-id"), "occurred": ("-occurred_at", "-id")}


def search_memories(*, owner, q: str = "", topic: str = "", entity: str = "", status: str = "", sort: str = "new") -> QuerySet[Memory]:
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
    return memories.annotate(link_count=Count("links_out", distinct=True) + Count("links_in", distinct=True)).order_by(*SORTS.get(sort, SORTS["new"]))
