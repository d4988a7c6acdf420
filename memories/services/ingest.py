"""Ingest: save the input first, then let the provider extract a structured memory."""

from __future__ import annotations

import hashlib
import logging
import tempfile
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from .. import extract, textutil
from ..llm import ProviderError, circuit, get_provider, provider_name
from ..llm.base import FilePart
from ..models import Event, Memory, MemoryLink, RejectedContent, content_hash
from .embed import embed_after_extraction
from .history import SYSTEM, Actor, record, snapshot

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 1_000_000
# Share of word shingles two texts must have in common to count as near-duplicates.
NEAR_DUPLICATE_JACCARD = 0.8
# A memory still pending this long after its last attempt lost its task (a crash between
# saving and queueing, or a worker killed mid-extraction): the sweeper queues it again.
STUCK_AFTER = timedelta(minutes=settings.MEMORY_EXTRACTION_LEASE_MINUTES)
MAX_ATTEMPTS = 5


class IngestError(ValueError):
    """The input was refused; the message says why and is safe to show."""


class RejectedContentError(IngestError):
    """The content was deleted before; it stays out until the old memory is restored."""

    def __init__(self, rejected: RejectedContent):
        self.memory_ref = rejected.memory_ref
        how = "deleted" if rejected.reason != "purged" else "deleted and purged"
        hint = f"; restore memory {rejected.memory_ref} instead" if rejected.reason != "purged" else ""
        super().__init__(f"This content was {how} on {rejected.rejected_at:%Y-%m-%d}{hint}.")


def _refuse_rejected(owner, digest: str) -> None:
    if rejected := RejectedContent.objects.filter(owner=owner, content_hash=digest).first():
        raise RejectedContentError(rejected)


@dataclass
class IngestResult:
    memory: Memory
    created: bool

    @property
    def message(self) -> str:
        if self.created:
            return f"Saved as memory {self.memory.pk}."
        return f"Already stored as memory {self.memory.pk}; nothing was added."


def parse_occurred_at(value) -> datetime | None:
    """A datetime, an ISO date or datetime string, or empty. Naive times are local time."""
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        parsed = value
    else:
        text = str(value).strip()
        parsed = parse_datetime(text)
        if parsed is None and (day := parse_date(text)) is not None:
            parsed = datetime.combine(day, time())
        if parsed is None:
            raise IngestError(f"occurred_at {text!r} is not a date or datetime (use ISO 8601, e.g. 2025-03-15 or 2025-03-15T14:30).")
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed)
    return parsed


def ingest_text(*, owner, text: str, source: str = "", occurred_at=None, metadata: dict | None = None, actor: Actor = SYSTEM) -> IngestResult:
    """Store text as a pending memory. The same text twice for one owner is one memory."""
    if not isinstance(text, str) or not text.strip():
        raise IngestError("There is no text to remember.")
    if len(text) > MAX_TEXT_CHARS:
        raise IngestError(f"The text is {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}. Upload it as a file instead.")
    text = extract.decode_text(text.encode("utf-8", errors="replace"))
    when = parse_occurred_at(occurred_at)
    digest = content_hash(text)
    _refuse_rejected(owner, digest)
    if existing := Memory.objects.filter(owner=owner, content_hash=digest).first():
        return IngestResult(existing, created=False)
    memory = Memory(
        owner=owner,
        source=(source or "text")[:500],
        raw_text=text,
        content_hash=digest,
        metadata={**(metadata or {}), **({"occurred_at_given": True} if when else {})},
        **({"occurred_at": when} if when else {}),
    )
    return _create(memory, actor)


def _create(memory: Memory, actor: Actor) -> IngestResult:
    _fingerprint(memory)
    with transaction.atomic():
        # Check again under the write lock: two requests with the same content can both
        # pass the check before it. SQLite's IMMEDIATE transactions already serialise
        # writers; on PostgreSQL locking the owner's row serialises one owner's ingests.
        get_user_model().objects.select_for_update().filter(pk=memory.owner_id).first()
        if existing := Memory.objects.filter(owner_id=memory.owner_id, content_hash=memory.content_hash).first():
            return IngestResult(existing, created=False)
        memory.save()
        record(memory, Event.Action.CREATED, actor, after={"source": memory.source, "content_hash": memory.content_hash})
        _link_near_duplicate(memory, actor)
    return IngestResult(memory, created=True)


def _fingerprint(memory: Memory) -> None:
    bands = textutil.minhash_bands(memory.raw_text)
    if bands is not None:
        memory.sim_band0, memory.sim_band1, memory.sim_band2, memory.sim_band3 = bands


def _link_near_duplicate(memory: Memory, actor: Actor) -> None:
    """Mark a memory whose text nearly repeats an earlier one: it stays in the bank,
    linked to the original, but recall shows only the original."""
    if memory.sim_band0 is None:
        return
    same_band = Q()
    for i in range(4):
        same_band |= Q(**{f"sim_band{i}": getattr(memory, f"sim_band{i}")})
    mine = textutil.shingles(memory.raw_text)
    candidates = (
        Memory.objects.filter(owner=memory.owner, duplicate_of__isnull=True).filter(same_band).exclude(pk=memory.pk).order_by("pk")[:50]
    )
    for candidate in candidates:
        if textutil.jaccard(mine, textutil.shingles(candidate.raw_text)) >= NEAR_DUPLICATE_JACCARD:
            memory.duplicate_of = candidate
            memory.save(update_fields=["duplicate_of"])
            MemoryLink.objects.create(from_memory=memory, to_memory=candidate, relationship="near-duplicate")
            record(memory, Event.Action.DUPLICATE, actor, after={"duplicate_of": candidate.pk})
            return


def ingest_file(*, owner, fileobj: BinaryIO, name: str, source: str = "", occurred_at=None, actor: Actor = SYSTEM) -> IngestResult:
    """Store a file (kept as the original) and what can be read of it as a pending memory."""
    name = Path(name.replace("\\", "/")).name or "file"
    try:
        extract.supported_extension(name)
    except extract.UnsupportedFile as exc:
        raise IngestError(str(exc)) from None
    limit = settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024
    when = parse_occurred_at(occurred_at)
    # Spool to a temporary file while hashing: big files never sit in memory whole.
    digest = hashlib.sha256()
    size = 0
    with tempfile.NamedTemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".upload-", suffix=Path(name).suffix) as tmp:
        while chunk := fileobj.read(1024 * 1024):
            size += len(chunk)
            if size > limit:
                raise IngestError(f"{name!r} is larger than the {settings.MEMORY_MAX_UPLOAD_MB} MB limit.")
            digest.update(chunk)
            tmp.write(chunk)
        tmp.flush()
        if size == 0:
            raise IngestError(f"{name!r} is empty.")
        sha = digest.hexdigest()
        _refuse_rejected(owner, sha)
        if existing := Memory.objects.filter(owner=owner, content_hash=sha).first():
            return IngestResult(existing, created=False)
        unreadable = ""
        try:
            content = extract.read_file(Path(tmp.name), name)
        except extract.UnreadableFile as exc:
            # A damaged or encrypted file of an accepted type: keep it, failed with the
            # reason, so a provider that can read it (or a fixed extractor) can retry.
            content, unreadable = extract.FileContent(mime_type=extract.SUPPORTED_TYPES[Path(name).suffix.lower()]), str(exc)
        except extract.UnsupportedFile as exc:
            raise IngestError(str(exc)) from None
        # A photo's date taken or a recording date says when it happened, unless the user said.
        if when is None and content.occurred_at is not None:
            when = content.occurred_at if timezone.is_aware(content.occurred_at) else timezone.make_aware(content.occurred_at)
        memory = Memory(
            owner=owner,
            source=(source or name)[:500],
            raw_text=content.text,
            mime_type=content.mime_type,
            content_hash=sha,
            metadata={
                "file_name": name, **content.metadata,
                **({"occurred_at_given": True} if when else {}),
                # A model may read what the offline extractors could not: reextract offers it.
                **({"needs_model": True} if unreadable else {}),
            },
            **({"occurred_at": when} if when else {}),
            **({"status": Memory.Status.FAILED, "error": unreadable} if unreadable else {}),
        )
        with open(tmp.name, "rb") as fh:
            memory.original.save(name, File(fh), save=False)
        try:
            result = _create(memory, actor)
        except Exception:
            memory.original.delete(save=False)
            raise
        if not result.created:  # the same file arrived at the same moment by another path
            memory.original.delete(save=False)
        return result


def _note_files(memory: Memory) -> list[FilePart]:
    if not memory.original:
        return []
    path = Path(memory.original.path)
    return [FilePart(name=memory.file_name, mime_type=memory.mime_type, path=path, size=path.stat().st_size)]


def extract_memory(memory_id: int, *, actor: Actor = SYSTEM, embed: bool = True) -> Memory | None:
    """Run the provider on a saved input: pending or failed -> ready (or waiting for review
    in review mode), or failed with the reason. Running it again on an extracted memory does
    nothing, so a task delivered twice is harmless; a memory deleted meanwhile is skipped.
    Then its vector (embed=False: the caller embeds many at once afterwards)."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None or memory.status in (Memory.Status.READY, Memory.Status.REVIEW):
        return memory
    if circuit.is_open(provider_name()):
        # The model is down: the input stays pending and the sweeper resumes it later.
        return memory
    # Claim the memory with a lease: when a task is delivered twice, or the sweeper re-queues
    # a memory a worker is still on, only one of them calls the model.
    now = timezone.now()
    claimed = (
        # Only pending input: a failed memory is extracted again after retry_memory puts it back.
        Memory.objects.filter(pk=memory.pk, status=Memory.Status.PENDING)
        .filter(Q(extracting_since__isnull=True) | Q(extracting_since__lt=now - STUCK_AFTER))
        .update(attempts=F("attempts") + 1, extracting_since=now, updated_at=now)
    )
    if not claimed:
        return Memory.objects.filter(pk=memory_id).first()
    memory.attempts += 1
    provider = None
    try:
        provider = get_provider()
        result = provider.extract(text=memory.raw_text, files=_note_files(memory), source=memory.source)
    except ProviderError as exc:
        log.warning("extraction of memory %s failed: %s", memory.pk, exc)
        if exc.retryable:
            circuit.record_failure(provider_name(), str(exc))
        return _mark_failed(memory, str(exc), actor)
    except Exception as exc:  # a provider bug must not leave the input stuck in pending
        log.exception("extraction of memory %s crashed", memory.pk)
        return _mark_failed(memory, f"{type(exc).__name__}: {exc}", actor)
    finally:
        if provider is not None:
            provider.close()
    circuit.record_success(provider_name())
    memory.summary = (result.summary or memory.raw_text[:300]).strip()
    memory.entities = _clean_list(result.entities)
    memory.topics = _clean_list(result.topics)
    memory.importance = min(1.0, max(0.0, float(result.importance)))
    if result.occurred_at and not memory.metadata.get("occurred_at_given"):
        memory.occurred_at = result.occurred_at
    memory.status = Memory.Status.REVIEW if settings.MEMORY_REVIEW_MODE else Memory.Status.READY
    memory.error = ""
    memory.provider = provider.label
    memory.extracting_since = None
    with transaction.atomic():
        memory.save(update_fields=["summary", "entities", "topics", "importance", "occurred_at", "status", "error", "provider",
                                   "extracting_since", "updated_at"])
        record(memory, Event.Action.EXTRACTED, actor, after=snapshot(memory), note=provider.label)
    if embed:
        embed_after_extraction(memory)
    return memory


def _mark_failed(memory: Memory, reason: str, actor: Actor) -> Memory:
    memory.status = Memory.Status.FAILED
    memory.error = reason[:2000] or "The provider failed without a message."
    memory.extracting_since = None
    memory.save(update_fields=["status", "error", "extracting_since", "updated_at"])
    record(memory, Event.Action.FAILED, actor, note=memory.error[:500])
    return memory


def _clean_list(values) -> list[str]:
    out: dict[str, None] = {}
    for value in values or []:
        text = " ".join(str(value).split())[:200]
        if text:
            out.setdefault(text, None)
    return list(out)[:30]


def queue_extraction(memory: Memory) -> None:
    """Extract in a django-q2 worker once the saving transaction has committed."""
    from django_q.tasks import async_task

    transaction.on_commit(lambda: async_task("memories.tasks.extract_memory", memory.pk, task_name=f"extract-{memory.pk}"))


def resume_stuck(*, older_than: timedelta = STUCK_AFTER) -> list[int]:
    """Queue extraction again for memories left pending: never claimed since they were
    saved a while ago, or claimed by a worker whose lease ran out. Give up after MAX_ATTEMPTS."""
    cutoff = timezone.now() - older_than
    stuck = Memory.objects.filter(status=Memory.Status.PENDING).filter(
        Q(extracting_since__isnull=True, updated_at__lt=cutoff) | Q(extracting_since__lt=cutoff)
    )
    for memory in stuck.filter(attempts__gte=MAX_ATTEMPTS):
        _mark_failed(memory, f"Gave up after {memory.attempts} attempts that did not finish.", SYSTEM)
    ids = list(stuck.filter(attempts__lt=MAX_ATTEMPTS).values_list("pk", flat=True)[:1000])
    for pk in ids:
        queue_extraction(Memory(pk=pk))
    return ids


def retry_failed(*, owner) -> list[int]:
    """Put all of the owner's failed memories back to pending; the caller extracts them."""
    failed = Memory.objects.filter(owner=owner, status=Memory.Status.FAILED)
    ids = list(failed.values_list("pk", flat=True))
    failed.update(status=Memory.Status.PENDING, error="")
    return ids


def retry_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory:
    """Put a failed memory back to pending so it is extracted again."""
    updated = Memory.objects.filter(pk=memory_id, owner=owner, status=Memory.Status.FAILED).update(
        status=Memory.Status.PENDING, error=""
    )
    if not updated:
        raise IngestError("Only a failed memory of yours can be retried.")
    memory = Memory.objects.get(pk=memory_id)
    record(memory, Event.Action.EDITED, actor, note="retry requested")
    return memory


def needs_model_memories(*, owner=None):
    """Memories the offline engine could only describe (images, audio, video, scans):
    worth extracting again once a multimodal provider is configured."""
    memories = Memory.objects.filter(metadata__needs_model=True).filter(
        Q(provider__startswith="offline") | Q(status=Memory.Status.FAILED)
    )
    return memories.filter(owner=owner) if owner is not None else memories


def reextract_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Extract a memory again with the current provider (a model configured since)."""
    memory = Memory.objects.filter(owner=owner, pk=memory_id).first()
    if memory is None:
        return None
    before = snapshot(memory)
    Memory.objects.filter(pk=memory.pk).update(status=Memory.Status.PENDING, error="")
    memory = extract_memory(memory.pk, actor=actor)
    if memory and memory.status != Memory.Status.FAILED:
        record(memory, Event.Action.EDITED, actor, before=before, after=snapshot(memory), note="re-extracted")
    return memory
