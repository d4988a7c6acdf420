"""How close texts are: by meaning when an embedding layer is there, by words otherwise.

THE SEAM: `meaning_vectors` is the one function the embedding layer plugs into (through
`use_meaning`, wired by the app: this layer does not import it). It returns unit-length
vectors (one row a text) or None. While it returns None, everything here falls
back to a lexical similarity (TF-IDF cosine over stemmed words) written for this engine.
The answerer (answers.py) and the consolidation grouping (insights.py) only ever call
`similarity_matrix` and `neighbours` below, so pointing `meaning_vectors` at
an embedding layer gives both of them meaning at once.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ... import textutil

log = logging.getLogger(__name__)


# Embedding costs ~18 ms a passage on these CPUs: the sentences of one answer's context are
# embedded, but a larger set (a consolidation backlog of thousands) is compared by words
# rather than spend minutes embedding again what the stored vectors already hold.
MAX_EMBEDDED_TEXTS = 400


class Meaning(Protocol):
    """What this layer needs of an embedding layer; the app wires one in (apps.py), so the
    engine never imports it."""

    def documents(self, texts: list[str]) -> np.ndarray: ...

    def questions(self, texts: list[str]) -> np.ndarray: ...

    def shifted_question(self, question: np.ndarray, documents: np.ndarray) -> np.ndarray:
        """The question's vector less what every document and every question share."""
        ...

    def content_free(self) -> np.ndarray:
        """A unit vector for a question that asks nothing in particular."""
        ...


_meaning_source: Callable[[], Meaning | None] = lambda: None


def use_meaning(source: Callable[[], Meaning | None]) -> None:
    """Where meaning comes from: called with no argument, returns the active embedding
    layer's adapter or None (off). Set once at start-up."""
    global _meaning_source
    _meaning_source = source


def meaning() -> Meaning | None:
    try:
        return _meaning_source()
    except Exception:  # a misconfigured embedding layer: words only
        log.exception("no embedding layer; using the lexical similarity")
        return None


def meaning_vectors(texts: list[str], *, query: bool = False) -> np.ndarray | None:
    """(len(texts), dim) unit float32 vectors from the embedding layer, or None when it is
    off or the set is too large (the lexical fallback is then used).
    `query`: the texts are questions (e5-style models embed questions and passages apart)."""
    if len(texts) > MAX_EMBEDDED_TEXTS:
        return None
    source = meaning()
    if source is None:
        return None
    return source.questions(texts) if query else source.documents(texts)


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


@dataclass(frozen=True)
class Closeness:
    """Each document's closeness to one question.

    cosine: plain similarity. distinct: how much closer a document is to the question than
    to what is typical of these documents (a sentence near every question does not win
    them all); it ranks, and means nothing across contexts. margin: how much closer the
    document is to this question than to a question asking nothing in particular -- the
    same scale in a context of one note as of fifty, so it can say "this does not answer";
    None by words (the lexical similarity needs a shared word, which says that already)."""

    cosine: np.ndarray
    distinct: np.ndarray
    margin: np.ndarray | None = None


def question_closeness(question: str, docs: list[str]) -> Closeness:
    if not docs:
        empty = np.zeros(0, dtype=np.float32)
        return Closeness(empty, empty)
    qv = _vectors([question], query=True)
    dv = _vectors(docs) if qv is not None else None
    source = meaning() if dv is not None else None
    if qv is None or dv is None or source is None:
        cosine = lexical_matrix([question], docs)[0]
        return Closeness(cosine, cosine)
    cosine = dv @ qv[0]
    try:
        shifted = source.shifted_question(qv[0], dv)
        margin = cosine - dv @ source.content_free()
    except Exception:  # the embedding layer down between two calls: plain cosine
        log.exception("no content-free question; ranking by plain cosine")
        return Closeness(np.clip(cosine, 0.0, 1.0), cosine)
    return Closeness(np.clip(cosine, 0.0, 1.0), dv @ shifted, margin.astype(np.float32))


def neighbours(texts: list[str], *, k: int = 8, min_similarity: float = 0.2) -> list[list[tuple[int, float]]]:
    """For each text, up to k others closest to it (index, similarity), closest first, at
    least `min_similarity` close. Scales to tens of thousands of texts: dense vectors are
    compared a block at a time; lexical vectors only with texts sharing a word."""
    vectors = _vectors(texts)
    if vectors is not None:
        return _dense_neighbours(vectors, k, min_similarity)
    return _lexical_neighbours(texts, k, min_similarity)


def document_vectors(texts: list[str]) -> np.ndarray | None:
    """The texts' vectors by meaning, or None (no embedding layer, or too many texts)."""
    return _vectors(texts)


def dense_neighbours(vectors: np.ndarray, k: int, min_similarity: float) -> list[list[tuple[int, float]]]:
    """`neighbours` over vectors the caller already holds."""
    return _dense_neighbours(vectors, k, min_similarity)


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
