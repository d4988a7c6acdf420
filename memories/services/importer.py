"""Import of a whole memory space from an export (the format: services/export.py).

Import streams, holding only the id maps. It reads and checks the whole file first (the end
line's counts and checksum, and every field the way the app checks what it writes,
services/fields.py), so a corrupt, cut-off or tampered export imports nothing; then it
writes in short transactions.
Content hashes are recomputed, history is marked as imported, and vectors are made anew by
this installation's backend.

Into an empty space an import recreates it: ids are new, every reference is mapped to them,
timestamps, states, links, insights, history and tombstones are the exported ones. Into a
space that already holds memories it deduplicates as ingest does: content already there is
not added again (its history stays the space's own), content the space deleted stays
refused, and new memories are checked for near-duplicates.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import pickle
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files import File
from django.db import connection, transaction
from django.db.models import F, Max

from ..models import Consolidation, Event, Memory, MemoryLink, RejectedContent, content_hash
from . import fields, quota
from .history import SYSTEM, Actor
from .embed import queue_vectors
from .duplicates import fingerprint, link_near_duplicate
from .extraction import queue_extraction
from .ingest import MAX_TEXT_CHARS
from .export import FORMAT, TYPES, VERSION

QUEUE_AT_ONCE = 100
# The order records come in (a memory's file pieces follow it, so the two share a place).
STAGES = {"header": 0, "memory": 1, "file_chunk": 1, "consolidation": 2, "link": 3, "tombstone": 4, "event": 5}
# How the history of an imported space names who acted: what the file says, marked as such.
IMPORTED = "imported: "
# Keys of an event's before/after that hold memory ids.
MEMORY_REF_KEYS = ("duplicate_of", "superseded_by", "outdated_by", "sources")

# Records one write transaction holds. On SQLite every write transaction locks out every
# other writer: a batch of 200 links or events takes tens of milliseconds, a memory row
# (a dozen indexes) about a millisecond, so memories go 100 at a time (scripts/bench_import.py).
BATCH = 200
MEMORY_BATCH = 100


class ImportRefused(ValueError):
    """The export cannot be imported; the message says why and is safe to show. Nothing was imported."""


class ImportStopped(ImportRefused):
    """The export was whole and valid, but writing it failed part-way (the database went away,
    the disk filled): the message says what was stored before the failure."""

    def __init__(self, message: str, result: ImportResult):
        super().__init__(message)
        self.result = result


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

    def summary(self, verb: str = "Imported") -> str:
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
        return f"{verb} " + ", ".join(parts) + (f" ({'; '.join(skipped)})" if skipped else "") + "."


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def import_space(
    *, owner, lines: Iterable[bytes], actor: Actor = SYSTEM, progress: Callable[[Counter], None] | None = None
) -> ImportResult:
    """Import an export into the owner's space.

    The whole file is read and checked first, with nothing written and no transaction open:
    a damaged, cut-off or tampered file, or one holding a value the app would never write,
    is refused (ImportRefused) and nothing is imported. Only then is it written, BATCH
    records a transaction, so the web server, the workers and the watcher keep writing
    while a big import runs. Should a write fail part-way, ImportStopped says what was stored."""
    with _CheckedExport(progress) as checked:
        checked.read(lines)
        if (left := quota.room(owner)) is not None and checked.file_bytes > left:
            raise ImportRefused(f"{quota.refusal(what='The files in this export')} Nothing was imported.")
        result = _Writer(owner, actor, checked).run()
    # Extraction still owed: the first few are queued now; the sweeper (resume_stuck) picks up
    # the rest, which keeps a big import from spending minutes filling the queue.
    for pk in result.pending[:QUEUE_AT_ONCE]:
        queue_extraction(Memory(pk=pk))
    if result.memories:
        # Vectors are not part of an export (another installation may run another model):
        # the imported memories are embedded in a worker by whatever backend this one runs.
        queue_vectors(owner_id=owner.pk)
    return result


# -- reading and checking: nothing is written --------------------------------------------------


class _BadNumber(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumber(text)
    return value


def _no_constant(text: str):
    raise _BadNumber(text)


def _id(record: dict, name: str) -> int:
    value = record.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise fields.EditError(f"{name} must be a positive whole number.", field=name)
    return value


def _optional_id(record: dict, name: str) -> int | None:
    return None if record.get(name) is None else _id(record, name)


def _file_name(value) -> str:
    # As an upload's name: the last part of either kind of path, never a folder to climb out of.
    name = fields.text(value, field="original.name")
    return PurePosixPath(name.replace("\\", "/")).name.strip()[-150:] or "file"


class _CheckedExport:
    """An export read whole and checked, not written: its records, each in the form it
    is written in, spooled to a temporary file (a big export is not held in memory), and
    its original files, each in a temporary file of its own, checked against their hashes."""

    def __init__(self, progress):
        self.progress = progress
        self.spool = tempfile.TemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".import-")
        self.files: dict[int, _IncomingFile] = {}
        self.file: _IncomingFile | None = None
        self.digest = hashlib.sha256()
        self.counts: Counter[str] = Counter()
        self.line_no = 0
        self.memory_ids: set[int] = set()
        self.consolidation_ids: set[int] = set()
        self.source_user = ""
        self.file_bytes = 0
        self.stage = 0
        # Each kind of record and its check, which returns what the writer stores (None:
        # nothing to store). The end line is read apart (_finish).
        self.checks: dict[str, Callable[[dict], dict | None]] = {
            "header": self._header,
            "memory": self._memory,
            "file_chunk": self._file_chunk,
            "consolidation": self._consolidation,
            "link": self._link,
            "tombstone": self._tombstone,
            "event": self._event,
        }

    def __enter__(self) -> _CheckedExport:
        return self

    def __exit__(self, *exc) -> None:
        self.spool.close()
        for incoming in [*self.files.values(), *([self.file] if self.file else [])]:
            incoming.discard()

    def read(self, lines: Iterable[bytes]) -> None:
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
            # In the export's order: what a record refers to was written before it.
            stage = STAGES[kind]
            if stage < self.stage:
                raise ImportRefused(
                    f"Line {self.line_no}: a {kind} record out of order (an export holds memories, then insights, "
                    "links, tombstones and history); the export is corrupt."
                )
            self.stage = stage
            if kind != "file_chunk":
                self._close_file()
            try:
                checked = self.checks[kind](record)
            except ImportRefused:
                raise
            except fields.EditError as exc:
                raise ImportRefused(f"Line {self.line_no} ({kind}): {exc} Nothing was imported.") from None
            except (KeyError, TypeError, ValueError, binascii.Error) as exc:
                raise ImportRefused(
                    f"Line {self.line_no} ({kind}) could not be read: {type(exc).__name__}: {exc}. Nothing was imported."
                ) from None
            if checked is not None:
                pickle.dump((self.line_no, kind, checked), self.spool, protocol=pickle.HIGHEST_PROTOCOL)
            if self.progress and sum(self.counts.values()) % 200 == 0:
                self.progress(self.counts)
        if not ended:
            if self.line_no == 0:
                raise ImportRefused("The export is empty.")
            raise ImportRefused(
                f"The export stops after line {self.line_no} without its end marker: it was cut off. Nothing was imported."
            )

    def records(self) -> Iterator[tuple[int, str, dict]]:
        self.spool.flush()
        self.spool.seek(0)
        while True:
            try:
                yield pickle.load(self.spool)  # noqa: S301 - the spool is this process's own file
            except EOFError:
                return

    def _parse(self, raw: bytes) -> dict:
        try:
            record = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
        except _BadNumber as exc:
            raise ImportRefused(
                f"Line {self.line_no} holds the number {str(exc)[:20]}, which is not a finite number. Nothing was imported."
            ) from None
        except (ValueError, RecursionError):
            raise ImportRefused(
                f"Line {self.line_no} is not valid JSON: the export is corrupt or was cut off. Nothing was imported."
            ) from None
        if not isinstance(record, dict) or record.get("type") not in TYPES:
            raise ImportRefused(f"Line {self.line_no} is not an export record; is this a memory export (JSON Lines)?")
        if self.line_no == 1 and record["type"] != "header":
            raise ImportRefused("This is not a memory export: it does not start with the export header.")
        return record

    def _finish(self, record: dict) -> None:
        self._close_file()
        counts = record.get("counts")
        if counts != dict(self.counts):
            raise ImportRefused(
                f"The export's end marker lists {counts} records, but {dict(self.counts)} were read: it is incomplete. Nothing was imported."
            )
        if record.get("sha256") != self.digest.hexdigest():
            raise ImportRefused(
                "The export's checksum does not match its content: it was changed or damaged. Nothing was imported."
            )

    def _close_file(self) -> None:
        if self.file is not None:
            file, self.file = self.file, None
            self.files[file.old_id] = file  # first: a damaged one is discarded with the rest
            file.close()

    # -- records: each checked the way the app checks what it writes (services/fields.py)

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
        self.source_user = fields.text(record.get("user", ""), field="user", max_chars=150)

    def _memory(self, r: dict) -> dict:
        old = _id(r, "id")
        if old in self.memory_ids:
            raise ImportRefused(f"Line {self.line_no}: memory {old} appears twice; the export is corrupt.")
        self.memory_ids.add(old)
        status = r.get("status")
        if status not in Memory.Status.values:
            raise fields.EditError(f"status {str(status)[:20]!r} is not one of {', '.join(Memory.Status.values)}.")
        raw_text = fields.text(r.get("raw_text", ""), field="raw_text")
        if len(raw_text) > MAX_TEXT_CHARS:
            raise fields.EditError(f"raw_text is longer than {MAX_TEXT_CHARS:,} characters.")
        values = {
            "source": fields.text(r.get("source", ""), field="source", max_chars=500),
            "raw_text": raw_text,
            "mime_type": fields.text(r.get("mime_type", ""), field="mime_type", max_chars=100),
            "metadata": fields.json_object(r.get("metadata", {}), field="metadata"),
            "summary": fields.text(r.get("summary", ""), field="summary"),
            "entities": fields.labels(r.get("entities", []), field="entities"),
            "topics": fields.labels(r.get("topics", []), field="topics"),
            "importance": fields.importance(r.get("importance")),
            "base_importance": fields.importance(r.get("base_importance"), field="base_importance", optional=True),
            "status": status,
            "error": fields.text(r.get("error", ""), field="error"),
            "attempts": fields.count(r.get("attempts", 0), field="attempts"),
            "provider": fields.text(r.get("provider", ""), field="provider", max_chars=100),
            "occurred_at": fields.when(r.get("occurred_at"), field="occurred_at", required=True),
            "created_at": fields.when(r.get("created_at"), field="created_at", required=True),
        }
        values["updated_at"] = fields.when(r.get("updated_at"), field="updated_at") or values["created_at"]
        if "file_name" in values["metadata"]:  # shown and read as the upload's name: plain, as an upload's
            values["metadata"] = {**values["metadata"], "file_name": _file_name(values["metadata"]["file_name"])}
        for name in ("consolidated_at", "deleted_at", "valid_until", "expires_at", "last_recalled_at"):
            values[name] = fields.when(r.get(name), field=name)
        refs = {name: _optional_id(r, name) for name in ("duplicate_of", "superseded_by", "outdated_by")}
        original = r.get("original")
        if original is None:
            # The hash is recomputed, never read from the file: it is what says "already
            # stored as memory N", so an edited text with the old hash would claim another's place.
            values["content_hash"] = content_hash(raw_text)
        else:
            if not isinstance(original, dict):
                raise fields.EditError("original must be an object or null.")
            name = _file_name(original.get("name"))
            if original.get("missing") is True:
                # The file was gone at export: its bytes, and so its hash, are unknown here.
                values["content_hash"] = content_hash(raw_text)
                original = None
            else:
                size, chunks, sha = original.get("size"), original.get("chunks"), original.get("sha256")
                fields.count(size, field="original.size")
                fields.count(chunks, field="original.chunks")
                if not isinstance(sha, str) or len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
                    raise fields.EditError("original.sha256 must be a SHA-256 in hex.")
                # A file's identity is its bytes: checked against this hash as the pieces arrive.
                values["content_hash"] = sha
                original = {"name": name, "size": size, "chunks": chunks, "sha256": sha}
                self.file_bytes += size
                self.file = _IncomingFile(old, original)
        return {"id": old, "values": values, "refs": refs, "has_file": original is not None}

    def _file_chunk(self, record: dict) -> None:
        old = _id(record, "memory")
        if self.file is None or self.file.old_id != old:
            raise ImportRefused(
                f"Line {self.line_no}: a piece of a file whose memory {old} is not just before it; the export is corrupt."
            )
        data = record.get("data")
        if not isinstance(data, str):
            raise fields.EditError("data must be base64 text.")
        self.file.add(fields.count(record.get("seq"), field="seq"), base64.b64decode(data, validate=True), line=self.line_no)

    def _consolidation(self, r: dict) -> dict:
        old = _id(r, "id")
        if old in self.consolidation_ids:
            raise ImportRefused(f"Line {self.line_no}: insight {old} appears twice; the export is corrupt.")
        self.consolidation_ids.add(old)
        sources = r.get("sources")
        if not isinstance(sources, list):
            raise fields.EditError("sources must be a list of memory ids.")
        created = fields.when(r.get("created_at"), field="created_at", required=True)
        return {
            "id": old,
            "summary": fields.text(r.get("summary", ""), field="summary"),
            "insight": fields.text(r.get("insight", ""), field="insight"),
            "sources": [_id({"source": s}, "source") for s in sources],
            "provider": fields.text(r.get("provider", ""), field="provider", max_chars=100),
            "created_at": created,
            "updated_at": fields.when(r.get("updated_at"), field="updated_at") or created,
            "stale_at": fields.when(r.get("stale_at"), field="stale_at"),
            "retired_at": fields.when(r.get("retired_at"), field="retired_at"),
        }

    def _link(self, r: dict) -> dict:
        return {
            "from": _id(r, "from"),
            "to": _id(r, "to"),
            "relationship": fields.text(r.get("relationship", ""), field="relationship", max_chars=500),
            "consolidation": _optional_id(r, "consolidation"),
            "created_at": fields.when(r.get("created_at"), field="created_at", required=True),
        }

    def _tombstone(self, r: dict) -> dict:
        digest = r.get("content_hash")
        if not isinstance(digest, str) or len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise fields.EditError("content_hash must be a SHA-256 in hex.")
        return {
            "content_hash": digest,
            "memory_ref": _optional_id(r, "memory_ref"),
            "reason": fields.text(r.get("reason", ""), field="reason", max_chars=200),
            "rejected_at": fields.when(r.get("rejected_at"), field="rejected_at", required=True),
        }

    def _event(self, r: dict) -> dict:
        subject_type = r.get("subject_type")
        if subject_type not in Event.Subject.values:
            raise fields.EditError(f"unknown subject type {str(subject_type)[:20]!r}.")
        if r.get("action") not in Event.Action.values:
            raise fields.EditError(f"unknown action {str(r.get('action'))[:20]!r}.")
        return {
            "subject_type": subject_type,
            "subject_id": _id(r, "subject_id"),
            "action": r["action"],
            "actor": fields.text(r.get("actor", ""), field="actor"),
            "before": fields.json_object(r.get("before") or {}, field="before"),
            "after": fields.json_object(r.get("after") or {}, field="after"),
            "note": fields.text(r.get("note", ""), field="note", max_chars=500),
            "created_at": fields.when(r.get("created_at"), field="created_at", required=True),
        }


class _IncomingFile:
    """An original file arriving in pieces: spooled to a temporary file and checked against
    the size, piece count and hash its memory line gave."""

    def __init__(self, old_id: int, description: dict):
        self.old_id = old_id
        self.description = description
        self.next_seq = 0
        self.sha = hashlib.sha256()
        self.size = 0
        # Closed after its last piece (thousands of files must not hold thousands of handles).
        self.tmp = tempfile.NamedTemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".import-", delete=False)
        self.path = self.tmp.name

    def add(self, seq: int, data: bytes, *, line: int) -> None:
        if seq != self.next_seq:
            raise ImportRefused(f"Line {line}: file piece {seq} where {self.next_seq} was expected; the export is corrupt.")
        self.next_seq += 1
        self.tmp.write(data)
        self.sha.update(data)
        self.size += len(data)

    def close(self) -> None:
        self.tmp.close()
        d = self.description
        if self.next_seq != d["chunks"] or self.size != d["size"] or self.sha.hexdigest() != d["sha256"]:
            raise ImportRefused(
                f"The original file of memory {self.old_id} ({d['name']!r}) is incomplete or damaged. Nothing was imported."
            )

    def discard(self) -> None:
        self.tmp.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


# -- writing: short transactions -----------------------------------------------------------------


# SQLite keeps no queue for its write lock: a writer that finds it taken polls, its busy
# handler sleeping up to 100 ms between tries, so transactions run back to back can keep it
# out far longer than any one of them. A pause after each lets a waiting writer in: with
# it, a writer meanwhile waited about as long as the longest batch (340-450 ms on a loaded
# 2-core machine), without it up to 1.3 s (scripts/bench_import.py --pause 0 0.05).
SQLITE_PAUSE = 0.05


@contextlib.contextmanager
def _write_batch() -> Iterator[None]:
    with transaction.atomic():
        yield
    if connection.vendor == "sqlite":
        time.sleep(SQLITE_PAUSE)


class _Writer:
    """Writes a checked export, BATCH records a transaction, mapping every exported id to
    the one it gets here. Into an empty space it recreates it; into one that holds memories
    it deduplicates as ingest does."""

    def __init__(self, owner, actor: Actor, checked: _CheckedExport):
        self.owner = owner
        self.actor = actor
        self.checked = checked
        self.result = ImportResult(source_user=checked.source_user)
        self.memories: dict[int, int | None] = {}  # exported id -> id here (None: left out)
        self.created: set[int] = set()  # exported ids this import created
        self.consolidations: dict[int, int | None] = {}
        self.made_consolidations: set[int] = set()
        self.reserved: dict[int, int] = {}  # purged memories: ids no memory here will ever get
        self.deferred: list[tuple[int, str, int]] = []
        self.stored_files: list[tuple] = []
        self.memories_done = False
        self.line_no = 0
        self.empty = not (
            Memory.all_objects.owned_by(owner).exists()
            or RejectedContent.objects.owned_by(owner).exists()
            or Consolidation.all_objects.owned_by(owner).exists()
        )
        self.before_max = Memory.all_objects.aggregate(top=Max("pk"))["top"] or 0
        # Each kind of checked record and what writes a batch of them.
        self.writers: dict[str, Callable[[list[dict]], None]] = {
            "memory": self._memory_batch,
            "consolidation": self._consolidation_batch,
            "link": self._link_batch,
            "tombstone": self._tombstone_batch,
            "event": self._event_batch,
        }

    def run(self) -> ImportResult:
        batch: list[tuple[int, dict]] = []
        kind = ""
        for line_no, record_kind, record in self.checked.records():
            if batch and (record_kind != kind or len(batch) >= (MEMORY_BATCH if kind == "memory" else BATCH)):
                self._write(kind, batch)
                batch = []
            kind = record_kind
            batch.append((line_no, record))
        if batch:
            self._write(kind, batch)
        if not self.memories_done:
            self._step("memory references", self._resolve_references)
        return self.result

    def _write(self, kind: str, batch: list[tuple[int, dict]]) -> None:
        if kind != "memory" and not self.memories_done:
            self._step("memory references", self._resolve_references)
        self.line_no = batch[0][0]
        self._step(f"{kind} records", lambda: self.writers[kind]([record for _, record in batch]))

    def _step(self, what: str, write: Callable[[], None]) -> None:
        """One step of the import; a failure stops the import and says what is stored."""
        before = dataclasses.replace(self.result, pending=list(self.result.pending))
        try:
            write()
        except Exception as exc:
            for storage, name in self.stored_files:
                storage.delete(name)
            stored = before.summary("Stored before it:")
            raise ImportStopped(
                f"The import stopped writing {what} at line {self.line_no}: {type(exc).__name__}: {exc}. {stored} "
                "The rest of the file was not imported; importing it again adds what is missing "
                "(the memories already stored keep only the history stored with them).",
                before,
            ) from exc
        finally:
            self.stored_files = []

    # -- memories

    def _memory_batch(self, records: list[dict]) -> None:
        hashes = {r["values"]["content_hash"] for r in records}
        known = self._known(hashes)
        # Files are copied into the store before the transaction (copying one can take
        # seconds), and deleted again if the batch is not written.
        made: list[tuple[dict, Memory]] = []
        for r in records:
            if r["values"]["content_hash"] in known:
                continue
            memory = Memory(owner=self.owner, **r["values"])
            fingerprint(memory)  # MinHash of the text: computed here, not while holding the lock
            if r["has_file"]:
                self._store_file(memory, self.checked.files.pop(r["id"]))
            made.append((r, memory))
        made_for = {r["id"]: memory for r, memory in made}
        with _write_batch():
            # Asked again inside the transaction: the space may have taken the same content since.
            known = self._known(hashes)
            for r in records:
                if not self._memory(r, known):
                    # (Known before the transaction and purged since: it comes back without its file.)
                    self._save_memory(r, made_for.get(r["id"]) or Memory(owner=self.owner, **r["values"]))
        for r, memory in made:
            if memory.pk is None and memory.original:
                memory.original.storage.delete(memory.original.name)
        self.stored_files = []

    def _known(self, hashes: set[str]) -> dict[str, tuple[str, int | None]]:
        """What the space already says about these hashes: ("refused", ref) or ("have", pk)."""
        if self.empty:
            return {}
        known: dict[str, tuple[str, int | None]] = {}
        for digest, pk in (
            Memory.all_objects.owned_by(self.owner)
            .filter(content_hash__in=hashes, pk__lte=self.before_max)
            .order_by(F("deleted_at").desc(nulls_last=True), "pk")
            .values_list("content_hash", "pk")
        ):
            known[digest] = ("have", pk)  # the last wins: a live one, the newest
        for digest in (
            RejectedContent.objects.owned_by(self.owner).filter(content_hash__in=hashes).values_list("content_hash", flat=True)
        ):
            known.setdefault(digest, ("refused", None))
            if known[digest][0] == "have":
                known[digest] = ("have_refused", known[digest][1])
        return known

    def _memory(self, r: dict, known: dict) -> bool:
        """Whether the space already decided about this content (holds or refuses it)."""
        values = r["values"]
        state, pk = known.get(values["content_hash"], ("", None))
        live = values["deleted_at"] is None and r["refs"]["superseded_by"] is None
        # As ingest does: content the space deleted stays out, content it holds is not added twice.
        if live and state in ("refused", "have_refused"):
            self.memories[r["id"]] = None
            self.result.refused += 1
            return True
        if state in ("have", "have_refused"):
            self.memories[r["id"]] = pk
            self.result.duplicates += 1
            return True
        return False

    def _save_memory(self, r: dict, memory: Memory) -> None:
        if memory.sim_band0 is None:
            fingerprint(memory)
        # raw: as loaddata saves, with the exported created_at/updated_at instead of the clock's.
        memory.save_base(raw=True)
        self.memories[r["id"]] = memory.pk
        self.created.add(r["id"])
        self.result.memories += 1
        self.result.files += bool(memory.original)
        for name, old in r["refs"].items():
            if old is not None:
                self.deferred.append((memory.pk, name, old))
        if memory.status == Memory.Status.PENDING and memory.deleted_at is None:
            self.result.pending.append(memory.pk)

    def _store_file(self, memory: Memory, incoming: _IncomingFile) -> None:
        try:
            with open(incoming.path, "rb") as fh:
                memory.original.save(incoming.description["name"], File(fh), save=False)
        finally:
            incoming.discard()
        self.stored_files.append((memory.original.storage, memory.original.name))

    def _resolve_references(self) -> None:
        """Once every memory is in: their references to each other, then near-duplicates."""
        self.memories_done = True
        pending = [(pk, name, self.memories.get(old)) for pk, name, old in self.deferred]
        pending = [item for item in pending if item[2] is not None]
        for start in range(0, len(pending), BATCH):
            with _write_batch():
                for pk, name, target in pending[start : start + BATCH]:
                    Memory.all_objects.filter(pk=pk).update(**{f"{name}_id": target})
        self.deferred = []
        if self.empty:
            return
        # New content next to what was there: linked as a near-duplicate as ingest would.
        fresh = Memory.objects.filter(
            pk__gt=self.before_max, owner=self.owner, duplicate_of__isnull=True, near_duplicates__isnull=True
        )
        ids = list(fresh.order_by("pk").values_list("pk", flat=True))
        for start in range(0, len(ids), BATCH // 4):  # each compares with up to 50 candidates
            with _write_batch():
                for memory in Memory.objects.filter(pk__in=ids[start : start + BATCH // 4]).order_by("pk"):
                    link_near_duplicate(memory, self.actor)
                    self.result.near_duplicates += memory.duplicate_of_id is not None

    # -- the rest

    def _consolidation_batch(self, records: list[dict]) -> None:
        with _write_batch():
            for r in records:
                self._consolidation(r)

    def _consolidation(self, r: dict) -> None:
        sources = [self.memories[s] for s in r["sources"] if self.memories.get(s) is not None]
        if not self.empty:
            same = Consolidation.all_objects.owned_by(self.owner).filter(summary=r["summary"], insight=r["insight"]).first()
            if same is not None:
                self.consolidations[r["id"]] = same.pk
                return
        consolidation = Consolidation(
            owner=self.owner,
            **{
                name: r[name] for name in ("summary", "insight", "provider", "stale_at", "retired_at", "created_at", "updated_at")
            },
        )
        consolidation.save_base(raw=True)
        through = Consolidation.sources.through
        through.objects.bulk_create([through(consolidation_id=consolidation.pk, memory_id=pk) for pk in dict.fromkeys(sources)])
        self.consolidations[r["id"]] = consolidation.pk
        self.made_consolidations.add(r["id"])
        self.result.consolidations += 1

    def _link_batch(self, records: list[dict]) -> None:
        wanted = []
        for r in records:
            source, target = self.memories.get(r["from"]), self.memories.get(r["to"])
            made_in = r["consolidation"]
            consolidation = self.consolidations.get(made_in) if made_in is not None else None
            if source is None or target is None or source == target or (made_in is not None and consolidation is None):
                continue
            wanted.append(((source, target, consolidation), r))
        with _write_batch():
            there = set()
            if not self.empty:
                there = set(
                    MemoryLink.objects.filter(from_memory_id__in={key[0] for key, _ in wanted}).values_list(
                        "from_memory_id", "to_memory_id", "consolidation_id"
                    )
                )
            for key, r in wanted:
                if key in there:
                    continue
                there.add(key)
                MemoryLink(
                    from_memory_id=key[0],
                    to_memory_id=key[1],
                    relationship=r["relationship"],
                    consolidation_id=key[2],
                    created_at=r["created_at"],
                ).save_base(raw=True)
                self.result.links += 1

    def _tombstone_batch(self, records: list[dict]) -> None:
        with _write_batch():
            for r in records:
                self._tombstone(r)

    def _tombstone(self, r: dict) -> None:
        if not self.empty and Memory.objects.owned_by(self.owner).filter(content_hash=r["content_hash"]).exists():
            return  # the space holds this content and keeps it: its decision, not the export's
        ref = r["memory_ref"]
        _, created = RejectedContent.objects.get_or_create(
            owner=self.owner,
            content_hash=r["content_hash"],
            defaults={
                "memory_ref": self._memory_ref(ref) if ref is not None else None,
                "reason": r["reason"],
                "rejected_at": r["rejected_at"],
            },
        )
        self.result.tombstones += created

    def _event_batch(self, records: list[dict]) -> None:
        with _write_batch():
            rows = [row for r in records if (row := self._event(r)) is not None]
            Event.objects.bulk_create(rows)
        self.result.events += len(rows)

    def _event(self, r: dict) -> Event | None:
        old = r["subject_id"]
        if r["subject_type"] == Event.Subject.MEMORY:
            if old in self.memories and old not in self.created:
                return None  # content the space already had (or refused): its history is the space's own
            subject = self._memory_ref(old)
        else:
            if old not in self.made_consolidations:
                return None
            subject = self.consolidations[old]
        return Event(
            owner=self.owner,
            subject_type=r["subject_type"],
            subject_id=subject,
            action=r["action"],
            # What another account (or installation) did is shown as imported, never as if
            # a user or token of this space had done it: nothing in a file proves who acted.
            actor=(r["actor"] if r["actor"].startswith(IMPORTED) else f"{IMPORTED}{r['actor']}")[:200],
            actor_user=None,
            before=self._remap(r["before"]),
            after=self._remap(r["after"]),
            note=r["note"],
            created_at=r["created_at"],
        )

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
        out = dict(values)
        for key in MEMORY_REF_KEYS:
            if isinstance(out.get(key), int) and not isinstance(out[key], bool):
                out[key] = self._memory_ref(out[key])
            elif isinstance(out.get(key), list):
                out[key] = [self._memory_ref(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in out[key]]
        return out
