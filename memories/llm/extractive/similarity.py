"""How close texts are: by meaning when an embedding layer is there, by words otherwise.

THE SEAM: `meaning_vectors` is the one function the embedding layer plugs into. It returns
unit-length vectors (one row a text) or None. While it returns None, everything here falls
back to a lexical similarity (TF-IDF cosine over stemmed words) written for this engine.
The answerer (answers.py) and the consolidation grouping (insights.py) only ever call
`similarity_matrix` and `neighbours` below, so pointing `meaning_vectors` at
`memories.embeddings` gives both of them meaning at once.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict

import numpy as np

from ... import textutil

log = logging.getLogger(__name__)


# Embedding costs ~18 ms a passage on these CPUs: the sentences of one answer's context are
# embedded, but a larger set (a consolidation backlog of thousands) is compared by words
# rather than spend minutes embedding again what the stored vectors already hold.
MAX_EMBEDDED_TEXTS = 400


def meaning_vectors(texts: list[str], *, query: bool = False) -> np.ndarray | None:
    """(len(texts), dim) unit float32 vectors from the embedding layer (memories.embeddings),
    or None when it is off or the set is too large (the lexical fallback is then used).
    `query`: the texts are questions (e5-style models embed questions and passages apart)."""
    from ... import embeddings

    if len(texts) > MAX_EMBEDDED_TEXTS:
        return None
    embedder = embeddings.get_embedder()
    if embedder is None:
        return None
    if query:
        return np.vstack([embeddings.embed_question(embedder, text) for text in texts])
    return embedder.embed_documents(texts)


def _vectors(texts: list[str], *, query: bool = False) -> np.ndarray | None:
    if not texts:
        return None
    try:
        vectors = meaning_vectors(texts, query=query)
    except Exception:  # the embedding layer down: answer and consolidate by words
        log.exception("embedding failed; using the lexical similarity")
        return None
    if vectors is None or len(vectors) != len(texts):
        return None
    return np.asarray(vectors, dtype=np.float32)


def by_meaning() -> bool:
    """Whether similarities come from an embedding layer (for reports and tests)."""
    return _vectors(["probe"]) is not None


# --- lexical fallback ---------------------------------------------------------------------


def _bag(text: str) -> Counter:
    return Counter(textutil.terms(text))


# Pseudo-documents added to the count: in a space of three notes every shared word would
# otherwise look common, and nothing would ever be close.
IDF_PRIOR = 20


def _tfidf(bags: list[Counter], df: dict[str, int], n: int) -> list[dict[str, float]]:
    out = []
    for bag in bags:
        vec = {t: (1 + math.log(c)) * math.log(1 + (n + IDF_PRIOR) / (1 + df.get(t, 0))) for t, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        out.append({t: v / norm for t, v in vec.items()})
    return out


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def lexical_matrix(queries: list[str], docs: list[str]) -> np.ndarray:
    """TF-IDF cosine, IDF counted over the documents (what is rare among them counts)."""
    doc_bags = [_bag(d) for d in docs]
    df: Counter = Counter()
    for bag in doc_bags:
        df.update(bag.keys())
    n = len(docs)
    dv = _tfidf(doc_bags, df, n)
    qv = _tfidf([_bag(q) for q in queries], df, n)
    out = np.zeros((len(queries), len(docs)), dtype=np.float32)
    for i, q in enumerate(qv):
        for j, d in enumerate(dv):
            out[i, j] = _cosine(q, d)
    return out


# --- what callers use ------------------------------------------------------------------------


def similarity_matrix(queries: list[str], docs: list[str], *, queries_are_questions: bool = True) -> np.ndarray:
    """Cosine similarity in [0, 1] of each query to each document: (len(queries), len(docs))."""
    if not queries or not docs:
        return np.zeros((len(queries), len(docs)), dtype=np.float32)
    qv = _vectors(queries, query=queries_are_questions)
    dv = _vectors(docs) if qv is not None else None
    if qv is not None and dv is not None:
        return np.clip(qv @ dv.T, 0.0, 1.0)
    return lexical_matrix(queries, docs)


def question_closeness(question: str, docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(cosine, distinct) of each document to one question. By meaning, `distinct` is how much
    closer a document is to the question than to what is typical (embeddings.hubness: a
    sentence near every question does not win them all); by words both are the TF-IDF cosine."""
    if not docs:
        empty = np.zeros(0, dtype=np.float32)
        return empty, empty
    qv = _vectors([question], query=True)
    dv = _vectors(docs) if qv is not None else None
    if qv is None or dv is None:
        cosine = lexical_matrix([question], docs)[0]
        return cosine, cosine
    from ...embeddings import get_embedder, hubness

    try:
        content_free = hubness.content_free_direction(get_embedder())
    except Exception:  # the embedding layer down between two calls: no shift for it
        log.exception("no content-free question; ranking by the typical sentence alone")
        content_free = None
    shifted = hubness.shifted_question(qv[0], typical=hubness.typical_memory(dv), content_free=content_free)
    return np.clip(dv @ qv[0], 0.0, 1.0), dv @ shifted


def neighbours(texts: list[str], *, k: int = 8, min_similarity: float = 0.2) -> list[list[tuple[int, float]]]:
    """For each text, up to k others closest to it (index, similarity), closest first, at
    least `min_similarity` close. Scales to tens of thousands of texts: dense vectors are
    compared a block at a time; lexical vectors only with texts sharing a word."""
    vectors = _vectors(texts)
    if vectors is not None:
        return _dense_neighbours(vectors, k, min_similarity)
    return _lexical_neighbours(texts, k, min_similarity)


def _dense_neighbours(vectors: np.ndarray, k: int, min_similarity: float) -> list[list[tuple[int, float]]]:
    out: list[list[tuple[int, float]]] = []
    n = len(vectors)
    for start in range(0, n, 1024):
        block = vectors[start : start + 1024] @ vectors.T
        for row_index, row in enumerate(block):
            row[start + row_index] = -1.0
            top = np.argpartition(-row, min(k, n - 1) - 1)[:k] if n > 1 else []
            out.append(sorted(((int(j), float(row[j])) for j in top if row[j] >= min_similarity), key=lambda p: -p[1]))
    return out


# A word in more than this share of texts joins no one: it is how people talk, not a topic.
MAX_WORD_SHARE = 0.05
MAX_POSTINGS = 400
MAX_CANDIDATES = 300


def _lexical_neighbours(texts: list[str], k: int, min_similarity: float) -> list[list[tuple[int, float]]]:
    bags = [_bag(t) for t in texts]
    df: Counter = Counter()
    for bag in bags:
        df.update(bag.keys())
    n = len(texts)
    vectors = _tfidf(bags, df, n)
    limit = max(MAX_POSTINGS if n > 200 else n, 2)
    common = {t for t, c in df.items() if n > 50 and c > max(3, MAX_WORD_SHARE * n)}
    postings: dict[str, list[int]] = defaultdict(list)
    for i, vec in enumerate(vectors):
        for t in vec:
            if t not in common and len(postings[t]) < limit:
                postings[t].append(i)
    out = []
    for i, vec in enumerate(vectors):
        # The rarest shared words find the closest texts; a bounded number are compared.
        candidates: set[int] = set()
        for t in sorted((t for t in vec if t not in common), key=lambda t: df[t]):
            candidates.update(j for j in postings.get(t, ()) if j != i)
            if len(candidates) >= MAX_CANDIDATES:
                break
        scored = sorted(((j, _cosine(vec, vectors[j])) for j in candidates), key=lambda p: -p[1])
        out.append([(j, s) for j, s in scored[:k] if s >= min_similarity])
    return out
