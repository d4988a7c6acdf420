"""Export and import of a whole memory space, as one JSON Lines stream.

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

Both directions stream: export reads rows with iterators and files in chunks; import holds
only the id maps. Import runs in one transaction and checks the end line's counts and
checksum before it commits, so a corrupt or cut-off export imports nothing.

Into an empty space an import recreates it: ids are new, every reference is mapped to them,
timestamps, states, links, insights, history and tombstones are the exported ones. Into a
space that already holds memories it deduplicates as ingest does: content already there is
not added again (its history stays the space's own), content the space deleted stays
refused, and new memories are checked for near-duplicates.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.files import File
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Max
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ..models import Consolidation, Event, Memory, MemoryLink, RejectedContent
from .history import SYSTEM, Actor
from .ingest import _fingerprint, _link_near_duplicate, queue_extraction

FORMAT = "always-on-memory-export"
VERSION = 1
FILE_CHUNK = 512 * 1024
QUEUE_AT_ONCE = 100
TYPES = ("header", "memory", "file_chunk", "consolidation", "link", "tombstone", "event", "end")
# Keys of an event's before/after that hold memory ids.
MEMORY_REF_KEYS = ("duplicate_of", "superseded_by", "outdated_by", "sources")

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


class ImportRefused(ValueError):
    """The export cannot be imported; the message says why and is safe to show. Nothing was imported."""


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


# -- export ----------------------------------------------------------------------------------


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
    for memory in Memory.all_objects.filter(owner=owner).order_by("pk").iterator(chunk_size=500):
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
    through = Consolidation.sources.through.objects
    for consolidation in Consolidation.all_objects.filter(owner=owner).order_by("pk").iterator(chunk_size=500):
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
    for link in MemoryLink.objects.filter(from_memory__owner=owner).order_by("pk").iterator(chunk_size=2000):
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
    for tombstone in RejectedContent.objects.filter(owner=owner).order_by("pk").iterator(chunk_size=2000):
        yield emit(
            {
                "type": "tombstone",
                "content_hash": tombstone.content_hash,
                "memory_ref": tombstone.memory_ref,
                "reason": tombstone.reason,
                "rejected_at": _iso(tombstone.rejected_at),
            }
        )
    for event in Event.objects.filter(owner=owner).order_by("pk").iterator(chunk_size=2000):
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


# -- import ----------------------------------------------------------------------------------


@dataclass
class ImportResult:
    memories: int = 0
    files: int = 0
    consolidations: int = 0
    links: int = 0
    tombstones: int = 0
    events: int = 0
    duplicates: int = 0  # already in the space: not added again
    refused: int = 0  # deleted in the space: stays out
    near_duplicates: int = 0
    source_user: str = ""
    pending: list[int] = field(default_factory=list, repr=False)

    def summary(self) -> str:
        parts = [
            _count(self.memories, "memory", "memories"),
            _count(self.files, "file"),
            _count(self.consolidations, "insight"),
            _count(self.links, "link"),
            _count(self.tombstones, "tombstone"),
            _count(self.events, "history event"),
        ]
        skipped = [f"{self.duplicates} already there"] if self.duplicates else []
        skipped += [f"{self.refused} deleted here before, left out"] if self.refused else []
        skipped += [f"{self.near_duplicates} linked as near-duplicates"] if self.near_duplicates else []
        return "Imported " + ", ".join(parts) + (f" ({'; '.join(skipped)})" if skipped else "") + "."


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def import_space(
    *, owner, lines: Iterable[bytes], actor: Actor = SYSTEM, progress: Callable[[Counter], None] | None = None
) -> ImportResult:
    """Import an export into the owner's space, all or nothing. Raises ImportRefused."""
    importer = _Importer(owner, actor, progress)
    try:
        with transaction.atomic():
            result = importer.run(lines)
    except BaseException:
        importer.discard_files()
        raise
    # Extraction still owed: the first few are queued now; the sweeper (resume_stuck) picks up
    # the rest, which keeps a big import from spending minutes filling the queue.
    for pk in result.pending[:QUEUE_AT_ONCE]:
        queue_extraction(Memory(pk=pk))
    return result


class _Importer:
    def __init__(self, owner, actor: Actor, progress):
        self.owner = owner
        self.actor = actor
        self.progress = progress
        self.result = ImportResult()
        self.digest = hashlib.sha256()
        self.counts: Counter[str] = Counter()
        self.line_no = 0
        self.memories: dict[int, int | None] = {}  # exported id -> id here (None: left out)
        self.created: set[int] = set()  # exported ids this import created
        self.consolidations: dict[int, int | None] = {}
        self.made_consolidations: set[int] = set()
        self.reserved: dict[int, int] = {}  # purged memories: ids no memory here will ever get
        self.deferred: list[tuple[int, str, int]] = []
        self.file: _IncomingFile | None = None
        self.saved_files: list[tuple] = []
        self.empty = False
        self.before_max = 0
        self.memories_done = False

    # -- the stream

    def run(self, lines: Iterable[bytes]) -> ImportResult:
        self.empty = not (
            Memory.all_objects.filter(owner=self.owner).exists()
            or RejectedContent.objects.filter(owner=self.owner).exists()
            or Consolidation.all_objects.filter(owner=self.owner).exists()
        )
        self.before_max = Memory.all_objects.aggregate(top=Max("pk"))["top"] or 0
        ended = False
        for raw in lines:
            self.line_no += 1
            if isinstance(raw, str):
                raw = raw.encode("utf-8")
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            if ended:
                raise ImportRefused(f"Line {self.line_no}: there is data after the end marker; the export is corrupt.")
            record = self._parse(raw)
            kind = record["type"]
            if kind == "end":
                self._finish(record)
                ended = True
                continue
            self.digest.update(raw + b"\n")
            self.counts[kind] += 1
            try:
                self._dispatch(kind, record)
            except ImportRefused:
                raise
            except (KeyError, TypeError, ValueError, binascii.Error, DatabaseError) as exc:
                raise ImportRefused(f"Line {self.line_no} ({kind}) could not be imported: {type(exc).__name__}: {exc}") from None
            if self.progress and sum(self.counts.values()) % 200 == 0:
                self.progress(self.counts)
        if not ended:
            if self.line_no == 0:
                raise ImportRefused("The export is empty.")
            raise ImportRefused(
                f"The export stops after line {self.line_no} without its end marker: it was cut off. Nothing was imported."
            )
        if self.progress:
            self.progress(self.counts)
        return self.result

    def _parse(self, raw: bytes) -> dict:
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            raise ImportRefused(
                f"Line {self.line_no} is not valid JSON: the export is corrupt or was cut off. Nothing was imported."
            ) from None
        if not isinstance(record, dict) or record.get("type") not in TYPES:
            raise ImportRefused(f"Line {self.line_no} is not an export record; is this a memory export (JSON Lines)?")
        if self.line_no == 1 and record["type"] != "header":
            raise ImportRefused("This is not a memory export: it does not start with the export header.")
        return record

    def _dispatch(self, kind: str, record: dict) -> None:
        if kind != "file_chunk":
            self._close_file()
        if kind not in ("header", "memory", "file_chunk") and not self.memories_done:
            self._resolve_references()
        getattr(self, f"_{kind}")(record)

    def _finish(self, record: dict) -> None:
        self._close_file()
        if not self.memories_done:
            self._resolve_references()
        counts = record.get("counts")
        if counts != dict(self.counts):
            raise ImportRefused(
                f"The export's end marker lists {counts} records, but {dict(self.counts)} were read: it is incomplete. Nothing was imported."
            )
        if record.get("sha256") != self.digest.hexdigest():
            raise ImportRefused(
                "The export's checksum does not match its content: it was changed or damaged. Nothing was imported."
            )

    # -- records

    def _header(self, record: dict) -> None:
        if self.line_no != 1:
            raise ImportRefused(f"Line {self.line_no}: a second header; the export is corrupt.")
        if record.get("format") != FORMAT:
            raise ImportRefused("This is not a memory export (its header names another format).")
        version = record.get("version")
        if not isinstance(version, int) or version < 1:
            raise ImportRefused("The export's header has no valid version.")
        if version > VERSION:
            raise ImportRefused(
                f"The export is format version {version}; this installation reads up to version {VERSION}. Upgrade it first."
            )
        self.result.source_user = str(record.get("user", ""))

    def _memory(self, record: dict) -> None:
        old = int(record["id"])
        if old in self.memories:
            raise ImportRefused(f"Line {self.line_no}: memory {old} appears twice; the export is corrupt.")
        digest = str(record["content_hash"])
        live = record.get("deleted_at") is None and record.get("superseded_by") is None
        original = record.get("original")
        # As ingest does: content the space deleted stays out, content it holds is not added twice.
        if live and not self.empty and RejectedContent.objects.filter(owner=self.owner, content_hash=digest).exists():
            self.memories[old] = None
            self.result.refused += 1
            self.file = _IncomingFile.ignored(old, original)
            return
        existing = (
            Memory.all_objects.filter(owner=self.owner, content_hash=digest, pk__lte=self.before_max)
            .order_by(F("deleted_at").asc(nulls_first=True), "-pk")
            .first()
            if not self.empty
            else None
        )
        if existing is not None:
            self.memories[old] = existing.pk
            self.result.duplicates += 1
            self.file = _IncomingFile.ignored(old, original)
            return
        values = {name: record[name] for name in MEMORY_FIELDS}
        values.update({name: record.get(name) for name in FACT_FIELDS})
        for name in DATETIME_FIELDS & set(values):
            values[name] = _when(values[name])
        memory = Memory(owner=self.owner, **values)
        if memory.occurred_at is None or memory.created_at is None:
            raise ValueError("occurred_at and created_at are required")
        if memory.status not in Memory.Status.values:
            raise ValueError(f"unknown status {memory.status!r}")
        if not isinstance(memory.metadata, dict) or not isinstance(memory.entities, list) or not isinstance(memory.topics, list):
            raise ValueError("metadata must be an object, entities and topics lists")
        _fingerprint(memory)
        # raw: as loaddata saves, with the exported created_at/updated_at instead of the clock's.
        memory.save_base(raw=True)
        self.memories[old] = memory.pk
        self.created.add(old)
        self.result.memories += 1
        for name in ("duplicate_of", "superseded_by", "outdated_by"):
            if record.get(name) is not None:
                self.deferred.append((memory.pk, name, int(record[name])))
        if memory.status == Memory.Status.PENDING and memory.deleted_at is None:
            self.result.pending.append(memory.pk)
        if original:
            self.file = _IncomingFile.expect(old, memory, original)

    def _file_chunk(self, record: dict) -> None:
        old = int(record["memory"])
        if self.file is None or self.file.old_id != old:
            raise ImportRefused(
                f"Line {self.line_no}: a piece of a file whose memory {old} is not just before it; the export is corrupt."
            )
        self.file.add(int(record["seq"]), base64.b64decode(record["data"], validate=True), line=self.line_no)

    def _close_file(self) -> None:
        if self.file is None:
            return
        file, self.file = self.file, None
        if file.memory is None:
            return
        saved = file.save()
        if saved:
            self.saved_files.append(saved)
            self.result.files += 1

    def discard_files(self) -> None:
        if self.file is not None:
            self.file.discard()
        for storage, name in self.saved_files:
            storage.delete(name)

    def _resolve_references(self) -> None:
        """Once every memory is in: their references to each other, then near-duplicates."""
        self.memories_done = True
        for pk, name, old in self.deferred:
            target = self.memories.get(old)
            if target is not None:
                Memory.all_objects.filter(pk=pk).update(**{f"{name}_id": target})
        self.deferred = []
        if not self.empty:
            # New content next to what was there: linked as a near-duplicate as ingest would.
            fresh = Memory.objects.filter(
                pk__gt=self.before_max, owner=self.owner, duplicate_of__isnull=True, near_duplicates__isnull=True
            )
            for memory in fresh.order_by("pk").iterator(chunk_size=500):
                _link_near_duplicate(memory, self.actor)
                if memory.duplicate_of_id is not None:
                    self.result.near_duplicates += 1

    def _consolidation(self, record: dict) -> None:
        old = int(record["id"])
        sources = [self.memories[s] for s in map(int, record["sources"]) if self.memories.get(s) is not None]
        if not self.empty:
            same = Consolidation.all_objects.filter(
                owner=self.owner, summary=record["summary"], insight=record["insight"]
            ).first()
            if same is not None:
                self.consolidations[old] = same.pk
                return
        consolidation = Consolidation(
            owner=self.owner,
            summary=str(record["summary"]),
            insight=str(record["insight"]),
            provider=str(record.get("provider", "")),
            stale_at=_when(record.get("stale_at")),
            retired_at=_when(record.get("retired_at")),
            created_at=_when(record["created_at"]),
            updated_at=_when(record["updated_at"]),
        )
        consolidation.save_base(raw=True)
        through = Consolidation.sources.through
        through.objects.bulk_create([through(consolidation_id=consolidation.pk, memory_id=pk) for pk in dict.fromkeys(sources)])
        self.consolidations[old] = consolidation.pk
        self.made_consolidations.add(old)
        self.result.consolidations += 1

    def _link(self, record: dict) -> None:
        source, target = self.memories.get(int(record["from"])), self.memories.get(int(record["to"]))
        made_in = record.get("consolidation")
        consolidation = self.consolidations.get(int(made_in)) if made_in is not None else None
        if source is None or target is None or source == target or (made_in is not None and consolidation is None):
            return
        if MemoryLink.objects.filter(from_memory_id=source, to_memory_id=target, consolidation_id=consolidation).exists():
            return
        MemoryLink(
            from_memory_id=source,
            to_memory_id=target,
            relationship=str(record["relationship"])[:500],
            consolidation_id=consolidation,
            created_at=_when(record["created_at"]),
        ).save_base(raw=True)
        self.result.links += 1

    def _tombstone(self, record: dict) -> None:
        ref = record.get("memory_ref")
        if not self.empty and Memory.objects.filter(owner=self.owner, content_hash=str(record["content_hash"])).exists():
            return  # the space holds this content and keeps it: its decision, not the export's
        _, created = RejectedContent.objects.get_or_create(
            owner=self.owner,
            content_hash=str(record["content_hash"]),
            defaults={
                "memory_ref": self._memory_ref(int(ref)) if ref is not None else None,
                "reason": str(record.get("reason", ""))[:200],
                "rejected_at": _when(record["rejected_at"]),
            },
        )
        self.result.tombstones += created

    def _event(self, record: dict) -> None:
        subject_type, old = record["subject_type"], int(record["subject_id"])
        if subject_type == Event.Subject.MEMORY:
            if old in self.memories and old not in self.created:
                return  # content the space already had (or refused): its history is the space's own
            subject = self._memory_ref(old)
        elif subject_type == Event.Subject.CONSOLIDATION:
            if old not in self.made_consolidations:
                return
            subject = self.consolidations[old]
        else:
            raise ValueError(f"unknown subject type {subject_type!r}")
        if record["action"] not in Event.Action.values:
            raise ValueError(f"unknown action {record['action']!r}")
        Event.objects.create(
            owner=self.owner,
            subject_type=subject_type,
            subject_id=subject,
            action=record["action"],
            actor=str(record["actor"])[:200],
            actor_user=self.owner if record.get("by_owner") else None,
            before=self._remap(record.get("before") or {}),
            after=self._remap(record.get("after") or {}),
            note=str(record.get("note", ""))[:500],
            created_at=_when(record["created_at"]),
        )
        self.result.events += 1

    # -- ids

    def _memory_ref(self, old: int) -> int:
        """The id here of an exported memory id; a purged memory (no row, only its history and
        tombstone) gets an id that no memory here will ever have, so its history stays its own."""
        if (pk := self.memories.get(old)) is not None:
            return pk
        if old not in self.reserved:
            ghost = Memory.all_objects.create(owner=self.owner, content_hash="", status=Memory.Status.FAILED)
            Memory.all_objects.filter(pk=ghost.pk).delete()  # ids are never reused (AUTOINCREMENT, sequences)
            self.reserved[old] = ghost.pk
        return self.reserved[old]

    def _remap(self, values: dict) -> dict:
        if not isinstance(values, dict):
            raise ValueError("before and after must be objects")
        out = dict(values)
        for key in MEMORY_REF_KEYS:
            if isinstance(out.get(key), int):
                out[key] = self._memory_ref(out[key])
            elif isinstance(out.get(key), list):
                out[key] = [self._memory_ref(v) if isinstance(v, int) else v for v in out[key]]
        return out


def _when(value) -> datetime | None:
    if value in (None, ""):
        return None
    parsed = parse_datetime(str(value))
    if parsed is None:
        raise ValueError(f"{value!r} is not a datetime")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


class _IncomingFile:
    """An original file arriving in chunks: spooled to disk, checked, then stored."""

    def __init__(self, old_id: int, memory: Memory | None, description: dict | None):
        self.old_id = old_id
        self.memory = memory
        self.description = description or {}
        self.next_seq = 0
        self.sha = hashlib.sha256()
        self.size = 0
        self.tmp = None

    @classmethod
    def ignored(cls, old_id: int, description) -> _IncomingFile:
        return cls(old_id, None, description)

    @classmethod
    def expect(cls, old_id: int, memory: Memory, description: dict) -> _IncomingFile:
        if not isinstance(description, dict) or not description.get("name"):
            raise ValueError("original must be an object with a name")
        return cls(old_id, memory, description)

    def add(self, seq: int, data: bytes, *, line: int) -> None:
        if seq != self.next_seq:
            raise ImportRefused(f"Line {line}: file piece {seq} where {self.next_seq} was expected; the export is corrupt.")
        self.next_seq += 1
        if self.memory is None:
            return
        if self.tmp is None:
            self.tmp = tempfile.NamedTemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".import-")
        self.tmp.write(data)
        self.sha.update(data)
        self.size += len(data)

    def save(self):
        """Store the file and point the memory at it; (storage, name) of what was stored."""
        d = self.description
        if d.get("missing"):
            return None
        if self.next_seq != d.get("chunks") or self.size != d.get("size") or self.sha.hexdigest() != d.get("sha256"):
            self.discard()
            raise ImportRefused(
                f"The original file of memory {self.old_id} ({d.get('name')!r}) is incomplete or damaged. Nothing was imported."
            )
        self.tmp = self.tmp or tempfile.NamedTemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".import-")
        self.tmp.flush()
        self.tmp.seek(0)
        field_file = self.memory.original
        field_file.save(str(d["name"]), File(self.tmp), save=False)
        self.discard()
        Memory.all_objects.filter(pk=self.memory.pk).update(original=field_file.name)
        return field_file.storage, field_file.name

    def discard(self) -> None:
        if self.tmp is not None:
            self.tmp.close()
            self.tmp = None
