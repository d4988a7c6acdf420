"""One entity, several spellings: "Priya" and "Priya Raman" in one space are one person
when the space knows exactly one Priya with a surname. The bank's entity filter and new
memories' entities (at extraction) read the same rule."""

from __future__ import annotations

import json

from django.db.models import Q

from ..models import Memory

# How many memories are read to find the full forms of a first name.
SCAN = 500


def _prefixed(value: str) -> Q:
    escaped = json.dumps(value)[:-1]
    q = Q(entities__icontains=f'"{value} ')
    return q | Q(entities__icontains=f"{escaped} ") if escaped != f'"{value}' else q


def full_names(*, owner, first: str) -> set[str]:
    """The multi-word entities of the space that start with this one word."""
    if not first or " " in first:
        return set()
    rows = Memory.objects.owned_by(owner).filter(_prefixed(first)).values_list("entities", flat=True)[:SCAN]
    return {
        str(e) for row in rows for e in row or [] if str(e).startswith(first + " ") and str(e)[len(first) + 1 :][:1].isupper()
    }


def canonical(*, owner, entities: list[str]) -> list[str]:
    """A lone first name becomes the one full name the space knows for it."""
    out: dict[str, None] = {}
    for entity in entities:
        if " " not in entity and entity[:1].isupper() and not entity.isupper():
            names = full_names(owner=owner, first=entity)
            if len(names) == 1:
                entity = names.pop()
        out.setdefault(entity, None)
    return list(out)


def spellings(*, owner, entity: str) -> list[str]:
    """Every spelling the filter should match for this entity in this space."""
    names = {entity}
    if " " not in entity:
        full = full_names(owner=owner, first=entity)
        if len(full) == 1:
            names |= full
    else:
        first = entity.split()[0]
        if full_names(owner=owner, first=first) == {entity}:
            names.add(first)
    return sorted(names)
