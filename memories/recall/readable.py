"""Which memories and consolidations recall may read: the one rule every arm applies."""

from __future__ import annotations

from .. import currency
from ..models import Consolidation, Memory, MemoryLink

# Read-your-writes: a memory saved a moment ago and still waiting for extraction is read
# too, by its raw text, and marked pending (see recall()); an agent that adds and then asks
# finds it. Failed ones are not: their text is kept for a retry, not vouched for.
READABLE_STATUSES = (Memory.Status.READY, Memory.Status.PENDING)
PENDING_REASON = "pending: saved, not extracted yet (found by its text)"


def readable_memories(owner):
    """The memories recall may ever return: the owner's, extracted and ready (or pending),
    live (the default manager leaves out deleted and superseded ones), not a near-duplicate,
    and not expired."""
    return Memory.objects.filter(owner=owner, status__in=READABLE_STATUSES, duplicate_of__isnull=True).filter(currency.not_expired())


def usable_consolidations(owner):
    """The owner's consolidations recall may use: not retired, no source gone."""
    return Consolidation.objects.filter(owner=owner).current()


# Recall reads memories with plain SQL: a few hundred rows a question, where the ORM's
# query building and row conversion cost more than the database does.
MEMORY_TABLE = Memory._meta.db_table
LINK_TABLE = MemoryLink._meta.db_table
READABLE_SQL = (
    "owner_id = %s AND status IN ('ready', 'pending') AND deleted_at IS NULL AND superseded_by_id IS NULL AND duplicate_of_id IS NULL"
)
# The same filter with its columns wrapped in no-op expressions, so SQLite's planner walks
# the occurred_at index (a few hundred rows of a period) rather than an owner index (all
# of the owner's memories).
READABLE_BY_DATE_SQL = (
    "owner_id + 0 = %s AND status || '' IN ('ready', 'pending') AND deleted_at IS NULL "
    "AND superseded_by_id + 0 IS NULL AND duplicate_of_id + 0 IS NULL"
)


def placeholders(values) -> str:
    return ", ".join(["%s"] * len(values))
