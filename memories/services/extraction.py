"""Extraction: the lifecycle of saved input. A pending memory is read (a stored file parsed),
the provider extracts a structured memory from it (ready, or failed with the reason and the
input kept), and the sweeps bring back what got stuck; retry and re-extraction run it again.
Saving the input is services/ingest.py."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from .. import extract
from ..extract.media import NEEDS_MODEL_AUDIO, NEEDS_MODEL_VIDEO
from ..llm import ProviderError, circuit, get_provider, provider_name, transcribe
from ..llm.base import FilePart
from ..models import Event, Memory
from . import entities, usage
from .duplicates import fingerprint, link_near_duplicate
from .embed import embed_after_extraction
from .errors import RetryError
from .history import SYSTEM, Actor, record, record_many, snapshot

log = logging.getLogger(__name__)

# A memory still pending this long after its last attempt lost its task (a crash between
# saving and queueing, or a worker killed mid-extraction): the sweeper queues it again.
STUCK_AFTER = timedelta(minutes=settings.MEMORY_EXTRACTION_LEASE_MINUTES)
MAX_ATTEMPTS = 5
# Metadata flag of a stored file not parsed yet: the extraction task reads it first.
UNREAD = "unread"
# An assistant's reply in an imported conversation (metadata "said_by"): context for the
# person's own words, worth at most this much whatever the extraction makes of it.
ASSISTANT_MAX_IMPORTANCE = 0.3


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
    fingerprint(memory)
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
        link_near_duplicate(memory, actor)
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
        from .updates import detect_updates, detect_updates_by_newer, needs_update_check

        if needs_update_check(memory):
            detect_updates(memory, actor=actor)
            # And as the older note of what was read before it (notes finished out of order).
            detect_updates_by_newer(memory, actor=actor)
    return memory


def _apply_extraction(memory: Memory, result, label: str, *, update_fields: list[str]) -> None:
    memory.summary = (result.summary or memory.raw_text[:300]).strip()
    memory.entities = entities.canonical(owner=memory.owner, entities=_clean_list(result.entities), text=memory.raw_text)
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
    busy = Memory.objects.owned_by(memory.owner_id).filter(extracting_since__gte=fresh).exclude(pk=memory_id).exists()
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
        failed = list(
            Memory.objects.select_for_update().owned_by(owner).filter(status=Memory.Status.FAILED).only("pk", "owner_id")
        )
        ids = [memory.pk for memory in failed]
        _back_to_pending(Memory.objects.filter(pk__in=ids))
        record_many(failed, Event.Action.RETRIED, actor, note="every failed memory retried")
    return ids


def retry_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory:
    """Put a failed memory back to pending and queue its extraction again."""
    with transaction.atomic():
        if not _back_to_pending(Memory.objects.owned_by(owner).filter(pk=memory_id)):
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
    return memories.owned_by(owner) if owner is not None else memories


def reextract_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Extract a memory again with the current provider (a model configured since).
    An extracted memory keeps its extraction, and its place in recall, until the new one
    succeeds: a failure leaves it as it was, with the failure noted in `error` and the
    history. Pending or failed input takes the ordinary extraction path."""
    memory = Memory.objects.owned_by(owner).filter(pk=memory_id).first()
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
