"""Ingest: save the input first (text, or a file kept as the original), as a pending memory,
before any model call; the extraction that follows is services/extraction.py."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from datetime import datetime, time
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from .. import extract
from ..models import Event, Memory, RejectedContent, content_hash
from . import fields, quota
from .duplicates import fingerprint, link_near_duplicate
from .errors import IngestError
from .extraction import UNREAD, queue_extraction
from .history import SYSTEM, Actor, record

MAX_TEXT_CHARS = 1_000_000
# The same range the API schema enforces (api/schemas.py EARLIEST, LATEST).
OCCURRED_MIN_YEAR, OCCURRED_MAX_YEAR = 1000, 9000


class RejectedContentError(IngestError):
    """The content was deleted before; it stays out until the old memory is restored."""

    def __init__(self, rejected: RejectedContent):
        self.memory_ref = rejected.memory_ref
        how = "deleted" if rejected.reason != "purged" else "deleted and purged"
        hint = f"; restore memory {rejected.memory_ref} instead" if rejected.reason != "purged" else ""
        super().__init__(f"This content was {how} on {rejected.rejected_at:%Y-%m-%d}{hint}.")


def _refuse_rejected(owner, digest: str) -> None:
    if rejected := RejectedContent.objects.owned_by(owner).filter(content_hash=digest).first():
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
    if existing := Memory.objects.owned_by(owner).filter(content_hash=digest).first():
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
    fingerprint(memory)
    with transaction.atomic():
        # Check again under the write lock: two requests with the same content can both
        # pass the check before it. SQLite's IMMEDIATE transactions already serialise
        # writers; on PostgreSQL locking the owner's row serialises one owner's ingests.
        get_user_model().objects.select_for_update().filter(pk=memory.owner_id).first()
        if existing := Memory.objects.owned_by(memory.owner_id).filter(content_hash=memory.content_hash).first():
            return IngestResult(existing, created=False)
        memory.save()
        record(memory, Event.Action.CREATED, actor, after={"source": memory.source, "content_hash": memory.content_hash})
        link_near_duplicate(memory, actor)
    if queue:
        queue_extraction(memory)
    return IngestResult(memory, created=True)


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
        if existing := Memory.objects.owned_by(owner).filter(content_hash=sha).first():
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
