"""What recall would otherwise work out of a memory on every question, worked out when the
memory is written and stored on it: the times its words name (Memory.event_dates,
dates.stored_event_dates) and what showing it costs (Memory.context_cost,
budget.context_cost_of), the key words of its entities and topics (Memory.recall_keys,
words.stored_keys_of). Memory.save and bulk_create call `store` (apps.py hands it to
the models, which may not import recall). A stored value names what it was made of, and
one that no longer agrees with the memory (written by a path that bypassed save: a bare
queryset update, raw SQL) is never used: recall works it out again."""

from __future__ import annotations

import json

from django.db import connection

from .budget import context_cost_of
from .dates import event_dates_of
from .words import stored_keys_of

# What a memory's note (result.memory_note) is made of.
SHOWN_FIELDS = (
    "raw_text",
    "summary",
    "entities",
    "topics",
    "source",
    "importance",
    "occurred_at",
    "valid_until",
    "outdated_by_id",
    "metadata",
)


def store(memory) -> list[str]:
    """Set the memory's stored figures as it is now; the fields set (not those made of a
    field the instance has deferred)."""
    deferred = memory.get_deferred_fields()
    done = []
    if not {"raw_text", "occurred_at"} & deferred:
        memory.event_dates = event_dates_of(memory)
        done.append("event_dates")
    if not set(SHOWN_FIELDS) & deferred:
        memory.context_cost = context_cost_of(memory)
        done.append("context_cost")
    if not {"entities", "topics"} & deferred:
        memory.recall_keys = stored_keys_of(*(_as_read(memory, name) for name in ("entities", "topics")))
        done.append("recall_keys")
    return done


def _as_read(memory, name: str):
    """A JSON field's value as recall's plain SQL will read it back: the JSON text the ORM
    writes on SQLite; on PostgreSQL, jsonb's own text (Django's loaders hand jsonb over as
    text, not lists), which for a list of strings is json.dumps's with the letters kept.
    Should the two ever differ, the stored keys do not match and are worked out again."""
    value = getattr(memory, name)
    if connection.vendor == "postgresql":
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            return value
    try:
        written = memory._meta.get_field(name).get_db_prep_value(value, connection)
    except (TypeError, ValueError):
        return value
    return written if isinstance(written, str) else value
