"""Changes after creation, each a recorded decision: edit, delete (a tombstone), restore,
purge, supersede, clear, and review."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import Consolidation, Digest, Event, Memory, MemoryLink, ProcessedFile, RejectedContent
from . import fields, inboxfs
from .history import EDITABLE_FIELDS, SYSTEM, Actor, record, snapshot
from .digests import leave_digests
from .embed import embed_after_extraction
from .errors import EditError, IngestError, RestoreError
from .ingest import parse_expires_at, parse_occurred_at
from .owners import access_memory, default_owner


def _own(owner, memory_id: int, **how) -> Memory | None:
    """access_memory, or None: these services answer "no such memory of yours" with None."""
    try:
        return access_memory(owner, memory_id, **how)
    except Memory.DoesNotExist:
        return None


def _withdraw(memory: Memory, actor: Actor) -> None:
    """A memory left the record: its links go, insights built on it turn stale, and the
    facts it superseded are current again."""
    from .updates import release_successors

    release_successors(memory, actor, why=f"memory {memory.pk}, which superseded it, left the record")
    MemoryLink.objects.filter(from_memory=memory).delete()
    MemoryLink.objects.filter(to_memory=memory).delete()
    leave_digests([memory.pk])
    now = timezone.now()
    for consolidation in Consolidation.objects.filter(sources=memory, stale_at__isnull=True):
        consolidation.stale_at = now
        consolidation.save(update_fields=["stale_at", "updated_at"])
        record(consolidation, Event.Action.STALE, actor, note=f"source memory {memory.pk} left the record")


def update_memory(*, owner, memory_id: int, changes: dict, actor: Actor = SYSTEM) -> Memory:
    """Correct what the extractor wrote. Only EDITABLE_FIELDS; values are validated."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise EditError(f"These fields cannot be edited: {', '.join(sorted(unknown))}.")
    with transaction.atomic():
        # Locked: the "before" recorded is what this edit replaced, not what another did.
        memory = access_memory(owner, memory_id, lock=True)
        # A value that is already stored is not a change: nothing to save or record.
        clean = {name: value for name, value in _validated(changes).items() if getattr(memory, name) != value}
        if not clean:
            return memory
        before = snapshot(memory, tuple(clean))
        for name, value in clean.items():
            setattr(memory, name, value)
        if "importance" in clean:
            memory.base_importance = None  # a person's rating replaces what fading did
            clean_fields = [*clean, "base_importance"]
        else:
            clean_fields = list(clean)
        memory.save(update_fields=[*clean_fields, "updated_at"])
        record(memory, Event.Action.EDITED, actor, before=before, after=snapshot(memory, tuple(clean)))
    return memory


def _validated(changes: dict) -> dict:
    clean = {}
    for name, value in changes.items():
        if name == "summary":
            summary = fields.text(value, field=name).strip()
            if not summary:
                raise EditError("The summary cannot be empty.", field=name)
            clean[name] = summary[: fields.MAX_SUMMARY_CHARS]
        elif name in ("entities", "topics"):
            clean[name] = fields.labels(value, field=name)
        elif name == "importance":
            clean[name] = fields.importance(value, field=name)
        elif name == "occurred_at":
            when = _parsed(parse_occurred_at, value, name)
            if when is None:
                raise EditError("occurred_at cannot be empty.", field=name)
            clean[name] = when
        elif name == "expires_at":
            clean[name] = _parsed(parse_expires_at, value, name)  # empty clears it
    return clean


def _parsed(parse, value, name: str):
    """A date the ingest parser reads, refused as an edit (at its field) when it cannot."""
    try:
        return parse(value)
    except IngestError as exc:
        raise EditError(str(exc), field=name) from None


def delete_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Tombstone one of the owner's memories: it leaves every list and recall at once, and
    its content is rejected if it comes back. None when there is no such memory of theirs."""
    with transaction.atomic():
        memory = _own(owner, memory_id)
        if memory is None:
            return None
        memory.deleted_at = timezone.now()
        memory.save(update_fields=["deleted_at", "updated_at"])
        RejectedContent.objects.update_or_create(
            owner=owner,
            content_hash=memory.content_hash,
            defaults={"memory_ref": memory.pk, "reason": "deleted", "rejected_at": memory.deleted_at},
        )
        record(memory, Event.Action.DELETED, actor, before=snapshot(memory))
        _withdraw(memory, actor)
    return memory


def delete_memories(*, owner, memory_ids: list[int], actor: Actor = SYSTEM) -> list[int]:
    """Tombstone several of the owner's memories (bulk select on the bank page), each a
    recorded delete like delete_memory. Returns the ids deleted; others' ids are ignored."""
    return [pk for pk in memory_ids if delete_memory(owner=owner, memory_id=pk, actor=actor) is not None]


def restore_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Bring a deleted memory back; it is consolidated again on the next run."""
    with transaction.atomic():
        memory = _own(owner, memory_id, memories=Memory.all_objects.filter(deleted_at__isnull=False))
        if memory is None:
            return None
        if Memory.objects.owned_by(owner).filter(content_hash=memory.content_hash).exists():
            raise RestoreError("The same content is stored again as another memory; delete that one first.")
        memory.deleted_at = None
        memory.consolidated_at = None
        memory.save(update_fields=["deleted_at", "consolidated_at", "updated_at"])
        RejectedContent.objects.owned_by(owner).filter(content_hash=memory.content_hash).delete()
        record(memory, Event.Action.RESTORED, actor, after=snapshot(memory))
    # Its vector went when it was deleted (embeddings/store.py); it follows again.
    embed_after_extraction(memory)
    _check_updates(memory, actor)
    return memory


def restore_all(*, owner, actor: Actor = SYSTEM) -> tuple[int, int]:
    """Bring back every one of the owner's deleted memories (after a clear, one press instead
    of one a memory), each a recorded restore like restore_memory and in its own short
    transaction. The most recently deleted goes first: when two tombstones hold the same
    content, that one comes back and the other stays deleted. Returns (restored, left)."""
    restored = left = 0
    ids = list(deleted_memories(owner=owner).values_list("pk", flat=True))
    for memory_id in ids:
        try:
            if restore_memory(owner=owner, memory_id=memory_id, actor=actor) is not None:
                restored += 1
        except RestoreError:
            left += 1
    return restored, left


def _check_updates(memory: Memory, actor: Actor) -> None:
    """A memory back in (or into) the record may change an older fact again."""
    if settings.MEMORY_DETECT_UPDATES and memory.status == Memory.Status.READY:
        from .updates import detect_updates

        detect_updates(memory, actor=actor)


def purge_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> bool:
    """Erase a memory's content for good (a privacy request). What stays: the content hash
    (so it stays rejected) and the events, stripped of every value they held."""
    with transaction.atomic():
        memory = _own(owner, memory_id, any_state=True)
        if memory is None:
            return False
        if memory.is_live:
            _withdraw(memory, actor)
        RejectedContent.objects.update_or_create(
            owner=owner, content_hash=memory.content_hash, defaults={"memory_ref": memory.pk, "reason": "purged"}
        )
        Event.objects.owned_by(owner).filter(subject_type=Event.Subject.MEMORY, subject_id=memory.pk).update(
            before={}, after={}, note=""
        )
        # An update's reason quotes both facts ("residence: A -> B") and is recorded on the
        # other memory of the pair too: that copy is erased as well.
        Event.objects.filter(
            Q(after__outdated_by=memory.pk) | Q(after__supersedes=memory.pk),
            owner=owner,
            subject_type=Event.Subject.MEMORY,
            action__in=(Event.Action.OUTDATED, Event.Action.UPDATES),
        ).update(note="")
        _forget_in_insights(owner, memory, actor)
        record(memory, Event.Action.PURGED, actor)
        original = memory.original.name if memory.original else ""
        storage = memory.original.storage
        memory.delete()
    # Erase the file even if something later fails: a purge is a promise to forget.
    if original:
        storage.delete(original)
    return True


PURGED_INSIGHT = "(Withdrawn: a source memory was purged. Re-derived from the remaining sources on the next run.)"


def _forget_in_insights(owner, memory: Memory, actor: Actor) -> None:
    """An insight written from a purged memory repeats its content, and so do the history
    snapshots of that insight: both are erased too. The insight itself is blanked and left
    stale, so the next consolidation run writes it again from the sources that remain (or
    retires it); snapshots that listed the memory among their sources are emptied."""
    now = timezone.now()
    # Whoever owns the insight: one that cites another space's memory (a row the admin now
    # refuses, from before or by hand) may have copied its text, and a purge forgets it all.
    owners = {getattr(owner, "pk", owner)}
    for consolidation in Consolidation.all_objects.filter(sources=memory):
        owners.add(consolidation.owner_id)
        consolidation.summary = consolidation.insight = PURGED_INSIGHT
        consolidation.stale_at = consolidation.stale_at or now
        consolidation.save(update_fields=["summary", "insight", "stale_at", "updated_at"])
        record(consolidation, Event.Action.STALE, actor, note=f"source memory {memory.pk} was purged")
    events = Event.objects.filter(owner_id__in=owners, subject_type=Event.Subject.CONSOLIDATION)
    for event in events.only("pk", "before", "after"):
        wipe = {}
        for side in ("before", "after"):
            sources = (getattr(event, side) or {}).get("sources") or []
            if memory.pk in sources:
                wipe[side] = {}
        if wipe:
            Event.objects.filter(pk=event.pk).update(**wipe, note="")


def supersede_memory(*, old: Memory, new: Memory, actor: Actor = SYSTEM) -> None:
    """A new version replaces an old one (a changed inbox file): the old one stays in history."""
    with transaction.atomic():
        old.superseded_by = new
        old.save(update_fields=["superseded_by", "updated_at"])
        record(old, Event.Action.SUPERSEDED, actor, after={"superseded_by": new.pk})
        _withdraw(old, actor)


def clear_owner(*, owner, inbox_files: bool = True, actor: Actor = SYSTEM) -> dict[str, int]:
    """Start the owner's space over, in one recorded step: every memory is tombstoned (still
    restorable from the deleted list), insights retired, and the inbox files that were read
    removed, as the original design's clear did (unless inbox_files=False). Unlike a single
    delete it leaves nothing that refuses content: whatever is sent afterwards is new."""
    now = timezone.now()
    paths = list(ProcessedFile.objects.owned_by(owner).values_list("path", flat=True)) if inbox_files else []
    with transaction.atomic():
        live = Memory.objects.owned_by(owner)
        memories = list(live.values_list("pk", "content_hash"))
        RejectedContent.objects.owned_by(owner).delete()
        live.update(deleted_at=now)
        MemoryLink.objects.filter(from_memory__owner=owner).delete()
        Digest.objects.filter(owner=owner).delete()  # built from what was just cleared
        consolidations = Consolidation.objects.owned_by(owner).update(retired_at=now)
        processed = ProcessedFile.objects.owned_by(owner).delete()[0]
        Event.objects.bulk_create(
            Event(
                owner=owner,
                subject_type=Event.Subject.MEMORY,
                subject_id=pk,
                action=Event.Action.CLEARED,
                actor=actor.label,
                actor_user=actor.user,
                created_at=now,
            )
            for pk, _ in memories
        )
    removed = 0
    for path in dict.fromkeys(paths):
        if _remove_inbox_file(owner, Path(path)):
            removed += 1
    return {"memories": len(memories), "consolidations": consolidations, "processed_files": processed, "inbox_files": removed}


def _remove_inbox_file(owner, path: Path) -> bool:
    """Remove one of the owner's inbox files: only a regular file in the owner's own part of
    the inbox, never through a link (resolving one would aim the unlink at its target)."""
    inbox = inboxfs.inbox_root()
    if not path.is_relative_to(inbox):
        return False
    rel = path.relative_to(inbox)
    if not inboxfs.owner_may_hold(owner, rel, default_owner_pk=default_owner().pk):
        return False
    return inboxfs.remove_regular_file(inbox, rel)


def clearable_inbox_files(*, owner) -> int:
    """How many files in the inbox folder a clear would remove (for the danger zone)."""
    inbox = inboxfs.inbox_root()
    paths = (Path(p) for p in dict.fromkeys(ProcessedFile.objects.owned_by(owner).values_list("path", flat=True)))
    return sum(1 for path in paths if path.is_relative_to(inbox) and not path.is_symlink() and path.is_file())


def approve_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Review mode: a person lets an extracted memory into the record."""
    with transaction.atomic():
        updated = (
            Memory.objects.owned_by(owner)
            .filter(pk=memory_id, status=Memory.Status.REVIEW)
            .update(status=Memory.Status.READY, updated_at=timezone.now())
        )
        if not updated:
            return None
        memory = Memory.objects.get(pk=memory_id)
        record(memory, Event.Action.APPROVED, actor, after=snapshot(memory))
    _check_updates(memory, actor)
    return memory


def reject_memory(*, owner, memory_id: int, actor: Actor = SYSTEM) -> Memory | None:
    """Review mode: rejected content is tombstoned like a delete."""
    with transaction.atomic():
        memory = _own(owner, memory_id, memories=Memory.objects.filter(status=Memory.Status.REVIEW))
        if memory is None:
            return None
        record(memory, Event.Action.REJECTED, actor)
        return delete_memory(owner=owner, memory_id=memory_id, actor=actor)


def deleted_memories(*, owner):
    """The owner's tombstoned memories, newest first, for restore."""
    return Memory.all_objects.owned_by(owner).filter(deleted_at__isnull=False).order_by("-deleted_at")
