"""Gemini embeddings through google-genai's embed_content (batchEmbedContents).

The client, its settings and the error handling (retries with backoff on 429/5xx and
timeouts) are memories/modelapi's, as for the Gemini chat provider: one configuration,
one set of rules.
"""

from __future__ import annotations

import numpy as np
from django.conf import settings
from google.genai import types

from ..modelapi import ProviderError, call_with_retries
from ..modelapi import gemini as api
from .base import Embedder, EmbeddingError, normalised

# The API takes at most this many texts in one batchEmbedContents call.
MAX_BATCH = 100


class GeminiEmbedder(Embedder):
    name = "gemini"
    max_batch = MAX_BATCH

    def __init__(self):
        self._client = None

    @property
    def model(self) -> str:
        return settings.GEMINI_EMBEDDING_MODEL

    @property
    def dim(self) -> int:
        return settings.GEMINI_EMBEDDING_DIM

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        config = types.EmbedContentConfig(
            task_type="RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT", output_dimensionality=self.dim
        )

        def once():
            try:
                if self._client is None:
                    self._client = api.client()
                response = self._client.models.embed_content(model=self.model, contents=list(texts), config=config)
            except Exception as exc:
                raise api.translate(exc) from None
            return [list(e.values or []) for e in (response.embeddings or [])]

        try:
            rows = call_with_retries(once, max_retries=settings.MEMORY_LLM_MAX_RETRIES, label="Gemini embeddings")
        except ProviderError as exc:
            raise EmbeddingError(str(exc)) from None
        if len(rows) != len(texts) or any(len(r) != self.dim for r in rows):
            raise EmbeddingError(
                f"Gemini returned {len(rows)} embeddings for {len(texts)} texts, not all of {self.dim} dimensions."
            )
        # Below its full 3072 dimensions gemini-embedding-001's vectors are not unit length.
        return normalised(rows)
