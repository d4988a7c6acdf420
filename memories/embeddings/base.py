"""The embedding interface: text in, unit-length float32 vectors out.

A backend knows its model's name and dimension; both are stored with every vector, so
vectors of two models are never compared (see services/embed.py and embeddings/index.py).
Documents and questions are embedded apart: retrieval models (e5, Gemini's task types)
encode the two roles differently.
"""

from __future__ import annotations

import numpy as np


class EmbeddingError(Exception):
    """A backend could not embed (misconfigured, unreachable, refused). The memory stays
    readable by the lexical arm; the sweep embeds it later."""


class Embedder:
    #: The backend's name: local, gemini, openai_compat.
    name = ""
    #: At most this many texts a call (the API's limit, or what keeps a batch quick).
    max_batch = 64

    @property
    def model(self) -> str:
        """The model's name as stored with each vector (includes the dimension's source)."""
        raise NotImplementedError

    @property
    def dim(self) -> int:
        raise NotImplementedError

    @property
    def label(self) -> str:
        return f"{self.name}: {self.model} ({self.dim} dimensions)"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row unit length; batched by the caller or here."""
        out = [self._embed(texts[i : i + self.max_batch], query=False) for i in range(0, len(texts), self.max_batch)]
        return np.vstack(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], query=True)[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several questions, batched as documents are."""
        out = [self._embed(texts[i : i + self.max_batch], query=True) for i in range(0, len(texts), self.max_batch)]
        return np.vstack(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        raise NotImplementedError


def normalised(rows) -> np.ndarray:
    """float32 rows scaled to unit length (cosine = dot product); a zero row stays zero."""
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
