"""Near-duplicates: a memory whose text nearly repeats an earlier one of its owner's stays in
the bank, linked to the original, and recall shows only the original. Ingest, extraction
(a file's text is known only once read) and import all mark them the same way."""

from __future__ import annotations

from django.db.models import Q

from .. import textutil
from ..models import Event, Memory, MemoryLink
from .history import Actor, record

# Share of word shingles two texts must have in common to count as near-duplicates.
NEAR_DUPLICATE_JACCARD = 0.8
# Texts are compared on their first this many characters: a megabyte of text compared with
# 50 candidates took 20 s inside the ingest request; this bounds it to about a second.
NEAR_DUPLICATE_CHARS = 50_000


def fingerprint(memory: Memory) -> None:
    bands = textutil.minhash_bands(memory.raw_text[:NEAR_DUPLICATE_CHARS])
    if bands is not None:
        memory.sim_band0, memory.sim_band1, memory.sim_band2, memory.sim_band3 = bands


def link_near_duplicate(memory: Memory, actor: Actor) -> None:
    """Mark a memory whose text nearly repeats an earlier one: it stays in the bank,
    linked to the original, but recall shows only the original."""
    if memory.sim_band0 is None:
        return
    same_band = Q()
    for i in range(4):
        same_band |= Q(**{f"sim_band{i}": getattr(memory, f"sim_band{i}")})
    mine = textutil.shingles(memory.raw_text[:NEAR_DUPLICATE_CHARS])
    candidates = (
        Memory.objects.owned_by(memory.owner)
        .filter(duplicate_of__isnull=True)
        .filter(same_band)
        .exclude(pk=memory.pk)
        .order_by("pk")[:50]
    )
    for candidate in candidates:
        if textutil.jaccard(mine, textutil.shingles(candidate.raw_text[:NEAR_DUPLICATE_CHARS])) >= NEAR_DUPLICATE_JACCARD:
            memory.duplicate_of = candidate
            memory.save(update_fields=["duplicate_of"])
            MemoryLink.objects.create(from_memory=memory, to_memory=candidate, relationship="near-duplicate")
            record(memory, Event.Action.DUPLICATE, actor, after={"duplicate_of": candidate.pk})
            return
