"""Vector search over one owner's memories: in PostgreSQL with pgvector when it is there
(embeddings/pgvector.py), else numpy over the owner's vectors of one model.

For numpy, each process keeps the owner's matrix, at half precision, in a cache bounded
in bytes (MEMORY_VECTOR_CACHE_MB; the least recently searched owners leave first) and keeps it in
step with the table by a cheap stamp read before every search (the newest vector's time,
and every few seconds how many vectors the owner has): vectors added or replaced since
are read and merged in; anything else (a vector removed) reloads the owner's matrix. Only
the asking owner's rows of the active model are ever loaded, so another owner's vectors
are never searched and vectors of two models are never compared. Hidden memories
(deleted, superseded, near-duplicates) hold no vector (embeddings/store.py), so they
neither turn up here nor weigh in the owner's typical memory; whether a memory may be
read at all is still decided by recall when it fetches the candidates.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import simsimd
from django.conf import settings
from django.db import connection

from ..models import MemoryVector
from . import hubness, pgvector, store

log = logging.getLogger(__name__)

_TABLE = MemoryVector._meta.db_table


@dataclass
class _Matrix:
    stamp: tuple
    ids: np.ndarray  # int64 memory ids
    vectors: np.ndarray  # (n, dim) float16 (DTYPE), C-contiguous: the first n rows of buffer
    buffer: np.ndarray  # (capacity, dim): room to append without copying what is there
    typical: np.ndarray = field(init=False)  # (dim,) the owner's average memory (see hubness)
    counted_at: float = field(init=False)  # time.monotonic() when stamp's count was read

    def __post_init__(self):
        self.typical = hubness.typical_memory(self.vectors)
        self.counted_at = time.monotonic()


# The cache keeps vectors at half precision: half the memory of float32 (a web worker
# serving 20 owners of 20,000 memories caches 296 MB instead of 589), and half the bytes
# the product reads, which is what it costs. numpy multiplies float16 with no SIMD (120 ms
# at 100k x 384, against 14 ms for float32); simsimd's kernels read float16 at memory
# speed (about 5 ms) and let go of the GIL meanwhile. The first candidates are then scored
# again in float32 (their rows widened, the question as it came), so the order handed over
# is float32's up to the rows' rounding (about 1e-4 on a cosine).
DTYPE = np.float16
RESCORE_FACTOR = 2  # candidates scored again in float32, per one asked for
RESCORE_MIN = 300


def _scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Every row's dot product with the query (rows at half precision), as float32."""
    if not len(vectors):
        return np.zeros(0, dtype=np.float32)
    return np.asarray(simsimd.cdist(query.astype(DTYPE)[None, :], vectors, metric="dot"), dtype=np.float32)[0]


def _nearest(vectors: np.ndarray, query: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows (indexes) of the `limit` best dot products, best first, and their scores:
    found at half precision, the first RESCORE_FACTOR x limit scored again in float32."""
    query = np.asarray(query, dtype=np.float32)
    scores = _scores(vectors, query)
    wide = min(len(scores), max(limit * RESCORE_FACTOR, RESCORE_MIN))
    rows = np.argpartition(-scores, wide - 1)[:wide] if wide < len(scores) else np.arange(len(scores))
    exact = vectors[rows].astype(np.float32) @ query
    n = min(limit, len(rows))
    best = np.argsort(-exact, kind="stable")[:n]
    return rows[best], exact[best]


_cache: dict[tuple[int, str], _Matrix] = {}
_lock = threading.Lock()


# How often the owner's vector count is read again when nothing new has arrived, on
# PostgreSQL: counting a large store's rows costs more than the rest of the check (4 ms at
# 100k vectors, against 0.01 ms for the newest one's time), and all it catches is a vector
# removed, which only leaves a row that recall's fetch drops (its memory is gone or
# unreadable) until then. On SQLite triggers keep the count (store.owner_rows): read each time.
RECOUNT_SECONDS = 10.0


# An owner's vectors are read from the table this many rows at a time, each chunk widened
# straight into the half-precision matrix. Read whole (fetchall, one joined float32
# buffer, then the float16 copy) a load of 20,000 vectors passed through about 80 MB of
# short-lived blocks that the allocator kept: a worker serving 20 owners of 20,000 in turn
# with the cache at 256 MB (252 held) grew by 287 MB read whole and by 241 MB in chunks
# (scripts/bench_vectors.py --loader whole chunks). 0: read whole, as before.
LOAD_CHUNK_ROWS = 1024


def _load(owner_id: int, model: str, dim: int, after=None, capacity: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, vectors, buffer): the owner's vectors of the model (those stored after `after`
    when given), vectors the first rows of buffer; `capacity` is how many rows to expect
    (the owner's count, of every model: a few more than these)."""
    sql = f"SELECT memory_id, vector FROM {_TABLE} WHERE owner_id = %s AND model = %s AND dim = %s"
    params: list = [owner_id, model, dim]
    if after is not None:
        sql += " AND embedded_at > %s"
        params.append(after)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if not LOAD_CHUNK_ROWS:
            rows = cursor.fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), dim).astype(DTYPE)
            return ids, vectors, vectors
        ids, buffer, n = np.empty(capacity, dtype=np.int64), np.empty((capacity, dim), dtype=DTYPE), 0
        while rows := cursor.fetchmany(LOAD_CHUNK_ROWS):
            if n + len(rows) > len(buffer):  # more than expected (stored since the count)
                grown = max(n + len(rows), len(buffer) * 5 // 4)
                ids, buffer = np.concatenate([ids[:n], np.empty(grown - n, np.int64)]), _grow(buffer, n, grown)
            ids[n : n + len(rows)] = [r[0] for r in rows]
            buffer[n : n + len(rows)] = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(-1, dim)
            n += len(rows)
    if n < len(buffer) * 3 // 4:  # many of the owner's vectors are another model's
        buffer = buffer[:n].copy()
    return ids[:n].copy(), buffer[:n], buffer


def _matrix(owner_id: int, model: str, dim: int) -> _Matrix:
    key = (owner_id, model)
    stamp, counted = store.owner_stamp("vector", owner_id, model, _cache.get(key), recount_seconds=RECOUNT_SECONDS)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.stamp == stamp:
            if counted:
                cached.counted_at = time.monotonic()
            return cached
        if cached is not None and cached.stamp[0] == stamp[0] and cached.stamp[2] is not None and stamp[2] != cached.stamp[2]:
            # Vectors were added or replaced (the usual changes: memories arrive, a text is
            # edited): read only those newer than the cached ones, and keep them when that
            # accounts for the owner's count; anything else (a vector removed, another
            # model's) reloads.
            ids, vectors, _ = _load(owner_id, model, dim, after=cached.stamp[2])
            merged = _merge(cached, stamp, ids, vectors)
            if merged is not None:
                return _keep(key, merged)
        ids, vectors, buffer = _load(owner_id, model, dim, capacity=stamp[1])
        return _keep(key, _Matrix(stamp, ids, vectors, buffer))


def _grow(buffer: np.ndarray, n: int, rows: int) -> np.ndarray:
    """A buffer of `rows` rows holding the first n of `buffer`."""
    grown = np.empty((rows, buffer.shape[1]), dtype=DTYPE)
    grown[:n] = buffer[:n]
    return grown


def _merge(cached: _Matrix, stamp: tuple, ids: np.ndarray, vectors: np.ndarray) -> _Matrix | None:
    known = np.isin(ids, cached.ids)
    n, added = len(cached.ids), int((~known).sum())
    if n + added != stamp[1]:
        return None
    buffer = cached.buffer
    if known.any():
        # A replaced vector: the rows searches in flight read must not change under them.
        buffer = buffer.copy()
        order = np.argsort(cached.ids)
        buffer[order[np.searchsorted(cached.ids, ids[known], sorter=order)]] = vectors[known]
    if n + added > len(buffer):
        # Room for a quarter more, so a store that grows a few vectors at a time is not
        # copied whole on every search (and the spare room stays a small part of the cache).
        buffer = _grow(buffer, n, max((n + added) * 5 // 4, n + added + 256))
    # Rows past n are read by no search in flight: appending there is safe.
    buffer[n : n + added] = vectors[~known]
    return _Matrix(stamp, np.concatenate([cached.ids, ids[~known]]), buffer[: n + added], buffer)


def cache_limit_bytes() -> int:
    return max(0, settings.MEMORY_VECTOR_CACHE_MB) * 1024 * 1024


def cached_bytes() -> int:
    """What the cache holds now (every owner's buffer, spare room included)."""
    return sum(m.buffer.nbytes + m.ids.nbytes for m in list(_cache.values()))


def _keep(key, matrix: _Matrix) -> _Matrix:
    _cache.pop(key, None)
    limit = cache_limit_bytes()
    size = matrix.buffer.nbytes + matrix.ids.nbytes
    if size > limit:
        # Larger than the whole cache: searched from the table each time rather than
        # crowding out everyone else (raise MEMORY_VECTOR_CACHE_MB, or use pgvector).
        log.warning("owner %s's vectors (%d MB) exceed MEMORY_VECTOR_CACHE_MB; not cached", key[0], size >> 20)
        return matrix
    _cache[key] = matrix
    total = cached_bytes()
    while total > limit and len(_cache) > 1:
        oldest = next(iter(_cache))
        gone = _cache.pop(oldest)
        total -= gone.buffer.nbytes + gone.ids.nbytes
    return matrix


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def search(
    *, owner_id: int, model: str, dim: int, query: np.ndarray, limit: int, content_free: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The owner's memories (with vectors of this model) closest in meaning to the question,
    best first, with their score: the cosine to the question less part of the cosine to
    what is typical (see hubness; content_free is the model's content-free question)."""
    if pgvector.enabled():
        return pgvector.search(owner_id=owner_id, model=model, dim=dim, query=query, limit=limit, content_free=content_free)
    return _search(_matrix(owner_id, model, dim), query, limit, content_free)


def searcher(*, owner_id: int, model: str, dim: int):
    """For numpy: `search` cut in two. The owner's matrix is brought up to date now (it
    reads the table, so on the asking thread: Django's connections are per thread), and
    the function returned searches it with the database untouched, so it may run on
    another thread: (query, limit, content_free) -> what `search` returns. None on
    pgvector, whose search is a query."""
    if pgvector.enabled():
        return None
    return functools.partial(_search, _matrix(owner_id, model, dim))


def _search(m: _Matrix, query: np.ndarray, limit: int, content_free: np.ndarray | None) -> list[tuple[int, float]]:
    if not len(m.ids) or query.shape[-1] != m.vectors.shape[1] or limit <= 0:
        return []
    rows, scores = _nearest(m.vectors, hubness.shifted_question(query, typical=m.typical, content_free=content_free), limit)
    return [(int(pk), float(score)) for pk, score in zip(m.ids[rows], scores, strict=True)]


def with_vectors(*, ids, owner_id: int, model: str) -> set[int]:
    """Those of the owner's memories `ids` that have a vector of this model: from the
    owner's cached matrix when the numpy search has just read it, else from the table."""
    ids = list(ids)
    if not ids:
        return set()
    cached = _cache.get((owner_id, model))
    if cached is not None and not pgvector.enabled():
        wanted = np.asarray(ids, dtype=np.int64)
        return {int(pk) for pk in wanted[np.isin(wanted, cached.ids)]}
    with connection.cursor() as cursor:
        # By the keys alone (see recall/newer.py: with the owner in the WHERE clause SQLite
        # walks the owner's index), the owner and model checked on each row.
        cursor.execute(
            f"SELECT memory_id, owner_id, model FROM {_TABLE} WHERE memory_id IN ({', '.join(['%s'] * len(ids))})", ids
        )
        return {pk for pk, owner, of_model in cursor.fetchall() if owner == owner_id and of_model == model}
