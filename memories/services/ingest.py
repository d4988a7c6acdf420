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
from ..extract.media import NEEDS_MODEL_AUDIO, NEEDS_MODEL_VIDEO
from ..llm import ProviderError, circuit, get_provider, provider_name, transcribe
from ..llm.base import FilePart
from ..models import Event, Memory, MemoryLink, RejectedContent, content_hash
from . import entities, fields, quota
from . import usage
from .embed import embed_after_extraction
from .errors import IngestError, RetryError
from .history import SYSTEM, Actor, record, record_many, snapshot

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 1_000_000
# Share of word shingles two texts must have in common to count as near-duplicates.
NEAR_DUPLICATE_JACCARD = 0.8
# Texts are compared on their first this many characters: a megabyte of text compared with
# 50 candidates took 20 s inside the ingest request; this bounds it to about a second.
NEAR_DUPLICATE_CHARS = 50_000
# A memory still pending this long after its last attempt lost its task (a crash between
# saving and queueing, or a worker killed mid-extraction): the sweeper queues it again.
STUCK_AFTER = timedelta(minutes=settings.MEMORY_EXTRACTION_LEASE_MINUTES)
MAX_ATTEMPTS = 5
# The same range the API schema enforces (api/schemas.py EARLIEST, LATEST).
OCCURRED_MIN_YEAR, OCCURRED_MAX_YEAR = 1000, 9000
# Metadata flag of a stored file not parsed yet: the extraction task reads it first.
UNREAD = "unread"
# An assistant's reply in an imported conversation (metadata "said_by"): context for the
# person's own words, worth at most this much whatever the extraction makes of it.
ASSISTANT_MAX_IMPORTANCE = 0.3


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
            raise IngestError(
                f"occurred_at {text!r} is not a date or datetime (use ISO 8601, e.g. 2025-03-15 or 2025-03-15T14:30).",
                field="occurred_at",
            )
    utc = fields.in_utc(parsed)
    # Years at the edge of what Python can hold (1, 9999) overflow as soon as a time zone
    # moves them, in storage or on a page: a plain range keeps every date usable everywhere.
    if utc is None or not OCCURRED_MIN_YEAR <= utc.year <= OCCURRED_MAX_YEAR:
        raise IngestError(
            f"occurred_at is out of range: it must fall between the years {OCCURRED_MIN_YEAR} and {OCCURRED_MAX_YEAR}.",
            field="occurred_at",
        )
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


def parse_expires_at(value) -> datetime | None:
    """An expiry is a date or datetime like occurred_at; empty means none."""
    try:
        return parse_occurred_at(value)
    except IngestError:
        raise IngestError(f"expires_at {str(value)[:40]!r} is not a date or datetime (use ISO 8601, e.g. 2026-01-31).") from None


def ingest_text(
    *,
    owner,
    text: str,
    source: str = "",
    occurred_at=None,
    metadata: dict | None = None,
    actor: Actor = SYSTEM,
    expires_at=None,
    queue: bool = False,
) -> IngestResult:
    """Store text as a pending memory. The same text twice for one owner is one memory.
    `queue`: extract it in a worker (the pages, the API, MCP); commands extract it themselves."""
    if not isinstance(text, str) or not text.strip():
        raise IngestError("There is no text to remember.")
    if len(text) > MAX_TEXT_CHARS:
        raise IngestError(f"The text is {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}. Upload it as a file instead.")
    text = extract.decode_text(text.encode("utf-8", errors="replace"))
    when = parse_occurred_at(occurred_at)
    expires = parse_expires_at(expires_at)
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
        expires_at=expires,
        **({"occurred_at": when} if when else {}),
    )
    return _create(memory, actor, queue=queue)


def _create(memory: Memory, actor: Actor, *, queue: bool = False) -> IngestResult:
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
    if queue:
        queue_extraction(memory)
    return IngestResult(memory, created=True)


def _fingerprint(memory: Memory) -> None:
    bands = textutil.minhash_bands(memory.raw_text[:NEAR_DUPLICATE_CHARS])
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
    mine = textutil.shingles(memory.raw_text[:NEAR_DUPLICATE_CHARS])
    candidates = (
        Memory.objects.filter(owner=memory.owner, duplicate_of__isnull=True)
        .filter(same_band)
        .exclude(pk=memory.pk)
        .order_by("pk")[:50]
    )
    for candidate in candidates:
        if textutil.jaccard(mine, textutil.shingles(candidate.raw_text[:NEAR_DUPLICATE_CHARS])) >= NEAR_DUPLICATE_JACCARD:
            memory.duplicate_of = candidate
            memory.save(update_fields=["duplicate_of"])
            MemoryLink.objects.create(from_memory=memory, to_memory=candidate, relationship="near-duplicate")
            record(memory, Event.Action.DUPLICATE, actor, after={"duplicate_of": candidate.pk})
            return


def ingest_file(
    *,
    owner,
    fileobj: BinaryIO,
    name: str,
    source: str = "",
    occurred_at=None,
    actor: Actor = SYSTEM,
    expires_at=None,
    queue: bool = False,
) -> IngestResult:
    """Store a file (kept as the original) and what can be read of it as a pending memory;
    `queue` as for ingest_text."""
    name = Path(name.replace("\\", "/")).name or "file"
    try:
        extract.supported_extension(name)
    except extract.UnsupportedFile as exc:
        raise IngestError(str(exc)) from None
    limit = settings.MEMORY_MAX_UPLOAD_MB * 1024 * 1024
    when = parse_occurred_at(occurred_at)
    expires = parse_expires_at(expires_at)
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
        if (left := quota.room(owner)) is not None and size > left:
            raise quota.refusal(what=repr(name))
        # Only the cheap checks here (type, emptiness, first bytes): parsing a file can take
        # long on a small hostile one (a PDF of many pages, a CSV the sniffer chokes on), so
        # it runs in the extraction task, never in the request or the watcher's pass.
        try:
            mime = extract.check_file(Path(tmp.name), name)
        except extract.UnsupportedFile as exc:
            raise IngestError(str(exc)) from None
        memory = Memory(
            owner=owner,
            source=(source or name)[:500],
            raw_text="",
            mime_type=mime,
            content_hash=sha,
            metadata={"file_name": name, "size": size, UNREAD: True, **({"occurred_at_given": True} if when else {})},
            expires_at=expires,
            **({"occurred_at": when} if when else {}),
        )
        with open(tmp.name, "rb") as fh:
            memory.original.save(name, File(fh), save=False)
        try:
            result = _create(memory, actor, queue=queue)
        except Exception:
            memory.original.delete(save=False)
            raise
        if not result.created:  # the same file arrived at the same moment by another path
            memory.original.delete(save=False)
        return result


def _read_original(memory: Memory, actor: Actor) -> str:
    """Parse a stored file into the memory's text and metadata (the part of ingest that can
    be slow). Returns "" when read, else why it could not be (the memory is then failed)."""
    name = memory.metadata.get("file_name") or memory.file_name
    try:
        content = extract.read_file(Path(memory.original.path), name, budget_seconds=settings.MEMORY_EXTRACT_TIME_BUDGET_SECONDS)
    except extract.UnreadableFile as exc:
        # A damaged or encrypted file of an accepted type: kept, failed with the reason, so
        # a provider that can read it (or a fixed extractor) can retry.
        memory.metadata = {**memory.metadata, "needs_model": True}
        memory.save(update_fields=["metadata", "updated_at"])
        return str(exc)
    except extract.UnsupportedFile as exc:
        return str(exc)
    except OSError as exc:
        return f"{name!r} could not be read from storage ({exc.strerror or type(exc).__name__})."
    memory.raw_text = content.text
    memory.mime_type = content.mime_type
    metadata = {**memory.metadata, **content.metadata}
    metadata.pop(UNREAD, None)
    if content.needs_model:
        metadata["needs_model"] = True
    # A photo's date taken or a recording date says when it happened, unless the user said.
    if not metadata.get("occurred_at_given") and content.occurred_at is not None:
        when = content.occurred_at
        memory.occurred_at = when if timezone.is_aware(when) else timezone.make_aware(when)
        metadata["occurred_at_given"] = True
    memory.metadata = metadata
    _fingerprint(memory)
    with transaction.atomic():
        memory.save(
            update_fields=[
                "raw_text",
                "mime_type",
                "metadata",
                "occurred_at",
                "sim_band0",
                "sim_band1",
                "sim_band2",
                "sim_band3",
                "updated_at",
            ]
        )
        _link_near_duplicate(memory, actor)
    return ""


def _note_files(memory: Memory) -> list[FilePart]:
    if not memory.original:
        return []
    path = Path(memory.original.path)
    notes = int((memory.metadata or {}).get("notes_chars") or 0)
    return [FilePart(name=memory.file_name, mime_type=memory.mime_type, path=path, size=path.stat().st_size, notes_chars=notes)]


def extract_memory(memory_id: int, *, actor: Actor = SYSTEM, embed: bool = True, updates: bool = True) -> Memory | None:
    """Run the provider on a saved input: pending or failed -> ready (or waiting for review
    in review mode), or failed with the reason. Running it again on an extracted memory does
    nothing, so a task delivered twice is harmless; a memory deleted meanwhile is skipped.
    Then its vector (embed=False: the caller embeds many at once afterwards) and its update
    check (updates=False: the caller has it made after the vectors, updates.check_later)."""
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
    if memory.metadata.get(UNREAD) and memory.original:
        if unreadable := _read_original(memory, actor):
            return _mark_failed(memory, unreadable, actor)
    provider = None
    try:
        provider = get_provider()
        _transcribe(memory, provider)
        result = provider.extract(text=memory.raw_text, files=_note_files(memory), source=memory.source)
    except ProviderError as exc:
        log.warning("extraction of memory %s failed: %s", memory.pk, exc)
        usage.record_call(owner_id=memory.owner_id, provider=provider_name(), failed=True)
        if exc.retryable and circuit.record_failure(provider_name(), str(exc)):
            usage.record_breaker_trip(provider=provider_name())
        return _mark_failed(memory, str(exc), actor)
    except Exception as exc:  # a provider bug must not leave the input stuck in pending
        log.exception("extraction of memory %s crashed", memory.pk)
        usage.record_call(owner_id=memory.owner_id, provider=provider_name(), failed=True)
        return _mark_failed(memory, f"{type(exc).__name__}: {exc}", actor)
    finally:
        if provider is not None:
            provider.close()
    circuit.record_success(provider_name())
    usage.record_call(owner_id=memory.owner_id, provider=provider_name())
    memory.status = Memory.Status.REVIEW if settings.MEMORY_REVIEW_MODE else Memory.Status.READY
    memory.extracting_since = None
    with transaction.atomic():
        _apply_extraction(memory, result, provider.label, update_fields=["status", "extracting_since"])
        record(memory, Event.Action.EXTRACTED, actor, after=snapshot(memory), note=provider.label)
    if embed:
        embed_after_extraction(memory)
    if updates:
        from .updates import detect_updates, needs_update_check

        if needs_update_check(memory):
            detect_updates(memory, actor=actor)
    return memory


def _apply_extraction(memory: Memory, result, label: str, *, update_fields: list[str]) -> None:
    memory.summary = (result.summary or memory.raw_text[:300]).strip()
    memory.entities = entities.canonical(owner=memory.owner, entities=_clean_list(result.entities))
    # Tags the person gave (a note's front matter) stay ahead of the extracted topics.
    memory.topics = _clean_list([*(memory.metadata.get("note_tags") or []), *_clean_list(result.topics)])
    memory.importance = min(1.0, max(0.0, float(result.importance)))
    if memory.metadata.get("said_by"):
        memory.importance = min(memory.importance, ASSISTANT_MAX_IMPORTANCE)
    if result.occurred_at and not memory.metadata.get("occurred_at_given"):
        memory.occurred_at = result.occurred_at
    memory.error = ""
    memory.provider = label
    memory.save(
        update_fields=[
            "summary",
            "entities",
            "topics",
            "importance",
            "occurred_at",
            "error",
            "provider",
            "updated_at",
            "raw_text",
            "metadata",
            *update_fields,
        ]
    )


def _transcribe(memory: Memory, provider) -> None:
    """A recording the provider cannot hear is transcribed by the configured speech-to-text
    endpoint first; the transcript becomes the memory's text (saved with the extraction).
    ProviderError when the endpoint fails: the memory fails with the reason, retryable."""
    mime = memory.mime_type or ""
    if (
        not memory.original
        or not mime.startswith(("audio/", "video/"))
        or provider.supports_files(mime)
        or not transcribe.configured()
        or memory.metadata.get("transcribed")
    ):
        return
    try:
        transcript = transcribe.transcribe(Path(memory.original.path), name=memory.file_name, mime_type=mime)
    except ProviderError as exc:
        # Not the model's failure: the provider's circuit breaker stays as it is.
        raise ProviderError(f"Transcription failed: {exc}") from None
    if not transcript:
        return
    notes = memory.raw_text.replace(NEEDS_MODEL_AUDIO, "").replace(NEEDS_MODEL_VIDEO, "").strip()
    reader = transcribe.label()
    memory.raw_text = f"{notes}\n\nTranscript, by {reader}:\n{transcript}"
    memory.metadata = {
        **memory.metadata,
        "reader": reader,
        "transcribed": True,
        "notes_chars": len(memory.raw_text) - len(transcript),
    }
    memory.metadata.pop("needs_reader", None)
    if mime.startswith("audio/"):
        memory.metadata.pop("needs_model", None)


def _mark_failed(memory: Memory, reason: str, actor: Actor) -> Memory:
    memory.status = Memory.Status.FAILED
    memory.error = reason[:2000] or "The provider failed without a message."
    memory.extracting_since = None
    with transaction.atomic():
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

    def enqueue():
        try:
            async_task("memories.tasks.extract_memory", memory.pk, task_name=f"extract-{memory.pk}")
        except Exception:
            # The input is committed and pending: the sweep (resume_stuck, every 5 minutes)
            # queues it again, so a queue that cannot take the task now (a busy database as
            # the ORM broker, Redis down) never fails a write that was already stored.
            log.warning("could not queue the extraction of memory %s; the sweep will", memory.pk, exc_info=True)

    transaction.on_commit(enqueue)


def should_yield(memory_id: int) -> bool:
    """Fair turns between owners. A worker about to extract one of an owner's memories
    steps aside (the task goes to the back of the queue) when that owner already has an
    extraction running and another owner has input waiting. So one person's flood of
    slow or hostile files holds at most one worker while anyone else waits, and a queue
    with one owner's work only runs at full speed. A memory is only ever skipped for
    later, never dropped: its task comes round again."""
    memory = Memory.objects.filter(pk=memory_id, status=Memory.Status.PENDING).only("owner_id").first()
    if memory is None:
        return False
    fresh = timezone.now() - STUCK_AFTER
    busy = Memory.objects.filter(owner_id=memory.owner_id, extracting_since__gte=fresh).exclude(pk=memory_id).exists()
    if not busy:
        return False
    # Waiting input whose task is alive (touched within the lease): lost tasks are the sweeper's.
    return (
        Memory.objects.filter(status=Memory.Status.PENDING, extracting_since__isnull=True, updated_at__gte=fresh)
        .exclude(owner_id=memory.owner_id)
        .exists()
    )


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


def retry_failed(*, owner, actor: Actor = SYSTEM) -> list[int]:
    """Put all of the owner's failed memories back to pending, each retry recorded; the
    caller extracts them."""
    with transaction.atomic():
        # Locked, so a retry running at the same moment does not record the same memories.
        failed = list(Memory.objects.select_for_update().filter(owner=owner, status=Memory.Status.FAILED).only("pk", "owner_id"))
        ids = [memory.pk for memory in failed]
        _back_to_pending(Memory.objects.filter(pk__in=ids))
        record_many(failed, Event.Action.RETRIED, actor, note="every failed memory retried")
    return ids


def retry_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory:
    """Put a failed memory back to pending and queue its extraction again."""
    with transaction.atomic():
        if not _back_to_pending(Memory.objects.filter(pk=memory_id, owner=owner)):
            raise RetryError("Only a failed memory of yours can be retried.")
        memory = Memory.objects.get(pk=memory_id)
        record(memory, Event.Action.RETRIED, actor)
    queue_extraction(memory)
    return memory


def _back_to_pending(memories) -> int:
    """Failed memories among these become pending input again; returns how many did.
    Touched now, so the sweeper sees input whose task is on its way, not a lost one."""
    return memories.filter(status=Memory.Status.FAILED).update(status=Memory.Status.PENDING, error="", updated_at=timezone.now())


def needs_model_memories(*, owner=None):
    """Memories the offline engine could only describe (images, audio, video, scans):
    worth extracting again once a multimodal provider is configured."""
    memories = Memory.objects.filter(metadata__needs_model=True).filter(
        Q(provider__startswith="offline") | Q(status=Memory.Status.FAILED)
    )
    return memories.filter(owner=owner) if owner is not None else memories


def reextract_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Extract a memory again with the current provider (a model configured since).
    An extracted memory keeps its extraction, and its place in recall, until the new one
    succeeds: a failure leaves it as it was, with the failure noted in `error` and the
    history. Pending or failed input takes the ordinary extraction path."""
    memory = Memory.objects.filter(owner=owner, pk=memory_id).first()
    if memory is None:
        return None
    if memory.status not in (Memory.Status.READY, Memory.Status.REVIEW):
        with transaction.atomic():
            if _back_to_pending(Memory.objects.filter(pk=memory.pk)):
                record(memory, Event.Action.RETRIED, actor, note="re-extraction asked for a failed memory")
        return extract_memory(memory.pk, actor=actor)
    before = snapshot(memory)
    provider = None
    try:
        provider = get_provider()
        result = provider.extract(text=memory.raw_text, files=_note_files(memory), source=memory.source)
    except Exception as exc:  # a provider error or bug: the memory stays as it was
        reason = str(exc) if isinstance(exc, ProviderError) else f"{type(exc).__name__}: {exc}"
        log.warning("re-extraction of memory %s failed: %s", memory.pk, reason)
        memory.error = f"Re-extraction failed (the earlier extraction is kept): {reason}"[:2000]
        with transaction.atomic():
            memory.save(update_fields=["error", "updated_at"])
            record(memory, Event.Action.FAILED, actor, note=memory.error[:500])
        return memory
    finally:
        if provider is not None:
            provider.close()
    with transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(attempts=F("attempts") + 1)
        memory.attempts += 1
        _apply_extraction(memory, result, provider.label, update_fields=[])
        record(memory, Event.Action.REEXTRACTED, actor, before=before, after=snapshot(memory), note=provider.label)
    return memory
