"""The digests arm: a question that matches a digest (models.Digest, built by the
consolidation run: services/digests.py) brings in the memories it was built from.

A digest is matched by meaning (the question's vector, as the meaning arm embeds it,
against the centroid of its sources' vectors) and by words (the question's stems among
the digest's derived words and its key). A question that names a person the owner has
digests of is matched against that person's digests and the subjects only. The best
DIGESTS_TAKEN digests lend their sources a credit by the digest's rank, added to the
fused relevance as another arm's. Only the asking owner's digests are read, and their
sources are read through recall's readable filter like every other candidate.

Off unless MEMORY_DIGESTS is set: measured by folds (docs/recall.md, CHANGELOG Round 10).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db.models import Count, Max

from ..models import Digest
from ..textutil import fold
from .words import cached_stem, terms

W_DIGEST = 0.1  # the credit the best digest's sources get, against the best word match's 1
DIGESTS_TAKEN = 3  # digests whose sources are brought in
# Which sources get the credit: "all", only those no arm found ("new": brought in below
# what the arms found), or only those an arm found too ("found": re-ranked, none brought in).
CREDIT = "all"
# How a question meets a digest: the cosine with its sources' mean direction ("centroid"),
# or their mean cosine ("mean": a loose group, whose direction sits near every question,
# counts for less).
MATCH_BY = "centroid"
W_DIGEST_WORDS = 1.0  # a digest holding every question word gains this much (in spreads of cosine)


@dataclass(frozen=True)
class _Owned:
    ids: np.ndarray
    keys: list[str]
    key_stems: list[frozenset[str]]
    text_stems: list[frozenset[str]]
    centroids: np.ndarray  # rows in the order of ids


_cache: dict[tuple, _Owned] = {}
_lock = threading.Lock()


def _owned(owner, model: str) -> _Owned | None:
    digests = Digest.objects.filter(owner=owner, model=model)
    stamp = digests.aggregate(n=Count("id"), top=Max("id"))
    if not stamp["n"]:
        return None
    # By account, not by id alone: an id comes back after a rolled-back transaction
    # (`manage.py evaluate` rolls each conversation's account back), with digests of the
    # same count and ids, and must not be handed the last account's.
    key = (owner.pk, getattr(owner, "date_joined", None), model, stamp["n"], stamp["top"])
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    rows = list(digests.order_by("pk").values_list("pk", "key", "text", "centroid"))
    owned = _Owned(
        ids=np.array([r[0] for r in rows], dtype=np.int64),
        keys=[r[1] for r in rows],
        key_stems=[frozenset(cached_stem(fold(w.lower())) for w in r[1].split()) for r in rows],
        text_stems=[frozenset(terms(r[2])) for r in rows],
        centroids=np.stack([np.frombuffer(bytes(r[3]), dtype="<f4") for r in rows]),
    )
    with _lock:
        for old in [k for k in _cache if k[0] == key[0] and k[2] == key[2]]:
            del _cache[old]
        _cache[key] = owned
    return owned


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def sources(
    owner, *, vector: np.ndarray | None, model: str, q_stems: set[str], found=frozenset()
) -> dict[int, tuple[float, str]]:
    """Memory id -> (credit, why) for the sources of the digests the question matches best
    (`found`: what the other arms found, for CREDIT)."""
    if not settings.MEMORY_DIGESTS or vector is None or W_DIGEST <= 0:
        return {}
    owned = _owned(owner, model)
    if owned is None or owned.centroids.shape[1] != len(vector):
        return {}
    centroids = owned.centroids
    if MATCH_BY == "centroid":
        centroids = centroids / np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-9)
    cosine = centroids @ vector.astype(np.float32)
    spread = float(cosine.std()) or 1.0
    # Cosines crowd (e5's between 0.7 and 0.9): read in spreads above the owner's mean digest.
    score = (cosine - float(cosine.mean())) / spread
    if q_stems:
        matched = np.array([len(q_stems & (t | k)) / len(q_stems) for t, k in zip(owned.text_stems, owned.key_stems)])
        score = score + W_DIGEST_WORDS * matched
    named = np.array([bool(k & q_stems) for k in owned.key_stems])
    if named.any():
        # The question names a person (or subject) with digests: theirs are what it asks about.
        score = np.where(named, score, -np.inf)
    order = [i for i in np.argsort(-score, kind="stable")[:DIGESTS_TAKEN] if np.isfinite(score[i])]
    if not order:
        return {}
    picked = {int(owned.ids[i]): rank for rank, i in enumerate(order)}
    out: dict[int, tuple[float, str]] = {}
    # Both ends the owner's: a row naming another space's memory is never followed.
    through = Digest.sources.through.objects.filter(digest_id__in=list(picked), digest__owner=owner, memory__owner=owner)
    for digest_id, memory_id in through.values_list("digest_id", "memory_id"):
        if (CREDIT == "new" and memory_id in found) or (CREDIT == "found" and memory_id not in found):
            continue
        rank = picked[digest_id]
        credit = W_DIGEST / (1 + rank)
        if memory_id not in out or out[memory_id][0] < credit:
            about = owned.keys[int(np.flatnonzero(owned.ids == digest_id)[0])] or "a subject"
            out[memory_id] = (credit, f"in a derived digest about {about} that matches the question")
    return out
