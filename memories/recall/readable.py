"""Which memories recall may read: one rule, as an ORM filter and as plain SQL.

A memory is readable when it is its owner's, extracted (ready) or waiting for extraction
(pending: read-your-writes, an agent that adds and then asks finds it), live (not deleted,
not superseded by a newer version: the default manager's LIVE), not a near-duplicate,
and not expired. Failed ones are not: their text is kept for a retry, not vouched for.

- `readable_memories(owner)`: the ORM filter, all of it.
- `readable_condition()`, `READABLE_SQL`: the same for plain SQL (recall's candidates,
  the full-text index's scope token and queries in lexical_index.py and search.py) - all of it but expiry,
  which passes with time and so cannot be kept in an index: recall drops expired
  memories from its ranked list (current.prefer_current).

In review mode (MEMORY_REVIEW_MODE) recall() also leaves pending ones out of what it
hands over: new input waits for a person's approval. That is a setting read per call,
where the index's scope is fixed in its triggers.
"""

from __future__ import annotations

from . import current
from ..models import Consolidation, Memory

READABLE_STATUSES = (Memory.Status.READY, Memory.Status.PENDING)
# Columns that hide a memory once set: deleted, superseded (the default manager's LIVE),
# a near-duplicate of another.
HIDDEN_WHEN_SET = ("deleted_at", "superseded_by_id", "duplicate_of_id")
_STATUSES_SQL = ", ".join(f"'{status.value}'" for status in READABLE_STATUSES)


def readable_memories(owner):
    """The memories recall may ever return: the owner's, extracted and ready (or pending),
    live (the default manager leaves out deleted and superseded ones), not a near-duplicate,
    and not expired."""
    return Memory.objects.filter(owner=owner, status__in=READABLE_STATUSES, duplicate_of__isnull=True).filter(
        current.not_expired()
    )


def usable_consolidations(owner):
    """The owner's consolidations recall may use: not retired, no source gone."""
    return Consolidation.objects.filter(owner=owner).current()


def readable_condition(row: str = "", columns: set[str] | None = None) -> str:
    """SQL that holds while a memory may be read, whoever owns it (expiry aside). `row`: the
    table or trigger row it is read from ("new", "m"); `columns`: the columns the table has
    (the index's migrations run before the later of them existed)."""
    at = f"{row}." if row else ""
    hidden = [c for c in HIDDEN_WHEN_SET if columns is None or c in columns]
    return " AND ".join([f"{at}status IN ({_STATUSES_SQL})", *(f"{at}{c} IS NULL" for c in hidden)])


# The owner's readable memories in plain SQL; the owner's id is its first parameter.
READABLE_SQL = f"owner_id = %s AND {readable_condition()}"
# The same with its columns wrapped in no-op expressions, so SQLite's planner walks the
# occurred_at index (a few hundred rows of a period) rather than an owner index (all of
# the owner's memories).
READABLE_BY_DATE_SQL = " AND ".join(
    ["owner_id + 0 = %s", f"status || '' IN ({_STATUSES_SQL})"]
    + [f"{c} + 0 IS NULL" if c.endswith("_id") else f"{c} IS NULL" for c in HIDDEN_WHEN_SET]
)
