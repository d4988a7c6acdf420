"""An inverted index over one owner's latent terms (embeddings/terms.py), in process.

Each process keeps, per owner, the postings of every feature (the memories that hold it,
with its weight there) in two flat arrays sorted by feature, so a question's score for
every memory is the sum over its few hundred features of their postings: one slice a
feature and a bincount. Only the asking owner's rows of the active model are ever loaded,
so another owner's memories are never searched. Hidden memories keep no terms (triggers,
embeddings/store.py), and recall still decides which candidates may be read when it
fetches them.

Why here and not in the database: a memory has up to 256 features, so a posting table
would hold 2.56 million rows at 10,000 memories an owner, and a question would read tens
of thousands of them; in process the postings cost 6 bytes each (a row number and a
float16 weight) and the search is a few milliseconds.

Kept in step with the table like the vector cache (embeddings/index.py): a stamp (the
newest row's time, and every few seconds the owner's count) read before each search;
rows added or replaced since are read and searched beside the index (exactly, by a dot
product) until they are a fair share of it, when it is built again; anything else (a row
removed) builds it again. The cache is bounded in bytes (MEMORY_TERMS_CACHE_MB), the least
recently searched owners leaving first.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from ..models import MemoryTerms
from . import store
from . import terms as latent

log = logging.getLogger(__name__)

_TABLE = MemoryTerms._meta.db_table
N_FEATURES = 16384
RECOUNT_SECONDS = 10.0
TAIL_SHARE = 8  # the rows beside the index are folded in when past 1/TAIL_SHARE of it (or 256)


@dataclass
class _Index:
    stamp: tuple
    ids: np.ndarray  # int64 memory id of each row
    starts: np.ndarray  # (N_FEATURES + 1,) int64: feature f's postings are [starts[f], starts[f + 1])
    rows: np.ndarray  # int32 row of each posting
    weights: np.ndarray  # float16 weight of each posting
    live: np.ndarray  # bool per row: False once a newer row of the same memory is in the tail
    tail: dict  # memory id -> (feature ids, weights): rows newer than the index
    counted_at: float

    @property
    def nbytes(self) -> int:
        tail = sum(a.nbytes + b.nbytes for a, b in self.tail.values())
        return self.ids.nbytes + self.starts.nbytes + self.rows.nbytes + self.weights.nbytes + self.live.nbytes + tail


def _build(stamp: tuple, ids: list[int], terms: list[latent.Terms]) -> _Index:
    lengths = np.fromiter((len(t[0]) for t in terms), dtype=np.int64, count=len(terms))
    if len(terms):
        features = np.concatenate([t[0] for t in terms]).astype(np.int64)
        weights = np.concatenate([t[1] for t in terms]).astype(np.float16)
    else:
        features, weights = np.zeros(0, np.int64), np.zeros(0, np.float16)
    rows = np.repeat(np.arange(len(terms), dtype=np.int32), lengths)
    order = np.argsort(features, kind="stable")
    starts = np.zeros(N_FEATURES + 1, dtype=np.int64)
    np.cumsum(np.bincount(features, minlength=N_FEATURES)[:N_FEATURES], out=starts[1:])
    return _Index(
        stamp,
        np.asarray(ids, dtype=np.int64),
        starts,
        rows[order],
        weights[order],
        np.ones(len(terms), dtype=bool),
        {},
        time.monotonic(),
    )


_cache: dict[tuple[int, str], _Index] = {}
_lock = threading.Lock()


def _load(owner_id: int, model: str, after=None) -> tuple[list[int], list[latent.Terms]]:
    sql = f"SELECT memory_id, terms FROM {_TABLE} WHERE owner_id = %s AND model = %s"
    params: list = [owner_id, model]
    if after is not None:
        sql += " AND embedded_at > %s"
        params.append(after)
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY memory_id", params)
        rows = cursor.fetchall()
    return [r[0] for r in rows], [latent.decode(r[1]) for r in rows]


def _index(owner_id: int, model: str) -> _Index:
    key = (owner_id, model)
    stamp, counted = store.owner_stamp("terms", owner_id, model, _cache.get(key), recount_seconds=RECOUNT_SECONDS)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.stamp == stamp:
            if counted:
                cached.counted_at = time.monotonic()
            return cached
        if cached is not None and cached.stamp[0] == stamp[0] and cached.stamp[2] is not None and stamp[2] != cached.stamp[2]:
            ids, found = _load(owner_id, model, after=cached.stamp[2])
            grown = _with_tail(cached, stamp, ids, found)
            if grown is not None:
                return _keep(key, grown)
        ids, found = _load(owner_id, model)
        return _keep(key, _build(stamp, ids, found))


def _with_tail(cached: _Index, stamp: tuple, ids: list[int], found: list[latent.Terms]) -> _Index | None:
    """The cached index with these newer rows beside it, or None when that does not
    account for the owner's count (a row was removed) or the tail grew too long."""
    tail = dict(cached.tail)
    tail.update(zip(ids, found, strict=True))
    in_index = np.isin(np.fromiter(tail, dtype=np.int64, count=len(tail)), cached.ids)
    if len(cached.ids) + int((~in_index).sum()) != stamp[1]:
        return None
    if len(tail) > max(256, len(cached.ids) // TAIL_SHARE):
        return None
    live = cached.live.copy()  # searches in flight keep reading the old one
    live[np.isin(cached.ids, np.asarray(ids, dtype=np.int64))] = False
    return _Index(stamp, cached.ids, cached.starts, cached.rows, cached.weights, live, tail, time.monotonic())


def cache_limit_bytes() -> int:
    return max(0, settings.MEMORY_TERMS_CACHE_MB) * 1024 * 1024


def cached_bytes() -> int:
    return sum(i.nbytes for i in list(_cache.values()))


def _keep(key, index: _Index) -> _Index:
    _cache.pop(key, None)
    limit = cache_limit_bytes()
    if index.nbytes > limit:
        log.warning("owner %s's latent terms (%d MB) exceed MEMORY_TERMS_CACHE_MB; not cached", key[0], index.nbytes >> 20)
        return index
    _cache[key] = index
    total = cached_bytes()
    while total > limit and len(_cache) > 1:
        gone = _cache.pop(next(iter(_cache)))
        total -= gone.nbytes
    return index


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def searcher(*, owner_id: int, model: str = latent.MODEL):
    """The owner's index brought up to date now (it reads the table: on the asking
    thread), and a function that searches it without the database (so on any thread):
    (question's terms, limit) -> [(memory id, score)], best first."""
    index = _index(owner_id, model)
    return lambda query, limit: _search(index, query, limit)


def _search(index: _Index, query: latent.Terms, limit: int) -> list[tuple[int, float]]:
    features, weights = query
    n = len(index.ids)
    scores = np.zeros(n, dtype=np.float32)
    if n:
        keep = (features >= 0) & (features < N_FEATURES)
        features, weights = features[keep], weights[keep]
        lo, hi = index.starts[features].tolist(), index.starts[features + 1].tolist()
        lengths = np.subtract(hi, lo)
        if lengths.any():
            # Every posting of the question's features, each feature's a slice copied whole
            # (they lie together, sorted by feature): 12 against 17 ms for the 2 million
            # postings of a question at 100k memories, where the positions of every posting
            # were made and gathered one by one. The same products, summed in the same order.
            rows = np.concatenate([index.rows[a:b] for a, b in zip(lo, hi, strict=True)])
            products = np.concatenate([index.weights[a:b] for a, b in zip(lo, hi, strict=True)]).astype(np.float32)
            products *= np.repeat(np.asarray(weights, dtype=np.float32), lengths)
            scores = np.bincount(rows, weights=products, minlength=n)
        scores = np.where(index.live, scores, 0.0)
    found = [(int(pk), float(s)) for pk, s in zip(index.ids, scores, strict=True) if s > 0] if n <= limit else []
    if n > limit:
        best = np.argpartition(-scores, limit - 1)[:limit]
        found = [(int(index.ids[i]), float(scores[i])) for i in best if scores[i] > 0]
    q = dict(zip(query[0].tolist(), query[1].tolist(), strict=True))
    for pk, (f, w) in index.tail.items():
        score = float(sum(q.get(int(a), 0.0) * float(b) for a, b in zip(f, w, strict=True)))
        if score > 0:
            found.append((pk, score))
    found.sort(key=lambda item: (-item[1], item[0]))
    return found[:limit]


def holding(*, ids, owner_id: int, model: str = latent.MODEL) -> set[int]:
    """Those of `ids` the owner's cached index holds (in it or beside it); the table is
    read when the owner is not cached."""
    ids = list(ids)
    if not ids:
        return set()
    index = _cache.get((owner_id, model))
    if index is None:
        index = _index(owner_id, model)
    wanted = np.asarray(ids, dtype=np.int64)
    held = wanted[np.isin(wanted, index.ids[index.live])]
    return {int(pk) for pk in held} | (set(ids) & index.tail.keys())
