"""Hubs: memories that sit close to every question.

An embedding model's cosines crowd together (e5's lie between 0.7 and 0.9), and some
passages are near whatever is asked: a line about practising taekwondo is closer to "Where
do I live now?" than "I moved from Paris to Berlin" is. Ranking by plain cosine lets such
hubs take the first places for questions they do not answer.

So a memory is scored by how much closer it is to this question than to what is typical:
its cosine to the question, less part of its cosine to the owner's average memory (what
every memory of this store shares) and part of its cosine to a question that asks nothing
in particular (what every question shares). Both are a shift of the question's vector, so
the search stays one matrix product.

Measured with the local model, the meaning arm alone, on each of LoCoMo's three dev
conversations (evidence recall at k=10 / 25 / 50, the mean of the three): plain cosine
52.9 / 66.3 / 75.6; less the typical memory 0.8 alone 60.1 / 72.4 / 82.6; the weights below
59.8 / 73.5 / 82.2 — every conversation gains at every k from 10 up, and weights from 0.5
to 1.0 all gain, so the choice is not fitted to one of them. The content-free question
(whose wording was written here, not taken from any data) matters most in a small store,
whose average memory says little: it is what ranks Berlin first in the four-note example.
"""

from __future__ import annotations

import threading

import numpy as np

from .base import Embedder

TYPICAL_MEMORY_WEIGHT = 0.5
CONTENT_FREE_WEIGHT = 0.5

# Questions with the shape of a question and no subject: their mean is the direction every
# question has in common.
CONTENT_FREE_QUESTIONS = (
    "What did I do?",
    "Who did I meet?",
    "When did it happen?",
    "How do I feel about it?",
    "What happened?",
    "Where did I go?",
    "Why did that happen?",
    "What do I like?",
    "What is going on?",
    "Tell me about it.",
    "What did they say?",
    "What was it about?",
    "How did it go?",
    "What are my plans?",
    "Who is involved?",
    "What do I have?",
)

_content_free: dict[str, np.ndarray] = {}
_lock = threading.Lock()


def content_free_direction(embedder: Embedder) -> np.ndarray:
    """The mean of the content-free questions' vectors, once per process and model."""
    key = f"{embedder.name}:{embedder.model}"
    with _lock:
        if key in _content_free:
            return _content_free[key]
    vectors = embedder.embed_queries(list(CONTENT_FREE_QUESTIONS))
    direction = vectors.mean(axis=0).astype(np.float32)
    with _lock:
        _content_free[key] = direction
    return direction


def typical_memory(vectors: np.ndarray) -> np.ndarray:
    """The owner's average memory (unit rows in, the plain mean out; zeros for none)."""
    if not len(vectors):
        return np.zeros(vectors.shape[-1], dtype=np.float32)
    return vectors.mean(axis=0, dtype=np.float64).astype(np.float32)


def shifted_question(question: np.ndarray, *, typical: np.ndarray, content_free: np.ndarray | None) -> np.ndarray:
    """The question's vector less what is typical; a memory's score is its dot product with it."""
    shifted = question.astype(np.float32) - TYPICAL_MEMORY_WEIGHT * typical
    if content_free is not None:
        shifted = shifted - CONTENT_FREE_WEIGHT * content_free
    return shifted


__all__ = ["content_free_direction", "shifted_question", "typical_memory"]
