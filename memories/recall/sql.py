"""Recall reads memories with plain SQL: a few hundred rows a question, where the ORM's
query building and row conversion cost more than the database does. Which rows it may
read is readable.py."""

from __future__ import annotations

from ..models import Memory, MemoryLink

MEMORY_TABLE = Memory._meta.db_table
LINK_TABLE = MemoryLink._meta.db_table


def placeholders(values) -> str:
    return ", ".join(["%s"] * len(values))
