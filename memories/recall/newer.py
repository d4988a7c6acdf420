"""What is true now, when no update was marked: among the first memories recall ranks, two
that say nearly the same about one thing (a change whose update check missed it, the
middle link of a chain) are put newer first, for a question that asks about now. A
question about a time ("in 2023", "before", "did I ...") keeps its order. Only places
within the first few change: which memories are recalled does not."""

from __future__ import annotations

import re

import numpy as np

from ..models import MemoryVector

# Cosine of two memories' vectors from which they say nearly the same about one thing
# (the offline update check's same-slot bound, llm/extractive/changes.py).
SAME_FACT = 0.90
HEAD = 10
_ABOUT_THE_PAST = re.compile(r"\b(?:did|was|were|had|used to|before|previously|formerly|back then|at the time)\b", re.I)


def newer_first(ranked: list, *, owner, question: str, dated: bool, k: int) -> list:
    if dated or _ABOUT_THE_PAST.search(question or "") or len(ranked) < 2:
        return ranked
    head = list(ranked[: min(k, HEAD)])
    # By the memories' keys alone, the owner checked on each row: with the owner in the
    # WHERE clause SQLite's planner walked the owner's index, every vector of the owner
    # (120 ms at 100k memories, for ten rows).
    rows = [
        (pk, model, raw)
        for pk, owner_id, model, raw in MemoryVector.objects.filter(memory_id__in=[c.id for c in head]).values_list(
            "memory_id", "owner_id", "model", "vector"
        )
        if owner_id == owner.pk
    ]
    models = {model for _, model, _ in rows}
    if len(models) != 1:
        return ranked  # no vectors, or of two models that cannot be compared
    vectors = {pk: np.frombuffer(raw, dtype="<f4") for pk, _, raw in rows}
    for i in range(len(head)):
        for j in range(i + 1, len(head)):
            a, b = head[i], head[j]
            if a.id in vectors and b.id in vectors and b.occurred_at > a.occurred_at:
                if float(vectors[a.id] @ vectors[b.id]) >= SAME_FACT:
                    head[i], head[j] = b, a
    return head + list(ranked[len(head) :])
