"""An export read whole and checked before anything is written (services/importer.py writes
it): the end line's counts and checksum, every field the way the app checks what it writes
(services/fields.py), and each original file against its hash. A corrupt, cut-off or
tampered export is refused here (ImportRefused) and nothing is imported."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath

from django.conf import settings

from ..models import Event, Memory, content_hash
from . import fields
from .export import FORMAT, TYPES, VERSION
from .ingest import MAX_TEXT_CHARS

# The order records come in (a memory's file pieces follow it, so the two share a place).
STAGES = {"header": 0, "memory": 1, "file_chunk": 1, "consolidation": 2, "link": 3, "tombstone": 4, "event": 5}


class ImportRefused(ValueError):
    """The export cannot be imported; the message says why and is safe to show. Nothing was imported."""


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


class CheckedExport:
    """An export read whole and checked, not written: its records, each in the form it
    is written in, spooled to a temporary file (a big export is not held in memory), and
    its original files, each in a temporary file of its own, checked against their hashes."""

    def __init__(self, progress):
        self.progress = progress
        self.spool = tempfile.TemporaryFile(dir=settings.MEMORY_DATA_DIR, prefix=".import-")
        self.files: dict[int, IncomingFile] = {}
        self.file: IncomingFile | None = None
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

    def __enter__(self) -> CheckedExport:
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
                self.file = IncomingFile(old, original)
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


class IncomingFile:
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
