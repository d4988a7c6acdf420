"""Vectors for memories: computed after extraction (in the task, never in a web request),
in batches, and re-made by `manage.py embed` and the sweep for any memory whose vector is
missing, of another model, or of text that has since changed.

A failed embedding never fails the memory: it stays ready and readable by the lexical arm,
and the sweep tries again later.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from .. import embeddings
from ..embeddings import Embedder, EmbeddingError
from ..models import Memory, MemoryVector

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
    (the same owner's embeddable memory of the same sequence with the nearest lower id);
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
        for before in range(pk - 1, pk - CONTEXT_IDS - 1, -1):
            other = earlier.get(before)
            if other is not None and other.owner_id == memory.owner_id and source_group(other.source) == (group, True):
                out[pk] = _own_text(other)
                break
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
    return rows.filter(owner=owner) if owner is not None else rows


def needing_vectors(embedder: Embedder, *, owner=None, everything: bool = False):
    """Memories without a vector of this model (or, with everything, all of them)."""
    rows = embeddable(owner)
    if not everything:
        current = MemoryVector.objects.filter(memory=OuterRef("pk"), model=embedder.model, dim=embedder.dim)
        rows = rows.filter(~Exists(current))
    return rows.order_by("owner_id", "id")


def embed_memories(memories: list[Memory], *, embedder: Embedder) -> int:
    """Embed and store vectors for these memories, max_batch texts a call. Raises
    EmbeddingError when the backend fails (what was stored before stays)."""
    done = 0
    batch = max(1, min(embedder.max_batch, settings.MEMORY_EMBED_BATCH))
    for start in range(0, len(memories), batch):
        chunk = memories[start : start + batch]
        before = preceding_texts(chunk)
        texts = [embed_text(m, before.get(m.pk, "")) for m in chunk]
        vectors = embedder.embed_documents(texts)
        _store(chunk, texts, vectors, embedder)
        done += len(chunk)
    return done


def _store(memories: list[Memory], texts: list[str], vectors, embedder: Embedder) -> None:
    rows = [
        MemoryVector(
            memory_id=m.pk,
            owner_id=m.owner_id,
            model=embedder.model,
            dim=embedder.dim,
            vector=vectors[i].astype("<f4").tobytes(),
            text_hash=text_hash(texts[i]),
        )
        for i, m in enumerate(memories)
    ]
    with transaction.atomic():
        # One vector per memory: the new model's replaces the old one.
        MemoryVector.objects.filter(memory_id__in=[m.pk for m in memories]).delete()
        try:
            MemoryVector.objects.bulk_create(rows)
        except IntegrityError:
            # A memory purged meanwhile: store the others one by one.
            for row in rows:
                try:
                    with transaction.atomic():
                        row.save(force_insert=True)
                except IntegrityError:
                    pass


def embed_after_extraction(memory: Memory) -> None:
    """The extraction task's last step: this memory's vector, and in the same batch any of
    the owner's memories still without one (a backlog left by an outage catches up here)."""
    try:
        embedder = embeddings.get_embedder()
    except EmbeddingError as exc:
        log.warning("embeddings misconfigured: %s", exc)
        return
    if embedder is None or memory.status not in (Memory.Status.READY, Memory.Status.REVIEW):
        return
    try:
        backlog = list(needing_vectors(embedder, owner=memory.owner).exclude(pk=memory.pk)[: max(0, embedder.max_batch - 1)])
        embed_memories([memory, *backlog], embedder=embedder)
    except EmbeddingError as exc:
        log.warning("embedding memory %s failed (the sweep retries): %s", memory.pk, exc)
    except Exception:  # a backend bug must not undo an extraction that succeeded
        log.exception("embedding memory %s crashed (the sweep retries)", memory.pk)


def embed_missing(*, owner=None, everything: bool = False, limit: int | None = None) -> EmbedOutcome:
    """Embed every memory (of the owner, or everyone's) whose vector is missing or from
    another model; with everything, re-embed all. Stops at the first backend failure and
    says why; what was embedded before it is kept."""
    status = embeddings.status()
    outcome = EmbedOutcome(backend=status.name, model=status.model)
    if status.name == "off":
        outcome.error = status.note
        return outcome
    embedder = embeddings.get_embedder()
    rows = needing_vectors(embedder, owner=owner, everything=everything)
    if not everything:
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
    """The scheduled catch-up: everyone's missing, other-model and stale vectors."""
    return embed_missing()


def forget(memory_ids) -> None:
    """Drop vectors (a purge: nothing of the content may stay behind)."""
    MemoryVector.objects.filter(memory_id__in=list(memory_ids)).delete()
