"""Vectors for memories: they follow in the background. A memory is saved and found by
its words at once; once extracted, its owner's memories waiting for a vector are queued
(one task an owner at a time) and embedded in batches by a task worker, never in a web
request. `manage.py embed` and the sweep re-make any vector missing, of another model, or
of text that has since changed.

Every vector is computed outside any transaction and written in small batches, each its
own short transaction (embeddings/store.py): a model call never holds the write lock that
users' writes wait for.

A failed embedding never fails the memory: it stays ready and readable by the lexical arm,
and the sweep tries again later.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError
from django.db.models import Exists, OuterRef

from .. import embeddings
from ..embeddings import Embedder, EmbeddingError
from ..embeddings import pgvector
from ..embeddings import store as vector_store
from ..embeddings import terms as latent
from ..models import Memory, MemoryTerms, MemoryVector

log = logging.getLogger(__name__)

# What of a memory is embedded: e5's window is 512 tokens (about 2,000 characters of
# English); a longer text is represented by its beginning and its summary.
EMBED_CHARS = 1500
# A turn of a conversation or a part of a document (a source with positions, as recall's
# neighbours read it) is embedded after the end of the one before it: "Yes, every Monday"
# means little alone. On LoCoMo this lifted the meaning arm alone by 13 points at k=10.
CONTEXT_CHARS = 400
# Parts ingested together have ids this close (recall's neighbour window is as wide).
CONTEXT_IDS = 6
# A context shorter than this ("yes", "lisbon!!", "the blue one": fewer than about seven
# words) takes the part before it too, up to CONTEXT_PARTS parts (1: the one just before,
# however short). LoCoMo's turns are longer nineteen times in twenty (median 127
# characters): on its dev conversations R@10 83.9 -> 84.1, R@5 70.0 -> 69.5, temporal
# unchanged; on a text chat written for round 18 (median 21 characters) 37.3 / 56.0 /
# 72.0 / 79.7 -> 41.8 / 58.8 / 76.8 / 81.0 (60: dev R@5 and R@50 lost more; 400 with four
# parts: conv-26 and conv-30 lost 1-5 points).
CONTEXT_MIN_CHARS = 40
CONTEXT_PARTS = 4


def embed_text(memory: Memory, before: str = "") -> str:
    """The text a memory's vector is made of; before: the text of the part just before it
    in its conversation or document (see preceding_texts)."""
    own = _own_text(memory)
    if before:
        return f"{before[-CONTEXT_CHARS:]} {own}"
    return own


def _own_text(memory: Memory) -> str:
    text = " ".join((memory.raw_text or "").split())
    summary = " ".join((memory.summary or "").split())
    if len(text) > EMBED_CHARS:
        text = f"{text[: EMBED_CHARS - len(summary[:500]) - 1]} {summary[:500]}"
    return text or summary or memory.source


def preceding_texts(memories: list[Memory]) -> dict[int, str]:
    """For each memory that is a part of a sequence, the text of the part just before it
    (the same owner's embeddable memory of the same sequence with the nearest lower id),
    and of the parts before that while the context is shorter than CONTEXT_MIN_CHARS;
    notes that merely share a source have none."""
    from ..recall.neighbours import source_group

    wanted = {m.pk: m for m in memories if source_group(m.source)[1]}
    if not wanted:
        return {}
    window = {pk for m in wanted.values() for pk in range(m.pk - CONTEXT_IDS, m.pk)}
    earlier = {
        m.pk: m
        for m in embeddable()
        .filter(pk__in=window, owner_id__in={m.owner_id for m in wanted.values()})
        .only("pk", "owner_id", "source", "raw_text", "summary")
    }
    out = {}
    for pk, memory in wanted.items():
        group = source_group(memory.source)[0]
        parts: list[str] = []
        for before in range(pk - 1, pk - CONTEXT_IDS - 1, -1):
            other = earlier.get(before)
            if other is None or other.owner_id != memory.owner_id or source_group(other.source) != (group, True):
                continue
            parts.append(_own_text(other))
            # The turn before, or as many short ones as it takes to say about as much: a
            # text chat says in four turns ("a dog??" / "yes" / "he sleeps upside down" /
            # "stop") what a letter says in one.
            if sum(len(p) + 1 for p in parts) >= CONTEXT_MIN_CHARS or len(parts) >= CONTEXT_PARTS:
                break
        if parts:
            out[pk] = " ".join(reversed(parts))
    return out


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class EmbedOutcome:
    backend: str
    model: str = ""
    embedded: int = 0
    failed: int = 0
    error: str = ""


def embeddable(owner=None):
    """Memories that get a vector: the ones recall may read, plus those waiting for review
    (so approval makes them findable at once)."""
    rows = Memory.objects.filter(status__in=(Memory.Status.READY, Memory.Status.REVIEW), duplicate_of__isnull=True)
    return rows.owned_by(owner) if owner is not None else rows


def needing_vectors(embedder: Embedder, *, owner=None, everything: bool = False):
    """Memories without a vector of this model, or without latent terms when they are in
    use (or, with everything, all of them)."""
    rows = embeddable(owner)
    if not everything:
        current = MemoryVector.objects.filter(memory=OuterRef("pk"), model=embedder.model, dim=embedder.dim)
        missing = ~Exists(current)
        if latent.in_use(embedder):
            missing |= ~Exists(MemoryTerms.objects.filter(memory=OuterRef("pk"), model=latent.MODEL))
        rows = rows.filter(missing)
    return rows.order_by("owner_id", "id")


def embed_memories(memories: list[Memory], *, embedder: Embedder) -> int:
    """Embed and store vectors for these memories, max_batch texts a call: each batch is
    computed with no transaction open and written in its own short one. Raises
    EmbeddingError when the backend fails (what was stored before stays)."""
    done = 0
    batch = max(1, min(embedder.max_batch, settings.MEMORY_EMBED_BATCH))
    for start in range(0, len(memories), batch):
        chunk = memories[start : start + batch]
        before = preceding_texts(chunk)
        texts = [embed_text(m, before.get(m.pk, "")) for m in chunk]
        vectors = embedder.embed_documents(texts)
        # The latent terms of the same texts (another pass of the same engine: the sparse
        # head reads the encoder's token states, which the dense call does not hand out).
        terms = latent.of_texts(texts) if latent.in_use(embedder) else None
        _store(chunk, texts, vectors, embedder, terms)
        done += len(chunk)
    return done


# Rows a write transaction holds at most: on SQLite each batch holds the write lock that
# every user's write waits for, so it stays a few milliseconds long.
WRITE_BATCH = 32


def _store(memories: list[Memory], texts: list[str], vectors, embedder: Embedder, terms=None) -> None:
    rows = [(m.pk, m.owner_id, vectors[i], text_hash(texts[i])) for i, m in enumerate(memories)]
    for start in range(0, len(rows), WRITE_BATCH):
        part = rows[start : start + WRITE_BATCH]
        part_terms = terms[start : start + WRITE_BATCH] if terms is not None else None
        try:
            vector_store.save(part, model=embedder.model, dim=embedder.dim, terms=part_terms)
        except IntegrityError:
            # A memory purged between the check and the insert: once more, without it.
            vector_store.save(part, model=embedder.model, dim=embedder.dim, terms=part_terms)


def embed_after_extraction(memory: Memory) -> None:
    """The extraction task's last step: the memory waits for its vector, which a task
    worker makes with the owner's other waiting memories, in batches (queue_vectors).
    Until then recall finds it by its words (recall/fusion.py: as it will rank with a
    vector)."""
    if memory.status not in (Memory.Status.READY, Memory.Status.REVIEW):
        return
    try:
        queue_vectors(owner_id=memory.owner_id)
    except Exception:  # the queue or a backend failing must not undo an extraction that succeeded
        log.exception("queueing memory %s's vector failed (the sweep makes it)", memory.pk)


# One embedding task an owner at a time: a flag in the shared cache says one is queued;
# the task clears it as it starts, so what arrives while it runs queues the next one. A
# task lost with its worker leaves the flag until it runs out, and the sweep catches up.
QUEUED_FLAG_SECONDS = 600


def _queued_key(owner_id: int) -> str:
    return f"vectors-queued:{owner_id}"


def queue_vectors(*, owner_id: int) -> bool:
    """Queue the owner's embedding task unless one is queued already or embeddings are
    off. True when queued. Called once the memories are committed (the worker must see
    them: what it misses waits for the next task or the sweep)."""
    try:
        if embeddings.get_embedder() is None:
            return False
    except EmbeddingError as exc:
        log.warning("embeddings misconfigured: %s", exc)
        return False
    if not cache.add(_queued_key(owner_id), True, QUEUED_FLAG_SECONDS):
        return False
    from django_q.tasks import async_task

    async_task("memories.tasks.embed_waiting", owner_id, task_name=f"vectors-{owner_id}")
    return True


def embed_waiting(*, owner) -> EmbedOutcome:
    """The owner's memories waiting for a vector of the active model, embedded now in
    batches (the task queue_vectors queued)."""
    cache.delete(_queued_key(owner.pk))
    try:
        return embed_missing(owner=owner, changed=False)
    except EmbeddingError as exc:
        log.warning("embedding owner %s's waiting memories failed (the sweep retries): %s", owner.pk, exc)
        status = embeddings.status()
        return EmbedOutcome(backend=status.name, model=status.model, error=str(exc))


def waiting_for_vectors(*, owner) -> int:
    """How many of the owner's memories wait for a vector of the active model (0 when
    embeddings are off): the bank and /api/status say it."""
    try:
        embedder = embeddings.get_embedder()
        return needing_vectors(embedder, owner=owner).count() if embedder is not None else 0
    except EmbeddingError:  # a backend that cannot say its dimension: nothing to count against
        return 0


def embed_missing(*, owner=None, everything: bool = False, limit: int | None = None, changed: bool = True) -> EmbedOutcome:
    """Embed every memory (of the owner, or everyone's) whose vector is missing or from
    another model (and with changed, whose text changed since); with everything, re-embed
    all. Reads the ids first, then embeds and writes batch by batch (no transaction held
    across a model call). Stops at the first backend failure and says why; what was
    embedded before it is kept."""
    status = embeddings.status()
    outcome = EmbedOutcome(backend=status.name, model=status.model)
    if status.name == "off":
        outcome.error = status.note
        return outcome
    embedder = embeddings.get_embedder()
    rows = needing_vectors(embedder, owner=owner, everything=everything)
    if not everything and changed:
        rows = rows | _changed_text(embedder, owner)
    ids = list(rows.values_list("pk", flat=True)[:limit] if limit else rows.values_list("pk", flat=True))
    step = max(1, min(embedder.max_batch, settings.MEMORY_EMBED_BATCH)) * 8
    for start in range(0, len(ids), step):
        chunk = list(Memory.objects.filter(pk__in=ids[start : start + step]).order_by("id"))
        try:
            outcome.embedded += embed_memories(chunk, embedder=embedder)
        except EmbeddingError as exc:
            outcome.failed = len(ids) - outcome.embedded
            outcome.error = str(exc)
            break
    return outcome


def _changed_text(embedder: Embedder, owner):
    """Memories whose vector is of this model but whose text changed since (an edited
    summary of a file, a re-extraction). Compared in Python: the hash is of embed_text."""
    rows = (
        embeddable(owner)
        .filter(vector__model=embedder.model)
        .order_by("id")
        .values_list("pk", "owner_id", "raw_text", "summary", "source", "vector__text_hash")
    )
    stale = []
    chunk: list[tuple[Memory, str]] = []

    def check():
        before = preceding_texts([m for m, _ in chunk])
        stale.extend(m.pk for m, stored in chunk if text_hash(embed_text(m, before.get(m.pk, ""))) != stored)
        chunk.clear()

    for pk, owner_id, raw_text, summary, source, stored in rows.iterator(chunk_size=2000):
        chunk.append((Memory(pk=pk, owner_id=owner_id, raw_text=raw_text, summary=summary, source=source), stored))
        if len(chunk) >= 2000:
            check()
    check()
    return Memory.objects.filter(pk__in=stale)


def sweep() -> EmbedOutcome:
    """The scheduled catch-up: everyone's missing, other-model and stale vectors, owner by
    owner (one whose batch fails does not stop the others), and on pgvector the halfvec
    copy of any vector written without one."""
    status = embeddings.status()
    total = EmbedOutcome(backend=status.name, model=status.model)
    if pgvector.enabled():
        pgvector.backfill()
    if status.name == "off":
        total.error = status.note
        return total
    from django.contrib.auth import get_user_model

    owners = embeddable().order_by().values_list("owner_id", flat=True).distinct()

    for owner in get_user_model().objects.filter(pk__in=owners).order_by("pk"):
        try:
            outcome = embed_missing(owner=owner)
        except Exception as exc:  # one owner's failure is recorded, and the others go on
            log.exception("embedding sweep failed for owner %s", owner.pk)
            outcome = EmbedOutcome(backend=status.name, error=f"{type(exc).__name__}: {exc}")
        total.embedded += outcome.embedded
        total.failed += outcome.failed
        if outcome.error and not total.error:
            total.error = outcome.error
    return total


def forget(memory_ids) -> None:
    """Drop vectors and latent terms (a purge: nothing of the content may stay behind)."""
    MemoryVector.objects.filter(memory_id__in=list(memory_ids)).delete()
    MemoryTerms.objects.filter(memory_id__in=list(memory_ids)).delete()
