"""The meaning arm: the owner's memories closest to the question by embedding."""

from __future__ import annotations

import logging

from .. import embeddings
from ..embeddings import hubness
from ..embeddings import index as vector_index

log = logging.getLogger(__name__)

MEANING_POOL = 150  # memories the meaning arm hands over
MEANING_REASON_RANKS = 50  # "close in meaning" is said of the arm's first this many


def nearest(owner, question: str, pool: int) -> list[tuple[int, float]]:
    """The owner's memories closest to the question by embedding, best first, with their
    score (cosine less what is typical: embeddings/hubness.py). Empty when embeddings are off, the owner has no vectors of the active model,
    or the backend fails (recall then stands on its lexical arm)."""
    if not question.strip():
        return []
    try:
        embedder = embeddings.get_embedder()
        if embedder is None:
            return []
        vector = embeddings.embed_question(embedder, question[:2000])
        return vector_index.search(
            owner_id=owner.pk,
            model=embedder.model,
            dim=embedder.dim,
            query=vector,
            limit=pool,
            content_free=hubness.content_free_direction(embedder),
        )
    except embeddings.EmbeddingError as exc:
        log.warning("recall without the meaning arm: %s", exc)
        return []
