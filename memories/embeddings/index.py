"""Vector search over one owner's memories: numpy over the owner's vectors of one model.

Each process keeps the owner's matrix in memory and keeps it in step with the table by a
cheap stamp (how many vectors, the newest one's time): new vectors are appended, anything
else (a vector replaced or removed) reloads the owner's matrix. Only the asking owner's
rows of the active model are ever loaded, so another owner's vectors are never searched
and vectors of two models are never compared. Whether a memory may be read at all
(deleted, superseded, a duplicate) is decided by recall when it fetches the candidates,
not here: a vector left behind by a tombstoned memory finds nothing recall will show.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
from django.db import connection

from ..models import MemoryVector
from . import hubness

_TABLE = MemoryVector._meta.db_table
# Owners' matrices kept per process; the least recently searched leave first.
MAX_CACHED_OWNERS = 32


@dataclass
class _Matrix:
    stamp: tuple
    ids: np.ndarray  # int64 memory ids
    vectors: np.ndarray  # (n, dim) float32
    typical: np.ndarray = field(init=False)  # (dim,) the owner's average memory (see hubness)

    def __post_init__(self):
        self.typical = hubness.typical_memory(self.vectors)


_cache: dict[tuple[int, str], _Matrix] = {}
_lock = threading.Lock()


def _stamp(owner_id: int, model: str) -> tuple:
    """(database, how many vectors, the newest one's time as the database hands it over)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), max(embedded_at) FROM {_TABLE} WHERE owner_id = %s AND model = %s", [owner_id, model])
        count, newest = cursor.fetchone()
    return (connection.alias, count, newest)


def _load(owner_id: int, model: str, dim: int, after=None) -> tuple[np.ndarray, np.ndarray]:
    sql = f"SELECT memory_id, vector FROM {_TABLE} WHERE owner_id = %s AND model = %s AND dim = %s"
    params: list = [owner_id, model, dim]
    if after is not None:
        sql += " AND embedded_at > %s"
        params.append(after)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vectors = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), dim)
    return ids, vectors


def _matrix(owner_id: int, model: str, dim: int) -> _Matrix:
    key = (owner_id, model)
    stamp = _stamp(owner_id, model)
    with _lock:
        cached = _cache.get(key)
    if cached is not None and cached.stamp == stamp:
        return cached
    if cached is not None and cached.stamp[0] == stamp[0] and cached.stamp[2] is not None and stamp[1] > cached.stamp[1]:
        # Vectors were added (the usual change, as memories arrive): load only those newer
        # than the cached ones, and keep them when that accounts for the new count;
        # anything else (a vector replaced, one removed as another came) reloads.
        ids, vectors = _load(owner_id, model, dim, after=cached.stamp[2])
        if len(cached.ids) + len(ids) == stamp[1] and not np.isin(ids, cached.ids).any():
            return _keep(key, _Matrix(stamp, np.concatenate([cached.ids, ids]), np.vstack([cached.vectors, vectors])))
    ids, vectors = _load(owner_id, model, dim)
    return _keep(key, _Matrix(stamp, ids, vectors))


def _keep(key, matrix: _Matrix) -> _Matrix:
    with _lock:
        _cache[key] = matrix
        while len(_cache) > MAX_CACHED_OWNERS:
            _cache.pop(next(iter(_cache)))
    return matrix


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def search(*, owner_id: int, model: str, dim: int, query: np.ndarray, limit: int,
           content_free: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The owner's memories (with vectors of this model) closest in meaning to the question,
    best first, with their score: the cosine to the question less part of the cosine to
    what is typical (see hubness; content_free is the model's content-free question)."""
    m = _matrix(owner_id, model, dim)
    if not len(m.ids) or query.shape[-1] != dim:
        return []
    scores = m.vectors @ hubness.shifted_question(query, typical=m.typical, content_free=content_free)
    n = min(limit, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(m.ids[i]), float(scores[i])) for i in top]
