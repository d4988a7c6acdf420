"""Digests: units the background builds for recall (models.Digest, recall/digests.py).

Each person's memories (what one speaker said, or, in notes without speakers, what names
one of the people the owner writes about most) are grouped by meaning with the local
embedding model's vectors, a group a digest; memories with no person are grouped by meaning
alone. A thing named by a few memories (an entity, not a person) makes a subject digest
of the memories naming it. A digest's text is derived: the words that set its memories
apart from the owner's others (by their own statistics), never a sentence of anyone's.

Built whole per owner by the consolidation run when memories arrived since the last build
(services/consolidate.py); `manage.py evaluate` builds them the same way in its setup.
With embeddings off there are none (the groups are by meaning).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery

from .. import embeddings
from ..models import Digest, Memory, MemoryVector
from ..recall.readable import readable_memories
from ..recall.speaker import speaker_label
from ..textutil import NOT_ENTITIES, STOPWORDS, fold, words

log = logging.getLogger(__name__)

# Memories a meaning group holds on average: k-means is run with ceil(n / DIGEST_SIZE)
# groups. Small enough that a digest is about one thing, large enough that it joins the
# several memories of a list ("what Melanie does with her family").
DIGEST_SIZE = 8
KMEANS_ROUNDS = 12
# A name held by at least this share of the owner's memories is a person the owner writes
# about (a notes collection's "Melanie"); held by fewer (but two or more), a subject.
PERSON_SHARE = 0.05
DIGEST_WORDS = 12  # the words a digest's text names
MAX_MEMORIES = 20_000  # the newest memories an owner's digests are built from


@dataclass
class Planned:
    kind: str
    key: str
    sources: list[int]
    centroid: np.ndarray | None
    text: str = ""


@dataclass
class _Note:
    id: int
    text: str
    entities: list[str]
    person: str = ""
    words: Counter = field(default_factory=Counter)


def _person_of(text: str) -> str:
    label = speaker_label(text)
    return label[:-2] if label else ""


def _content_words(text: str, skip: set[str]) -> Counter:
    out: Counter = Counter()
    for w in words(text):
        low = fold(w.lower())
        if len(low) > 2 and low.isalpha() and low not in STOPWORDS and low not in skip:
            out[low] += 1
    return out


def kmeans(vectors: np.ndarray, k: int, *, rounds: int = KMEANS_ROUNDS) -> np.ndarray:
    """Spherical k-means (cosine) over unit rows: a label per row. Seeded deterministically
    (the first row, then each next seed the row farthest from the seeds so far), so a
    rebuild of the same memories gives the same digests."""
    n = len(vectors)
    k = max(1, min(k, n))
    seeds = [0]
    nearest = vectors @ vectors[0]
    for _ in range(1, k):
        nxt = int(np.argmin(nearest))
        seeds.append(nxt)
        nearest = np.maximum(nearest, vectors @ vectors[nxt])
    centres = vectors[seeds].copy()
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(rounds):
        new = np.argmax(vectors @ centres.T, axis=1)
        if _ and np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = vectors[labels == c]
            if len(members):
                mean = members.sum(axis=0)
                centres[c] = mean / (np.linalg.norm(mean) or 1.0)
    return labels


def _centroid(vectors: np.ndarray) -> np.ndarray:
    """The mean of the sources' unit vectors, not normalised: its length says how close
    they are to each other, and its product with a question is their mean cosine."""
    return vectors.mean(axis=0).astype(np.float32)


def plan(notes: list[_Note], vectors: dict[int, np.ndarray]) -> list[Planned]:
    """The digests of one owner's memories (pure: no database)."""
    if not notes:
        return []
    people = {n.person for n in notes if n.person}
    # In notes with no speaker, the names the owner writes about most are its people.
    held = Counter(e for n in notes for e in set(n.entities))
    frequent = {e for e, c in held.items() if c >= max(2, PERSON_SHARE * len(notes)) and e[:1].isupper()}
    for n in notes:
        if not n.person:
            named = [e for e in n.entities if e in frequent or e in people]
            n.person = max(named, key=lambda e: held[e]) if named else ""
    people |= {n.person for n in notes if n.person}
    person_words = {fold(w.lower()) for p in people for w in p.split()}
    for n in notes:
        n.words = _content_words(n.text, person_words)
    planned: list[Planned] = []
    by_person: dict[str, list[_Note]] = defaultdict(list)
    for n in notes:
        if n.id in vectors:
            by_person[n.person].append(n)
    for person, members in sorted(by_person.items()):
        if len(members) < 2:
            continue
        matrix = np.stack([vectors[m.id] for m in members])
        labels = kmeans(matrix, math.ceil(len(members) / DIGEST_SIZE))
        for label in sorted(set(labels.tolist())):
            idx = np.flatnonzero(labels == label)
            if len(idx) < 2:
                continue
            kind = Digest.Kind.PERSON if person else Digest.Kind.SUBJECT
            planned.append(Planned(kind, person, [members[i].id for i in idx], _centroid(matrix[idx])))
    # Subjects: a thing a few memories name (not a person, not everyone's word).
    holders: dict[str, list[_Note]] = defaultdict(list)
    for n in notes:
        for e in dict.fromkeys(n.entities):
            if e not in people and e not in frequent and e.split()[0] not in NOT_ENTITIES:
                holders[e].append(n)
    for entity, members in sorted(holders.items()):
        if len(members) < 2:
            continue
        have = [vectors[m.id] for m in members if m.id in vectors]
        planned.append(Planned(Digest.Kind.SUBJECT, entity, [m.id for m in members], _centroid(np.stack(have)) if have else None))
    _describe(planned, {n.id: n for n in notes})
    return planned


def _describe(planned: list[Planned], notes: dict[int, _Note]) -> None:
    """Each digest's text: who or what it is about, and the words its memories use far more
    than the owner's others do (tf in the group times idf over the owner's memories)."""
    df: Counter = Counter()
    for n in notes.values():
        df.update(n.words.keys())
    total = max(1, len(notes))
    for p in planned:
        tf: Counter = Counter()
        for pk in p.sources:
            tf.update(set(notes[pk].words))
        scored = sorted(tf, key=lambda w: (-(tf[w] * math.log(1 + total / df[w])), w))
        shared = [w for w in scored if tf[w] > 1][:DIGEST_WORDS]
        chosen = shared + [w for w in scored if w not in shared][: max(0, DIGEST_WORDS - len(shared))]
        about = f"{p.key}" if p.key else "memories close in meaning"
        p.text = f"Derived digest of {len(p.sources)} memories about {about}: {', '.join(chosen)}."


def build_digests(owner) -> int:
    """Build the owner's digests again from their readable memories; how many there are.
    Nothing with embeddings off (the groups are by meaning)."""
    embedder = embeddings.get_embedder()
    if embedder is None:
        Digest.objects.filter(owner=owner).delete()
        return 0
    rows = list(
        readable_memories(owner)
        .filter(status=Memory.Status.READY)
        .order_by("-pk")
        .values_list("pk", "raw_text", "entities")[:MAX_MEMORIES]
    )
    notes = [_Note(pk, text or "", [str(e) for e in (entities or []) if str(e).strip()]) for pk, text, entities in rows]
    for n in notes:
        n.person = _person_of(n.text)
    vectors = {
        pk: np.frombuffer(bytes(blob), dtype="<f4")
        for pk, blob in MemoryVector.objects.filter(
            owner=owner, model=embedder.model, memory_id__in=[n.id for n in notes]
        ).values_list("memory_id", "vector")
    }
    planned = plan(notes, vectors)
    with transaction.atomic():
        Digest.objects.filter(owner=owner).delete()
        made = Digest.objects.bulk_create(
            Digest(
                owner=owner,
                kind=p.kind,
                key=p.key[:200],
                text=p.text,
                model=embedder.model if p.centroid is not None else "",
                centroid=p.centroid.tobytes() if p.centroid is not None else None,
            )
            for p in planned
        )
        through = Digest.sources.through
        through.objects.bulk_create(
            through(digest_id=d.pk, memory_id=pk) for d, p in zip(made, planned, strict=True) for pk in p.sources
        )
    return len(made)


def refresh_digests(owner) -> int | None:
    """The consolidation run's step: build again when a memory arrived or changed since the
    owner's digests were built (None: nothing to do, or digests are off)."""
    if not settings.MEMORY_DIGESTS:
        return None
    # Any of the owner's memories, hidden ones too: one deleted since is a change.
    newest = Memory.all_objects.filter(owner=owner).order_by("-updated_at").values_list("updated_at", flat=True).first()
    built = Digest.objects.filter(owner=owner).order_by("-created_at").values_list("created_at", flat=True).first()
    if newest is None or (built is not None and built >= newest):
        return None
    started = time.monotonic()
    made = build_digests(owner)
    log.info("digests for %s: %d in %.1f s", owner, made, time.monotonic() - started)
    return made


def _built_at(owner_ref):
    return Digest.objects.filter(owner=owner_ref).order_by("-created_at").values("created_at")[:1]


def digests_due() -> Q:
    """Owners (a filter of users) with a memory that arrived, changed or left since their
    digests were built, or with ready memories and no digests yet: the scheduled run
    visits them too."""
    changed = Memory.all_objects.filter(updated_at__gt=Subquery(_built_at(OuterRef("owner_id"))))
    never = Memory.all_objects.filter(status=Memory.Status.READY, deleted_at__isnull=True).exclude(
        owner_id__in=Digest.objects.values("owner_id")
    )
    return Q(pk__in=changed.values("owner_id")) | Q(pk__in=never.values("owner_id"))


def leave_digests(memory_ids) -> None:
    """Memories that left the record (deleted, superseded, purged) leave their digests at
    once: the digests holding them go whole, as their derived words may be the leaving
    memory's, and the next consolidation run builds the owner's digests again."""
    touched = Digest.sources.through.objects.filter(memory_id__in=list(memory_ids)).values_list("digest_id", flat=True)
    Digest.objects.filter(pk__in=list(touched)).delete()
