"""Export of a whole memory space, as one JSON Lines stream (services/importer.py reads it back).

The format (version 1) is one JSON object a line, each with a "type", in this order:

  header         {"type": "header", "format": "always-on-memory-export", "version": 1,
                  "exported_at", "user"}
  memory         every field of every memory, deleted and superseded ones too, by id; references
                  (duplicate_of, superseded_by) are ids within the export. "original" is null or
                  {"name", "size", "sha256", "chunks"} (or {"name", "missing": true} when the
                  file was gone), and is followed by its file:
  file_chunk     {"memory", "seq", "data"}: the original file, base64, FILE_CHUNK bytes a line
  consolidation  summary, insight, source ids (all of them, deleted sources too), stale/retired
  link           from, to, relationship, consolidation
  tombstone      content hash, reason, memory_ref, rejected_at: what stays refused
  event          the history: subject, action, actor, before, after, note, created_at
  end            {"type": "end", "counts": {type: lines}, "sha256": <hex of every line before it>}

Export streams: it reads rows with iterators and files in chunks.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from ..models import Consolidation, Event, Memory, MemoryLink, RejectedContent

FORMAT = "always-on-memory-export"
VERSION = 1
FILE_CHUNK = 512 * 1024
TYPES = ("header", "memory", "file_chunk", "consolidation", "link", "tombstone", "event", "end")

MEMORY_FIELDS = (
    "source",
    "raw_text",
    "mime_type",
    "metadata",
    "summary",
    "entities",
    "topics",
    "importance",
    "occurred_at",
    "status",
    "error",
    "attempts",
    "provider",
    "consolidated_at",
    "content_hash",
    "deleted_at",
    "created_at",
    "updated_at",
)
# Facts that changed and forgetting (added in version 1 too; an export written before them has
# none, which reads as "current, never expires").
FACT_FIELDS = ("valid_until", "expires_at", "last_recalled_at", "base_importance")
DATETIME_FIELDS = {
    "occurred_at",
    "consolidated_at",
    "deleted_at",
    "created_at",
    "updated_at",
    "stale_at",
    "retired_at",
    "rejected_at",
    "valid_until",
    "expires_at",
    "last_recalled_at",
}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def export_space(*, owner) -> Iterator[bytes]:
    """The owner's whole space as JSON Lines, one encoded line at a time.

    On PostgreSQL the export reads one snapshot (a read-only repeatable-read transaction), so
    memories, links and history written while it streams cannot disagree. SQLite's write
    transactions here are IMMEDIATE (they would lock out every writer for the length of the
    export), so there it reads rows as they are; the importer skips a link or source whose
    memory is not in the file."""
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield from _export_lines(owner)
    else:
        yield from _export_lines(owner)


def _export_lines(owner) -> Iterator[bytes]:
    digest = hashlib.sha256()
    counts: Counter[str] = Counter()

    def emit(record: dict) -> bytes:
        line = _line(record)
        digest.update(line)
        counts[record["type"]] += 1
        return line

    yield emit(
        {
            "type": "header",
            "format": FORMAT,
            "version": VERSION,
            "exported_at": timezone.now().isoformat(),
            "user": owner.get_username(),
        }
    )
    for memory in Memory.all_objects.owned_by(owner).order_by("pk").iterator(chunk_size=500):
        record = {"type": "memory", "id": memory.pk}
        record.update(
            {
                name: _iso(getattr(memory, name)) if name in DATETIME_FIELDS else getattr(memory, name)
                for name in (*MEMORY_FIELDS, *FACT_FIELDS)
            }
        )
        record["duplicate_of"] = memory.duplicate_of_id
        record["superseded_by"] = memory.superseded_by_id
        record["outdated_by"] = memory.outdated_by_id
        chunks = _file_chunks(memory)
        record["original"] = next(chunks) if memory.original else None
        yield emit(record)
        for seq, data in enumerate(chunks):
            yield emit({"type": "file_chunk", "memory": memory.pk, "seq": seq, "data": data})
    # Only the owner's memories, as sources and as link ends: an export never names another space's.
    through = Consolidation.sources.through.objects.filter(memory__owner=owner)
    for consolidation in Consolidation.all_objects.owned_by(owner).order_by("pk").iterator(chunk_size=500):
        yield emit(
            {
                "type": "consolidation",
                "id": consolidation.pk,
                "summary": consolidation.summary,
                "insight": consolidation.insight,
                # The through table, not .sources: the related manager hides deleted sources.
                "sources": sorted(through.filter(consolidation_id=consolidation.pk).values_list("memory_id", flat=True)),
                "provider": consolidation.provider,
                "created_at": _iso(consolidation.created_at),
                "updated_at": _iso(consolidation.updated_at),
                "stale_at": _iso(consolidation.stale_at),
                "retired_at": _iso(consolidation.retired_at),
            }
        )
    for link in MemoryLink.objects.owned_by(owner).order_by("pk").iterator(chunk_size=2000):
        yield emit(
            {
                "type": "link",
                "from": link.from_memory_id,
                "to": link.to_memory_id,
                "relationship": link.relationship,
                "consolidation": link.consolidation_id,
                "created_at": _iso(link.created_at),
            }
        )
    for tombstone in RejectedContent.objects.owned_by(owner).order_by("pk").iterator(chunk_size=2000):
        yield emit(
            {
                "type": "tombstone",
                "content_hash": tombstone.content_hash,
                "memory_ref": tombstone.memory_ref,
                "reason": tombstone.reason,
                "rejected_at": _iso(tombstone.rejected_at),
            }
        )
    for event in Event.objects.owned_by(owner).order_by("pk").iterator(chunk_size=2000):
        yield emit(
            {
                "type": "event",
                "subject_type": event.subject_type,
                "subject_id": event.subject_id,
                "action": event.action,
                "actor": event.actor,
                "by_owner": event.actor_user_id == owner.pk,
                "before": event.before,
                "after": event.after,
                "note": event.note,
                "created_at": _iso(event.created_at),
            }
        )
    yield _line({"type": "end", "counts": dict(counts), "sha256": digest.hexdigest()})


def _file_chunks(memory: Memory) -> Iterator:
    """First the file's description, then its content as base64 chunks. The file is read
    twice (hash, then content) so that neither pass holds it in memory."""
    if not memory.original:
        return
    name = memory.file_name
    try:
        sha, size = hashlib.sha256(), 0
        with memory.original.open("rb") as fh:
            while block := fh.read(FILE_CHUNK):
                sha.update(block)
                size += len(block)
    except OSError:
        yield {"name": name, "missing": True}
        return
    yield {"name": name, "size": size, "sha256": sha.hexdigest(), "chunks": -(-size // FILE_CHUNK)}
    with memory.original.open("rb") as fh:
        while block := fh.read(FILE_CHUNK):
            yield base64.b64encode(block).decode("ascii")
